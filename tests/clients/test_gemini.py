"""The Gemini CLI adapter: hook events and millisecond timeouts, anchored matchers over Gemini
tool names, settings.json shapes (hooks, mcpServers, context.fileName), TOML commands with
{{args}}, strict agent frontmatter, and the .agents/skills files it shares with Codex."""


import json
from typing import Dict, Sequence

import pytest
import yaml

from agentrc.pipeline import stages as pipeline
from agentrc.clients.gemini import EVENTS, TOOL_NAMES, Gemini
from agentrc.clients.registry import CLIENTS
from agentrc.frozen import freeze
from agentrc.model import HOOK_EVENTS, McpServer
from agentrc.vocabulary import TOOLS

from . import harness
from .harness import frontmatter as _frontmatter, item as _item

GEMINI = Gemini()
SETTINGS = ".gemini/settings.json"
STANDARD_SKILL_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
# agentLoader.ts localAgentSchema (zod .strict()): any other key makes the agent fail to load.
AGENT_KEYS = {"name", "description", "kind", "display_name", "tools", "model", "temperature", "max_turns",
              "timeout_mins", "policy", "mcp_servers"}


def _build(files: Dict[str, str], clients: Sequence[str] = ("gemini",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str, client: str = "gemini"):
    return harness.fields(plan, kind, name, client)


def _hook(event: str, extra: str = "", script: str = "./check.sh --strict") -> Dict[str, str]:
    return _item("hook", "guard", f"description: Guard the session\nevent: {event}\nscript: {script}\n{extra}",
                 "Why.\n", {"check.sh": "#!/bin/sh\nexit 0\n"})


# --- hooks -------------------------------------------------------------------------

@pytest.mark.parametrize("event", [e for e in HOOK_EVENTS if e != "SubagentStop"])
def test_hook_events_map_to_gemini_events(event):
    plan, out = _build(_hook(event))
    hooks = json.loads(out[SETTINGS])["hooks"]
    assert list(hooks) == [EVENTS[event]]
    status = _fields(plan, "hook", "guard")["event"][0]
    expected = "degraded" if event == "Notification" else "emitted" if EVENTS[event] == event else "mapped"
    assert status == expected


def test_event_names():
    assert EVENTS == {"PreToolUse": "BeforeTool", "PostToolUse": "AfterTool", "UserPromptSubmit": "BeforeAgent",
                      "Stop": "AfterAgent", "SessionStart": "SessionStart", "SessionEnd": "SessionEnd",
                      "PreCompact": "PreCompress", "Notification": "Notification"}


def test_subagent_stop_has_no_gemini_event_and_writes_nothing():
    plan, out = _build(_hook("SubagentStop", "timeout: 5\n"))
    assert SETTINGS not in out and not any(p.startswith(".gemini/agentrc/hooks/") for p in out)
    fields = _fields(plan, "hook", "guard")
    assert all(status in ("dropped", "omitted") for status, _ in fields.values())
    assert "no SubagentStop event" in fields["event"][1]
    assert any(d.code == "AR092" for d in plan.diagnostics)


def test_hook_handler_shape_timeout_in_milliseconds_and_project_dir():
    plan, out = _build(_hook("PreToolUse", "tools:\n  - bash\ntimeout: 12\n"))
    group = json.loads(out[SETTINGS])["hooks"]["BeforeTool"][0]
    assert group["matcher"] == "^run_shell_command$"
    handler, = group["hooks"]
    assert handler == {"type": "command",
                       "command": '"${GEMINI_PROJECT_DIR:-.}/.gemini/agentrc/hooks/guard/check.sh" --strict',
                       "name": "guard", "description": "Guard the session", "timeout": 12000}
    assert ".gemini/agentrc/hooks/guard/check.sh" in out
    fields = _fields(plan, "hook", "guard")
    assert fields["timeout"] == ("mapped", "12 s as 12000 ms (Gemini CLI counts milliseconds)")
    assert "trusted folder" in fields["event"][1]


def test_hooks_of_one_event_append_to_one_list():
    files = _hook("PostToolUse", "tools:\n  - edit\n  - write\n")
    files.update(_item("hook", "lint", "description: Lint\nevent: PostToolUse\nscript: make lint\n"))
    _, out = _build(files)
    groups = json.loads(out[SETTINGS])["hooks"]["AfterTool"]
    assert [g.get("matcher") for g in groups] == ["^(replace|write_file)$", None]
    assert groups[1]["hooks"][0]["command"] == "make lint"


@pytest.mark.parametrize("matcher, expected, status", [
    ("Edit|Write", "^(replace|write_file)$", "mapped"),
    ("Bash", "^run_shell_command$", "mapped"),
    ("run_shell_command|mcp_.*", "run_shell_command|mcp_.*", "emitted"),
    ("Bash|mcp_.*", "Bash|mcp_.*", "degraded"),
])
def test_raw_matchers(matcher, expected, status):
    plan, out = _build(_hook("PreToolUse", f"matcher: \"{matcher}\"\n"))
    assert json.loads(out[SETTINGS])["hooks"]["BeforeTool"][0]["matcher"] == expected
    assert _fields(plan, "hook", "guard")["matcher"][0] == status


def test_tool_names_cover_the_vocabulary():
    assert set(TOOL_NAMES) == set(TOOLS)
    assert TOOL_NAMES["grep"] == "grep_search" and TOOL_NAMES["web-search"] == "google_web_search"


def test_non_tool_event_has_no_matcher_and_async_is_dropped():
    plan, out = _build(_hook("SessionStart", "async: true\n"))
    group = json.loads(out[SETTINGS])["hooks"]["SessionStart"][0]
    assert "matcher" not in group
    assert _fields(plan, "hook", "guard")["async"][0] == "dropped"


# --- MCP servers ---------------------------------------------------------------------

def _server(transport: str, **kw) -> McpServer:
    return McpServer(name="srv", bundle="b", path="b.bundle.yaml", pos=(1, 1), transport=transport,
                     fields=freeze({"local" if transport == "stdio" else "remote": {}}), **kw)


def _entry(server: McpServer) -> dict:
    r = GEMINI.render_server(server)
    frag, = r.fragments
    assert (frag.path, frag.key) == (SETTINGS, ("mcpServers", "srv"))
    return json.loads(frag.value)


def test_stdio_server_has_no_type_and_keeps_env_references():
    entry = _entry(_server("stdio", command="npx", args=("-y", "pkg"), env=freeze({"K": "${K}"})))
    assert entry == {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "${K}"}}


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_remote_server_uses_url_and_type_never_http_url(transport):
    entry = _entry(_server(transport, url="https://x.example/mcp", headers=freeze({"Authorization": "Bearer ${T}"})))
    assert entry == {"url": "https://x.example/mcp", "type": transport, "headers": {"Authorization": "Bearer ${T}"}}


