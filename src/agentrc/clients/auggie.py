"""Auggie, Augment Code's CLI (npm `@augmentcode/auggie`; docs.augmentcode.com/cli): rules in
`.augment/rules` (`type: always_apply` or `agent_requested`), skills in `.augment/skills`,
subagents in `.augment/agents`, commands in `.augment/commands`, hooks and MCP servers in
`.augment/settings.json`, the shared AGENTS.md.

Verified by running auggie 0.36.0 offline (tests/conformance/test_auggie_discovery.py), its
Augment API a local sink (`AUGMENT_SESSION_AUTH` with the sink as tenant URL), and in the
code its package carries:
- Its first `chat-stream` request carries `rules` (AGENTS.md and CLAUDE.md, then every
  `.augment/rules/**/*.md` with its type, 0 always_apply or 2 agent_requested, and its
  description) and `skills` (name, description, location) from `.augment/skills`,
  `.claude/skills` and `.agents/skills`; `.claude/rules` and `.cursor/rules` are not read.
- A skill needs `name` (Agent Skills form) and a `description` of at most 1,024 characters;
  Auggie also reads `hidden`. Subagents come from `.augment/agents`, `.claude/agents` and
  `.agents/agents` (keys name, description, model, color, tools, disabled_tools, ...);
  commands from `.augment/commands` and `.claude/commands` (description, argument-hint,
  model; `$ARGUMENTS` substituted).
- `auggie mcp list --json` lists every `.augment/settings.json` `mcpServers` entry (stdio,
  http, sse) without starting it.
- Hook events: PreToolUse, PostToolUse, Stop, SessionStart, SessionEnd, Notification,
  PromptSubmit; project hooks in `.augment/settings.json` (Augment's hooks docs).

Not checked offline: that subagents, commands, hooks and the `--layout plugin` package
load (no listing without an account; plugins need the account's plugin-marketplace flag),
and Auggie's model names (`auggie model list` needs a login).
"""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    ClientAdapter,
    claude_style_server,
    default_outcome,
    server_outcomes,
    server_without_defaults,
    subagents_only,
    with_skills_section,
)
from agentrc.clients.hookkit import event_matcher, sync_settings_hook
from agentrc.fidelity import DEGRADED, DROPPED, Tracker
from agentrc.files import fragment
from agentrc.model import Item, Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, Sequence

# Auggie's tool ids (auggie tools list); it has no glob or web search tool of its own.
TOOL_NAMES = {
    "read": "view", "write": "save-file", "edit": "str-replace-editor", "bash": "launch-process",
    "grep": "grep-search", "web-fetch": "web-fetch",
}
MODELS: Dict[str, str] = {}  # Auggie's model names come from `auggie model list` (needs a login)
SETTINGS = ".augment/settings.json"
RULES = ".augment/rules"
AGENTS = ".augment/agents"
COMMANDS = ".augment/commands"
EVENTS = {"PreToolUse": "PreToolUse", "PostToolUse": "PostToolUse", "Stop": "Stop", "SessionStart": "SessionStart",
          "SessionEnd": "SessionEnd", "Notification": "Notification", "UserPromptSubmit": "PromptSubmit"}


