"""The Cursor adapter: rule globs in the form Cursor parses, readonly agents, commands and
$ARGUMENTS, hook events and matchers, the .claude/settings.json hand-off, MCP shapes."""


import json
from typing import Dict, Sequence

import pytest

from agentrc.pipeline import stages as pipeline
from agentrc.clients.base import expand_braces as globs
from agentrc.clients.cursor import Cursor, raw_globs
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import item as _item, tree as _tree

CURSOR = Cursor()


# --- rules -------------------------------------------------------------------------

def _build(files: Dict[str, str], clients: Sequence[str] = ("cursor",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str, client: str = "cursor"):
    return harness.fields(plan, kind, name, client)


def test_scoped_rule_writes_unquoted_comma_separated_globs():
    plan, out = _build(_item("rule", "ts", "description: TypeScript conventions\n"
                                           "scope:\n  paths:\n    - \"**/*.ts\"\n    - \"src/{api,web}/*.tsx\"\n"))
    text = out[".cursor/rules/ts.mdc"]
    # No quotes, no brackets, no spaces: Cursor's line reader keeps quotes in the pattern.
    assert "globs: **/*.ts,src/api/*.tsx,src/web/*.tsx\n" in text
    assert "alwaysApply: false\n" in text
    assert _fields(plan, "rule", "ts")["scope"][0] == "mapped"
    assert "expanded" in _fields(plan, "rule", "ts")["scope"][1]


def test_unscoped_rule_is_always_applied_and_md_is_never_written():
    plan, out = _build(_item("rule", "style", "description: House style\n"))
    assert out[".cursor/rules/style.mdc"].startswith("---\ndescription: House style\nalwaysApply: true\n---\n")
    assert not any(p.endswith(".md") and p.startswith(".cursor/rules/") for p in out)
    assert "ignores it" in _fields(plan, "rule", "style")["description"][1]


def test_rule_resources_go_outside_the_rules_directory_with_links_rewritten():
    _, out = _build(_item("rule", "lic", "description: Licenses\n", "See [the list](./list.txt).\n",
                          {"list.txt": "MIT\n"}))
    assert ".cursor/agentrc/rules/lic/list.txt" in out
    assert "](../agentrc/rules/lic/list.txt)" in out[".cursor/rules/lic.mdc"]


def test_globs_helpers():
    assert globs(["a/{b,c}/{d,e}.py", "x.py", "x.py"]) == ["a/b/d.py", "a/b/e.py", "a/c/d.py", "a/c/e.py", "x.py"]
    assert globs(["src/{only}/*.py"]) == ["src/{only}/*.py"]
    assert raw_globs(b'---\nglobs: "**/*.ts,a/*.md"\n---\n\nbody: "x"\n') == b"---\nglobs: **/*.ts,a/*.md\n---\n\nbody: \"x\"\n"


# --- agents ------------------------------------------------------------------------

@pytest.mark.parametrize("tools, readonly, status", [
    (["read", "grep", "glob"], True, "mapped"),
    (["read", "bash"], None, "degraded"),
    (["read", "write", "edit", "bash", "grep", "glob", "web-fetch", "web-search"], None, "mapped"),
])
def test_agent_tools_become_readonly_or_degrade(tools, readonly, status):
    tool_yaml = "".join(f"  - {t}\n" for t in tools)
    plan, out = _build(_item("agent", "rev", f"description: Reviews\ntools:\n{tool_yaml}"))
    text = out[".cursor/agents/rev.md"]
    assert ("readonly: true\n" in text) is bool(readonly)
    assert "tools:" not in text
    assert _fields(plan, "agent", "rev")["tools"][0] == status


@pytest.mark.parametrize("model, written, status", [
    ("sonnet", "claude-sonnet-5", "mapped"),
    ("opus", "claude-opus-5", "mapped"),
    ("haiku", "claude-haiku-4-5", "mapped"),
    ("inherit", "inherit", "emitted"),
    ("anthropic/claude-opus-4-8", "claude-opus-4-8", "mapped"),
    ("openai/gpt-5.5", "gpt-5.5", "mapped"),
])
def test_agent_models(model, written, status):
    plan, out = _build(_item("agent", "m", f"description: Model probe\nmodel: {model}\n"))
    assert f"\nmodel: {written}\n" in out[".cursor/agents/m.md"]
    assert _fields(plan, "agent", "m")["model"][0] == status


def test_agent_passthrough_and_preloaded_skills():
    files = _item("agent", "bg", "description: Background worker\npreload-skills:\n  - helper\n"
                                 "cursor:\n  is_background: true\n")
    files.update(_item("skill", "helper", "name: helper\ndescription: Helps\n"))
    plan, out = _build(files)
    text = out[".cursor/agents/bg.md"]
    assert "is_background: true\n" in text and "## Skills" in text and "- helper" in text
    assert _fields(plan, "agent", "bg")["preload-skills"][0] == "mapped"


# --- commands ----------------------------------------------------------------------

def test_command_notes_arguments_and_agent_and_drops_model_and_tools():
    plan, out = _build(_item("command", "fix", "description: Fix an issue\nargument-hint: \"<n>\"\n"
                                               "agent: tester\nmodel: sonnet\ntools:\n  - read\n",
                             "Fix issue #$ARGUMENTS.\n"))
    text = out[".cursor/commands/fix.md"]
    assert text.startswith("---\nname: fix\ndescription: Fix an issue\n---\n")
    assert "> `$ARGUMENTS` below stands for the text typed after `/fix` (`<n>`)." in text
    assert "`tester` subagent" in text and "Fix issue #$ARGUMENTS." in text
    f = _fields(plan, "command", "fix")
    assert f["body"][0] == "degraded" and f["agent"][0] == "degraded"
    assert f["model"][0] == "dropped" and f["tools"][0] == "dropped" and f["argument-hint"][0] == "mapped"


def test_command_without_arguments_is_the_body_alone():
    _, out = _build(_item("command", "hi", "description: Say hi\n", "Say hi.\n"))
    assert out[".cursor/commands/hi.md"] == "---\nname: hi\ndescription: Say hi\n---\n\n# hi\n\nSay hi.\n"


# --- skills ------------------------------------------------------------------------

def test_skill_fields_cursor_reads():
    plan, out = _build(_item("skill", "tsx", "name: tsx\ndescription: TSX help\npaths:\n  - \"**/*.tsx\"\n"
                                             "disable-model-invocation: true\nicon: beaker\ncolor: green\n"
                                             "argument-hint: x\n"))
    text = out[".cursor/skills/tsx/SKILL.md"]
    for line in ("paths:\n  - '**/*.tsx'\n", "disable-model-invocation: true\n", "icon: beaker\n", "color: green\n"):
        assert line in text or line.replace("'", '"') in text
    assert "argument-hint" not in text
    assert _fields(plan, "skill", "tsx")["argument-hint"][0] == "dropped"


def test_cursor_warns_when_it_also_loads_claudes_different_copies():
    files = _item("skill", "s", "name: s\ndescription: S\n",
                  "Shared.\n\n<!-- @client:claude -->\nClaude only.\n<!-- @endclient -->\n")
    files.update(_item("agent", "only-claude", "description: Claude only\naudience:\n  - claude\n"))
    plan = pipeline.generate(_tree(files), ["claude", "cursor"])
    warnings = [d.message for d in plan.diagnostics if d.code == "AR095" and d.message.startswith("cursor ")]
    assert any("1 skill written for claude from .claude/skills" in w and "different from its own copy (s)" in w
               for w in warnings), warnings
    assert any("1 agent written for claude" in w and "outside its audience (only-claude)" in w
               for w in warnings), warnings


def test_context_is_the_shared_agents_md():
    files = _item("context", "proj", "description: About\n", "We build things.\n")
    _, alone = _build(files)
    _, both = _build(files, ("claude", "cursor"))
    assert alone["AGENTS.md"] == both["AGENTS.md"] and "We build things." in alone["AGENTS.md"]


# --- hooks -------------------------------------------------------------------------

def _hook(name: str, frontmatter: str):
    return _item("hook", name, frontmatter + "script: ./run.sh --fast\n", "Docs.\n",
                 {"run.sh": "#!/bin/sh\nexit 0\n"})


@pytest.mark.parametrize("event, cursor_event", [
    ("SessionStart", "sessionStart"), ("SessionEnd", "sessionEnd"), ("UserPromptSubmit", "beforeSubmitPrompt"),
    ("PreToolUse", "preToolUse"), ("PostToolUse", "postToolUse"), ("Stop", "stop"),
    ("SubagentStop", "subagentStop"), ("PreCompact", "preCompact"),
])
def test_hook_events(event, cursor_event):
    plan, out = _build(_hook("h", f"description: Hook\nevent: {event}\ntimeout: 15\n"))
    doc = json.loads(out[".cursor/hooks.json"])
    assert doc == {"version": 1, "hooks": {cursor_event: [
        {"command": ".cursor/agentrc/hooks/h/run.sh --fast", "timeout": 15}]}}
    assert out[".cursor/agentrc/hooks/h/run.sh"]
    assert _fields(plan, "hook", "h")["timeout"] == ("emitted", "seconds")


def test_notification_has_no_cursor_event():
    plan, out = _build(_hook("n", "description: Notify\nevent: Notification\n"))
    assert not any(p.startswith(".cursor/") for p in out)
    assert all(s == "dropped" for f, (s, _) in _fields(plan, "hook", "n").items()
               if f not in ("schema", "description", "body", "name"))


@pytest.mark.parametrize("selector, matcher, status", [
    ("tools:\n  - bash\n", "Shell", "mapped"),
    ("tools:\n  - edit\n  - write\n", "Write", "mapped"),
    ("tools:\n  - read\n  - glob\n", "Read", "degraded"),
    ("matcher: Bash|Edit\n", "Shell|Write", "mapped"),
    ("matcher: Read\n", "Read", "emitted"),
    ("matcher: mcp__.*\n", "mcp__.*", "degraded"),
])
def test_hook_matchers_use_cursor_tool_names(selector, matcher, status):
    plan, out = _build(_hook("m", f"description: Guard\nevent: PreToolUse\n{selector}"))
    entry = json.loads(out[".cursor/hooks.json"])["hooks"]["preToolUse"][0]
    assert entry["matcher"] == matcher
    field = "tools" if selector.startswith("tools") else "matcher"
    assert _fields(plan, "hook", "m")[field][0] == status


def test_hook_on_glob_alone_is_not_written():
    plan, out = _build(_hook("g", "description: Glob guard\nevent: PreToolUse\ntools:\n  - glob\n"))
    assert ".cursor/hooks.json" not in out
    assert _fields(plan, "hook", "g")["event"][0] == "dropped"


def test_hook_passthrough_and_async():
    plan, out = _build(_hook("p", "description: Gate\nevent: PreToolUse\ntools:\n  - bash\nasync: true\n"
                                  "cursor:\n  failClosed: true\n"))
    entry = json.loads(out[".cursor/hooks.json"])["hooks"]["preToolUse"][0]
    assert entry["failClosed"] is True
    assert _fields(plan, "hook", "p")["async"][0] == "dropped"


def test_built_with_claude_cursor_runs_the_claude_copy():
    files = _hook("h", "description: Guard\nevent: PreToolUse\ntools:\n  - bash\ncursor:\n  failClosed: true\n")
    plan, out = _build(files, ("claude", "cursor"))
    assert ".cursor/hooks.json" not in out and not any(p.startswith(".cursor/agentrc/hooks/") for p in out)
    assert "PreToolUse" in json.loads(out[".claude/settings.json"])["hooks"]
    f = _fields(plan, "hook", "h")
    assert f["event"][0] == "mapped" and ".claude/settings.json" in f["event"][1]
    assert f["cursor"][0] == "dropped"


def test_built_with_claude_a_hook_outside_claudes_audience_is_still_written():
    files = _hook("h", "description: Guard\nevent: Stop\naudience:\n  - cursor\n")
    _, out = _build(files, ("claude", "cursor"))
    assert "stop" in json.loads(out[".cursor/hooks.json"])["hooks"]


# --- MCP -----------------------------------------------------------------------------

def _frags(server: McpServer):
    rendered = CURSOR.render_server(server)
    assert [f.path for f in rendered.fragments] == [".cursor/mcp.json"]
    frag = rendered.fragments[0]
    assert frag.key == ("mcpServers", server.name)
    return json.loads(frag.value), {f.field: f.status for f in rendered.report.fields}


def test_mcp_stdio_and_remote_shapes():
    local, status = _frags(McpServer("db", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx",
                                     args=("-y", "db-mcp", "--dir=${DATA_DIR}"),
                                     env=freeze({"TOKEN": "${DB_TOKEN}"}),
                                     fields=freeze({"local": {"command": "npx"}})))
    assert local == {"type": "stdio", "command": "npx", "args": ["-y", "db-mcp", "--dir=${env:DATA_DIR}"],
                     "env": {"TOKEN": "${env:DB_TOKEN}"}}
    assert status == {"local": "mapped"}
    remote, status = _frags(McpServer("docs", "b", "b.bundle.yaml", (1, 1), "sse", url="https://x/${HOST}/sse",
                                      headers=freeze({"Authorization": "Bearer ${TOKEN}"}),
                                      requires_env=("TOKEN",),
                                      fields=freeze({"remote": {"type": "sse"}, "requires-env": ["TOKEN"]})))
    assert remote == {"url": "https://x/${env:HOST}/sse", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
    assert status == {"remote": "mapped", "requires-env": "omitted"}


# --- plugin layout -----------------------------------------------------------------

def test_plugin_layout():
    files = _item("rule", "ts", "description: TS\nscope:\n  paths:\n    - \"**/*.ts\"\n", "See [x](./x.md).\n",
                  {"x.md": "x\n"})
    files.update(_hook("h", "description: Guard\nevent: PreToolUse\ntools:\n  - bash\n"))
    files.update(_item("command", "go", "description: Go\n"))
    files.update(_item("agent", "a", "description: A\n"))
    files.update(_item("skill", "s", "name: s\ndescription: S\n"))
    files.update(_item("context", "c", "description: C\n", "Context.\n"))
    plan = pipeline.generate(_tree(files), ["cursor"], layout="plugin", plugin_name="my-plugin")
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    out = {f.path: f.content.decode() for f in plan.files}
    assert json.loads(out[".cursor-plugin/plugin.json"]) == {"name": "my-plugin",
                                                             "description": "my-plugin, built by agentrc"}
    assert json.loads(out[".cursor-plugin/marketplace.json"])["plugins"][0]["source"] == "./"
    assert "globs: **/*.ts\n" in out["rules/ts.mdc"] and "](../agentrc/rules/ts/x.md)" in out["rules/ts.mdc"]
    assert {"commands/go.md", "agents/a.md", "skills/s/SKILL.md", "agentrc/hooks/h/run.sh"} <= set(out)
    hooks = json.loads(out["hooks/hooks.json"])
    assert hooks == {"hooks": {"preToolUse": [{"command": '"${CURSOR_PLUGIN_ROOT:-.}/agentrc/hooks/h/run.sh" --fast',
                                               "matcher": "Shell"}]}}
    assert "AGENTS.md" not in out and not any(p.startswith(".cursor/") for p in out)
    assert _fields(plan, "context", "c")["body"][0] == "dropped"


def test_plugin_mcp_is_mcp_json_at_the_root():
    from agentrc.clients.cursor import CursorPlugin

    rendered = CursorPlugin().render_server(McpServer("db", "b", "b.bundle.yaml", (1, 1), "stdio", command="db",
                                                      fields=freeze({"local": {"command": "db"}})))
    assert [(f.path, f.key) for f in rendered.fragments] == [("mcp.json", ("mcpServers", "db"))]