# --- context -------------------------------------------------------------------------

def test_context_goes_to_the_shared_agents_md_and_settings_name_it():
    files = _item("context", "project", "description: About\n", "## About\n\nA repo.\n")
    plan, out = _build(files, ("claude", "gemini"))
    assert json.loads(out[SETTINGS]) == {"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}
    _, alone = _build(files, ("claude",))
    assert out["AGENTS.md"] == alone["AGENTS.md"]
    assert "GEMINI.md" not in out
    assert _fields(plan, "context", "project")["body"][0] == "mapped"


# --- skills and rules: .agents/skills ------------------------------------------------

def test_skill_is_in_standard_form_and_drops_the_gemini_block():
    plan, out = _build(_item("skill", "pdf", "description: PDFs\ncompatibility: Requires poppler\n"
                                             "argument-hint: <file>\ngemini:\n  x: 1\n",
                             "See [ref](./ref.md).\n", {"ref.md": "# Ref\n"}))
    fm = _frontmatter(out[".agents/skills/pdf/SKILL.md"])
    assert set(fm) <= STANDARD_SKILL_KEYS and fm["compatibility"] == "Requires poppler"
    assert ".agents/skills/pdf/ref.md" in out
    fields = _fields(plan, "skill", "pdf")
    assert fields["gemini"][0] == "dropped" and fields["argument-hint"][0] == "dropped"


def test_rule_becomes_an_on_demand_skill():
    plan, out = _build(_item("rule", "api", "description: API conventions\nscope:\n  paths:\n    - \"src/**\"\n",
                             "See [list](./list.txt).\n", {"list.txt": "x\n"}))
    text = out[".agents/skills/api/SKILL.md"]
    assert _frontmatter(text) == {"name": "api", "description": "API conventions"}
    assert "](./list.txt)" in text and ".agents/skills/api/list.txt" in out
    fields = _fields(plan, "rule", "api")
    assert fields["scope"][0] == "degraded"
    unscoped, _ = _build(_item("rule", "style", "description: Style\n"))
    assert _fields(unscoped, "rule", "style")["body"][0] == "degraded"


@pytest.mark.skipif("codex" not in CLIENTS, reason="the Codex adapter is not registered")
def test_shared_skill_files_are_identical_to_codex_ones():
    files = _item("rule", "api", "description: API\nscope:\n  paths:\n    - \"src/**\"\n",
                  "See [list](./list.txt).\n", {"list.txt": "x\n"})
    files.update(_item("skill", "pdf", "description: PDFs\ncompatibility: Requires poppler\nallowed-tools: Read\n"
                                       "user-invocable: true\ngemini:\n  x: 1\ncodex:\n  policy:\n    a: 1\n",
                       "<!-- @client:!claude -->\nNot for Claude.\n<!-- @endclient -->\n",
                       {"references/r.md": "# R\n"}))
    _, gem = _build(files)
    _, cdx = _build(files, ("codex",))
    shared = [p for p in gem if p.startswith(".agents/skills/")]
    assert shared and all(gem[p] == cdx[p] for p in shared)
    _build(files, ("codex", "gemini"))  # one tree, no AR090


# --- agents --------------------------------------------------------------------------

def test_agent_frontmatter_holds_only_keys_gemini_accepts():
    files = _item("agent", "reviewer", "description: Reviews\nmode: primary\nmodel: google/gemini-3-pro\n"
                                       "tools:\n  - read\n  - grep\n  - bash\npreload-skills:\n  - pdf\n"
                                       "gemini:\n  max_turns: 5\n")
    files.update(_item("skill", "pdf", "description: PDFs\n"))
    plan, out = _build(files)
    fm = _frontmatter(out[".gemini/agents/reviewer.md"])
    assert set(fm) <= AGENT_KEYS
    assert fm == {"name": "reviewer", "description": "Reviews", "kind": "local", "model": "gemini-3-pro",
                  "tools": ["read_file", "grep_search", "run_shell_command", "activate_skill"], "max_turns": 5}
    fields = _fields(plan, "agent", "reviewer")
    assert fields["mode"][0] == "degraded" and fields["model"][0] == "mapped"
    assert "## Skills" in out[".gemini/agents/reviewer.md"]


@pytest.mark.parametrize("model, written, status", [
    ("sonnet", None, "dropped"),
    ("inherit", "inherit", "emitted"),
    ("anthropic/claude-sonnet-4-5", None, "dropped"),
    ("google/gemini-3-flash-preview", "gemini-3-flash-preview", "mapped"),
])
def test_agent_models(model, written, status):
    plan, out = _build(_item("agent", "a", f"description: A\nmodel: {model}\n"))
    assert _frontmatter(out[".gemini/agents/a.md"]).get("model") == written
    assert _fields(plan, "agent", "a")["model"][0] == status


def test_agent_without_tools_keeps_gemini_defaults():
    _, out = _build(_item("agent", "a", "description: A\n"))
    assert _frontmatter(out[".gemini/agents/a.md"]) == {"name": "a", "description": "A", "kind": "local"}


# --- commands ------------------------------------------------------------------------

def test_command_is_toml_with_args_placeholder_and_root_relative_links():
    tomli = pytest.importorskip("tomli")
    plan, out = _build(_item("command", "fix", "description: Fix an issue\nargument-hint: <n>\nagent: a\n"
                                               "model: sonnet\ntools:\n  - read\n",
                             "Fix #$ARGUMENTS. See [notes](./notes.md) and ''' quotes.\n", {"notes.md": "# N\n"}))
    data = tomli.loads(out[".gemini/commands/fix.toml"])
    assert set(data) == {"description", "prompt"}
    assert data["description"] == "Fix an issue"
    assert "Fix #{{args}}." in data["prompt"] and "$ARGUMENTS" not in data["prompt"]
    assert "](.gemini/agentrc/commands/fix/notes.md)" in data["prompt"] and "''' quotes" in data["prompt"]
    assert ".gemini/agentrc/commands/fix/notes.md" in out
    fields = _fields(plan, "command", "fix")
    assert fields["body"][0] == "mapped"
    assert all(fields[k][0] == "dropped" for k in ("argument-hint", "agent", "model", "tools"))


def test_examples_build_with_every_client_without_conflicts():
    from pathlib import Path

    from agentrc.inputs.tree import read_tree
    from helpers import ROOT

    tree = read_tree([str(Path(ROOT) / "examples" / "registry")]).tree
    plan = pipeline.generate(tree, sorted(CLIENTS))
    assert plan.ok and not [d for d in plan.diagnostics if d.code == "AR090"]
