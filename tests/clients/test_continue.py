"""The Continue adapter: rules in .continue/rules (globs for a scoped rule, supporting files out
of that directory, where every .md is a rule), skills and commands in .continue/skills, agent
files in .continue/agents (Continue's tool names, comma-separated), one MCP block file per
server in .continue/mcpServers (`${VAR}` as `${{ secrets.VAR }}`), no hooks. Checked against
cn 1.5.47 by tests/conformance/test_continue_discovery.py."""

from typing import Dict, Sequence

import pytest
import yaml

from agentrc.clients.continuedev import Continue
from agentrc.clients.registry import CLIENTS
from agentrc.frozen import freeze
from agentrc.model import Kind, McpServer

from . import harness
from .harness import frontmatter
from .harness import item as _item

CONTINUE = Continue()


def _build(files: Dict[str, str], clients: Sequence[str] = ("continue",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "continue")


def test_rules_always_on_or_with_globs_and_their_files_outside_the_rules_directory():
    files = {**_item("rule", "style", "description: House style\n", "See [list](list.md).\n",
                     extra={"list.md": "x\n"}),
             **_item("rule", "api", "description: API\nscope:\n  paths: ['src/api/**']\n")}
    plan, out = _build(files)
    assert frontmatter(out[".continue/rules/style.md"]) == {"name": "style", "description": "House style"}
    assert "](../agentrc/rules/style/list.md)" in out[".continue/rules/style.md"]
    assert ".continue/agentrc/rules/style/list.md" in out
    assert not [p for p in out if p.startswith(".continue/rules/") and p.count("/") > 2]
    assert frontmatter(out[".continue/rules/api.md"])["globs"] == "src/api/**"
    status, detail = _fields(plan, "rule", "api")["scope"]
    assert status == "degraded" and "cn CLI" in detail


def test_skills_and_commands_are_continue_skills():
    files = {**_item("skill", "notes", "name: notes\ndescription: Notes\ncompatibility: any\n"),
             **_item("command", "ship", "description: Ship it\nargument-hint: <v>\nmodel: haiku\n",
                     "Ship $ARGUMENTS.\n")}
    plan, out = _build(files)
    assert frontmatter(out[".continue/skills/notes/SKILL.md"]) == {"name": "notes", "description": "Notes"}
    assert _fields(plan, "skill", "notes")["compatibility"][0] == "dropped"
    assert frontmatter(out[".continue/skills/ship/SKILL.md"]) == {"name": "ship", "description": "Ship it"}
    fields = _fields(plan, "command", "ship")
    assert fields["argument-hint"][0] == fields["model"][0] == "dropped"
    assert fields["body"][0] == "degraded" and "$ARGUMENTS" in fields["body"][1]


def test_a_command_named_like_a_skill_gets_its_own_directory():
    files = {**_item("skill", "ship", "name: ship\ndescription: S\n"), **_item("command", "ship", "description: C\n")}
    plan, out = _build(files)
    assert frontmatter(out[".continue/skills/ship-command/SKILL.md"])["name"] == "ship-command"
    assert _fields(plan, "command", "ship")["name"][0] == "degraded"


def test_agent_files_with_continue_tool_names():
    files = {**_item("agent", "tester", "description: Use when tests run\ntools: [read, edit, glob]\nmodel: haiku\n"
                                        "mode: subagent\n"),
             **_item("agent", "open", "description: Anything\ntools: []\n")}
    plan, out = _build(files)
    fm = frontmatter(out[".continue/agents/tester.md"])
    assert fm == {"name": "tester", "description": "Use when tests run", "tools": "Read, Edit, MultiEdit"}
    fields = _fields(plan, "agent", "tester")
    assert fields["tools"][0] == "degraded" and "glob" in fields["tools"][1]
    assert fields["model"][0] == "dropped" and fields["mode"][0] == "degraded"
    assert "cn --agent .continue/agents/tester.md" in fields["body"][1]
    assert "tools" not in frontmatter(out[".continue/agents/open.md"])
    assert _fields(plan, "agent", "open")["tools"][0] == "dropped"


def test_hooks_write_nothing():
    plan, out = _build(_item("hook", "guard", "description: G\nevent: PreToolUse\nscript: make x\n"))
    assert not [p for p in out if p.startswith(".continue")]
    assert _fields(plan, "hook", "guard")["script"][0] == "dropped"


def _server(transport: str, name: str = "docs", **kw) -> McpServer:
    fields = {"remote": {}} if transport != "stdio" else {"local": {}}
    return McpServer(name, "b", "b.bundle.yaml", (1, 1), transport, fields=freeze(fields), **kw)


def test_mcp_block_files_with_secrets_references():
    r = CONTINUE.render_server(_server("http", url="https://x/mcp", headers=freeze({"Authorization": "Bearer ${T}"})))
    [f] = r.files
    assert f.path == ".continue/mcpServers/docs.yaml"
    assert yaml.safe_load(f.content) == {"name": "docs", "version": "0.0.1", "schema": "v1", "mcpServers": [
        {"name": "docs", "type": "streamable-http", "url": "https://x/mcp",
         "requestOptions": {"headers": {"Authorization": "Bearer ${{ secrets.T }}"}}}]}
    assert {x.field: x.status for x in r.report.fields}["remote"] == "degraded"
    r = CONTINUE.render_server(_server("stdio", command="npx", args=("-y", "${PKG:-fs}"), env=freeze({"R": "${R}"})))
    [server] = yaml.safe_load(r.files[0].content)["mcpServers"]
    assert server == {"name": "docs", "command": "npx", "args": ["-y", "fs"], "env": {"R": "${{ secrets.R }}"}}
    [server] = yaml.safe_load(CONTINUE.render_server(_server("sse", url="https://x/sse")).files[0].content)["mcpServers"]
    assert server["type"] == "sse"


@pytest.mark.parametrize("name", ['x.y"z', "../up", ".hidden"])
def test_a_server_name_that_cannot_be_a_file_is_dropped(name):
    r = CONTINUE.render_server(_server("sse", name=name, url="https://x/sse"))
    assert not r.files and all(f.status == "dropped" for f in r.report.fields)


@pytest.mark.parametrize("name", ["a--b", "x" * 64])
def test_hostile_item_names_stay_in_the_continue_directories(name):
    _, out = _build({**_item("command", name, "description: C\n"), **_item("rule", name, "description: R\n"),
                     **_item("agent", name, "description: A\n")})
    assert {f".continue/rules/{name}.md", f".continue/agents/{name}.md"} <= set(out)
    assert all(p.startswith(".continue/") or p == "AGENTS.md" for p in out)


def test_registered_with_what_it_also_reads():
    adapter = CLIENTS["continue"]
    assert adapter.title == "Continue" and adapter.skill_dir == ".continue/skills"
    assert adapter.also_reads == {Kind.SKILL: ("claude",), Kind.COMMAND: ("claude",)}


def test_built_with_claude_the_claude_skills_are_named():
    plan, _ = _build(_item("skill", "notes", "name: notes\ndescription: Notes\n"), ("claude", "continue"))
    report = next(r for r in plan.reports if (r.client, r.kind, r.name) == ("claude", "skill", "notes"))
    assert any(by[0] == "continue" for by in report.also_loaded_by), report.also_loaded_by