class Auggie(ClientAdapter):
    name = "auggie"
    family = "auggie"
    title = "Auggie"
    ignore_file = ignorefile.degraded(
        '.augmentignore', "Auggie keeps these paths out of its context engine's index; its file tools may "
                          "still open them")
    rejects_long_description = True  # "Skill description ... Must be 1-1024 characters"
    passthrough_block = "auggie"
    passthrough_example = {"color": "blue"}
    # auggie 0.36.0 loads skills from .claude/skills and .agents/skills too (its request), and
    # subagents from .claude/agents (its code).
    also_reads = {Kind.SKILL: ("claude", SHARED_SKILL_DIR), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: ("claude", SHARED_SKILL_DIR), Kind.AGENT: ("claude", SHARED_SKILL_DIR)}
    prefers_own = frozenset({Kind.SKILL})  # one skill per name: .augment/skills' copy (its request)

    kinds = tuple(Kind)
    resource_root = ".augment/agentrc"  # not under rules/, which Auggie scans for every .md
    skill_dir = ".augment/skills"
    tool_names = TOOL_NAMES
    tools_file = SETTINGS
    rules_dir = RULES
    agents_dir = AGENTS
    commands_dir = COMMANDS
    settings = SETTINGS
    mcp_file = SETTINGS
    hook_var = "$AUGMENT_PROJECT_DIR"

    def rule(self, item, ctx, tracker, fm, body):
        if "name" in item.fields:
            tracker.mapped("name", "file name")
        fm["type"] = "agent_requested" if item.scope_paths else "always_apply"
        fm["description"] = item.description
        tracker.emitted("description", "the rule's description (what an agent_requested rule is picked by)")
        if item.scope_paths:
            tracker.degraded("scope", "Auggie has no path-scoped rules: type: agent_requested, loaded when its "
                                      f"description matches the task (paths {', '.join(item.scope_paths)} are not "
                                      "checked)")
        body, extra = self.place(item, self.rules_dir, body, tracker)
        return f"{self.rules_dir}/{item.name}.md", body, extra

    def command(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False, description_detail="shown with the command")
        if "argument-hint" in item.fields:
            fm["argument-hint"] = item.fields["argument-hint"]
            tracker.emitted("argument-hint")
        self.map_model(item.model, fm, tracker)
        for key, why in (("agent", "Auggie commands run in the session, never in a named subagent"),
                         ("tools", "Auggie commands take the session's tools")):
            if key in item.fields:
                tracker.dropped(key, why)
        body, extra = self.place(item, self.commands_dir, body, tracker)
        return f"{self.commands_dir}/{item.name}.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker)
        subagents_only(item, tracker, f"{self.agents_dir} holds subagents",
                       "Auggie's custom agents are always subagents")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            fm["tools"] = self.native_tools(item.tools)
            missing = [t for t in item.tools if t not in TOOL_NAMES]
            if not item.tools:
                tracker.degraded("tools", "tools: [] written; whether Auggie reads an empty list as no tool is not "
                                          "documented")
            elif missing:
                tracker.degraded("tools", f"Auggie tool ids; it has no tool for {', '.join(missing)}")
            else:
                tracker.mapped("tools", "Auggie tool ids")
        body = with_skills_section(item, body, tracker)
        body, extra = self.place(item, self.agents_dir, body, tracker)
        return f"{self.agents_dir}/{item.name}.md", body, extra

    def model_choice(self, provider, ident):
        if ident == "inherit" and provider is None:
            return None, DROPPED, "omitted: Auggie uses the session's model"
        if provider is None and ident in ("sonnet", "opus", "haiku"):
            return None, DROPPED, ("Auggie names models by its own ids (auggie model list, which needs a login); "
                                   "the session's model is used")
        return ident, DEGRADED, "written as the model id; Auggie's model ids are not checked offline"

    def hook(self, item, ctx, tracker):
        assert item.hook is not None  # set for every hook item
        return sync_settings_hook(self, "Auggie", item, tracker, EVENTS.get(item.hook.event),
                                  (self.settings, self.hook_var), lambda: self._matcher(item, tracker))

    def _matcher(self, item: Item, tracker: Tracker) -> str:
        spec = item.hook
        assert spec is not None  # set for every hook item
        plain = event_matcher(item, tracker)
        if plain is not None:
            return plain
        if spec.tools is not None:
            names = self.native_tools(spec.tools)
            missing = [t for t in spec.tools if t not in TOOL_NAMES]
            if missing:
                tracker.degraded("tools", f"matcher of Auggie tool ids; it has no tool for {', '.join(missing)}")
            else:
                tracker.mapped("tools", "matcher of Auggie tool ids")
            return "|".join(names)
        if spec.matcher is not None:
            tracker.degraded("matcher", "as written; Auggie matches its own tool ids (launch-process, save-file, "
                                        "str-replace-editor, view), not Claude Code's names")
            return spec.matcher
        return ""

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        server_outcomes(server, tracker, f"{self.mcp_file} mcpServers")
        default_outcome(tracker, "Auggie", written, False)
        return [fragment(self.mcp_file, "json", ("mcpServers", server.name), claude_style_server(server), self.name)]


class AuggiePlugin(Auggie):
    """The same content as an Auggie plugin (`--layout plugin`): rules/, skills/, agents/,
    commands/, hooks/hooks.json (scripts via ${AUGMENT_PLUGIN_ROOT}) and .mcp.json at the
    plugin root, described by .augment-plugin/plugin.json, with a one-plugin
    .augment-plugin/marketplace.json, the local marketplace `auggie --plugin-dir DIR` reads.
    The layout is the one auggie 0.36.0's code loads; not checked by running it: Auggie loads
    plugins only when the account's `enablePluginMarketplace` flag is on, and offline there is
    no account. A plugin carries no AGENTS.md."""

    title = "Auggie plugin"
    layout = "plugin"
    tools_file = ""
    kinds = (Kind.RULE, Kind.SKILL, Kind.AGENT, Kind.COMMAND, Kind.HOOK)
    also_reads: Dict[Kind, Any] = {}
    prefers_own: FrozenSet[Kind] = frozenset()
    resource_root = "agentrc"
    skill_dir = "skills"
    rules_dir = "rules"
    agents_dir = "agents"
    commands_dir = "commands"
    settings = "hooks/hooks.json"
    mcp_file = ".mcp.json"
    hook_var = "${AUGMENT_PLUGIN_ROOT}"
    manifest_file = ".augment-plugin/plugin.json"
    marketplace_file = ".augment-plugin/marketplace.json"
