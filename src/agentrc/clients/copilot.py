"""GitHub Copilot: `.github/instructions`, `.github/skills`, `.github/agents`, prompt files in
`.github/prompts` (commands), hooks in `.github/hooks/agentrc.json`, MCP servers in
`.vscode/mcp.json` (VS Code) and `.mcp.json` (Copilot CLI), the shared AGENTS.md
(docs: docs.github.com/en/copilot, code.visualstudio.com/docs/copilot)."""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    ClientAdapter,
    claude_style_server,
    default_outcome,
    env_refs,
    expand_braces,
    hook_docs,
    hook_script,
    narrowing_lost,
    place_resources,
    refuse_hook,
    server_outcomes,
    server_without_defaults,
    with_skills_section,
)
from agentrc.clients.claude import claude_matcher
from agentrc.fidelity import DROPPED, MAPPED
from agentrc.files import fragment
from agentrc.model import Kind
from agentrc.vocabulary import TOOLS, join_model

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List

# Copilot's documented tool aliases (custom-agents-configuration): several capabilities
# share one alias, so the emitted list is de-duplicated in vocabulary order.
TOOL_NAMES = {
    "read": "read", "write": "edit", "edit": "edit", "bash": "execute", "grep": "search", "glob": "search",
    "web-fetch": "web", "web-search": "web",
}
# Copilot selects models by display name; review when new models ship (docs/clients/copilot.md).
MODELS = {"sonnet": "Claude Sonnet 5.5", "opus": "Claude Opus 5.5", "haiku": "Claude Haiku 4.5"}
SKILL_FIELDS = frozenset({"allowed-tools", "compatibility", "argument-hint", "user-invocable",
                          "disable-model-invocation", "context"})


