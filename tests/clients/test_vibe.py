"""The Mistral Vibe adapter: OpenClaw's and Hermes' shared .agents/skills files, agents as
.vibe/agents/<name>.toml, MCP servers in agentrc's project plugin, hooks reported dropped with
the [[hooks]] entry to add (scripts copied), and Vibe's skill keys through the vibe: block."""

import json
from pathlib import Path

from helpers import ROOT, compare_golden, tree_text as _tree_text

from agentrc.clients.registry import PLUGIN_LAYOUTS
from agentrc.clients.vibe import Vibe
from agentrc.frozen import freeze
from agentrc.inputs.tree import read_tree
from agentrc.model import McpServer
from agentrc.pipeline import stages as pipeline
from agentrc.text import tomledit

from . import harness
from .harness import item as _item

VIBE = Vibe()


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "vibe")


def test_skills_rules_and_commands_are_the_shared_files_openclaw_writes():
    files = {**_item("skill", "notes", "name: notes\ndescription: Use when drafting notes\n"),
             **_item("rule", "style", "description: House style\n"),
             **_item("command", "ship", "description: Ship it\n", "Ship $ARGUMENTS.\n"),
             **_item("context", "project", "description: About\n", "## About\n\nA monorepo.\n")}
    _, out = harness.build(files, ("vibe",))
    _, openclaw = harness.build(files, ("openclaw",))
    assert out == openclaw


def test_agents_are_toml_files_with_their_type_tools_and_instructions():
    files = {**_item("agent", "tester", "description: Use when tests must run\nmodel: haiku\n"
                     "tools: [read, bash, glob]\n", "Run [the tests](notes.md).\n", {"notes.md": "Notes.\n"}),
             **_item("agent", "writer", "description: Writes docs\nmode: primary\nvibe:\n  active_model: devstral\n", "")}
    plan, out = harness.build(files, ("vibe",))
    tester = tomledit.loads(out[".vibe/agents/tester.toml"])
    assert tester["agent_type"] == "subagent" and tester["description"] == "Use when tests must run"
    assert tester["enabled_tools"] == ["read_file", "bash"]
    assert "(.vibe/agentrc/agents/tester/notes.md)" in tester["instructions"]
    assert out[".vibe/agentrc/agents/tester/notes.md"] == "Notes.\n"
    got = _fields(plan, "agent", "tester")
    assert got["tools"][0] == "degraded" and "glob" in got["tools"][1]
    assert got["model"][0] == "dropped"
    writer = tomledit.loads(out[".vibe/agents/writer.toml"])
    assert writer["agent_type"] == "agent" and writer["active_model"] == "devstral"
    assert writer["instructions"] == "Writes docs\n", "an empty body: the description is the prompt"


def _frags(rendered):
    return {(f.path, f.key): json.loads(f.value) for f in rendered.fragments}


def test_mcp_servers_go_to_agentrcs_project_plugin():
    local = McpServer("local", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "srv"),
                      env=freeze({"A": "plain", "B": "${SECRET}"}), fields=freeze({"local": {}}))
    remote = McpServer("remote", "b", "b.bundle.yaml", (1, 1), "http", url="https://x.example/mcp",
                       headers=freeze({"Authorization": "Bearer ${TOKEN}", "X-Team": "core"}),
                       fields=freeze({"remote": {}}))
    sse = McpServer("old", "b", "b.bundle.yaml", (1, 1), "sse", url="https://x.example/sse", fields=freeze({"remote": {}}))
    pathed = McpServer("mine", "b", "b.bundle.yaml", (1, 1), "stdio", command="./bin/srv", fields=freeze({"local": {}}))
    r = VIBE.render_server(local)
    frags = _frags(r)
    mcp = ".vibe/plugins/agentrc/mcp.json"
    assert frags[(mcp, ("mcpServers", "local"))] == {"type": "stdio", "command": "npx", "args": ["-y", "srv"],
                                                     "env": {"A": "plain"}}
    assert frags[(mcp, ("$schema",))].endswith("/mcp.schema.json")
    assert frags[(".vibe/plugins/agentrc/plugin.json", ("name",))] == "agentrc"
    status = {f.field: (f.status, f.detail) for f in r.report.fields}
    assert status["local"][0] == "degraded" and "env B left out" in status["local"][1]
    assert _frags(VIBE.render_server(remote))[(mcp, ("mcpServers", "remote"))] == {
        "type": "streamable-http", "url": "https://x.example/mcp", "headers": {"X-Team": "core"}}
    assert _frags(VIBE.render_server(sse))[(mcp, ("mcpServers", "old"))]["type"] == "sse"
    refused = VIBE.render_server(pathed)
    assert not refused.fragments and refused.report.fields[0].status == "dropped"


