"""The pi adapter: the shared AGENTS.md and .agents/skills (the same files as OpenClaw's and
Hermes'), commands as prompt templates in .pi/prompts, hooks and MCP servers dropped (pi has
neither), and the pi package layout (package.json with its `pi` key, skills/, prompts/).
tests/conformance/test_pi_discovery.py checks the same output with the real `pi`."""

import json
from pathlib import Path
from typing import Dict, Sequence

import pytest

from helpers import ROOT, compare_golden, tree_text as _tree_text

from agentrc.clients.pi import Pi
from agentrc.clients.registry import CLIENTS, PLUGIN_LAYOUTS
from agentrc.frozen import freeze
from agentrc.inputs.tree import read_tree
from agentrc.model import McpServer
from agentrc.pipeline import stages as pipeline

from . import harness
from .harness import frontmatter
from .harness import item as _item

PI = Pi()
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "plugins"


def _build(files: Dict[str, str], clients: Sequence[str] = ("pi",), **kwargs):
    return harness.build(files, clients, **kwargs)


def _fields(plan, kind: str, name: str, client: str = "pi"):
    return harness.fields(plan, kind, name, client)


def _all_kinds() -> Dict[str, str]:
    files = {**_item("skill", "notes", "name: notes\ndescription: Use when drafting notes\n"),
             **_item("rule", "style", "description: House style\nscope:\n  paths: ['src/**']\n"),
             **_item("command", "ship", "description: Ship it\nargument-hint: <version>\nagent: tester\nmodel: haiku\n"
                                        "tools: [bash]\n", "Ship $ARGUMENTS.\n"),
             **_item("agent", "tester", "description: Use when tests must run\nmodel: haiku\ntools: [read]\n"),
             **_item("context", "project", "description: About\n", "## About\n\nA monorepo.\n")}
    return files


def test_skills_rules_and_agents_are_the_shared_files_commands_are_prompt_templates():
    files = _all_kinds()
    plan, out = _build(files)
    _, hermes = _build(files, ("hermes",))
    shared = {p: t for p, t in out.items() if p.startswith(".agents/skills/") or p == "AGENTS.md"}
    assert shared == {p: t for p, t in hermes.items() if p != ".agents/skills/ship/SKILL.md"}
    assert set(out) == set(shared) | {".pi/prompts/ship.md"}
    assert out[".pi/prompts/ship.md"] == ("---\ndescription: Ship it\nargument-hint: \"<version>\"\n---\n\n# ship\n\n"
                                          "Ship $ARGUMENTS.\n")
    fields = _fields(plan, "command", "ship")
    assert fields["argument-hint"][0] == "emitted" and fields["body"][0] == "emitted"
    assert fields["agent"] == ("dropped", "pi has no subagents: the prompt runs in the main session")
    assert fields["model"][0] == fields["tools"][0] == "dropped"
    assert _fields(plan, "rule", "style")["scope"][0] == "degraded"
    assert _fields(plan, "agent", "tester")["model"][0] == "dropped"


def test_hooks_and_mcp_servers_are_dropped_with_the_reason():
    plan, out = _build(_item("hook", "h", "description: H\nevent: PreToolUse\ntools: [bash]\nscript: make check\n"))
    assert out == {}
    hook = _fields(plan, "hook", "h")
    assert {s for f, (s, _) in hook.items() if f != "schema"} == {"dropped"}
    assert "extensions, TypeScript modules" in _fields(plan, "hook", "h")["event"][1]
    local = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "fs"),
                      fields=freeze({"local": {}, "requires-env": []}))
    report = PI.render_server(local).report
    assert not PI.render_server(local).files and not PI.render_server(local).fragments
    assert {f.field: f.status for f in report.fields} == {"local": "dropped", "requires-env": "omitted"}
    assert "no MCP support" in next(f.detail for f in report.fields if f.field == "local")


def test_disable_model_invocation_goes_through_the_pi_block_into_the_shared_skill():
    plain = _item("skill", "notes", "name: notes\ndescription: Notes\ndisable-model-invocation: true\n")
    plan, out = _build(plain)
    assert "disable-model-invocation" not in out[".agents/skills/notes/SKILL.md"]
    assert "set it in the pi: block" in _fields(plan, "skill", "notes")["disable-model-invocation"][1]
    block = _item("skill", "notes", "name: notes\ndescription: Notes\npi:\n  disable-model-invocation: true\n")
    _, out = _build(block)
    assert frontmatter(out[".agents/skills/notes/SKILL.md"])["disable-model-invocation"] is True
    _, codex = _build(block, ("codex",))  # every writer of the shared file merges pi's block
    assert codex[".agents/skills/notes/SKILL.md"] == out[".agents/skills/notes/SKILL.md"]


def test_pi_block_on_a_command_is_merged_into_the_template():
    plan, out = _build(_item("command", "ship", "description: Ship\npi:\n  argument-hint: '[x]'\n"))
    assert frontmatter(out[".pi/prompts/ship.md"]) == {"description": "Ship", "argument-hint": "[x]"}
    assert _fields(plan, "command", "ship")["pi"][0] == "emitted"


@pytest.mark.parametrize("name", ["a--b", "x" * 64])
def test_hostile_names_stay_inside_the_client_directories(name):
    files = {**_item("command", name, "description: C\n", "Run $ARGUMENTS.\n"),
             **_item("rule", name, "description: R\n")}
    plan, out = _build(files)
    assert f".pi/prompts/{name}.md" in out
    assert all(p.startswith((".pi/prompts/", ".agents/skills/")) for p in out)
    if "--" in name:
        assert _fields(plan, "rule", name)["name"][0] == "degraded"


def test_registered_with_its_facts():
    pi = CLIENTS["pi"]
    assert pi.skill_dir == ".agents/skills" and pi.shared_block and pi.context_file == "AGENTS.md"
    assert PLUGIN_LAYOUTS["pi"].layout == "plugin" and PLUGIN_LAYOUTS["pi"].title == "pi package"


def test_pi_package_golden_platform_baseline(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    plan = pipeline.generate(tree, ["pi"], ["platform-baseline"], layout="plugin")
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    compare_golden(GOLDEN / "pi.txt", _tree_text(plan.files))
    paths = {f.path for f in plan.files}
    assert not any(p.startswith((".pi/", ".agents/")) or p == "AGENTS.md" for p in paths), sorted(paths)
    manifest = json.loads(next(f for f in plan.files if f.path == "package.json").content)
    assert manifest["pi"] == {"skills": ["./skills"], "prompts": ["./prompts"]}
    assert manifest["keywords"] == ["pi-package"] and manifest["version"] == "1.2.0"


def test_pi_package_puts_every_kind_in_its_directory():
    files = {**_all_kinds(), **_item("skill", "n", "name: n\ndescription: N\npi:\n  disable-model-invocation: true\n")}
    plan, out = _build(files, layout="plugin", plugin_name="pkg")
    assert {"skills/notes/SKILL.md", "skills/style/SKILL.md", "skills/tester/SKILL.md", "prompts/ship.md",
            "package.json"} <= set(out)
    assert frontmatter(out["skills/n/SKILL.md"])["disable-model-invocation"] is True
    assert _fields(plan, "context", "project")["body"][0] == "dropped"
    assert json.loads(out["package.json"])["name"] == "pkg"