class Copilot(ClientAdapter):
    name = "copilot"
    family = "copilot"
    rejects_long_description = True  # refuses a skill whose description is over 1,024 characters
    title = "GitHub Copilot"
    ignore_file = ignorefile.none(
        'has no ignore file; content exclusion is a repository or organization setting on GitHub')
    passthrough_block = "copilot"
    passthrough_example = {"excludeAgent": "code-review"}
    # VS Code also loads .claude/skills, .claude/agents and .claude/rules (docs: agent-skills,
    # custom-agents, custom-instructions).
    # ... and .agents/skills, where Codex, Gemini CLI, OpenClaw and Hermes write skills (and
    # their rules and commands as skills). The Copilot CLI 1.0.102 loads skills from
    # .github/skills, .agents/skills and .claude/skills, the first copy of a name winning, and
    # .claude/rules beside .github/instructions (tests/conformance/test_cross_discovery.py).
    # No project switch turns that off: `ignoredSkillsLocations` is user-level only, and a
    # `disabledSkills` in .github/copilot/settings.json is accepted but not applied to a
    # session, so the report names what Copilot also loads instead (skill_switch stays "").
    also_reads = {Kind.SKILL: ("claude", SHARED_SKILL_DIR), Kind.AGENT: ("claude", SHARED_SKILL_DIR),
                  Kind.RULE: ("claude", SHARED_SKILL_DIR), Kind.COMMAND: ("claude", SHARED_SKILL_DIR)}
    prefers_own = frozenset({Kind.SKILL})  # .github/skills comes first

    resource_root = ".github/agentrc"
    skill_dir = ".github/skills"
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False)
        if item.scope_paths:
            patterns = expand_braces(item.scope_paths)
            fm["applyTo"] = ",".join(patterns)
            tracker.mapped("scope", "applyTo: comma-joined globs"
                           + ("; {a,b} alternatives expanded (applyTo splits on commas)"
                              if patterns != list(item.scope_paths) else ""))
        else:
            fm["applyTo"] = "**"
        body, extra = self.place(item, ".github/instructions", body, tracker)
        return f".github/instructions/{item.name}.instructions.md", body, extra

    kinds = tuple(Kind)
    tools_file = ".vscode/settings.json"
    aliases = ("vscode", "github-copilot")
    hooks_file = ".github/hooks/agentrc.json"

    def command(self, item, ctx, tracker, fm, body):
        """A VS Code prompt file, run as /name (the Copilot CLI has no prompt files)."""
        self.identify(item, fm, tracker, name_in_file=False)
        if "name" in item.fields:
            tracker.mapped("name", "file name is the /command name")
        if "argument-hint" in item.fields:
            fm["argument-hint"] = item.fields["argument-hint"]
            tracker.emitted("argument-hint")
        fm["agent"] = item.fields.get("agent", "agent")
        if "agent" in item.fields:
            tracker.emitted("agent", "the custom agent that runs the prompt")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            fm["tools"] = self._tools(item.tools)
            tracker.mapped("tools", "Copilot tool aliases")
        if "$ARGUMENTS" in body:
            body = body.replace("$ARGUMENTS", "${input:arguments}")
            tracker.mapped("body", "$ARGUMENTS as ${input:arguments} (VS Code asks for it, or takes it after /name)")
        body, extra = place_resources(item, ".github/prompts", f"{self.resource_root}/commands/{item.name}", body,
                                      self.owner(item), tracker)
        return f".github/prompts/{item.name}.prompt.md", body, extra

    def hook(self, item, ctx, tracker):
        """One file both dialects read: PascalCase events, `command`, `timeout` in seconds
        (the CLI applies Claude matcher rules to PascalCase events; VS Code ignores matchers)."""
        spec = item.hook
        hook_docs(item, tracker)
        why = narrowing_lost(item, "Copilot")
        if "claude" in ctx.clients:
            # VS Code and the Copilot CLI also run the hooks of .claude/settings.json: a
            # second copy here would run every hook twice.
            for f in ("if", "matcher"):
                if why and f in item.fields:
                    tracker.degraded(f, "Copilot runs the Claude Code copy of this hook (.claude/settings.json); its "
                                        f"hooks document no {f}: for this event, so it may run the hook more often")
            for f in ("event", "script", "tools", "matcher", "if", "timeout", "async", "resources",
                      self.passthrough_block):
                if f in tracker.expected and f not in tracker.outcomes:
                    tracker.mapped(f, "Copilot runs this hook from .claude/settings.json (built for claude); "
                                      "no second copy in .github/hooks")
            return []
        if why:
            return refuse_hook(tracker, why)
        command, files = hook_script(self, item, tracker)
        entry = {"type": "command", "command": command}
        if spec.timeout is not None:
            entry["timeout"] = spec.timeout
            tracker.emitted("timeout", "seconds")
        if "async" in item.fields:
            tracker.dropped("async", "Copilot hooks always run synchronously")
        matcher = claude_matcher(item, tracker)
        if matcher:
            entry["matcher"] = matcher
            for f in ("tools", "matcher"):
                if tracker.outcomes.get(f) and tracker.outcomes[f].status != "omitted":
                    tracker.degraded(f, "Copilot CLI matches Claude tool names; VS Code ignores matchers and "
                                        "runs the hook for every tool")
        self.merge_block(item, entry, tracker, "merged into the hook entry")
        tracker.emitted("event", f"hooks.{spec.event} in {self.hooks_file}")
        top = fragment(self.hooks_file, "json", ("version",), 1, self.name)
        return files + [top, fragment(self.hooks_file, "json", ("hooks", spec.event), entry, self.owner(item),
                                      append=True)]

    def server(self, server, tracker):
        written: Dict[str, str] = {}
        vscode = env_refs(claude_style_server(server_without_defaults(server, written)), "${{env:{}}}")
        server_outcomes(server, tracker, ".vscode/mcp.json servers (VS Code) and .mcp.json mcpServers (Copilot CLI)",
                        ", ${VAR} as ${env:VAR} for VS Code")
        default_outcome(tracker, "VS Code", written, True)
        if written:  # .mcp.json is Claude Code's file too: one entry, as Claude Code reads it
            tracker.degraded("env-defaults", tracker.outcomes["env-defaults"].detail + "; .mcp.json keeps "
                             "${VAR:-default} as written (Claude Code's file; the Copilot CLI documents only ${VAR})")
        return [fragment(".vscode/mcp.json", "json", ("servers", server.name), vscode, self.name),
                fragment(".mcp.json", "json", ("mcpServers", server.name), claude_style_server(server), self.name)]

    def _tools(self, tools) -> List[str]:
        names: List[str] = []
        for t in tools:
            if TOOL_NAMES[t] not in names:
                names.append(TOOL_NAMES[t])
        return names

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker)
        if item.mode is not None:
            tracker.omitted("mode", "Copilot custom agents have no mode (spec 001 §3.4: MAY be omitted)")
        self.map_model(item.model, fm, tracker)
        fm["tools"] = self._tools(item.tools if item.tools is not None else TOOLS)
        if item.tools is not None:
            folded = [t for t in item.tools if TOOL_NAMES[t] != t]
            tracker.mapped("tools", "Copilot tool aliases"
                           + (f" ({', '.join(f'{t}->{TOOL_NAMES[t]}' for t in folded)})" if folded else ""))
        body = with_skills_section(item, body, tracker)
        body, extra = self.place(item, ".github/agents", body, tracker)
        return f".github/agents/{item.name}.agent.md", body, extra

    def model_choice(self, provider, ident):
        if provider is None and ident in MODELS:
            return MODELS[ident], MAPPED, f"display name {MODELS[ident]!r}"
        if provider is None and ident == "inherit":
            return None, MAPPED, "omitted: Copilot agents use the session's model by default"
        return None, DROPPED, f"Copilot selects models by display name; no mapping for {join_model(provider, ident)!r}"
