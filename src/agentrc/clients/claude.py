"""Claude Code: `.claude/rules`, `.claude/skills` (skills and commands), `.claude/agents`,
hooks in `.claude/settings.json`, MCP servers in `.mcp.json`, and `CLAUDE.md` importing
the shared `AGENTS.md` (docs: code.claude.com)."""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    ClientAdapter,
    claude_style_server,
    context_section,
    has_defaults,
    hook_docs,
    hook_script,
    server_outcomes,
    subagents_only,
)
from agentrc.clients.hookkit import settings_hook, tool_matcher
from agentrc.fidelity import DROPPED, EMITTED, MAPPED, Tracker
from agentrc.files import OutputFile, fragment
from agentrc.model import Item, Kind
from agentrc.text.markedblock import block_render
from agentrc.vocabulary import TOOLS

TOOL_NAMES = {
    "read": "Read", "write": "Write", "edit": "Edit", "bash": "Bash", "grep": "Grep", "glob": "Glob",
    "web-fetch": "WebFetch", "web-search": "WebSearch",
}
# Claude Code resolves these aliases itself (ANTHROPIC_DEFAULT_*_MODEL), so they stay aliases.
MODELS = {"sonnet": "sonnet", "opus": "opus", "haiku": "haiku", "inherit": "inherit"}
# Skill frontmatter Claude Code reads beyond name/description (code.claude.com/docs/en/skills).
SKILL_FIELDS = frozenset({
    "allowed-tools", "compatibility", "when_to_use", "argument-hint", "arguments", "disable-model-invocation",
    "user-invocable", "disallowed-tools", "model", "effort", "context", "agent", "background", "hooks", "paths",
    "shell",
})


