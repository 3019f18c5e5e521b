"""The OpenClaw adapter: everything markdown becomes an Agent Skill in the shared
.agents/skills (byte-identical to Hermes', and to Codex's and Gemini CLI's for rules, skills
and commands), the `openclaw:`/`hermes:` blocks merged into it, the shared AGENTS.md, and
hooks and MCP servers reported dropped with what to run, since they live in
~/.openclaw/openclaw.json only."""


from typing import Dict, Sequence

import yaml

from agentrc.clients.openclaw import OpenClaw
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import frontmatter as _frontmatter, item as _item

OPENCLAW = OpenClaw()


SHARED = {
    **_item("rule", "api", "description: Use when editing API handlers\nscope:\n  paths:\n    - \"src/api/**\"\n",
            "See [the notes](./notes.md).\n", {"notes.md": "# Notes\n"}),
    **_item("skill", "release", "name: release\ndescription: Use when cutting a release\ncompatibility: Requires git\n"
                                "allowed-tools: Read Bash\n"),
    **_item("command", "fix", "description: Fix the issue given as argument\nargument-hint: \"<n>\"\n"
                              "agent: tester\nmodel: sonnet\n", "Fix issue #$ARGUMENTS.\n"),
    **_item("agent", "tester", "description: Use when tests must run\n"),
}


# --- the shared .agents/skills ---------------------------------------------------------------

def _plan(files: Dict[str, str], clients: Sequence[str] = ("openclaw",)):
    return harness.plan(files, clients)


def _build(files: Dict[str, str], clients: Sequence[str] = ("openclaw",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str, client: str = "openclaw"):
    return harness.fields(plan, kind, name, client)


def test_every_shared_skill_file_is_identical_across_the_four_clients():
    """Rules, skills and commands land where Codex and Gemini CLI write them too: one build of
    all four merges them (a difference would be AR090), and each equals the client alone."""
    plan, together = _build(SHARED, ("openclaw", "hermes", "codex", "gemini"))
    for client in ("openclaw", "hermes", "codex", "gemini"):
        _, alone = _build(SHARED, (client,))
        for path, text in alone.items():
            if path.startswith(".agents/skills/"):
                assert together[path] == text, (client, path)
    _, out = _build(SHARED)
    assert out[".agents/skills/api/SKILL.md"] == (
        "---\nname: api\ndescription: Use when editing API handlers\n---\n\n# api\n\nSee [the notes](./notes.md).\n")
    assert out[".agents/skills/api/notes.md"] == "# Notes\n"
    assert set(out) == {".agents/skills/api/SKILL.md", ".agents/skills/api/notes.md", ".agents/skills/release/SKILL.md",
                        ".agents/skills/fix/SKILL.md", ".agents/skills/tester/SKILL.md"}


def test_skill_keeps_the_standard_keys_only_and_says_where_openclaw_keys_go():
    files = _item("skill", "notes", "name: notes\ndescription: Use when drafting notes\ncompatibility: Requires git\n"
                                    "allowed-tools: Read\ndisable-model-invocation: true\nx-team: 1\n")
    plan, out = _build(files)
    assert _frontmatter(out[".agents/skills/notes/SKILL.md"]) == {
        "name": "notes", "description": "Use when drafting notes", "compatibility": "Requires git",
        "allowed-tools": "Read", "metadata": {"x-team": "1"}}
    fields = _fields(plan, "skill", "notes")
    assert fields["compatibility"][0] == "emitted"
    assert fields["allowed-tools"][0] == "degraded" and "does not restrict" in fields["allowed-tools"][1]
    assert fields["disable-model-invocation"][0] == "dropped"
    assert "set it in the openclaw: block" in fields["disable-model-invocation"][1]
    assert fields["x-team"][0] == "degraded"  # carried in the Agent Skills metadata map, as text
    assert "workspace" in fields["description"][1]


def test_openclaw_and_hermes_blocks_are_merged_into_the_same_bytes():
    """metadata.openclaw (gating) and metadata.hermes share one `metadata:` map, whichever of
    the two clients writes the file, and Codex and Gemini CLI write the very same bytes."""
    files = _item("skill", "gh", "name: gh\ndescription: Use when talking to GitHub\n"
                                 "openclaw:\n  metadata:\n    openclaw:\n      requires:\n        bins: [gh]\n"
                                 "  user-invocable: false\n"
                                 "hermes:\n  platforms: [linux]\n  metadata:\n    hermes:\n      tags: [git]\n")
    plan, out = _build(files, ("openclaw", "hermes"))
    fm = _frontmatter(out[".agents/skills/gh/SKILL.md"])
    assert fm["metadata"] == {"openclaw": {"requires": {"bins": ["gh"]}}, "hermes": {"tags": ["git"]}}
    assert fm["user-invocable"] is False and fm["platforms"] == ["linux"]
    fields = _fields(plan, "skill", "gh")
    assert fields["openclaw"][0] == "emitted" and fields["hermes"][0] == "emitted"
    assert "Hermes Agent also reads" in fields["hermes"][1]
    # Codex and Gemini CLI write the same shared file, blocks merged the same way: one file.
    together = _plan(files, ("openclaw", "hermes", "codex", "gemini"))
    assert together.ok, [d.format() for d in together.diagnostics]
    shared = [f for f in together.files if f.path == ".agents/skills/gh/SKILL.md"]
    assert len(shared) == 1 and shared[0].content.decode() == out[".agents/skills/gh/SKILL.md"]


# --- rules, commands, agents as skills --------------------------------------------------------

def test_rule_reports_scope_and_always_on_loss():
    plan, _ = _build(SHARED)
    fields = _fields(plan, "rule", "api")
    assert fields["scope"][0] == "degraded" and "src/api/**" in fields["scope"][1]
    assert fields["body"][0] == "degraded" and "CONTEXT.md" in fields["body"][1]


def test_command_becomes_a_skill_run_as_slash_skill():
    plan, out = _build(SHARED)
    text = out[".agents/skills/fix/SKILL.md"]
    assert _frontmatter(text) == {"name": "fix", "description": "Fix the issue given as argument"}
    assert "Spawn the `tester` subagent and give it this task.\n\nFix issue #$ARGUMENTS." in text
    fields = _fields(plan, "command", "fix")
    assert "/skill fix" in fields["description"][1] and "a-z0-9_" in fields["description"][1]
    assert fields["argument-hint"][0] == "dropped"
    assert fields["agent"][0] == "degraded" and "sessions_spawn" in fields["agent"][1]
    assert fields["model"][0] == "dropped"
    assert fields["body"][0] == "degraded" and "$ARGUMENTS" in fields["body"][1]


def test_agent_becomes_a_skill_and_names_the_openclaw_json_keys():
    files = _item("agent", "reviewer", "description: Use when reviewing\nmode: subagent\nmodel: opus\n"
                                       "tools: [read, grep]\n")
    plan, out = _build(files)
    assert _frontmatter(out[".agents/skills/reviewer/SKILL.md"]) == {"name": "reviewer",
                                                                     "description": "Use when reviewing"}
    fields = _fields(plan, "agent", "reviewer")
    assert fields["model"] == ("dropped", 'a skill cannot pick a model; set agents.entries.reviewer.model '
                                          '("provider/model") in ~/.openclaw/openclaw.json')
    assert "agents.entries.reviewer.tools.allow" in fields["tools"][1]
    assert fields["mode"][0] == "dropped"
    assert fields["body"][0] == "degraded"


# --- hooks, MCP, context ---------------------------------------------------------------------

def test_hooks_are_dropped_with_the_reason_of_their_event():
    files = {**_item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash]\nscript: ./g.sh\n",
                     extra={"g.sh": "#!/bin/sh\n"}),
             **_item("hook", "hello", "description: Hello\nevent: SessionStart\nscript: echo hi\n")}
    plan = _plan(files)
    assert plan.ok
    assert not any("hooks" in f.path or f.path.endswith(".sh") for f in plan.files)
    guard = _fields(plan, "hook", "guard")
    assert all(s == "dropped" for k, (s, _) in guard.items() if k != "schema")
    assert "never tool calls" in guard["event"][1]
    hello = _fields(plan, "hook", "hello")
    assert "command:new" in hello["event"][1] and "openclaw hooks enable" in hello["event"][1]
    assert any(d.code == "AR092" for d in plan.diagnostics)


