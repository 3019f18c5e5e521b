"""Kimi Code CLI (PyPI `kimi-cli`; `kimi-code` there is now a stub pointing at the new
TypeScript Kimi Code CLI, which installs from Moonshot's own script, not a registry): the
shared AGENTS.md and Agent Skills in the shared `.agents/skills`, written as OpenClaw and
Hermes write them (rules, agents and commands become skills). Hooks and MCP servers exist
only in the user's files (`~/.kimi/config.toml` `[[hooks]]`, `~/.kimi/mcp.json`), so they
are reported dropped with the entry to add there; hook scripts are copied.

Verified with kimi-cli 1.51.0, the last release that runs (1.52.0 only prints that it is no
longer maintained, and with no arguments runs Moonshot's installer), in its code and by
tests/conformance/test_kimi_discovery.py (the first model request of `kimi --print`):
- Context: `.kimi/AGENTS.md` and `AGENTS.md` (or `agents.md`) from the git root down.
- Skills: the project's first existing brand directory of `.kimi/skills`, `.claude/skills`,
  `.codex/skills`, then `.agents/skills`, from the git root; `name`, `description` and
  `type` (`flow` for an Agent Flow) are read; each skill is also `/skill:<name>`.
- Agents: only agent files passed with `--agent-file` (YAML); no directory is scanned.
- Hooks: `[[hooks]]` with Claude Code's events, `matcher` (a regex on Kimi's tool names),
  `command` (a shell command run in the working directory; exit code 2 blocks) and
  `timeout` (1 to 600 seconds).
- MCP: `mcpServers` of `~/.kimi/mcp.json` (or of files given with `--mcp-config-file`).
"""

from __future__ import annotations

import json

from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    RenderContext,
    hook_script,
    narrowing_lost,
    redacted,
    refuse_hook,
    stdio_entry,
    tool_event,
)
from agentrc.clients.openclaw import AgentSkillsClient
from agentrc.fidelity import Tracker
from agentrc.frozen import thaw
from agentrc.model import Item, Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence

# Kimi's tool names (kimi_cli/tools): what a hook matcher names.
TOOL_NAMES = {
    "read": "ReadFile", "write": "WriteFile", "edit": "StrReplaceFile", "bash": "Shell", "grep": "Grep",
    "glob": "Glob", "web-fetch": "FetchURL", "web-search": "SearchWeb",
}
CLAUDE_TOOLS = {"Bash": "Shell", "Read": "ReadFile", "Write": "WriteFile", "Edit": "StrReplaceFile",
                "MultiEdit": "StrReplaceFile", "Grep": "Grep", "Glob": "Glob", "WebFetch": "FetchURL",
                "WebSearch": "SearchWeb", "Task": "Agent"}
MODELS: Dict[str, str] = {}  # no per-agent model: agents are skills
KIMI_SKILL_KEYS = frozenset({"type"})
CONFIG = "~/.kimi/config.toml"
MCP_FILE = "~/.kimi/mcp.json"
# kimi_cli/hooks/config.py HookEventType: Claude Code's event names.
EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "StopFailure",
                    "SessionStart", "SessionEnd", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
                    "Notification"})
HOOKS_ONLY_USER = f"Kimi reads hooks only from {CONFIG} (no project file)"


