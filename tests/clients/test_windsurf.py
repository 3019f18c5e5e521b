"""The Windsurf (Devin Desktop) adapter: `.windsurf/rules` triggers and globs lists, the
12,000-character limit, `.windsurf/skills` with Devin's keys, workflows, `.devin/agents`,
hooks in both `.devin/hooks.v1.json` (Claude format, Devin tool names, seconds) and
`.windsurf/hooks.json` (Cascade's snake_case events), and MCP servers in `.devin/config.json`."""


import json
from typing import Dict, Sequence

import yaml

from agentrc.clients.windsurf import Windsurf
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import frontmatter as _frontmatter, item as _item

WINDSURF = Windsurf()


# --- rules -----------------------------------------------------------------------------------

def _build(files: Dict[str, str], clients: Sequence[str] = ("windsurf",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str, client: str = "windsurf"):
    return harness.fields(plan, kind, name, client)


def test_rules_always_on_or_glob_with_a_globs_list():
    files = {**_item("rule", "style", "description: House style\n"),
             **_item("rule", "api", "description: API rules\nscope:\n  paths:\n    - \"src/api/**\"\n")}
    plan, out = _build(files)
    assert out[".windsurf/rules/style.md"].startswith("---\ntrigger: always_on\ndescription: House style\n---\n")
    assert _frontmatter(out[".windsurf/rules/api.md"]) == {"trigger": "glob", "description": "API rules",
                                                           "globs": ["src/api/**"]}
    assert "globs:\n  - src/api/**\n" in out[".windsurf/rules/api.md"]  # a YAML list: Devin rejects a scalar
    assert _fields(plan, "rule", "api")["scope"] == ("mapped", "trigger: glob with a globs: list")


def test_rule_over_12000_characters_is_degraded():
    body = "## Long\n\n" + ("A sentence of guidance that goes on for a while.\n\n" * 260)
    plan, out = _build(_item("rule", "long", "description: Long\n", body))
    assert len(out[".windsurf/rules/long.md"]) > 12000
    status, detail = _fields(plan, "rule", "long")["body"]
    assert status == "degraded" and "12,000" in detail
    plan, _ = _build(_item("rule", "short", "description: Short\n"))
    assert _fields(plan, "rule", "short")["body"][0] == "emitted"


# --- skills, workflows, agents ------------------------------------------------------------------

def test_skill_keys_devin_reads():
    files = _item("skill", "notes", "name: notes\ndescription: Use when drafting notes\nargument-hint: \"[tag]\"\n"
                                    "disable-model-invocation: true\nallowed-tools: Read, Grep Bash\nmodel: sonnet\n"
                                    "x-team: 1\n")
    plan, out = _build(files)
    assert _frontmatter(out[".windsurf/skills/notes/SKILL.md"]) == {
        "name": "notes", "description": "Use when drafting notes", "argument-hint": "[tag]",
        "allowed-tools": ["read", "grep", "exec"], "model": "sonnet", "triggers": ["user"],
        "metadata": {"x-team": "1"}}
    fields = _fields(plan, "skill", "notes")
    assert fields["disable-model-invocation"][0] == "mapped"
    assert fields["x-team"][0] == "degraded"  # carried in the Agent Skills metadata map, as text
    plan, out = _build(_item("skill", "odd", "name: odd\ndescription: Use when odd\nallowed-tools: Read Frobnicate\n"))
    assert "allowed-tools" not in out[".windsurf/skills/odd/SKILL.md"]
    assert "Frobnicate" in _fields(plan, "skill", "odd")["allowed-tools"][1]


def test_command_is_a_workflow_with_an_arguments_note():
    files = _item("command", "ship", "description: Ship it\nargument-hint: \"<v>\"\nagent: tester\n",
                  "Ship $ARGUMENTS.\n")
    plan, out = _build(files)
    assert out[".windsurf/workflows/ship.md"] == (
        "---\ndescription: Ship it\n---\n\n# ship\n\nIn these instructions, `$ARGUMENTS` stands for the text the user "
        "typed after the command.\n\nShip $ARGUMENTS.\n")
    fields = _fields(plan, "command", "ship")
    assert fields["argument-hint"][0] == "dropped" and fields["agent"][0] == "dropped"
    assert fields["body"][0] == "degraded"


def test_agent_is_a_devin_subagent_profile():
    files = _item("agent", "tester", "description: Use when tests must run\nmode: primary\nmodel: opus\n"
                                     "tools: [bash, read, web-fetch]\n", "See [notes](./notes.md).\n",
                  {"notes.md": "# Notes\n"})
    plan, out = _build(files)
    text = out[".devin/agents/tester/AGENT.md"]
    assert _frontmatter(text) == {"name": "tester", "description": "Use when tests must run", "model": "opus",
                                  "allowed-tools": ["exec", "read"]}
    assert out[".devin/agents/tester/notes.md"] == "# Notes\n" and "(./notes.md)" in text
    fields = _fields(plan, "agent", "tester")
    assert fields["tools"][0] == "degraded" and "web-fetch" in fields["tools"][1]
    assert fields["mode"][0] == "degraded"
    plan, out = _build(_item("agent", "other", "description: Use when other\nmodel: openai/gpt-5\n"))
    assert "model" not in _frontmatter(out[".devin/agents/other/AGENT.md"])
    assert _fields(plan, "agent", "other")["model"][0] == "dropped"


# --- hooks ----------------------------------------------------------------------------------

GUARD = _item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash, edit, grep]\n"
                               "script: ./guard.sh --strict\ntimeout: 15\n", extra={"guard.sh": "#!/bin/sh\n"})


