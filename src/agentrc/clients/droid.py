"""Factory's droid (npm `@factory/cli`; docs.factory.ai/cli): skills in `.factory/skills`
(rules become skills there too), custom droids in `.factory/droids`, commands in
`.factory/commands`, hooks in `.factory/settings.json`, MCP servers in `.factory/mcp.json`,
the shared AGENTS.md.

Verified by running droid 0.225.2 offline (tests/conformance/test_droid_discovery.py), its
model a bring-your-own-key `customModels` entry at a local sink, and in the schemas its
binary carries:
- The first model request holds AGENTS.md (and CLAUDE.md) under `## Project Instructions`,
  `Available skills` as `<name>: <description>` from `.factory/skills` and `.agents/skills`
  (not `.claude/skills` or other clients' directories), and `Custom droids available` as
  `- <name>: <description> (location: project)` from `.factory/droids` (not
  `.claude/agents`).
- Skill keys: name, description, license, compatibility, metadata, allowed-tools, version,
  tools, enabled, user-invocable, disable-model-invocation. Droid keys: name, description,
  model, reasoningEffort, tools (droid tool names), mcpServers.
- `/<command> ARGS` sends the command file's text, frontmatter stripped, `$ARGUMENTS` replaced;
  a command reads `description` and `argument-hint` only; `.claude/commands` is not read.
- `droid mcp list` lists every `.factory/mcp.json` server as a project server (it tries to
  connect); a `${VAR}` in a credential is expanded (an unset one is named).
- Hooks have Claude Code's shape and events (PreToolUse, PostToolUse, Notification,
  UserPromptSubmit, Stop, SubagentStop, PreCompact, SessionStart, SessionEnd), a handler is
  `{type: command, command, timeout}`; scripts find the project in `$FACTORY_PROJECT_DIR`.
  droid maps Claude Code's tool names to its own (Bash: Execute, Write: Create, WebFetch:
  FetchUrl).

The `--layout plugin` package (`DroidPlugin`) installs offline with `droid plugin marketplace
add DIR` and `droid plugin install`; the next model request lists its skills and droids
(location: personal), its commands run, `droid mcp list` shows its `mcp.json` servers.

Not checked offline: that hooks load and run (they fire around a model's tool call); the
plugin's hook scripts find its root in `$DROID_PLUGIN_ROOT` (a name from droid's binary).
"""

from __future__ import annotations

from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    ClientAdapter,
    claude_style_server,
    default_outcome,
    place_resources,
    server_outcomes,
    server_without_defaults,
    subagents_only,
    with_skills_section,
)
from agentrc.clients.hookkit import event_matcher, sync_settings_hook
from agentrc.fidelity import DROPPED, EMITTED, MAPPED, Tracker
from agentrc.files import fragment
from agentrc.model import Item, Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence

# droid's tool ids (its own map from Claude Code's names: Bash -> Execute, Write -> Create, ...).
TOOL_NAMES = {
    "read": "Read", "write": "Create", "edit": "Edit", "bash": "Execute", "grep": "Grep", "glob": "Glob",
    "web-fetch": "FetchUrl", "web-search": "WebSearch",
}
CLAUDE_TOOLS = {"Bash": "Execute", "Write": "Create", "WebFetch": "FetchUrl"}
# Model ids droid 0.225.2 knows; review when new models ship (docs/clients/droid.md).
MODELS = {"sonnet": "claude-sonnet-5", "opus": "claude-opus-5-5", "haiku": "claude-haiku-4-5-20251001",
          "inherit": "inherit"}
SKILL_FIELDS = frozenset({"compatibility", "allowed-tools", "version", "user-invocable", "disable-model-invocation"})
SETTINGS = ".factory/settings.json"
MCP = ".factory/mcp.json"
DROIDS = ".factory/droids"
COMMANDS = ".factory/commands"
EVENTS = frozenset({"PreToolUse", "PostToolUse", "Notification", "UserPromptSubmit", "Stop", "SubagentStop",
                    "PreCompact", "SessionStart", "SessionEnd"})


