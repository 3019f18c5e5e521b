"""The Kilo Code adapter: opencode's formats in Kilo's directories (.kilo/rules as instruction
files by themselves, .kilo/skills, .kilo/agents, .kilo/commands, kilo.json `mcp`), and MCP
entries that hold no variable reference, since Kilo skips a project config's server (or the
whole file) that has one (checked against kilo 7.7.7 by tests/conformance/test_kilo_discovery.py)."""

import json
from typing import Dict, Sequence

import pytest

from agentrc.clients.kilo import Kilo
from agentrc.clients.registry import CLIENTS
from agentrc.frozen import freeze
from agentrc.model import Kind, McpServer

from . import harness
from .harness import frontmatter
from .harness import item as _item

KILO = Kilo()


def _build(files: Dict[str, str], clients: Sequence[str] = ("kilo",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "kilo")


def test_rules_skills_agents_and_commands_in_kilos_directories():
    files = {**_item("rule", "style", "description: House style\nscope:\n  paths: ['src/**']\n",
                     "See [list](list.md).\n", extra={"list.md": "x\n"}),
             **_item("skill", "notes", "name: notes\ndescription: Use when drafting notes\n"),
             **_item("agent", "tester", "description: Use when tests must run\nmodel: haiku\ntools: [read, bash]\n",
                     "Use [the guide](guide.md).\n", extra={"guide.md": "g\n"}),
             **_item("command", "ship", "description: Ship it\nargument-hint: <v>\nagent: tester\n",
                     "Ship $ARGUMENTS.\n")}
    plan, out = _build(files)
    assert sorted(p for p in out if p != "AGENTS.md") == [
        ".kilo/agentrc/agents/tester/guide.md", ".kilo/agentrc/rules/style/list.md", ".kilo/agents/tester.md",
        ".kilo/commands/ship.md", ".kilo/rules/style.md", ".kilo/skills/notes/SKILL.md"]
    assert "](../agentrc/rules/style/list.md)" in out[".kilo/rules/style.md"]
    assert "](../agentrc/agents/tester/guide.md)" in out[".kilo/agents/tester.md"]
    agent = frontmatter(out[".kilo/agents/tester.md"])
    assert agent["mode"] == "subagent" and agent["model"] == "anthropic/claude-haiku-4-5"
    assert agent["permission"]["bash"] == "allow" and agent["permission"]["edit"] == "deny"
    assert frontmatter(out[".kilo/commands/ship.md"]) == {"description": "Ship it", "agent": "tester", "subtask": True}
    assert _fields(plan, "rule", "style")["scope"][0] == "degraded"
    hint = _fields(plan, "command", "ship")["argument-hint"]
    assert hint[0] == "dropped" and "Kilo" in hint[1] and "opencode" not in hint[1]


def test_hooks_are_dropped_as_plugins():
    plan, out = _build(_item("hook", "guard", "description: G\nevent: PreToolUse\nscript: make x\n"))
    assert not [p for p in out if p.startswith(".kilo")]
    status, detail = _fields(plan, "hook", "guard")["script"]
    assert status == "dropped" and ".kilo/plugins" in detail


def _server(transport: str, **kw) -> McpServer:
    fields = {"remote": {}} if transport != "stdio" else {"local": {}}
    return McpServer(kw.pop("name", "docs"), "b", "b.bundle.yaml", (1, 1), transport, fields=freeze(fields), **kw)


def test_a_header_with_a_variable_is_left_out_for_the_users_config():
    r = KILO.render_server(_server("http", url="https://x/mcp",
                                   headers=freeze({"Authorization": "Bearer ${TOKEN}", "X-Team": "core"})))
    [frag] = r.fragments
    assert (frag.path, frag.key) == ("kilo.json", ("mcp", "docs"))
    entry = json.loads(frag.value)
    assert entry == {"type": "remote", "url": "https://x/mcp", "headers": {"X-Team": "core"}, "enabled": True}
    status, detail = {f.field: (f.status, f.detail) for f in r.report.fields}["remote"]
    assert status == "degraded" and "Authorization" in detail and "~/.config/kilo/kilo.json" in detail
    assert "{env:" not in frag.value


def test_stdio_environment_inherited_or_left_out_never_referenced():
    r = KILO.render_server(_server("stdio", command="npx", args=("-y", "fs"),
                                   env=freeze({"ROOT": "${ROOT}", "KEY": "${OTHER}", "MODE": "ro"})))
    entry = json.loads(r.fragments[0].value)
    assert entry == {"type": "local", "command": ["npx", "-y", "fs"], "environment": {"MODE": "ro"}, "enabled": True}
    status, detail = {f.field: (f.status, f.detail) for f in r.report.fields}["local"]
    assert status == "degraded" and "KEY left out" in detail and "ROOT inherited" in detail
    r = KILO.render_server(_server("stdio", command="npx", env=freeze({"ROOT": "${ROOT}"})))
    assert {f.field: f.status for f in r.report.fields}["local"] == "mapped"
    assert "environment" not in json.loads(r.fragments[0].value)


@pytest.mark.parametrize("where", ["url", "arg", "command"])
def test_a_variable_in_a_url_or_command_drops_the_server(where):
    value = "${HOST}"
    if where == "url":
        server = _server("http", url=f"https://{value}/mcp")
    else:
        server = _server("stdio", command=value if where == "command" else "npx",
                         args=(value,) if where == "arg" else ())
    r = KILO.render_server(server)
    assert not r.fragments
    assert all(f.status == "dropped" and "~/.config/kilo/kilo.json" in f.detail for f in r.report.fields)


def test_a_default_reference_is_resolved_before_anything_is_written():
    r = KILO.render_server(_server("http", url="https://x/mcp", headers=freeze({"X": "${T:-none}"})))
    assert json.loads(r.fragments[0].value)["headers"] == {"X": "none"}


@pytest.mark.parametrize("name", ["a--b", "x" * 64])
def test_hostile_names_stay_in_the_kilo_directories(name):
    _, out = _build({**_item("command", name, "description: C\n"), **_item("rule", name, "description: R\n"),
                     **_item("agent", name, "description: A\n")})
    assert {f".kilo/commands/{name}.md", f".kilo/rules/{name}.md", f".kilo/agents/{name}.md"} <= set(out)
    assert all(p.startswith(".kilo/") or p == "AGENTS.md" for p in out)


def test_a_hostile_server_name_is_one_key():
    hostile = 'x.y"z'
    [frag] = KILO.render_server(_server("sse", name=hostile, url="https://x/sse")).fragments
    assert frag.key == ("mcp", hostile)


def test_registered_with_what_it_also_reads():
    kilo = CLIENTS["kilo"]
    assert kilo.skill_dir == ".kilo/skills" and kilo.title == "Kilo Code"
    assert kilo.also_reads[Kind.RULE] == ("opencode", ".agents/skills")
    assert kilo.also_reads[Kind.SKILL] == ("claude", ".agents/skills")
    assert "KILO_DISABLE_CLAUDE_CODE_SKILLS=1" in kilo.discovery_off[".claude/skills"]
    assert "KILO_DISABLE_EXTERNAL_SKILLS=1" in kilo.discovery_off[".agents/skills"]


def test_built_with_opencode_the_rules_opencode_registers_are_named():
    files = _item("rule", "style", "description: House style\n")
    plan, _ = _build(files, ("opencode", "kilo"))
    report = next(r for r in plan.reports if (r.client, r.kind, r.name) == ("opencode", "rule", "style"))
    assert any(by[0] == "kilo" for by in report.also_loaded_by), report.also_loaded_by