def test_mcp_servers_are_dropped_with_the_openclaw_mcp_set_command():
    remote = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "http", url="https://x/mcp",
                       headers=freeze({"Authorization": "Bearer ${TOKEN}"}),
                       fields=freeze({"remote": {}, "requires-env": ["TOKEN"]}))
    sse = McpServer("events", "b", "b.bundle.yaml", (1, 1), "sse", url="https://x/sse", fields=freeze({"remote": {}}))
    local = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "fs"),
                      fields=freeze({"local": {}}))
    r = OPENCLAW.render_server(remote)
    assert not r.files and not r.fragments and not r.report.generated
    fields = {f.field: (f.status, f.detail) for f in r.report.fields}
    assert fields["remote"][0] == "dropped"
    assert ("openclaw mcp set docs '{\"url\": \"https://x/mcp\", \"transport\": \"streamable-http\", "
            "\"headers\": {\"Authorization\": \"Bearer ${TOKEN}\"}}'") in fields["remote"][1]
    assert fields["requires-env"][0] == "omitted"
    assert '"transport": "sse"' in OPENCLAW.render_server(sse).report.fields[0].detail
    assert "openclaw mcp set fs '{\"command\": \"npx\", \"args\": [\"-y\", \"fs\"]}'" in \
        OPENCLAW.render_server(local).report.fields[0].detail


def test_global_context_is_the_shared_agents_md():
    files = _item("context", "project", "description: About\n", "## About\n\nA monorepo.\n")
    _, out = _build(files)
    _, claude = _build(files, ("claude",))
    assert out["AGENTS.md"] == claude["AGENTS.md"]
    assert not any(p.startswith(".openclaw") for p in out)
