"""The Kimi Code CLI adapter: the same shared .agents/skills files as OpenClaw and Hermes,
AGENTS.md, .claude/skills declared as read too, and hooks and MCP servers reported dropped
with the entries to add to the user's ~/.kimi files (hook scripts copied)."""

import json

from agentrc.clients.kimi import Kimi
from agentrc.frozen import freeze
from agentrc.model import Kind, McpServer
from agentrc.text import tomledit

from . import harness
from .harness import item as _item

KIMI = Kimi()


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "kimi")


def test_same_files_as_openclaw():
    files = {**_item("skill", "notes", "name: notes\ndescription: Use when drafting notes\n"),
             **_item("rule", "style", "description: House style\n"),
             **_item("command", "ship", "description: Ship it\n", "Ship $ARGUMENTS.\n"),
             **_item("agent", "tester", "description: Use when tests must run\nmodel: haiku\ntools: [bash]\n"),
             **_item("context", "project", "description: About\n", "## About\n\nA monorepo.\n")}
    plan, out = harness.build(files, ("kimi",))
    _, openclaw = harness.build(files, ("openclaw",))
    assert out == openclaw
    assert "/skill:ship" in _fields(plan, "command", "ship")["description"][1]
    assert "--agent-file" in _fields(plan, "agent", "tester")["model"][1]


def test_kimi_reads_claudes_skills_too():
    assert KIMI.also_reads[Kind.SKILL] == ("claude", ".agents/skills")
    assert ".kimi/skills" in KIMI.discovery_off[".claude/skills"]


def test_hooks_are_dropped_with_the_entry_to_add():
    files = _item("hook", "guard", "description: Guard\nevent: PreToolUse\nmatcher: Bash|Edit\nscript: ./g.sh\n"
                  "timeout: 900\n", extra={"g.sh": "#!/bin/sh\nexit 2\n"})
    plan, out = harness.build(files, ("kimi",))
    assert out[".kimi/agentrc/hooks/guard/g.sh"].startswith("#!/bin/sh")
    event = _fields(plan, "hook", "guard")["event"]
    assert event[0] == "dropped" and "~/.kimi/config.toml" in event[1]
    inline = event[1].split("`[[hooks]]` ", 1)[1].split("} ", 1)[0] + "}"
    entry = tomledit.loads("h = " + inline)["h"]
    assert entry == {"event": "PreToolUse", "matcher": "^(Shell|StrReplaceFile)$",
                     "command": ".kimi/agentrc/hooks/guard/g.sh", "timeout": 600}


def test_a_hook_kimi_cannot_narrow_is_refused_and_hostile_names_too():
    plan, out = harness.build(_item("hook", "odd", "description: Odd\nevent: SessionStart\nmatcher: startup\n"
                                    "script: echo hi\n"), ("kimi",))
    got = _fields(plan, "hook", "odd")
    assert got["event"][0] == "dropped" and "matcher" in got["event"][1]
    assert not [p for p in out if p.startswith(".kimi/")]
    result = harness.plan(_item("skill", "..", "name: ..\ndescription: Escape\n"), ("kimi",))
    assert not result.ok
    assert not [f for f in result.files if ".." in f.path.split("/")]


def test_mcp_servers_are_dropped_with_the_mcp_json_entry():
    remote = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "http", url="https://x/mcp",
                       headers=freeze({"Authorization": "Bearer ${TOKEN}"}), fields=freeze({"remote": {}}))
    r = KIMI.render_server(remote)
    assert not r.fragments and not r.files
    detail = r.report.fields[0].detail
    assert r.report.fields[0].status == "dropped" and "~/.kimi/mcp.json" in detail
    entry = json.loads(detail.split("add: `mcpServers: ", 1)[1].rstrip("`"))
    assert entry == {"docs": {"url": "https://x/mcp", "transport": "http",
                              "headers": {"Authorization": "Bearer ${TOKEN}"}}}
