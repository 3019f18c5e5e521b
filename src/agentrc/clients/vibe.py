"""Mistral Vibe (PyPI `mistral-vibe`): the shared AGENTS.md and Agent Skills in the shared
`.agents/skills` (rules and commands become skills, written as OpenClaw and Hermes write
them), custom agents as `.vibe/agents/<name>.toml`, and MCP servers in a project plugin of
agentrc's own, `.vibe/plugins/agentrc/mcp.json`. Hooks are reported dropped with the
`[[hooks]]` entry to add to `.vibe/hooks.toml` (their scripts are copied).

Vibe reads a project's `.vibe/` directory and `.agents/skills` only in a trusted folder
(`vibe --trust`, or the folder in `~/.vibe/trusted_folders.toml`); `.vibe/skills` comes first
and the first skill of a name wins, so agentrc writes no copy there.

Verified with mistral-vibe 3.0.2 (its code, its built-in `vibe` skill that documents the
formats, and tests/conformance/test_vibe_discovery.py, which reads what `vibe -p` recorded
in its session journal and sent its model):
- Skills: `name`, `description`, `license`, `compatibility`, `metadata`, `allowed-tools`,
  `user-invocable`, `disable-model-invocation`; each is also `/<name>`.
- Agents: the file stem is the name; `agent_type = "subagent"` is offered to the model
  (other files are modes the user picks with --agent); `description`, `instructions`, and
  any config key (`enabled_tools`, `active_model`, `tools.<tool>.permission`) as overrides.
- Hooks: only `[[hooks]]` of `.vibe/hooks.toml` (and the user's `~/.vibe/hooks.toml`) act on
  the session's tools: `name`, `type` (pre_tool, post_tool, post_agent), `command` (a shell
  command run in the working directory), `timeout` (seconds), `match` (tool-name glob, or a
  `re:` regex), `strict` (a failing pre_tool hook denies the call; without it a failure lets
  the call run), `description`. A plugin's hooks act on the plugin's own tools only, and
  `.vibe/hooks.toml` is an array of tables, which agentrc cannot merge into a user's file.
- MCP: `.vibe/config.toml` holds `[[mcp_servers]]` (an array of tables again), so agentrc
  writes a project plugin: `mcp.json` `mcpServers.<name>` with `type` (stdio,
  streamable-http, sse), `command` (a bare name), `args`, `env`, `url`, `headers`; no
  `${VAR}` expansion (only `${PLUGIN_ROOT}`), the server runs in the plugin's directory, and
  a stdio server gets only the safe defaults (HOME, PATH...) of Vibe's environment.
"""

from __future__ import annotations

import dataclasses
import json
import re

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    RenderContext,
    default_outcome,
    hook_script,
    json_file,
    narrowing_lost,
    place_resources,
    refuse_hook,
    server_outcomes,
    server_without_defaults,
    tool_event,
    with_skills_section,
)
from agentrc.clients.openclaw import AgentSkillsClient
from agentrc.fidelity import DROPPED, Tracker
from agentrc.files import Fragment, OutputFile, fragment
from agentrc.model import Item, Kind, McpServer
from agentrc.patterns import pattern
from agentrc.text import tomledit
from agentrc.text.cut import shorten
from agentrc.text.markdown import format_body

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

# Vibe's built-in tool names (vibe/core/tools/builtins): what enabled_tools and a hook's
# `match` name. It has no glob tool (grep and bash find files).
TOOL_NAMES = {
    "read": "read_file", "write": "write_file", "edit": "edit", "bash": "bash", "grep": "grep",
    "web-fetch": "web_fetch", "web-search": "web_search",
}
CLAUDE_TOOLS = {"Bash": "bash", "Read": "read_file", "Write": "write_file", "Edit": "edit", "MultiEdit": "edit",
                "Grep": "grep", "WebFetch": "web_fetch", "WebSearch": "web_search", "Task": "task"}