class Droid(ClientAdapter):
    name = "droid"
    family = "droid"
    title = "Factory Droid"
    passthrough_block = "droid"
    passthrough_example = {"reasoningEffort": "high"}
    # droid 0.225.2 loads .agents/skills beside its own .factory/skills (its model request).
    also_reads = {Kind.SKILL: (SHARED_SKILL_DIR,), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: (SHARED_SKILL_DIR,), Kind.AGENT: (SHARED_SKILL_DIR,)}

    kinds = tuple(Kind)
    resource_root = ".factory/agentrc"
    skill_dir = ".factory/skills"
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES
    tools_file = SETTINGS
    droids_dir = DROIDS
    commands_dir = COMMANDS
    settings = SETTINGS
    mcp_file = MCP
    hook_var = "$FACTORY_PROJECT_DIR"

    def rule(self, item, ctx, tracker, fm, body):
        """droid has no rule files (AGENTS.md is its instructions): the rule is a skill."""
        self.identify(item, fm, tracker, description_detail="the skill's description: droid loads the rule when a "
                                                            "task matches it")
        if item.scope_paths:
            tracker.degraded("scope", "droid has no path-scoped rules: the rule is a skill loaded when its description "
                                      f"matches the task (paths {', '.join(item.scope_paths)} are not checked)")
        before = tracker.outcomes["body"].detail
        tracker.degraded("body", f"droid has no rule files: the text is a skill in {self.skill_dir}, loaded on "
                         "demand (use a CONTEXT.md item for text every session must read)"
                         + (f"; {before}" if before else ""))
        base = f"{self.skill_dir}/{self.as_skill(item, ctx, fm, tracker)}"
        # Its supporting files sit beside SKILL.md, as a skill's do: links stay as written.
        body, extra = place_resources(item, base, base, body, self.owner(item), tracker)
        return f"{base}/SKILL.md", body, extra

    def command(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False, description_detail="shown with /<name>")
        if "argument-hint" in item.fields:
            fm["argument-hint"] = item.fields["argument-hint"]
            tracker.emitted("argument-hint")
        for key, why in (("agent", "droid commands run in the session, never in a named droid"),
                         ("model", "droid commands cannot pick a model"),
                         ("tools", "droid commands take the session's tools")):
            if key in item.fields:
                tracker.dropped(key, why)
        body, extra = self.place(item, self.commands_dir, body, tracker)
        return f"{self.commands_dir}/{item.name}.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, description_detail="the Task tool's list of custom droids")
        subagents_only(item, tracker, f"{self.droids_dir} holds subagents", "custom droids are always subagents")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            fm["tools"] = self.native_tools(item.tools)
            if item.tools:
                tracker.mapped("tools", "tools: droid tool ids")
            else:
                tracker.degraded("tools", "tools: [] written; whether droid reads an empty list as no tool is not "
                                          "documented")
        body = with_skills_section(item, body, tracker)
        body, extra = self.place(item, self.droids_dir, body, tracker)
        return f"{self.droids_dir}/{item.name}.md", body, extra

    def model_choice(self, provider, ident):
        if provider is None and ident in MODELS:
            return MODELS[ident], MAPPED, MODELS[ident]
        if provider in (None, "anthropic", "openai", "google"):
            return ident, EMITTED, "passed through as a droid model id"
        return None, DROPPED, f"droid has no {provider} models; the droid uses the session's model"

    def hook(self, item, ctx, tracker):
        assert item.hook is not None  # set for every hook item
        event = item.hook.event
        return sync_settings_hook(self, "droid", item, tracker, event if event in EVENTS else None,
                                  (self.settings, self.hook_var), lambda: self._matcher(item, tracker))

    def _matcher(self, item: Item, tracker: Tracker) -> str:
        spec = item.hook
        assert spec is not None  # set for every hook item
        plain = event_matcher(item, tracker)
        if plain is not None:
            return plain
        if spec.tools is not None:
            tracker.mapped("tools", "matcher of droid tool ids")
            return "|".join(dict.fromkeys(TOOL_NAMES[t] for t in spec.tools))
        if spec.matcher is not None:
            parts: List[str] = [CLAUDE_TOOLS.get(p.strip(), p.strip()) for p in spec.matcher.split("|")]
            tracker.mapped("matcher", "Claude Code tool names as droid's (Bash: Execute, Write: Create, WebFetch: "
                                      "FetchUrl), the rest as written")
            return "|".join(dict.fromkeys(parts))
        return ""

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        server_outcomes(server, tracker, f"{self.mcp_file} mcpServers", ", ${VAR} expanded by droid")
        default_outcome(tracker, "droid", written, False)
        return [fragment(self.mcp_file, "json", ("mcpServers", server.name), claude_style_server(server), self.name)]



class DroidPlugin(Droid):
    """The same content as a droid plugin (`--layout plugin`): skills/ (rules as skills too),
    droids/, commands/, hooks/hooks.json and mcp.json at the plugin root, described by
    .factory-plugin/plugin.json, with a one-plugin .factory-plugin/marketplace.json, which
    `droid plugin marketplace add DIR` then `droid plugin install <plugin>@<marketplace>`
    install (checked offline). A plugin carries no AGENTS.md."""

    title = "Factory Droid plugin"
    layout = "plugin"
    tools_file = ""
    kinds = (Kind.RULE, Kind.SKILL, Kind.AGENT, Kind.COMMAND, Kind.HOOK)
    also_reads: Dict[Kind, Any] = {}
    resource_root = "agentrc"
    skill_dir = "skills"
    droids_dir = "droids"
    commands_dir = "commands"
    settings = "hooks/hooks.json"
    mcp_file = "mcp.json"
    hook_var = "${DROID_PLUGIN_ROOT}"
    manifest_file = ".factory-plugin/plugin.json"
    marketplace_file = ".factory-plugin/marketplace.json"
