"""Hermes Agent (NousResearch/hermes-agent, PyPI `hermes-agent`): the shared AGENTS.md and
Agent Skills in the shared `.agents/skills`, written exactly as OpenClaw writes them (rules,
agents and commands become skills too). Hooks and MCP servers exist only in the user's
`~/.hermes/config.yaml`, so they are reported dropped with the snippet to paste there
(docs: hermes-agent.nousresearch.com/docs, user-guide/features/{context-files, skills,
hooks, mcp}).

The output root is the repository; agentrc never writes `$HERMES_HOME` (`~/.hermes`), and
never emits `.hermes.md`/`HERMES.md`, which would shadow AGENTS.md (Hermes loads one kind of
project context only, `.hermes.md` first).

Verified in the released code (hermes-agent 0.19.0, 2026-07-20) and git main:
- Project context: `AGENTS.md` (0.19.0: in the working directory only; git main: the chain
  from the git root down), capped at 20,000 characters and prompt-injection scanned.
- Skills: frontmatter parsed with YAML, unknown keys ignored; Hermes reads `name`,
  `description` (its index shows the first 60 characters), `platforms`, `environments`,
  `required_environment_variables` and `metadata.hermes` (tags, requires_toolsets, ...);
  `allowed-tools` is not read. Every skill is also the slash command `/<name>`; the text
  after the command is appended to the instructions, `$ARGUMENTS` is not substituted.
- Project skills: git main loads `<git root>/.agents/skills` and `.hermes/skills` only
  after `hermes skills trust` (each skill is security-scanned); 0.19.0 has no project tier
  and needs `skills.external_dirs: [<repo>/.agents/skills]` in config.yaml.
- Shell hooks: `hooks: {<event>: [{matcher, command, timeout}]}` in config.yaml, events
  on_session_start, pre_llm_call, pre_tool_call, post_tool_call, on_session_end,
  on_session_finalize, subagent_stop, pre_approval_request (plugins.VALID_HOOKS);
  `matcher` is a regex on Hermes tool names (terminal, read_file, write_file, patch,
  search_files, web_extract, web_search), for the tool events only; `timeout` in seconds,
  at most 300; commands run without a shell; each (event, command) needs the user's
  consent once.
- MCP servers: top-level `mcp_servers.<name>` in config.yaml (`command`/`args`/`env`, or
  `url`/`headers`, `transport: sse` for SSE), `${VAR}` expanded.

Unverified:
- Hermes "Named Agents" (`.hermes/agents/*.md`): documented in the repository but in no
  release, so agents become skills.
- That pre_llm_call is the right home for UserPromptSubmit (Hermes' docs say so) and
  on_session_end for Stop (it fires at the end of every turn).
"""

from __future__ import annotations

import json

from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    RenderContext,
    narrowing_lost,
    redacted,
    refuse_hook,
    stdio_entry,
    tool_event,
)
from agentrc.clients.openclaw import AgentSkillsClient
from agentrc.fidelity import Tracker
from agentrc.frozen import thaw
from agentrc.model import Item, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Sequence

# Hermes' own tool names (tools/*.py registry): what a hook `matcher:` names.
TOOL_NAMES = {
    "read": "read_file", "write": "write_file", "edit": "patch", "bash": "terminal", "grep": "search_files",
    "glob": "search_files", "web-fetch": "web_extract", "web-search": "web_search",
}
# No per-agent model in Hermes (agents become skills).
MODELS: Dict[str, str] = {}
CLAUDE_TOOLS = {
    "Bash": "terminal", "Read": "read_file", "Write": "write_file", "Edit": "patch", "MultiEdit": "patch",
    "Grep": "search_files", "Glob": "search_files", "WebFetch": "web_extract", "WebSearch": "web_search",
    "Task": "delegate_task",
}
# Skill keys Hermes reads outside the Agent Skills standard (agent/skill_utils.py).
HERMES_SKILL_KEYS = frozenset({"platforms", "environments", "required_environment_variables", "version", "author"})
CONFIG = "~/.hermes/config.yaml"
HOOK_EVENTS = {
    "SessionStart": "on_session_start", "UserPromptSubmit": "pre_llm_call", "PreToolUse": "pre_tool_call",
    "PostToolUse": "post_tool_call", "Stop": "on_session_end", "SubagentStop": "subagent_stop",
    "SessionEnd": "on_session_finalize", "Notification": "pre_approval_request",
}
EVENT_NOTES = {
    "SessionStart": "observer, first turn of a session",
    "UserPromptSubmit": "once per turn; it can add context but not block the prompt",
    "PreToolUse": 'block with {"decision": "block"}; exit code 2 blocks on git main only',
    "Stop": "fires at the end of every turn; observer",
    "Notification": "fires when a dangerous command awaits approval; observer",
}
HOOKS_ONLY_USER = f"Hermes reads hooks only from {CONFIG} (no project file)"


def translate_matcher(matcher: str) -> str:
    """A Claude-style `Bash|Edit` matcher in Hermes tool names (others kept as written)."""
    parts = [CLAUDE_TOOLS.get(p.strip(), p.strip()) for p in matcher.split("|")]
    return "|".join(dict.fromkeys(parts))


def hermes_server(server: McpServer) -> Dict[str, Any]:
    """An `mcp_servers.<name>` entry of config.yaml (Hermes expands `${VAR}` itself)."""
    if server.transport == "stdio":
        entry: Dict[str, Any] = stdio_entry(server)
        return entry
    entry = {"url": server.url}
    if server.headers:
        entry["headers"] = thaw(server.headers)
    if server.transport == "sse":
        entry["transport"] = "sse"
    return entry