# Vibe reads these skill keys outside the Agent Skills standard (vibe/core/skills/models.py).
VIBE_SKILL_KEYS = frozenset({"user-invocable", "disable-model-invocation"})
# No portable model names: active_model names a model alias of the user's config.toml.
MODELS: Dict[str, str] = {}
AGENTS_DIR = ".vibe/agents"
HOOKS = ".vibe/hooks.toml"
NO_HOOKS = f"agentrc cannot add [[hooks]] entries to {HOOKS} (an array of tables in a file that is also yours)"
PLUGINS = ".vibe/plugins"
MCP_PLUGIN = f"{PLUGINS}/agentrc"
VIBE_EXT = "ai.mistral.vibe"
PLUGIN_DESCRIPTION_LIMIT = 300
PLUGIN_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
TRUSTED = "read in a trusted folder only (vibe --trust, or ~/.vibe/trusted_folders.toml)"
EVENTS = {"PreToolUse": "pre_tool", "PostToolUse": "post_tool", "Stop": "post_agent"}
VAR = pattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class Vibe(AgentSkillsClient):
    name = "vibe"
    family = "vibe"
    title = "Mistral Vibe"
    ignore_file = ignorefile.degraded(
        '.vibeignore', "Mistral Vibe's interactive grep tool skips these paths; its other tools, and every tool "
        "of `vibe -p`, do not read the file")
    passthrough_block = "vibe"
    passthrough_example = {"user-invocable": False}
    shared_block = True  # Vibe reads user-invocable and disable-model-invocation in SKILL.md
    tool_names = TOOL_NAMES
    resource_root = ".vibe/agentrc"
    agents_dir = AGENTS_DIR
    # Vibe loads every SKILL.md under .agents/skills (tests/conformance/test_vibe_discovery.py):
    # skills, and the rules, commands and agents other clients write there as skills.
    also_reads = {Kind.SKILL: (SHARED_SKILL_DIR,), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: (SHARED_SKILL_DIR,), Kind.AGENT: (SHARED_SKILL_DIR,)}
    discovery = f"in the skills list of the system prompt (name, description, path); {TRUSTED}"
    spawn = "spawns a subagent (task)"
    slash = ("in the skills list; the user runs it as /{name}; the model may also load it: set "
             "disable-model-invocation: true in the vibe: block")

    def whole_file(self, kind):
        return self._agent if kind is Kind.AGENT else super().whole_file(kind)

    def foreign_skill_key(self, key: str) -> str:
        if key in VIBE_SKILL_KEYS:
            return ("Mistral Vibe reads it, but .agents/skills is shared with Codex, Gemini CLI, OpenClaw and Hermes "
                    "and holds Agent Skills standard keys only: set it in the vibe: block")
        return super().foreign_skill_key(key)

    # --- agents: .vibe/agents/<name>.toml --------------------------------------------
    def _agent(self, item: Item, ctx: RenderContext, tracker: Tracker) -> List[OutputFile]:
        body = self.body(item, ctx, tracker)
        table = self._agent_head(item, tracker)
        if item.model is not None:
            tracker.dropped("model", "Vibe's active_model names a model alias of the user's config.toml: set "
                                     "active_model in the vibe: block")
        if item.tools is not None:
            self._tools(item, table, tracker)
        body = with_skills_section(item, body, tracker)
        # instructions has no location of its own: links point from the project root.
        body, extra = place_resources(item, "", f"{self.resource_root}/agents/{item.name}", body, self.owner(item),
                                      tracker)
        table["instructions"] = format_body(body) if body.strip() else item.description + "\n"
        before = tracker.outcomes["body"].detail
        tracker.mapped("body", "instructions" + (f"; {before}" if before else ""))
        self.merge_block(item, table, tracker, "merged into the agent's TOML (Vibe agent and config.toml keys)")
        content = tomledit.dumps(table).encode("utf-8")
        return [OutputFile(f"{self.agents_dir}/{item.name}.toml", content, False, self.owner(item))] + list(extra)

    def _agent_head(self, item: Item, tracker: Tracker) -> Dict[str, Any]:
        """agent_type and description: a subagent, or a mode the user picks for `mode: primary`."""
        table: Dict[str, Any] = {"agent_type": "agent" if item.mode == "primary" else "subagent"}
        self.identify(item, table, tracker, name_in_file=False,
                      description_detail=f"offered to the model with the subagent; {AGENTS_DIR}/ is {TRUSTED}")
        if item.mode == "primary":
            tracker.mapped("mode", 'agent_type = "agent": a mode the user picks (--agent, Shift+Tab)')
        elif item.mode == "all":
            tracker.degraded("mode", 'agent_type = "subagent": a Vibe agent is either a mode or a subagent')
        elif item.mode is not None:
            tracker.emitted("mode", 'agent_type = "subagent"')
        return table

    def _tools(self, item: Item, table: Dict[str, Any], tracker: Tracker) -> None:
        tools = list(item.tools or ())
        table["enabled_tools"] = self.native_tools(tools)
        lost = [t for t in tools if t not in TOOL_NAMES]
        if lost:
            tracker.degraded("tools", f"enabled_tools (Vibe tool names); Vibe has no tool for {', '.join(lost)}")
        else:
            tracker.mapped("tools", "enabled_tools (Vibe tool names)")

    # --- hooks: [[hooks]] entries of .vibe/hooks.toml, for the user to add ------------
    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        """Vibe runs a project's hooks from `[[hooks]]` of .vibe/hooks.toml alone (a plugin's
        hooks act on the plugin's own tools), an array of tables agentrc cannot merge into
        the user's file: the script is copied, and the report gives the entry to add."""
        spec = item.hook
        assert spec is not None  # set for every hook item
        kind = EVENTS.get(spec.event)
        if kind is None:
            return refuse_hook(tracker, f"Vibe has no {spec.event} hook (its hooks: pre_tool, post_tool, post_agent)")
        why = narrowing_lost(item, "Mistral Vibe")
        if why:
            return refuse_hook(tracker, why)
        entry: Dict[str, Any] = {"name": item.name, "type": kind, "description": item.description}
        match = self._match(item, tracker) if tool_event(item, tracker) else None
        if match:
            entry["match"] = match
        entry["command"], files = hook_script(self, item, tracker)
        if spec.timeout is not None:
            entry["timeout"] = float(spec.timeout)
        if kind == "pre_tool":
            entry["strict"] = True
        if self.passthrough_block in item.passthrough:
            entry.update(self.passthrough(item))
        inline = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in entry.items())
        strict = (" (strict = true: a failing hook, exit code not 0, denies the call; Claude Code denies on exit "
                  "code 2 alone)" if kind == "pre_tool" else "")
        tracker.dropped("event", f"{NO_HOOKS}; add to {HOOKS}: `[[hooks]]` {{{inline}}}{strict}; Vibe runs it in the "
                                 f"session's working directory (the project root), {TRUSTED}")
        for f in ("name", "description", "timeout", "tools", "matcher", "async", self.passthrough_block):
            if f in tracker.expected and f not in tracker.outcomes:
                tracker.dropped(f, f"{NO_HOOKS}: in the entry shown under event" if f != "async"
                                else f"{NO_HOOKS}; Vibe runs every hook synchronously")
        tracker.omitted("body", "documentation of the hook; not read by clients")
        return files

    def _match(self, item: Item, tracker: Tracker) -> Optional[str]:
        spec = item.hook
        assert spec is not None  # set for every hook item
        if spec.tools is not None:
            names = self.native_tools(spec.tools)
            tracker.dropped("tools", f"{NO_HOOKS}: match (Vibe tool names) in the entry shown under event")
        elif spec.matcher is not None:
            names = list(dict.fromkeys(CLAUDE_TOOLS.get(p.strip(), p.strip()) for p in spec.matcher.split("|")))
            tracker.dropped("matcher", f"{NO_HOOKS}: match in the entry shown under event (Claude tool names in "
                                       "Vibe's; MCP tools are <server>_<tool> there)")
        else:
            return None
        return names[0] if len(names) == 1 else "re:(" + "|".join(re.escape(n) for n in names) + ")"

    # --- MCP servers: mcpServers of the project plugin .vibe/plugins/agentrc/ ---------
    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        """A key of the agentrc plugin's mcp.json (JSON, merged key by key): the project's
        .vibe/config.toml holds servers as an array of tables, the user's."""
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        default_outcome(tracker, "Mistral Vibe", written, False)
        key = "local" if server.transport == "stdio" else "remote"
        if server.transport == "stdio" and "/" in str(server.command):
            return refuse_hook(tracker, f"a Vibe plugin's stdio server runs a bare command name (on PATH), not "
                                        f"{server.command}")
        lost: List[str] = []
        entry = _stdio(server, lost) if server.transport == "stdio" else _http(server, lost)
        where = self.server_where(server.name)
        server_outcomes(server, tracker, where)
        tracker.set(key, "degraded" if lost else "mapped", where + ("; " + "; ".join(lost) if lost else ""))
        return self._server_files(server.name, entry)

    def _server_files(self, name: str, entry: Dict[str, Any]) -> List[Any]:
        plugin, mcp = f"{MCP_PLUGIN}/plugin.json", f"{MCP_PLUGIN}/mcp.json"
        return [fragment(plugin, "json", ("$schema",), PLUGIN_SCHEMA, self.name),
                fragment(plugin, "json", ("name",), "agentrc", self.name),
                fragment(plugin, "json", ("description",), "The project's MCP servers, written by agentrc", self.name),
                fragment(mcp, "json", ("$schema",), MCP_SCHEMA, self.name),
                fragment(mcp, "json", ("mcpServers", name), entry, self.name)]

    def server_where(self, name: str) -> str:
        return f"{MCP_PLUGIN}/mcp.json mcpServers.{name}, a project plugin, {TRUSTED}; Vibe starts it in {MCP_PLUGIN}"

    def model_choice(self, provider, ident):
        return None, DROPPED, "Vibe's active_model names a model alias of the user's config.toml"


