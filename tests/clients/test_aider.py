"""The Aider adapter: rules as plain markdown files and AGENTS.md, all named in `read:` of
.aider.conf.yml (written as JSON, which YAML reads); every other kind, and MCP servers,
reported dropped."""

import json

import pytest

from . import harness
from .harness import item as _item


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "aider")


def test_rules_and_context_are_read_only_files_of_every_chat():
    files = {**_item("rule", "style", "description: House style\nscope:\n  paths: [\"src/**\"]\naider:\n  x: 1\n",
                     "Use tabs. See [guide](guide.md).\n", {"guide.md": "The guide.\n"}),
             **_item("rule", "zeta", "description: Last\n"),
             **_item("context", "project", "description: About\n", "## About\n\nA monorepo.\n")}
    plan, out = harness.build(files, ("aider",))
    assert json.loads(out[".aider.conf.yml"]) == {"read": ["AGENTS.md", ".aider/rules/style.md", ".aider/rules/zeta.md"]}
    style = out[".aider/rules/style.md"]
    assert not style.startswith("---"), "Aider sends the file whole: no frontmatter"
    assert style.startswith("# style\n") and "(../agentrc/rules/style/guide.md)" in style
    assert out[".aider/agentrc/rules/style/guide.md"] == "The guide.\n"
    assert "A monorepo." in out["AGENTS.md"]
    got = _fields(plan, "rule", "style")
    assert got["scope"][0] == "degraded" and "every chat" in got["scope"][1]
    assert got["description"][0] == "dropped"
    assert got["aider"][0] == "dropped"


@pytest.mark.parametrize("kind", ["skill", "agent", "command"])
def test_kinds_aider_lacks_are_dropped_whole(kind):
    files = _item(kind, "thing", "description: Use when things happen\n")
    plan, out = harness.build(files, ("aider",))
    assert not [p for p in out if not p.startswith(".agentrc/")]
    got = _fields(plan, kind, "thing")
    assert got and all(status == "dropped" and "Aider has no" in detail for status, detail in got.values())


def test_hostile_rule_names_stay_inside_the_rules_directory():
    # Names are checked upstream (spec 001 name rules); a bad one never reaches the adapter.
    files = _item("rule", "..", "description: Escape\n")
    result = harness.plan(files, ("aider",))
    assert not result.ok
    assert not [f for f in result.files if ".." in f.path.split("/")]


def test_a_rule_built_for_another_client_only_is_not_in_the_read_list():
    files = {**_item("rule", "mine", "description: Mine\n"),
             **_item("rule", "theirs", "description: Theirs\naudience: [claude]\n")}
    plan, out = harness.build(files, ("aider", "claude"))
    assert json.loads(out[".aider.conf.yml"])["read"] == [".aider/rules/mine.md"]
    assert _fields(plan, "rule", "theirs")["description"][0] == "omitted"
