"""The Amp adapter: the shared .agents/skills files OpenClaw and Hermes write (rules, agents
and commands as skills), AGENTS.md, MCP servers in .amp/settings.json `amp.mcpServers`, hooks
dropped (TypeScript plugins), the `amp:` block never in the shared file."""

import json
from typing import Dict, Sequence

from agentrc.clients.amp import Amp
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import item as _item

AMP = Amp()


def _build(files: Dict[str, str], clients: Sequence[str] = ("amp",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str, client: str = "amp"):
    return harness.fields(plan, kind, name, client)


EVERY_KIND = {**_item("skill", "notes", "name: notes\ndescription: Use when drafting notes\n"),
              **_item("rule", "style", "description: House style\nscope:\n  paths: ['src/**']\n"),
              **_item("command", "ship", "description: Ship it\nagent: tester\nargument-hint: '[v]'\n",
                      "Ship $ARGUMENTS.\n"),
              **_item("agent", "tester", "description: Use when tests must run\nmodel: haiku\ntools: [read]\n"),
              **_item("context", "project", "description: About\n", "## About\n\nA monorepo.\n")}


def test_every_kind_is_the_file_openclaw_writes_and_amp_writes_nothing_of_its_own():
    plan, out = _build(EVERY_KIND)
    _, openclaw = _build(EVERY_KIND, ("openclaw",))
    assert out == openclaw
    assert sorted(out) == [".agents/skills/notes/SKILL.md", ".agents/skills/ship/SKILL.md",
                           ".agents/skills/style/SKILL.md", ".agents/skills/tester/SKILL.md", "AGENTS.md"]
    assert _fields(plan, "rule", "style")["scope"][0] == "degraded"
    assert _fields(plan, "agent", "tester")["model"] == ("dropped", "Amp has no model selector: it picks the model "
                                                                    "itself")
    assert _fields(plan, "agent", "tester")["tools"][0] == "dropped"
    assert "Amp has no custom slash commands" in _fields(plan, "command", "ship")["description"][1]
    assert _fields(plan, "command", "ship")["argument-hint"][0] == "dropped"


def test_built_with_codex_the_shared_files_are_one_copy():
    plan, out = _build(EVERY_KIND, ("codex", "amp"))
    assert not [d for d in plan.diagnostics if d.code == "AR090"]
    _, alone = _build(EVERY_KIND, ("amp",))
    for path in (".agents/skills/notes/SKILL.md", ".agents/skills/style/SKILL.md", ".agents/skills/ship/SKILL.md"):
        assert out[path] == alone[path]


def test_the_amp_block_is_dropped_and_never_written_into_the_shared_file():
    files = _item("skill", "notes", "name: notes\ndescription: Use when drafting notes\namp:\n  secret-key: 1\n"
                                    "hermes:\n  platforms: [linux]\n")
    plan, out = _build(files)
    text = out[".agents/skills/notes/SKILL.md"]
    assert "secret-key" not in text and "platforms" in text
    status, detail = _fields(plan, "skill", "notes")["amp"]
    assert status == "dropped" and "Agent Skills keys only" in detail


def test_hooks_are_dropped_with_no_output():
    plan, out = _build(_item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash]\n"
                                              "script: ./guard.sh\namp:\n  x: 1\n", extra={"guard.sh": "#!/bin/sh\n"}))
    assert out == {}
    fields = _fields(plan, "hook", "guard")
    assert {s for s, _ in fields.values()} <= {"dropped", "omitted"}
    assert "TypeScript plugins" in fields["event"][1]


def _server(name: str, transport: str, **kw) -> McpServer:
    key = "local" if transport == "stdio" else "remote"
    return McpServer(name, "b", "b.bundle.yaml", (1, 1), transport, fields=freeze({key: {}, **kw.pop("fields", {})}),
                     **kw)


def test_mcp_servers_go_to_amp_settings_as_written():
    local = AMP.render_server(_server("fs", "stdio", command="npx", args=("-y", "fs"), env=freeze({"ROOT": "${R}"})))
    remote = AMP.render_server(_server("docs", "sse", url="https://x/sse",
                                       headers=freeze({"Authorization": "Bearer ${TOKEN}"})))
    (frag,) = local.fragments
    assert (frag.path, frag.key, json.loads(frag.value)) == (".amp/settings.json", ("amp.mcpServers", "fs"),
                                                 {"command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "${R}"}})
    (frag,) = remote.fragments
    assert json.loads(frag.value) == {"url": "https://x/sse", "headers": {"Authorization": "Bearer ${TOKEN}"}}
    assert "amp mcp approve" in local.report.fields[0].detail


def test_a_server_name_with_dots_and_quotes_stays_one_key():
    hostile = 'a.b"c'
    (frag,) = AMP.render_server(_server(hostile, "stdio", command="echo")).fragments
    assert frag.key == ("amp.mcpServers", hostile)  # never split at the dot into nested keys


def test_a_double_hyphen_name_is_reported_degraded():
    plan, _ = _build(_item("rule", "a--b", "description: D\n"))
    assert _fields(plan, "rule", "a--b")["name"][0] == "degraded"