class VibePlugin(Vibe):
    """The same content as a Vibe plugin (`--layout plugin`, Agent Plugins 1.0): plugin.json
    with the ai.mistral.vibe extension (which gates agents), skills/ (rules and commands as
    skills), ai.mistral.vibe/agents/*.toml (subagents only, named <plugin>:<name>), mcp.json.
    No context (a plugin has no AGENTS.md) and no hooks: a plugin's hooks act on the plugin's
    own tools only. Installed by copying the directory into .vibe/plugins/ (a trusted
    project) or ~/.vibe/plugins/."""

    title = "Mistral Vibe plugin"
    layout = "plugin"
    kinds = (Kind.RULE, Kind.SKILL, Kind.AGENT, Kind.COMMAND, Kind.HOOK)
    resource_root = "agentrc"
    agents_dir = f"{VIBE_EXT}/agents"
    also_reads: Dict[Kind, Any] = {}
    discovery = "in the skills list of the system prompt, once the plugin is in .vibe/plugins or ~/.vibe/plugins"

    def finish(self, item: Item, ctx: RenderContext, tracker: Tracker, out: List[Any]) -> List[Any]:
        """Skills sit under the plugin's skills/, not the project's shared .agents/skills."""
        moved = []
        for f in out:
            if isinstance(f, (OutputFile, Fragment)) and f.path.startswith(SHARED_SKILL_DIR + "/"):
                f = dataclasses.replace(f, path="skills/" + f.path[len(SHARED_SKILL_DIR) + 1:])
            moved.append(f)
        return moved

    def _agent_head(self, item: Item, tracker: Tracker) -> Dict[str, Any]:
        table: Dict[str, Any] = {"schema_version": 1, "agent_type": "subagent"}
        self.identify(item, table, tracker, name_in_file=False,
                      description_detail="offered to the model with the subagent <plugin>:<name>")
        if len(table["description"]) > PLUGIN_DESCRIPTION_LIMIT:
            table["description"] = shorten(table["description"], PLUGIN_DESCRIPTION_LIMIT)
            tracker.degraded("description", f"shortened to {PLUGIN_DESCRIPTION_LIMIT} characters, a plugin agent's "
                                            "limit")
        if item.mode is not None and item.mode != "subagent":
            tracker.degraded("mode", f"a plugin's agents are subagents (mode {item.mode})")
        elif item.mode is not None:
            tracker.omitted("mode", "implicit: a plugin's agents are subagents")
        return table

    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        return refuse_hook(tracker, "a Vibe plugin's hooks act on the plugin's own tools only, not the session's")

    def server_where(self, name: str) -> str:
        return f"mcp.json mcpServers.{name} (Vibe starts it in the plugin's directory)"

    def _server_files(self, name: str, entry: Dict[str, Any]) -> List[Any]:
        return [fragment("mcp.json", "json", ("$schema",), MCP_SCHEMA, self.name),
                fragment("mcp.json", "json", ("mcpServers", name), entry, self.name)]

    def manifest(self, name: str, description: str, version: str = "") -> OutputFile:
        data: Dict[str, Any] = {"$schema": PLUGIN_SCHEMA, "name": name}
        if version:
            data["version"] = version
        data.update(description=description, extensions={VIBE_EXT: {"schemaVersion": 1}})
        return json_file("plugin.json", data, self.name)

    def marketplace(self, name: str, plugin: str, description: str) -> None:
        """None: Vibe loads a plugin from its directory under .vibe/plugins or ~/.vibe/plugins."""
        return None


def _stdio(server: McpServer, lost: List[str]) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"type": "stdio", "command": server.command, "args": list(server.args)}
    env = {}
    for k, v in server.env.items():
        if VAR.search(str(v)):
            lost.append(f"env {k} left out (Vibe expands no ${{VAR}} there and passes a stdio server only HOME, PATH "
                        "and the other safe defaults of its environment)")
        else:
            env[k] = str(v)
    if env:
        entry["env"] = env
    return entry


def _http(server: McpServer, lost: List[str]) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"type": "streamable-http" if server.transport == "http" else "sse", "url": server.url}
    headers: Dict[str, str] = {}
    for k, v in server.headers.items():
        if VAR.search(str(v)):
            lost.append(f"header {k} left out (a Vibe plugin's headers expand no ${{VAR}}; add the server to "
                        "~/.vibe/config.toml with api_key_env instead)")
        else:
            headers[k] = str(v)
    if headers:
        entry["headers"] = headers
    return entry
