"""Claude Code: `.claude/rules`, `.claude/skills`, `.claude/agents` (docs: code.claude.com)."""

from __future__ import annotations

from typing import Any, Dict

from agentrc.clients.base import ClientAdapter
from agentrc.fidelity import Tracker
from agentrc.model import Item
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

    resource_root = ".claude/agentrc"
    skill_dir = ".claude/skills"
    skill_fields = SKILL_FIELDS

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="documentation only: Claude Code reads just the paths: key of a rule")
        if item.scope_paths:
            fm["paths"] = list(item.scope_paths)
            tracker.mapped("scope", "paths: list")
        body, extra = self.place(item, ".claude/rules", body, tracker)
        return f".claude/rules/{item.name}.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker)
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
        body, extra = self.place(item, ".claude/agents", body, tracker)
        return f".claude/agents/{item.name}.md", body, extra

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