def test_tool_hook_in_both_files():
    plan, out = _build(GUARD)
    command = '"${DEVIN_PROJECT_DIR:-.}/.windsurf/agentrc/hooks/guard/guard.sh" --strict'
    assert json.loads(out[".devin/hooks.v1.json"]) == {"PreToolUse": [
        {"matcher": "exec|edit|grep", "hooks": [{"type": "command", "command": command, "timeout": 15}]}]}
    assert json.loads(out[".windsurf/hooks.json"]) == {"hooks": {
        "pre_run_command": [{"command": command}], "pre_write_code": [{"command": command}]}}
    assert ".windsurf/agentrc/hooks/guard/guard.sh" in out
    fields = _fields(plan, "hook", "guard")
    assert "pre_run_command, pre_write_code" in fields["event"][1] and "no hook for grep" in fields["event"][1]
    assert fields["timeout"] == ("emitted", "seconds in .devin/hooks.v1.json; Cascade's hooks.json has no timeout")


def test_raw_matcher_is_translated_for_both():
    files = _item("hook", "fmt", "description: Fmt\nevent: PostToolUse\nmatcher: Edit|Write|mcp__gh__issue\n"
                                 "script: make fmt\n")
    _, out = _build(files)
    assert json.loads(out[".devin/hooks.v1.json"])["PostToolUse"][0]["matcher"] == "edit|write|mcp__gh__issue"
    assert set(json.loads(out[".windsurf/hooks.json"])["hooks"]) == {"post_write_code", "post_mcp_tool_use"}


def test_other_events():
    files = {**_item("hook", "start", "description: S\nevent: SessionStart\nscript: echo hi\n"),
             **_item("hook", "prompt", "description: P\nevent: UserPromptSubmit\nscript: echo p\n"),
             **_item("hook", "stop", "description: S\nevent: Stop\nscript: echo s\n"),
             **_item("hook", "compact", "description: C\nevent: PreCompact\nscript: echo c\n")}
    plan, out = _build(files)
    assert set(json.loads(out[".devin/hooks.v1.json"])) == {"SessionStart", "UserPromptSubmit", "Stop"}
    assert json.loads(out[".windsurf/hooks.json"]) == {"hooks": {
        "pre_user_prompt": [{"command": "echo p"}], "post_cascade_response": [{"command": "echo s"}]}}
    assert "Cascade has no SessionStart hook" in _fields(plan, "hook", "start")["event"][1]
    assert _fields(plan, "hook", "compact")["event"][0] == "dropped"


def test_with_claude_devin_runs_the_claude_hooks_and_cascade_keeps_its_own():
    plan, out = _build(GUARD, ("claude", "windsurf"))
    assert ".devin/hooks.v1.json" not in out
    assert set(json.loads(out[".windsurf/hooks.json"])["hooks"]) == {"pre_run_command", "pre_write_code"}
    assert ".claude/settings.json" in _fields(plan, "hook", "guard")["event"][1]
    plan, out = _build(_item("hook", "start", "description: S\nevent: SessionStart\nscript: echo hi\n"),
                       ("claude", "windsurf"))
    assert not any(p.startswith((".devin/", ".windsurf/")) for p in out)
    assert all(s in ("mapped", "omitted") for s, _ in _fields(plan, "hook", "start").values())


# --- MCP ----------------------------------------------------------------------------------

def test_mcp_servers_in_devin_config():
    remote = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "sse", url="https://x/sse",
                       headers=freeze({"Authorization": "Bearer ${TOKEN}"}), fields=freeze({"remote": {}}))
    local = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "fs"),
                      fields=freeze({"local": {}}))
    r = WINDSURF.render_server(remote)
    assert [(f.path, f.key) for f in r.fragments] == [(".devin/config.json", ("mcpServers", "docs"))]
    assert json.loads(r.fragments[0].value) == {"url": "https://x/sse", "transport": "sse",
                                                "headers": {"Authorization": "Bearer ${TOKEN}"}}
    status, detail = r.report.fields[0].status, r.report.fields[0].detail
    assert status == "degraded" and ".devin/config.local.json" in detail and "TOKEN" in detail
    r = WINDSURF.render_server(local)
    assert json.loads(r.fragments[0].value) == {"command": "npx", "args": ["-y", "fs"]}
    assert r.report.fields[0].status == "mapped"