class Hermes(AgentSkillsClient):
    name = "hermes"
    family = "hermes"
    title = "Hermes Agent"
    passthrough_block = "hermes"
    shared_block = True
    tool_names = TOOL_NAMES

    # Nothing is written here (hooks are dropped, resources sit beside SKILL.md): a
    # directory Hermes does not scan (it scans .hermes/skills, plugins, agents).
    resource_root = ".hermes/agentrc"
    discovery = ("in the skills index (first 60 characters); Hermes loads .agents/skills once the repository is "
                 "trusted (hermes skills trust, git main); 0.19.0 needs skills.external_dirs: "
                 f"[<repo>/{SHARED_SKILL_DIR}] in {CONFIG}")
    spawn = "delegates to a subagent (delegate_task)"
    slash = ("shown in the skills index; the command runs as /{name} (Hermes appends the text typed after it); the "
             "model may also load it: Hermes has no per-skill switch against that")

    def foreign_skill_key(self, key: str) -> str:
        if key in HERMES_SKILL_KEYS:
            return (f"Hermes reads it, but {SHARED_SKILL_DIR} is shared with Codex, Gemini CLI and OpenClaw and holds "
                    "Agent Skills standard keys only: set it in the hermes: block")
        return super().foreign_skill_key(key)

    def agent_hint(self, item: Item) -> str:
        return ("a separate Hermes agent is a profile (hermes profile create), which lives in the user's "
                "HERMES_HOME")

    def agent_model(self, item: Item) -> str:
        return "Hermes has no per-agent or per-skill model"

    def agent_tools(self, item: Item) -> str:
        return "a skill cannot restrict tools (Hermes limits subagents by toolset when it delegates, not per skill)"

    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        spec = item.hook
        assert spec is not None  # set for every hook item
        event = HOOK_EVENTS.get(spec.event)
        if event is None:
            return refuse_hook(tracker, f"Hermes has no shell-hook event for {spec.event}")
        why = narrowing_lost(item, "Hermes")
        if why:
            return refuse_hook(tracker, why)
        tracker.omitted("description", "documentation of the hook; hook configs have no description")
        tracker.omitted("body", "documentation of the hook; not read by clients")
        if "name" in item.fields:
            tracker.omitted("name", "names the hook item; Hermes hook entries have no name")
        entry: Dict[str, Any] = {}
        matcher = self._matcher(item, tracker)
        if matcher:
            entry["matcher"] = matcher
        if spec.script_file is not None:
            command = f"{item.directory}/{spec.script_file}" + (f" {spec.script_args}" if spec.script_args else "")
        else:
            command = spec.script
        entry["command"] = command
        if spec.timeout is not None:
            entry["timeout"] = min(spec.timeout, 300)
        if self.passthrough_block in item.passthrough:
            entry.update(self.passthrough(item))
            tracker.dropped(self.passthrough_block, f"{HOOKS_ONLY_USER}: its keys are in the entry shown under event")
        snippet = f"hooks: {{{json.dumps(event)}: [{json.dumps(entry, ensure_ascii=False)}]}}"
        note = EVENT_NOTES.get(spec.event)
        tracker.dropped("event", f"{HOOKS_ONLY_USER}; add: `{snippet}`" + (f" ({event}: {note})" if note else ""))
        where = "relative to the directory Hermes starts in; it runs no shell"
        tracker.dropped("script", f"{HOOKS_ONLY_USER}: command `{json.dumps(command)}` in that entry ({where})")
        if spec.timeout is not None:
            capped = "; Hermes caps it at 300" if spec.timeout > 300 else ""
            tracker.dropped("timeout", f"{HOOKS_ONLY_USER}: timeout {entry['timeout']} (seconds) in that entry{capped}")
        if "async" in item.fields:
            tracker.dropped("async", f"{HOOKS_ONLY_USER}; Hermes runs every hook synchronously")
        tracker.dropped("resources", f"{HOOKS_ONLY_USER}: nothing is copied, the command points at the hook's source "
                                     "directory")
        return refuse_hook(tracker, HOOKS_ONLY_USER)

    def _matcher(self, item: Item, tracker: Tracker) -> str:
        spec = item.hook
        assert spec is not None  # set for every hook item
        if not tool_event(item, tracker):
            return ""
        if spec.tools is not None:
            matcher = "|".join(dict.fromkeys(TOOL_NAMES[t] for t in spec.tools))
            tracker.dropped("tools", f"{HOOKS_ONLY_USER}: matcher `{json.dumps(matcher)}` in that entry (Hermes tool "
                                     "names)")
            return matcher
        if spec.matcher is not None:
            matcher = translate_matcher(spec.matcher)
            kept = [p.strip() for p in spec.matcher.split("|") if p.strip() not in CLAUDE_TOOLS]
            tracker.dropped("matcher", f"{HOOKS_ONLY_USER}: matcher `{json.dumps(matcher)}` in that entry (Claude tool "
                                       "names translated to Hermes'" + (f"; kept as written: {', '.join(kept)}" if kept
                                                                        else "") + ")")
            return matcher
        return ""

    def server(self, server, tracker):
        entry = json.dumps(redacted(hermes_server(server)), ensure_ascii=False)
        snippet = f"mcp_servers: {{{json.dumps(server.name)}: {entry}}}"
        for key in tracker.expected:
            if key == "requires-env":
                tracker.omitted(key, "checked by agentrc at install time (spec 001 §3.6), not a client field")
            else:
                tracker.dropped(key, f"Hermes reads MCP servers only from {CONFIG}; add: `{snippet}`")
        return []