def test_hooks_are_dropped_with_the_entry_to_add_and_their_script_copied():
    files = _item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash, edit]\nscript: ./g.sh\n"
                  "timeout: 5\n", extra={"g.sh": "#!/bin/sh\nexit 0\n"})
    plan, out = harness.build(files, ("vibe",))
    assert out[".vibe/agentrc/hooks/guard/g.sh"].startswith("#!/bin/sh")
    assert ".vibe/hooks.toml" not in out
    event = _fields(plan, "hook", "guard")["event"]
    assert event[0] == "dropped"
    inline = event[1].split("`[[hooks]]` ", 1)[1].split("} ", 1)[0] + "}"
    entry = tomledit.loads("h = " + inline)["h"]
    assert entry == {"name": "guard", "type": "pre_tool", "description": "Guard", "match": "re:(bash|edit)",
                     "command": ".vibe/agentrc/hooks/guard/g.sh", "timeout": 5.0, "strict": True}


def test_events_vibe_lacks_and_hostile_names():
    files = {**_item("hook", "start", "description: Start\nevent: SessionStart\nscript: echo hi\n"),
             **_item("agent", "..", "description: Escape\n")}
    result = harness.plan(files, ("vibe",))
    assert not result.ok  # the bad agent name is refused upstream
    assert not [f for f in result.files if ".." in f.path.split("/")]
    plan, _ = harness.build(_item("hook", "start", "description: Start\nevent: SessionStart\nscript: echo hi\n"),
                            ("vibe",))
    assert all(s == "dropped" and "no SessionStart" in d for s, d in _fields(plan, "hook", "start").values()
               if s != "omitted")


def test_vibe_skill_keys_go_through_the_vibe_block():
    files = _item("skill", "notes", "name: notes\ndescription: Use when drafting notes\n"
                  "disable-model-invocation: true\nvibe:\n  user-invocable: false\n")
    plan, out = harness.build(files, ("vibe",))
    text = out[".agents/skills/notes/SKILL.md"]
    assert "user-invocable: false" in text and "disable-model-invocation" not in text.split("---")[1]
    assert "vibe: block" in _fields(plan, "skill", "notes")["disable-model-invocation"][1]


PLUGIN_GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "plugins" / "vibe.txt"


def test_vibe_plugin_golden_platform_baseline(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    plan = pipeline.generate(tree, ["vibe"], ["platform-baseline"], layout="plugin")
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    compare_golden(PLUGIN_GOLDEN, _tree_text(plan.files))
    manifest = json.loads(next(f for f in plan.files if f.path == "plugin.json").content)
    assert manifest["name"] == "platform-baseline" and manifest["extensions"] == {"ai.mistral.vibe": {"schemaVersion": 1}}
    assert PLUGIN_LAYOUTS["vibe"].layout == "plugin"


def test_vibe_plugin_layout_of_every_kind():
    files = {**_item("rule", "style", "description: House style\n"),
             **_item("command", "ship", "description: Ship it\n"),
             **_item("agent", "helper", "description: " + "Helps. " * 60 + "\nmode: primary\ntools: [read]\n", "You help.\n"),
             **_item("hook", "guard", "description: Guard\nevent: PreToolUse\nscript: echo hi\n"),
             **_item("context", "about", "description: About\n", "## About\n")}
    plan, out = harness.build(files, ["vibe"], layout="plugin", plugin_name="kit")
    assert {"skills/style/SKILL.md", "skills/ship/SKILL.md", "ai.mistral.vibe/agents/helper.toml", "plugin.json"} <= set(out)
    assert not [p for p in out if p.startswith((".agents/", ".vibe/")) or p == "AGENTS.md"]
    helper = tomledit.loads(out["ai.mistral.vibe/agents/helper.toml"])
    assert helper["schema_version"] == 1 and helper["agent_type"] == "subagent" and len(helper["description"]) <= 300
    got = _fields(plan, "agent", "helper")
    assert got["mode"][0] == "degraded" and got["description"][0] == "degraded"
    assert all(s == "dropped" for s, _ in _fields(plan, "hook", "guard").values() if s != "omitted")
