"""Spec 000 and the format (issue 34 items 12 to 14): the `## Skills` sentence read back in
both its forms, override suffixes for every client, hooks' `index.json` as an array."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrc.canonical import document as canonical
from agentrc.clients import registry as client_registry
from agentrc.clients.registry import CLIENTS
from agentrc.codes import CODES
from agentrc.importers.cleanup import SKILLS_INTROS, split_skills_section
from agentrc.inputs import config as configload
from agentrc.inputs.read import read_inputs
from agentrc.inputs.tree import read_tree
from agentrc.model import Kind
from agentrc.pipeline import stages


def test_the_skills_sentence_is_wrapped_and_both_forms_read_back(tmp_path):
    agent = tmp_path / "reg" / "agents" / "a"
    agent.mkdir(parents=True)
    (agent / "AGENT.md").write_text("---\nschema: 1\nname: a\ndescription: Use when reviewing\npreload-skills:\n"
                                    "  - review\n---\n\nReview.\n", encoding="utf-8")
    plan = stages.generate(read_tree([str(tmp_path / "reg")]).tree, ["copilot"], None)
    written = next(f.content.decode() for f in plan.files if f.path == ".github/agents/a.agent.md")
    assert "\n## Skills\n\n" + SKILLS_INTROS[0] + "\n\n- review\n" in written, written
    assert all(len(line) <= 80 for line in SKILLS_INTROS[0].split("\n"))
    new = "Do it.\n\n## Skills\n\n" + SKILLS_INTROS[0] + "\n\n- review\n- release-notes\n"
    old = ("Do it.\n\n## Skills\n\nThis agent relies on the following skills, installed alongside it. "
           "Use them when relevant:\n\n- review\n")
    assert split_skills_section(new) == ("Do it.\n", ["review", "release-notes"])
    assert split_skills_section(old) == ("Do it.\n", ["review"])
    # Neither form spread over other lines, nor an author's own section, is taken.
    other = "Do it.\n\n## Skills\n\nThis agent relies on the following skills,\ninstalled alongside it.\n\n- x\n"
    assert split_skills_section(other) == (other, [])


def _override_registry(root: Path) -> Path:
    """A rule for everyone, with an override for every client agentrc has."""
    d = root / "reg" / "rules" / "style"
    d.mkdir(parents=True)
    (d / "RULE.md").write_text("---\nschema: 1\nname: style\ndescription: Use when writing code\n---\n\n"
                               "CANONICAL-BODY for everyone.\n", encoding="utf-8")
    for client in CLIENTS:
        (d / f"RULE.{client}.md").write_text(f"OVERRIDE-{client} only.\n", encoding="utf-8")
    return root / "reg"


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_an_override_suffix_of_each_client_is_its_body(tmp_path, client):
    """Spec 001 §2.3 names claude, copilot and opencode; agentrc takes every client's suffix
    (RULE.codex.md, RULE.cursor.md, ...), and that client gets the override verbatim."""
    reg = _override_registry(tmp_path)
    plan = stages.generate(read_tree([str(reg)]).tree, [client], None)
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    text = "".join(f.content.decode("utf-8", "replace") for f in plan.files)
    assert f"OVERRIDE-{client} only." in text
    assert "CANONICAL-BODY" not in text and text.count("OVERRIDE-") == 1, text


def test_an_unknown_override_suffix_is_ar041_naming_every_client(tmp_path):
    reg = _override_registry(tmp_path)
    (reg / "rules" / "style" / "RULE.vim.md").write_text("Vim.\n", encoding="utf-8")
    plan = stages.generate(read_tree([str(reg)]).tree, ["claude"], None)
    found = [d for d in plan.diagnostics if d.code == "AR041"]
    assert len(found) == 1 and found[0].path.endswith("RULE.vim.md")
    assert all(name in found[0].message for name in CLIENTS)
    assert "<KIND>.<client>.md" in CODES["AR041"].hint


HOOKS = [{"script": "scripts/guard.sh", "tools": ["Bash"], "timeout": 5}, {"script": "echo checked"}]


def _project(root: Path, files) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def _canonical(root: Path):
    project, diags = configload.load_project(str(root))
    document, doc_diags = canonical.build_document(project.layers)
    return document, list(diags) + list(doc_diags)


def test_a_hooks_index_json_array_is_read_as_ai_config_reads_it(tmp_path):
    """Spec 000 §3.6: an array is several hook definitions for one event; §4.2 maps
    hooks/<name>/index.json to hooks.<name>. The `.ai/` tree and `ai.config` give one document."""
    tree = _project(tmp_path / "tree", {".ai/hooks/PreToolUse/index.json": json.dumps(HOOKS, indent=2)})
    config = _project(tmp_path / "config", {"ai.config.json": json.dumps({"hooks": {"PreToolUse": HOOKS}})})
    from_tree, diags = _canonical(tree)
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    from_config, diags = _canonical(config)
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    assert from_tree.to_json()["hooks"] == from_config.to_json()["hooks"] == {"PreToolUse": HOOKS}
    registry, diags = canonical.to_registry(from_tree, client_registry.client_names())
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    hooks = sorted((i.name, i.hook.tools) for i in registry.items if i.kind == Kind.HOOK)
    assert hooks == [("pre-tool-use-1", ("bash",)), ("pre-tool-use-2", None)]


def test_a_hooks_array_builds_for_claude(tmp_path):
    tree = _project(tmp_path / "p", {".ai/hooks/Stop/index.json": json.dumps([{"script": "echo one"},
                                                                              {"script": "echo two"}])})
    inputs = read_inputs([str(tree)])
    plan = stages.generate(inputs.tree, ["claude"], None, canonical=inputs.canonical)
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    settings = json.loads(next(f.content for f in plan.files if f.path == ".claude/settings.json"))
    commands = [h["command"] for group in settings["hooks"]["Stop"] for h in group["hooks"]]
    assert commands == ["echo one", "echo two"]


@pytest.mark.parametrize("files,message", [
    ({"index.json": json.dumps(HOOKS), "prompt.md": "echo which\n"}, "prompt.md beside an index.json"),
    ({"index.json": "[1]"}, "hooks.PreToolUse"),
    ({"index.json": json.dumps([{"tools": ["Bash"]}])}, "script"),
    ({"index.json": "7"}, "index.json holds a number, not an object of fields or an array of hooks"),
])
def test_a_bad_hooks_array_is_ar115_and_nothing_is_built(tmp_path, files, message):
    tree = _project(tmp_path / "p", {f".ai/hooks/PreToolUse/{k}": v for k, v in files.items()})
    document, diags = _canonical(tree)
    if not any(d.is_error for d in diags):
        _, more = canonical.to_registry(document, client_registry.client_names())
        diags += list(more)
    errors = [d for d in diags if d.is_error]
    assert errors and all(d.code == "AR115" for d in errors), [d.format() for d in diags]
    assert any(message in d.message for d in errors), [d.format() for d in errors]