class Kimi(AgentSkillsClient):
    name = "kimi"
    family = "kimi"
    title = "Kimi Code CLI"
    passthrough_block = "kimi"
    passthrough_example = {"type": "flow"}
    shared_block = True  # Kimi reads `type` in SKILL.md (an Agent Flow)
    tool_names = TOOL_NAMES
    resource_root = ".kimi/agentrc"
    # Every SKILL.md under .agents/skills (other clients' rules, commands and agents as skills
    # too), and .claude/skills, the first brand directory Kimi finds when there is no
    # .kimi/skills, which agentrc never writes (checked by tests/conformance/test_kimi_discovery.py).
    also_reads = {Kind.SKILL: ("claude", SHARED_SKILL_DIR), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: ("claude", SHARED_SKILL_DIR), Kind.AGENT: (SHARED_SKILL_DIR,)}
    discovery_off = {".claude/skills": "create a .kimi/skills directory in the project (Kimi reads the first of "
                                       ".kimi/skills, .claude/skills and .codex/skills)"}
    discovery = ("in the system prompt's project skills (name, path, description); Kimi loads .agents/skills from the "
                 "git root")
    spawn = "delegates to a subagent (the Agent tool)"
    slash = ("in the skills list; the user runs it as /skill:{name}; the model may "
             "also load it: Kimi has no per-skill switch against that")

    def foreign_skill_key(self, key: str) -> str:
        if key in KIMI_SKILL_KEYS:
            return ("Kimi reads it, but .agents/skills is shared with Codex, Gemini CLI, OpenClaw and Hermes and "
                    "holds Agent Skills standard keys only: set it in the kimi: block")
        return super().foreign_skill_key(key)

    def agent_hint(self, item: Item) -> str:
        return "a separate Kimi agent is an agent file (YAML) that the user starts with kimi --agent-file"

    def agent_model(self, item: Item) -> str:
        return "a skill cannot pick a model (a Kimi agent file can, with --agent-file)"

    def agent_tools(self, item: Item) -> str:
        return "a skill cannot restrict tools (a Kimi agent file can, with --agent-file)"

    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        """The [[hooks]] entry of ~/.kimi/config.toml, for the user to add; the script is
        copied, and the entry calls it from the project root (Kimi runs hooks there)."""
        spec = item.hook
        assert spec is not None  # set for every hook item
        if spec.event not in EVENTS:
            return refuse_hook(tracker, f"Kimi has no {spec.event} hook event")
        why = narrowing_lost(item, "Kimi")
        if why:
            return refuse_hook(tracker, why)
        entry: Dict[str, Any] = {"event": spec.event}
        matcher = self._matcher(item, tracker) if tool_event(item, tracker) else None
        if matcher:
            entry["matcher"] = matcher
        entry["command"], files = hook_script(self, item, tracker)
        if spec.timeout is not None:
            entry["timeout"] = max(1, min(int(spec.timeout), 600))
        if self.passthrough_block in item.passthrough:
            entry.update(self.passthrough(item))
        inline = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in entry.items())
        tracker.dropped("event", f"{HOOKS_ONLY_USER}; add: `[[hooks]]` {{{inline}}} (Kimi runs it in the session's "
                                 "working directory, the project root; exit code 2 blocks)")
        for f in ("timeout", "tools", "matcher", self.passthrough_block):
            if f in tracker.expected and f not in tracker.outcomes:
                tracker.dropped(f, f"{HOOKS_ONLY_USER}: in the entry shown under event")
        if "async" in item.fields:
            tracker.dropped("async", f"{HOOKS_ONLY_USER}; Kimi runs every hook synchronously")
        tracker.omitted("description", "documentation of the hook; Kimi hook entries have no description")
        tracker.omitted("body", "documentation of the hook; not read by clients")
        if "name" in item.fields:
            tracker.mapped("name", "names the script's directory")
        return files

    def _matcher(self, item: Item, tracker: Tracker) -> Optional[str]:
        spec = item.hook
        assert spec is not None  # set for every hook item
        if spec.tools is not None:
            names = self.native_tools(spec.tools)
            field = "tools"
        elif spec.matcher is not None:
            names = list(dict.fromkeys(CLAUDE_TOOLS.get(p.strip(), p.strip()) for p in spec.matcher.split("|")))
            field = "matcher"
        else:
            return None
        matcher = "|".join(names)
        tracker.dropped(field, f"{HOOKS_ONLY_USER}: matcher `{matcher}` in the entry shown under event (a regex on "
                               "Kimi's tool names)")
        return f"^({matcher})$" if len(names) > 1 else f"^{matcher}$"

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        if server.transport == "stdio":
            entry: Dict[str, Any] = stdio_entry(server)
        else:
            entry = {"url": server.url, "transport": "http" if server.transport == "http" else "sse"}
            if server.headers:
                entry["headers"] = thaw(server.headers)
        snippet = f"mcpServers: {{{json.dumps(server.name)}: {json.dumps(redacted(entry), ensure_ascii=False)}}}"
        for key in tracker.expected:
            if key == "requires-env":
                tracker.omitted(key, "checked by agentrc at install time (spec 001 §3.6), not a client field")
            else:
                tracker.dropped(key, f"Kimi reads MCP servers only from {MCP_FILE} (or a file given with "
                                     f"--mcp-config-file), and expands no ${{VAR}} there; add: `{snippet}`")
        return []
