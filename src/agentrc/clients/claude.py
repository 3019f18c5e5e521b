"""Claude Code: `.claude/rules`, `.claude/skills`, `.claude/agents` (docs: code.claude.com)."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from agentrc.clients.base import (ClientAdapter, OutputFile, RenderContext, document, place_resources,
                                  resource_files)
from agentrc.fidelity import Tracker
from agentrc.model import Item, Kind
from agentrc.vocabulary import TOOLS, split_model

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
    passthrough_block = "claude"

    def render_item(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[OutputFile]:
        body = self.body(item, ctx, tracker)
        fm: Dict[str, Any] = {}
        owner = self.owner(item)
        if item.kind is Kind.RULE:
            entry = f".claude/rules/{item.name}.md"
            fm["description"] = item.description
            tracker.emitted("description", "documentation only: Claude Code reads just the paths: key of a rule")
            if item.scope_paths:
                fm["paths"] = list(item.scope_paths)
                tracker.mapped("scope", "paths: list")
            body, extra = place_resources(item, ".claude/rules", f".claude/agentrc/rules/{item.name}", body,
                                          owner, tracker)
        elif item.kind is Kind.SKILL:
            entry = f".claude/skills/{item.name}/SKILL.md"
            fm["name"] = item.name
            fm["description"] = item.description
            tracker.emitted("description")
            if "name" in item.fields:
                tracker.emitted("name")
            for key, value in item.extra.items():
                if key in SKILL_FIELDS:
                    fm[key] = value
                    tracker.emitted(key, "Agent Skills / Claude Code skill field")
                else:
                    tracker.dropped(key, "not a skill field Claude Code reads")
            extra = resource_files(item, f".claude/skills/{item.name}", owner)
            tracker.emitted("resources", f"{len(extra)} file(s) copied beside SKILL.md")
        else:
            entry = f".claude/agents/{item.name}.md"
            fm["name"] = item.name
            fm["description"] = item.description
            tracker.emitted("description")
            if "name" in item.fields:
                tracker.emitted("name")
            if item.mode is not None:
                if item.mode == "subagent":
                    tracker.omitted("mode", "implicit: .claude/agents/ holds subagents")
                else:
                    tracker.degraded("mode", f"Claude Code agents are always subagents (mode {item.mode})")
            self._model(item, fm, tracker)
            tools = item.tools if item.tools is not None else TOOLS
            fm["tools"] = ", ".join(TOOL_NAMES[t] for t in tools)
            if item.tools is not None:
                tracker.mapped("tools", "capitalized Claude Code tool names")
            if item.preload_skills:
                fm["skills"] = [s for s, _ in item.preload_skills]
                tracker.mapped("preload-skills", "skills: list")
            body, extra = place_resources(item, ".claude/agents", f".claude/agentrc/agents/{item.name}", body,
                                          owner, tracker)
        if self.passthrough_block in item.passthrough:
            fm.update(self.passthrough(item))
            tracker.emitted(self.passthrough_block, "merged into frontmatter")
        if item.kind is Kind.RULE and "name" in item.fields:
            tracker.mapped("name", "file name")
        return [OutputFile(entry, document(fm, item.name, body), False, owner)] + list(extra)

    def _model(self, item: Item, fm: Dict[str, Any], tracker: Tracker) -> None:
        if item.model is None:
            return
        provider, ident = split_model(item.model)
        if provider is None and ident in MODELS:
            fm["model"] = MODELS[ident]
            tracker.emitted("model", "alias resolved by Claude Code")
        elif provider == "anthropic":
            fm["model"] = ident
            tracker.mapped("model", f"model id {ident}")
        elif provider is None:
            fm["model"] = ident
            tracker.emitted("model", "passed through as written")
        else:
            tracker.dropped("model", f"Claude Code cannot run {provider} models; the agent inherits the session model")
