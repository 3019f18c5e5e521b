"""The Factory Droid adapter: skills and rules in .factory/skills, custom droids with droid's
tool ids and models, commands with $ARGUMENTS kept, Claude-shaped hooks in
.factory/settings.json with droid's tool names, MCP servers in .factory/mcp.json."""

import json
from pathlib import Path
from typing import Dict, Sequence

from helpers import ROOT, compare_golden, tree_text

from agentrc.clients.droid import Droid
from agentrc.frozen import freeze
from agentrc.inputs.tree import read_tree
from agentrc.model import McpServer
from agentrc.pipeline import stages as pipeline

from . import harness
from .harness import frontmatter
from .harness import item as _item

DROID = Droid()


def _build(files: Dict[str, str], clients: Sequence[str] = ("droid",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "droid")


def test_agents_are_custom_droids_with_droid_tool_ids_and_models():
    files = {**_item("agent", "tester", "description: Runs tests\nmodel: haiku\ntools: [bash, read, write, web-fetch]\n"
                                        "preload-skills: [notes]\ndroid:\n  reasoningEffort: high\n"),
             **_item("agent", "free", "description: Anything\nmodel: inherit\n"),
             **_item("skill", "notes", "name: notes\ndescription: Notes\n")}
    plan, out = _build(files)
    fm = frontmatter(out[".factory/droids/tester.md"])
    assert fm == {"name": "tester", "description": "Runs tests", "model": "claude-haiku-4-5-20251001",
                  "tools": ["Execute", "Read", "Create", "FetchUrl"], "reasoningEffort": "high"}
    assert "- notes" in out[".factory/droids/tester.md"]
    assert frontmatter(out[".factory/droids/free.md"])["model"] == "inherit"
    assert "tools" not in frontmatter(out[".factory/droids/free.md"])


def test_an_empty_tool_list_is_written_and_reported_degraded():
    plan, out = _build(_item("agent", "none", "description: No tools\ntools: []\n"))
    assert frontmatter(out[".factory/droids/none.md"])["tools"] == []
    assert _fields(plan, "agent", "none")["tools"][0] == "degraded"


def test_a_rule_is_a_skill_with_its_files_beside_it():
    files = _item("rule", "style", "description: House style\nscope:\n  paths: ['src/**']\n",
                  "See [the list](list.txt).\n", extra={"list.txt": "a\n"})
    plan, out = _build(files)
    assert "[the list](list.txt)" in out[".factory/skills/style/SKILL.md"]
    assert ".factory/skills/style/list.txt" in out
    assert _fields(plan, "rule", "style")["scope"][0] == "degraded"


def test_commands_keep_arguments_and_drop_what_droid_commands_lack():
    files = _item("command", "ship", "description: Ship it\nargument-hint: '[version]'\nagent: tester\nmodel: opus\n"
                                     "tools: [bash]\n", "Ship $ARGUMENTS.\n")
    plan, out = _build(files)
    text = out[".factory/commands/ship.md"]
    assert frontmatter(text) == {"description": "Ship it", "argument-hint": "[version]"}
    assert "Ship $ARGUMENTS." in text
    fields = _fields(plan, "command", "ship")
    assert {fields[k][0] for k in ("agent", "model", "tools")} == {"dropped"}


def test_hooks_in_factory_settings_with_droid_tool_names():
    files = {**_item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash, write]\n"
                                      "script: ./guard.sh\ntimeout: 5\n", extra={"guard.sh": "#!/bin/sh\n"}),
             **_item("hook", "fmt", "description: Fmt\nevent: PostToolUse\nmatcher: Edit|Write|mcp__x__y\n"
                                    "script: make fmt\n")}
    plan, out = _build(files)
    hooks = json.loads(out[".factory/settings.json"])["hooks"]
    assert hooks["PreToolUse"] == [{"matcher": "Execute|Create", "hooks": [{
        "type": "command", "command": '"${FACTORY_PROJECT_DIR:-.}/.factory/agentrc/hooks/guard/guard.sh"',
        "timeout": 5}]}]
    assert hooks["PostToolUse"][0]["matcher"] == "Edit|Create|mcp__x__y"
    assert ".factory/agentrc/hooks/guard/guard.sh" in out


def test_a_hook_droid_cannot_narrow_is_refused():
    plan, out = _build(_item("hook", "h", "description: H\nevent: PreToolUse\ntools: [bash]\nif: Bash(git *)\n"
                                          "script: make check\n"))
    assert out == {}
    assert all(status in ("dropped", "omitted") for status, _ in _fields(plan, "hook", "h").values())


def test_mcp_servers_in_factory_mcp_json():
    local = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "fs"),
                      env=freeze({"ROOT": "${ROOT:-.}"}), fields=freeze({"local": {}}))
    r = DROID.render_server(local)
    (frag,) = r.fragments
    assert (frag.path, frag.key) == (".factory/mcp.json", ("mcpServers", "fs"))
    assert json.loads(frag.value) == {"type": "stdio", "command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "."}}
    assert {f.field: f.status for f in r.report.fields}["env-defaults"] == "degraded"


def test_a_hostile_server_name_stays_one_key():
    hostile = 'a.b"c$(x)'
    server = McpServer(hostile, "b", "b.bundle.yaml", (1, 1), "http", url="https://x/mcp",
                       fields=freeze({"remote": {}}))
    (frag,) = DROID.render_server(server).fragments
    assert frag.key == ("mcpServers", hostile)


def test_droid_plugin_golden_platform_baseline(monkeypatch):
    """`--layout plugin`: skills/, droids/, commands/, hooks/hooks.json (scripts via
    ${DROID_PLUGIN_ROOT}) and mcp.json at the root, .factory-plugin/ manifest and marketplace,
    nothing of the project layout."""
    monkeypatch.chdir(ROOT)
    plan = pipeline.generate(read_tree(["examples/registry"]).tree, ["droid"], ["platform-baseline"],
                             layout="plugin")
    compare_golden(Path(__file__).resolve().parent.parent / "golden" / "plugins" / "droid.txt",
                   tree_text(plan.files))
    paths = {f.path for f in plan.files}
    assert ".factory-plugin/plugin.json" in paths and ".factory-plugin/marketplace.json" in paths
    assert not any(p.startswith(".factory/") or p == "AGENTS.md" for p in paths), sorted(paths)
    hooks = json.loads(next(f for f in plan.files if f.path == "hooks/hooks.json").content)["hooks"]
    assert all(h["command"].startswith('"${DROID_PLUGIN_ROOT:-.}/agentrc/hooks/')
               for groups in hooks.values() for g in groups for h in g["hooks"])