class Claude(ClientAdapter):
    name = "claude"
    family = "claude"
    title = "Claude Code"
    ignore_file = ignorefile.none(
        'has no ignore file; keep paths from its tools with Read deny rules under `permissions` in '
        'tools.claude (for example "Read(./.env)")')
    passthrough_block = "claude"
    passthrough_example = {"color": "blue"}

    resource_root = ".claude/agentrc"
    skill_dir = ".claude/skills"
    rules_dir = ".claude/rules"
    agents_dir = ".claude/agents"
    hook_var = "$CLAUDE_PROJECT_DIR"
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="documentation only: Claude Code reads just the paths: key of a rule")
        if item.scope_paths:
            fm["paths"] = list(item.scope_paths)
            tracker.mapped("scope", "paths: list")
        body, extra = self.place(item, self.rules_dir, body, tracker)
        return f"{self.rules_dir}/{item.name}.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker)
        subagents_only(item, tracker, ".claude/agents/ holds subagents", "Claude Code agents are always subagents")
        self.map_model(item.model, fm, tracker)
        tools = item.tools if item.tools is not None else TOOLS
        if tools:
            fm["tools"] = ", ".join(TOOL_NAMES[t] for t in tools)
            if item.tools is not None:
                tracker.mapped("tools", "capitalized Claude Code tool names")
        else:
            # `tools: []` means no tool. Claude Code gives an agent without a `tools` value every
            # tool, so an empty value must not be the only guard: every portable tool is also
            # disallowed, and the list can never widen into "all tools".
            fm["tools"] = []
            fm["disallowedTools"] = list(dict.fromkeys(TOOL_NAMES[t] for t in TOOLS))
            tracker.mapped("tools", "no tools: tools: [] and every portable tool in disallowedTools")
        if item.preload_skills:
            fm["skills"] = [s for s, _ in item.preload_skills]
            tracker.mapped("preload-skills", "skills: list")
        body, extra = self.place(item, self.agents_dir, body, tracker)
        return f"{self.agents_dir}/{item.name}.md", body, extra

    def model_choice(self, provider, ident):
        if provider is None and ident in MODELS:
            return MODELS[ident], EMITTED, "alias resolved by Claude Code"
        if provider == "anthropic":
            return ident, MAPPED, f"model id {ident}"
        if provider is None:
            return ident, EMITTED, "passed through as written"
        return None, DROPPED, f"Claude Code cannot run {provider} models; the agent inherits the session model"

    kinds = tuple(Kind)
    settings = ".claude/settings.json"
    tools_file = ".claude/settings.json"
    aliases = ("claude-code",)

    def command(self, item, ctx, tracker, fm, body):
        """Spec 000 §5.1: commands become user-invoked skills (Claude merged commands into skills)."""
        self.identify(item, fm, tracker)
        fm["disable-model-invocation"] = True
        if "argument-hint" in item.fields:
            fm["argument-hint"] = item.fields["argument-hint"]
            tracker.emitted("argument-hint")
        if "agent" in item.fields:
            fm["context"] = "fork"
            fm["agent"] = item.fields["agent"]
            tracker.mapped("agent", "context: fork with agent:, the skill runs in that subagent")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            fm["allowed-tools"] = ", ".join(TOOL_NAMES[t] for t in item.tools)
            tracker.mapped("tools", "allowed-tools: capitalized Claude Code tool names")
        base = f"{self.skill_dir}/{self.as_skill(item, ctx, fm, tracker)}"
        extra = [OutputFile(f"{base}/{r.path}", r.content, r.executable, self.owner(item)) for r in item.resources]
        tracker.emitted("resources", f"{len(extra)} file(s) copied beside SKILL.md" if extra else "none")
        return f"{base}/SKILL.md", body, extra

    def hook(self, item, ctx, tracker):
        spec = item.hook
        hook_docs(item, tracker)
        command, files = hook_script(self, item, tracker, self.hook_var)
        handler = {"type": "command", "command": command}
        if spec.condition is not None:
            handler["if"] = spec.condition
            tracker.emitted("if", "the handler's if (a permission rule; Claude Code 2.1.85 and later)")
        if spec.timeout is not None:
            handler["timeout"] = spec.timeout
            tracker.emitted("timeout", "seconds")
        if "async" in item.fields:
            if spec.run_async:
                handler["async"] = True
            tracker.emitted("async")
        return files + [settings_hook(self, item, tracker, handler, self.settings, spec.event,
                                      lambda: self.matcher(item, tracker))]

    def matcher(self, item: Item, tracker: Tracker) -> str:
        """Claude-style matcher: portable tools as `Bash|Edit`, or the raw matcher."""
        return claude_matcher(item, tracker)

    def server(self, server, tracker):
        server_outcomes(server, tracker, ".mcp.json mcpServers")
        if has_defaults(server):
            tracker.emitted("env-defaults", "${VAR:-default} kept: Claude Code expands it in .mcp.json")
        return [fragment(".mcp.json", "json", ("mcpServers", server.name), claude_style_server(server), self.name)]

    def context(self, item, ctx, tracker):
        """AGENTS.md is shared; CLAUDE.md imports it (Claude Code does not read AGENTS.md itself)."""
        out = context_section(self, item, ctx, tracker, "AGENTS.md")
        text = CLAUDE_MD.decode()
        out.append(OutputFile("CLAUDE.md", block_render("", text).encode(), False, self.name, "block",
                              (((), text, False),)))
        return out


CLAUDE_MD = b"# Project instructions\n\n@AGENTS.md\n"


class ClaudePlugin(Claude):
    """The same content as a Claude Code plugin (`--layout plugin`): skills/, agents/,
    hooks/hooks.json and .mcp.json at the plugin root, described by .claude-plugin/plugin.json
    (code.claude.com/docs/en/plugins-reference). Plugins carry no rules and no CLAUDE.md."""

    title = "Claude Code plugin"
    layout = "plugin"
    tools_file = ""
    kinds = (Kind.SKILL, Kind.AGENT, Kind.COMMAND, Kind.HOOK)
    resource_root = "agentrc"
    skill_dir = "skills"
    agents_dir = "agents"
    settings = "hooks/hooks.json"
    hook_var = "${CLAUDE_PLUGIN_ROOT}"
    manifest_file = ".claude-plugin/plugin.json"
    marketplace_file = ".claude-plugin/marketplace.json"


def claude_matcher(item: Item, tracker: Tracker) -> str:
    """Claude-style matcher (Claude Code, Codex, Copilot CLI): portable tools as `Bash|Edit`,
    or the raw matcher, for the tool events and, as written, for the other MATCHER_EVENTS
    (SessionStart's `startup|clear|compact`)."""
    return tool_matcher(item, tracker, TOOL_NAMES, "matcher of Claude Code tool names",
                        "as written (Claude Code tool-name regex)")
