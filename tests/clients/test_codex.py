"""The Codex CLI adapter: rules and commands as standard-form skills in the shared
.agents/skills (byte-identical to Gemini CLI's copies), agents/openai.yaml sidecars, agent TOML
(sandbox_mode from tools, OpenAI models only), hooks.json holding only `hooks`, and MCP tables
without `type` and without ${VAR} expansion."""


import json
from typing import Dict, Sequence

import pytest

from agentrc.output import merge as managed
from agentrc.clients.codex import Codex
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import item as _item

try:
    import tomli
except ImportError:  # pragma: no cover - tomli is optional; the string checks still run
    tomli = None

CODEX = Codex()


# --- rules: standard-form skills ---------------------------------------------------------

def _build(files: Dict[str, str], clients: Sequence[str] = ("codex",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str, client: str = "codex"):
    return harness.fields(plan, kind, name, client)


def test_rule_becomes_a_standard_skill_and_reports_the_lost_scope():
    files = _item("rule", "api", "description: Use when editing API handlers\n"
                                 "scope:\n  paths:\n    - \"src/api/**/*.ts\"\n",
                  "See [the notes](./notes.md).\n", {"notes.md": "# Notes\n"})
    plan, out = _build(files)
    assert out[".agents/skills/api/SKILL.md"] == (
        "---\nname: api\ndescription: Use when editing API handlers\n---\n\n# api\n\nSee [the notes](./notes.md).\n")
    assert out[".agents/skills/api/notes.md"] == "# Notes\n"  # beside SKILL.md: the link stays as written
    fields = _fields(plan, "rule", "api")
    assert fields["scope"][0] == "degraded" and "no path scoping" in fields["scope"][1]
    assert not any(p == "AGENTS.md" for p in out)  # rules never rewrite AGENTS.md


def test_unscoped_rule_reports_that_it_is_no_longer_always_on():
    plan, _ = _build(_item("rule", "style", "description: House style\n"))
    status, detail = _fields(plan, "rule", "style")["body"]
    assert status == "degraded" and "no always-on rules" in detail


@pytest.mark.parametrize("kind", ["rule", "skill"])
def test_shared_skill_files_are_byte_identical_with_gemini(kind):
    files = _item(kind, "shared", "description: Use when sharing\ncompatibility: Requires git\n",
                  "Text.\n\n<!-- @client:claude -->\nClaude only.\n<!-- @endclient -->\n",
                  {"ref.md": "# Ref\n"})
    _, together = _build(files, ("codex", "gemini"))  # AR090 would fail the build
    _, alone = _build(files)
    for path in (".agents/skills/shared/SKILL.md", ".agents/skills/shared/ref.md"):
        assert together[path] == alone[path]
    assert "compatibility: Requires git\n" in alone[".agents/skills/shared/SKILL.md"]


# --- skills: the agents/openai.yaml sidecar ---------------------------------------------

def test_skill_keeps_standard_frontmatter_and_moves_codex_settings_to_the_sidecar():
    files = _item("skill", "deploy", "description: Use when deploying\ndisable-model-invocation: true\n"
                                     "allowed-tools: Bash\n"
                                     "codex:\n  interface:\n    display_name: Deploy\n")
    plan, out = _build(files)
    skill = out[".agents/skills/deploy/SKILL.md"]
    assert "disable-model-invocation" not in skill and "codex" not in skill and "interface" not in skill
    assert "allowed-tools: Bash\n" in skill  # standard key, kept for the other readers
    assert out[".agents/skills/deploy/agents/openai.yaml"] == (
        "policy:\n  allow_implicit_invocation: false\ninterface:\n  display_name: Deploy\n")
    fields = _fields(plan, "skill", "deploy")
    assert fields["disable-model-invocation"][0] == "mapped"
    assert fields["allowed-tools"][0] == "dropped"
    assert fields["codex"][0] == "emitted"


def test_plain_skill_has_no_sidecar():
    _, out = _build(_item("skill", "plain", "description: Use when plain\n"))
    assert ".agents/skills/plain/agents/openai.yaml" not in out


# --- commands: explicit-only skills ----------------------------------------------------

def test_command_becomes_an_explicit_only_skill():
    files = _item("command", "fix", "description: Fix an issue\nargument-hint: \"<n>\"\nagent: runner\n"
                                    "model: sonnet\ntools: [read]\n", "Fix issue #$ARGUMENTS.\n")
    plan, out = _build(files)
    skill = out[".agents/skills/fix/SKILL.md"]
    assert skill.startswith("---\nname: fix\ndescription: Fix an issue\n---\n")
    assert "Spawn the `runner` subagent" in skill and "$ARGUMENTS" in skill
    assert out[".agents/skills/fix/agents/openai.yaml"] == "policy:\n  allow_implicit_invocation: false\n"
    fields = _fields(plan, "command", "fix")
    assert fields["argument-hint"][0] == "dropped"
    assert fields["agent"][0] == "degraded"
    assert fields["model"][0] == "dropped" and fields["tools"][0] == "dropped"
    assert fields["body"][0] == "degraded" and "$ARGUMENTS" in fields["body"][1]
    assert "$fix" in fields["description"][1]


def test_command_policy_can_be_overridden_by_the_codex_block():
    files = _item("command", "hint", "description: Hint\ncodex:\n  policy:\n    allow_implicit_invocation: true\n")
    _, out = _build(files)
    assert out[".agents/skills/hint/agents/openai.yaml"] == "policy:\n  allow_implicit_invocation: true\n"


# --- agents: .codex/agents/<name>.toml ---------------------------------------------------

def _agent(frontmatter: str, body: str = "## Role\n\nReview the change.\n", extra=None):
    plan, out = _build(_item("agent", "rev", "description: Use when reviewing\n" + frontmatter, body, extra))
    text = out[".codex/agents/rev.toml"]
    data = tomli.loads(text) if tomli is not None else None
    return plan, out, text, data


@pytest.mark.parametrize("tools, sandbox, status", [
    ("[read, grep, glob]", "read-only", "degraded"),
    ("[read, web-search]", "read-only", "degraded"),
    ("[read, bash]", "workspace-write", "degraded"),
    ("[read, write, edit, bash, grep, glob, web-fetch, web-search]", "workspace-write", "mapped"),
])
def test_agent_tools_become_sandbox_mode(tools, sandbox, status):
    plan, _, text, data = _agent(f"tools: {tools}\n")
    assert f'sandbox_mode = "{sandbox}"\n' in text
    assert "\ntools" not in text and not text.startswith("tools")  # `tools` is config.toml's table, not a list
    assert _fields(plan, "agent", "rev")["tools"][0] == status
    if data is not None:
        assert data["sandbox_mode"] == sandbox


def test_agent_without_tools_inherits_the_session_sandbox():
    _, _, text, _ = _agent("")
    assert "sandbox_mode" not in text


def test_agent_required_keys_and_body():
    plan, _, text, data = _agent("mode: subagent\n")
    assert text.startswith('name = "rev"\ndescription = "Use when reviewing"\n')
    assert "developer_instructions = '''\n## Role\n\nReview the change.\n'''\n" in text
    if data is not None:
        assert set(data) == {"name", "description", "developer_instructions"}
    fields = _fields(plan, "agent", "rev")
    assert fields["body"] == ("mapped", "developer_instructions")
    assert "trusted" in fields["description"][1]
    assert fields["mode"][0] == "omitted"


@pytest.mark.parametrize("model, written, status", [
    ("openai/gpt-5.4", "gpt-5.4", "mapped"),
    ("sonnet", None, "dropped"),
    ("opus", None, "dropped"),
    ("haiku", None, "dropped"),
    ("inherit", None, "mapped"),
    ("anthropic/claude-sonnet-4-5", None, "dropped"),
])
def test_agent_models(model, written, status):
    plan, _, text, _ = _agent(f"model: {model}\n")
    if written:
        assert f'model = "{written}"\n' in text
    else:
        assert "model =" not in text
    assert _fields(plan, "agent", "rev")["model"][0] == status


def test_agent_primary_mode_degrades_and_resources_link_from_the_root():
    plan, out, text, _ = _agent("mode: primary\n", "Follow [the guide](./guide.md).\n", {"guide.md": "# Guide\n"})
    assert "[the guide](.codex/agentrc/agents/rev/guide.md)" in text
    assert out[".codex/agentrc/agents/rev/guide.md"] == "# Guide\n"
    assert _fields(plan, "agent", "rev")["mode"][0] == "degraded"


def test_agent_passthrough_merges_into_the_toml():
    _, _, text, data = _agent("codex:\n  model_reasoning_effort: high\n")
    assert 'model_reasoning_effort = "high"\n' in text
    assert text.index("model_reasoning_effort") < text.index("developer_instructions")


# --- hooks: .codex/hooks.json --------------------------------------------------------

def _hook(frontmatter: str, extra=None):
    files = _item("hook", "h", "description: A hook\n" + frontmatter, "Docs.\n", extra)
    plan, out = _build(files)
    return plan, out, json.loads(out[".codex/hooks.json"]) if ".codex/hooks.json" in out else None


def test_hooks_file_holds_only_hooks_with_claude_shape_and_seconds():
    plan, out, data = _hook("event: PreToolUse\ntools: [bash]\nscript: ./check.sh --strict\ntimeout: 10\n",
                            {"check.sh": "#!/bin/sh\nexit 0\n"})
    assert list(data) == ["hooks"]  # a `version` key makes Codex reject the whole file
    group = data["hooks"]["PreToolUse"][0]
    assert group["matcher"] == "Bash"
    handler = group["hooks"][0]
    assert handler["type"] == "command" and handler["timeout"] == 10
    assert handler["command"] == ('"$(git rev-parse --show-toplevel 2>/dev/null || pwd)/.codex/agentrc/hooks/h/'
                                  'check.sh" --strict')
    assert ".codex/agentrc/hooks/h/check.sh" in out
    assert "trusted" in _fields(plan, "hook", "h")["event"][1]


def test_a_hook_calls_its_own_file_arguments_from_the_repository_root():
    """`python3 ./check.py ./rules.json --strict`: the runner stays in front and a `./file`
    argument naming one of the hook's own files is called from the repository root, as the
    script is (it was left relative to the session's directory, where Codex runs hooks); an
    argument naming no file of the hook stays as written."""
    plan, _, data = _hook("event: PreToolUse\ntools: [bash]\nscript: python3 ./check.py ./rules.json ./other --strict\n",
                          {"check.py": "print('ok')\n", "rules.json": "{}\n"})
    root = '"$(git rev-parse --show-toplevel 2>/dev/null || pwd)/.codex/agentrc/hooks/h'
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command == f'python3 {root}/check.py" {root}/rules.json" ./other --strict'
    status, detail = _fields(plan, "hook", "h")["script"]
    assert status == "mapped" and "Codex runs hooks in the session's directory" in detail


@pytest.mark.parametrize("tools, matcher, status", [
    ("[edit, write]", "apply_patch", "mapped"),
    ("[bash, edit]", "Bash|apply_patch", "mapped"),
    ("[bash, read]", "Bash", "degraded"),
])
def test_hook_tool_matchers(tools, matcher, status):
    plan, _, data = _hook(f"event: PostToolUse\ntools: {tools}\nscript: make fmt\n")
    assert data["hooks"]["PostToolUse"][0]["matcher"] == matcher
    assert _fields(plan, "hook", "h")["tools"][0] == status


def test_hook_on_tools_codex_cannot_see_is_dropped():
    plan, out, data = _hook("event: PreToolUse\ntools: [read, web-fetch]\nscript: ./x.sh\n",
                            {"x.sh": "#!/bin/sh\n"})
    assert data is None and not any(p.startswith(".codex/") for p in out)
    fields = _fields(plan, "hook", "h")
    assert fields["tools"][0] == "dropped" and fields["event"][0] == "dropped"


def test_notification_hook_is_dropped():
    plan, _, data = _hook("event: Notification\nscript: notify-send hi\n")
    assert data is None
    assert _fields(plan, "hook", "h")["event"][0] == "dropped"


@pytest.mark.parametrize("timeout, written, status", [(2, 2, "emitted"), (10, 3, "degraded")])
def test_session_end_timeout_is_clamped_like_codex_does(timeout, written, status):
    plan, _, data = _hook(f"event: SessionEnd\nscript: echo bye\ntimeout: {timeout}\n")
    assert data["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == written
    assert _fields(plan, "hook", "h")["timeout"][0] == status


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact"])
def test_events_keep_their_names(event):
    _, _, data = _hook(f"event: {event}\nscript: echo hi\n")
    assert list(data["hooks"]) == [event]


def test_async_hook_runs_synchronously():
    plan, _, data = _hook("event: Stop\nscript: echo done\nasync: true\n")
    handler = data["hooks"]["Stop"][0]["hooks"][0]
    assert "async" not in handler  # Codex skips async handlers altogether
    assert "matcher" not in data["hooks"]["Stop"][0]
    assert _fields(plan, "hook", "h")["async"][0] == "dropped"


# --- MCP: .codex/config.toml [mcp_servers.<name>] -------------------------------------

def _server(server: McpServer):
    rendered = CODEX.render_server(server)
    statuses = {f.field: (f.status, f.detail) for f in rendered.report.fields}
    if not rendered.fragments:
        return None, statuses, ""
    frag = rendered.fragments[0]
    assert (frag.path, frag.format, frag.key) == (".codex/config.toml", "toml", ("mcp_servers", server.name))
    text = managed.fresh("toml", [(frag.key, frag.value, False)])
    return json.loads(frag.value), statuses, text


def test_mcp_stdio_env_passthrough_by_name():
    entry, status, text = _server(McpServer(
        "db", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "db-mcp"),
        env=freeze({"LOG": "info", "DB_TOKEN": "${DB_TOKEN}"}), fields=freeze({"local": {"command": "npx"}})))
    assert entry == {"command": "npx", "args": ["-y", "db-mcp"], "env": {"LOG": "info"}, "env_vars": ["DB_TOKEN"]}
    assert status["local"][0] == "mapped" and "trusted" in status["local"][1]
    assert text.startswith("[mcp_servers.db]\ncommand = \"npx\"\n")
    if tomli is not None:
        assert tomli.loads(text) == {"mcp_servers": {"db": entry}}


def test_mcp_stdio_renamed_variable_is_left_out():
    entry, status, _ = _server(McpServer(
        "db", "b", "b.bundle.yaml", (1, 1), "stdio", command="db-mcp",
        env=freeze({"TOKEN": "${DB_TOKEN}"}), fields=freeze({"local": {"command": "db-mcp"}})))
    assert entry == {"command": "db-mcp"}
    assert status["local"][0] == "degraded" and "TOKEN" in status["local"][1]


def test_mcp_http_headers():
    entry, status, _ = _server(McpServer(
        "docs", "b", "b.bundle.yaml", (1, 1), "http", url="https://x/mcp",
        headers=freeze({"Authorization": "Bearer ${DOCS_TOKEN}", "X-Region": "eu", "X-Key": "${DOCS_KEY}"}),
        requires_env=("DOCS_TOKEN",), fields=freeze({"remote": {"type": "http"}, "requires-env": ["DOCS_TOKEN"]})))
    assert entry == {"url": "https://x/mcp", "bearer_token_env_var": "DOCS_TOKEN", "http_headers": {"X-Region": "eu"},
                     "env_http_headers": {"X-Key": "DOCS_KEY"}}
    assert "type" not in entry
    assert status["remote"][0] == "mapped" and status["requires-env"][0] == "omitted"


def test_mcp_header_with_embedded_variable_is_left_out():
    entry, status, _ = _server(McpServer(
        "docs", "b", "b.bundle.yaml", (1, 1), "http", url="https://x/mcp",
        headers=freeze({"Authorization": "Token ${T}"}), fields=freeze({"remote": {"type": "http"}})))
    assert entry == {"url": "https://x/mcp"}
    assert status["remote"][0] == "degraded"


def test_mcp_sse_is_dropped():
    entry, status, _ = _server(McpServer(
        "old", "b", "b.bundle.yaml", (1, 1), "sse", url="https://x/sse", fields=freeze({"remote": {"type": "sse"}})))
    assert entry is None
    assert status["remote"][0] == "dropped"


# --- context --------------------------------------------------------------------------

def test_context_is_the_shared_agents_md():
    files = _item("context", "project", "description: About\n", "## About\n\nA repo.\n")
    _, codex = _build(files)
    _, claude = _build(files, ("claude",))
    assert codex["AGENTS.md"] == claude["AGENTS.md"]
    assert "CLAUDE.md" not in codex
