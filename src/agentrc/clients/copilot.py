"""GitHub Copilot: `.github/instructions`, `.github/skills`, `.github/agents`
(docs: docs.github.com/en/copilot, code.visualstudio.com/docs/copilot)."""

from __future__ import annotations

from typing import Any, Dict, List

from agentrc.clients.base import ClientAdapter, with_skills_section
from agentrc.fidelity import Tracker
from agentrc.model import Item, Kind
from agentrc.vocabulary import TOOLS, split_model

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
    title = "GitHub Copilot"
    passthrough_block = "copilot"
    # VS Code also loads .claude/skills, .claude/agents and .claude/rules (docs: agent-skills,
    # custom-agents, custom-instructions).
    also_reads = {Kind.SKILL: ("claude",), Kind.AGENT: ("claude",), Kind.RULE: ("claude",)}

    resource_root = ".github/agentrc"
    skill_dir = ".github/skills"
    skill_fields = SKILL_FIELDS

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False)
        if item.scope_paths:
            fm["applyTo"] = ",".join(item.scope_paths)
            tracker.mapped("scope", "applyTo: comma-joined globs")
        else:
            fm["applyTo"] = "**"
        body, extra = self.place(item, ".github/instructions", body, tracker)
        return f".github/instructions/{item.name}.instructions.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker)
        if item.mode is not None:
            tracker.omitted("mode", "Copilot custom agents have no mode (spec 001 §3.4: MAY be omitted)")
        self._model(item, fm, tracker)
        tools = item.tools if item.tools is not None else TOOLS
        names: List[str] = []
        for t in tools:
            if TOOL_NAMES[t] not in names:
                names.append(TOOL_NAMES[t])
        fm["tools"] = names
        if item.tools is not None:
            folded = [t for t in item.tools if TOOL_NAMES[t] != t]
            tracker.mapped("tools", "Copilot tool aliases" + (f" ({', '.join(f'{t}->{TOOL_NAMES[t]}' for t in folded)})" if folded else ""))
        body = with_skills_section(item, body, tracker)
        body, extra = self.place(item, ".github/agents", body, tracker)
        return f".github/agents/{item.name}.agent.md", body, extra

    def _model(self, item: Item, fm: Dict[str, Any], tracker: Tracker) -> None:
        if item.model is None:
            return
        provider, ident = split_model(item.model)
        if provider is None and ident in MODELS:
            fm["model"] = MODELS[ident]
            tracker.mapped("model", f"display name {MODELS[ident]!r}")
        elif provider is None and ident == "inherit":
            tracker.mapped("model", "omitted: Copilot agents use the session's model by default")
        else:
            tracker.dropped("model", f"Copilot selects models by display name; no mapping for {item.model!r}")
