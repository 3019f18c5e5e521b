"""The Hermes Agent adapter: the same shared .agents/skills files as OpenClaw, AGENTS.md
(never .hermes.md), and hooks and MCP servers reported dropped with the config.yaml snippet,
in Hermes' event names, tool names and units."""


import json
from typing import Dict, Sequence

import pytest
import yaml

from agentrc.clients.hermes import Hermes
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import item as _item

HERMES = Hermes()


def _build(files: Dict[str, str], clients: Sequence[str] = ("hermes",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str, client: str = "hermes"):
    return harness.fields(plan, kind, name, client)


def _snippet(detail: str) -> dict:
    """The `hooks: {...}` / `mcp_servers: {...}` line a detail tells the user to paste."""
    return yaml.safe_load(detail.split("add: `", 1)[1].split("`", 1)[0])


def test_same_files_as_openclaw_and_no_hermes_md():
    files = {**_item("skill", "notes", "name: notes\ndescription: Use when drafting notes\n"),
             **_item("rule", "style", "description: House style\n"),
             **_item("command", "ship", "description: Ship it\n", "Ship $ARGUMENTS.\n"),
             **_item("agent", "tester", "description: Use when tests must run\nmodel: haiku\n"),
             **_item("context", "project", "description: About\n", "## About\n\nA monorepo.\n")}
    plan, out = _build(files)
    _, openclaw = _build(files, ("openclaw",))
    assert out == openclaw
    assert ".hermes.md" not in out and "HERMES.md" not in out
    assert "hermes skills trust" in _fields(plan, "skill", "notes")["description"][1]
    assert "/ship" in _fields(plan, "command", "ship")["description"][1]
    assert _fields(plan, "agent", "tester")["model"] == ("dropped", "Hermes has no per-agent or per-skill model")


def test_hermes_skill_keys_outside_the_standard_point_at_the_hermes_block():
    files = _item("skill", "notes", "name: notes\ndescription: Use when drafting notes\nplatforms: [linux]\n")
    plan, out = _build(files)
    assert "platforms" not in out[".agents/skills/notes/SKILL.md"]
    assert "set it in the hermes: block" in _fields(plan, "skill", "notes")["platforms"][1]


@pytest.mark.parametrize("event, hermes_event", [
    ("SessionStart", "on_session_start"), ("UserPromptSubmit", "pre_llm_call"), ("PreToolUse", "pre_tool_call"),
    ("PostToolUse", "post_tool_call"), ("Stop", "on_session_end"), ("SubagentStop", "subagent_stop"),
    ("SessionEnd", "on_session_finalize"), ("Notification", "pre_approval_request"),
])
def test_hook_events_in_the_snippet(event, hermes_event):
    plan, out = _build(_item("hook", "h", f"description: H\nevent: {event}\nscript: make check\n"))
    assert out == {}
    fields = _fields(plan, "hook", "h")
    assert fields["event"][0] == "dropped" and "~/.hermes/config.yaml" in fields["event"][1]
    assert _snippet(fields["event"][1]) == {"hooks": {hermes_event: [{"command": "make check"}]}}


def test_hook_without_a_hermes_event_is_dropped_plainly():
    plan, _ = _build(_item("hook", "h", "description: H\nevent: PreCompact\nscript: make check\n"))
    fields = _fields(plan, "hook", "h")
    assert fields["event"] == ("dropped", "Hermes has no shell-hook event for PreCompact")


def test_hook_snippet_uses_hermes_tool_names_seconds_and_the_source_script():
    files = {**_item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash, edit, write]\n"
                                      "script: ./guard.sh --strict\ntimeout: 900\nasync: true\n"
                                      "hermes:\n  fail_closed: true\n", extra={"guard.sh": "#!/bin/sh\n"}),
             **_item("hook", "fmt", "description: Fmt\nevent: PostToolUse\nmatcher: Edit|MultiEdit|Write|mcp__x__y\n"
                                    "script: make fmt\n")}
    plan, out = _build(files)
    assert out == {}
    guard = _fields(plan, "hook", "guard")
    assert _snippet(guard["event"][1]) == {"hooks": {"pre_tool_call": [{
        "matcher": "terminal|patch|write_file", "command": "reg/hooks/guard/guard.sh --strict", "timeout": 300,
        "fail_closed": True}]}}
    assert "caps it at 300" in guard["timeout"][1]
    assert "synchronously" in guard["async"][1]
    assert all(status in ("dropped", "omitted") for status, _ in guard.values())
    fmt = _fields(plan, "hook", "fmt")
    assert _snippet(fmt["event"][1])["hooks"]["post_tool_call"][0]["matcher"] == "patch|write_file|mcp__x__y"
    assert "kept as written: mcp__x__y" in fmt["matcher"][1]


def test_mcp_snippets():
    remote = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "sse", url="https://x/sse",
                       headers=freeze({"Authorization": "Bearer ${TOKEN}"}), fields=freeze({"remote": {}}))
    local = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "fs"),
                      env=freeze({"ROOT": "."}), fields=freeze({"local": {}}))
    r = HERMES.render_server(remote)
    assert not r.fragments and not r.files
    detail = r.report.fields[0].detail
    assert r.report.fields[0].status == "dropped"
    assert _snippet(detail) == {"mcp_servers": {"docs": {"url": "https://x/sse",
                                                         "headers": {"Authorization": "Bearer ${TOKEN}"},
                                                         "transport": "sse"}}}
    assert _snippet(HERMES.render_server(local).report.fields[0].detail) == {
        "mcp_servers": {"fs": {"command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "<redacted>"}}}}  # literal: a secret?
    json.loads(json.dumps(detail))  # plain text, no objects
