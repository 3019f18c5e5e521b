"""The Auggie adapter: rules with Auggie's rule types, skills in .augment/skills, subagents and
commands with Auggie's tool ids, hooks and MCP servers in .augment/settings.json."""

import json
from pathlib import Path
from typing import Dict, Sequence

from helpers import ROOT, compare_golden, tree_text

from agentrc.clients.auggie import Auggie
from agentrc.frozen import freeze
from agentrc.inputs.tree import read_tree
from agentrc.model import McpServer
from agentrc.pipeline import stages as pipeline

from . import harness
from .harness import frontmatter
from .harness import item as _item

AUGGIE = Auggie()


def _build(files: Dict[str, str], clients: Sequence[str] = ("auggie",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "auggie")


def test_rules_are_always_apply_or_agent_requested_with_their_files_outside_rules():
    files = {**_item("rule", "style", "description: House style\n"),
             **_item("rule", "api", "description: API handlers\nscope:\n  paths: ['src/api/**']\n",
                     "See [the list](list.md).\n", extra={"list.md": "# list\n"})}
    plan, out = _build(files)
    assert frontmatter(out[".augment/rules/style.md"]) == {"type": "always_apply", "description": "House style"}
    assert frontmatter(out[".augment/rules/api.md"])["type"] == "agent_requested"
    assert _fields(plan, "rule", "api")["scope"][0] == "degraded"
    # Auggie reads every .md under .augment/rules: a supporting file must not land there.
    assert not [p for p in out if p.startswith(".augment/rules/") and p not in (".augment/rules/style.md",
                                                                               ".augment/rules/api.md")]
    assert "](../agentrc/rules/api/list.md)" in out[".augment/rules/api.md"]


def test_subagents_with_auggie_tool_ids_and_models():
    files = {**_item("agent", "tester", "description: Runs tests\ntools: [bash, read, glob]\nmodel: anthropic/x-1\n"
                                        "auggie:\n  color: blue\n"),
             **_item("agent", "plain", "description: Plain\nmodel: sonnet\n")}
    plan, out = _build(files)
    fm = frontmatter(out[".augment/agents/tester.md"])
    assert fm == {"name": "tester", "description": "Runs tests", "model": "x-1", "tools": ["launch-process", "view"],
                  "color": "blue"}
    assert _fields(plan, "agent", "tester")["tools"] == ("degraded", "Auggie tool ids; it has no tool for glob")
    assert "model" not in frontmatter(out[".augment/agents/plain.md"])
    assert _fields(plan, "agent", "plain")["model"][0] == "dropped"


def test_commands_keep_arguments_and_their_hint():
    plan, out = _build(_item("command", "ship", "description: Ship\nargument-hint: '[v]'\nagent: tester\n",
                             "Ship $ARGUMENTS.\n"))
    text = out[".augment/commands/ship.md"]
    assert frontmatter(text) == {"description": "Ship", "argument-hint": "[v]"}
    assert "Ship $ARGUMENTS." in text
    assert _fields(plan, "command", "ship")["agent"][0] == "dropped"


def test_hooks_in_augment_settings():
    files = {**_item("hook", "guard", "description: G\nevent: PreToolUse\ntools: [bash, write]\nscript: ./g.sh\n",
                     extra={"g.sh": "#!/bin/sh\n"}),
             **_item("hook", "ask", "description: A\nevent: UserPromptSubmit\nscript: make check\n"),
             **_item("hook", "sub", "description: S\nevent: SubagentStop\nscript: make check\n")}
    plan, out = _build(files)
    hooks = json.loads(out[".augment/settings.json"])["hooks"]
    assert hooks["PreToolUse"] == [{"matcher": "launch-process|save-file", "hooks": [
        {"type": "command", "command": '"${AUGMENT_PROJECT_DIR:-.}/.augment/agentrc/hooks/guard/g.sh"'}]}]
    assert hooks["PromptSubmit"] == [{"hooks": [{"type": "command", "command": "make check"}]}]
    assert "SubagentStop" not in hooks
    assert _fields(plan, "hook", "sub")["event"] == ("dropped", "Auggie has no SubagentStop hook event")


def test_mcp_servers_and_a_hostile_name():
    hostile = 'x.y"z'
    server = McpServer(hostile, "b", "b.bundle.yaml", (1, 1), "sse", url="https://x/sse",
                       headers=freeze({"Authorization": "Bearer ${T}"}), fields=freeze({"remote": {}}))
    (frag,) = AUGGIE.render_server(server).fragments
    assert (frag.path, frag.key) == (".augment/settings.json", ("mcpServers", hostile))
    assert json.loads(frag.value) == {"type": "sse", "url": "https://x/sse",
                                      "headers": {"Authorization": "Bearer ${T}"}}


def test_auggie_plugin_golden_platform_baseline(monkeypatch):
    """`--layout plugin`: rules/, skills/, agents/, commands/, hooks/hooks.json (scripts via
    ${AUGMENT_PLUGIN_ROOT}) and .mcp.json at the root, .augment-plugin/ manifest and
    marketplace, nothing of the project layout."""
    monkeypatch.chdir(ROOT)
    plan = pipeline.generate(read_tree(["examples/registry"]).tree, ["auggie"], ["platform-baseline"],
                             layout="plugin")
    compare_golden(Path(__file__).resolve().parent.parent / "golden" / "plugins" / "auggie.txt",
                   tree_text(plan.files))
    paths = {f.path for f in plan.files}
    assert ".augment-plugin/plugin.json" in paths and ".augment-plugin/marketplace.json" in paths
    assert not any(p.startswith(".augment/") or p == "AGENTS.md" for p in paths), sorted(paths)
    hooks = json.loads(next(f for f in plan.files if f.path == "hooks/hooks.json").content)["hooks"]
    assert all(h["command"].startswith('"${AUGMENT_PLUGIN_ROOT:-.}/agentrc/hooks/')
               for groups in hooks.values() for g in groups for h in g["hooks"])
