"""Cline (npm `cline`, the CLI of Cline 3, built on the Cline SDK; docs.cline.bot/customization):
rules in `.clinerules/`, skills in `.cline/skills`, commands as workflows in
`.clinerules/workflows`, custom subagents in `.cline/agents`, the shared AGENTS.md.

Verified by running cline 3.0.65 offline (tests/conformance/test_cline_discovery.py: its first
model request, sent to an OpenAI-compatible endpoint on a local sink) and in its SDK's code:
- Rules: every `.md` file directly in `.clinerules/` (and `.cline/rules/`), frontmatter
  stripped, reaches the system prompt under `# Rules` as `## <name>` (the frontmatter's
  `name:`, else the file name); the workspace AGENTS.md follows as `## Workspace AGENTS.md`.
  The CLI loads a rule with `paths:` always; Cline's editor extension documents `paths:` as
  the condition that activates it for matching files.
- Skills: `.clinerules/skills`, `.cline/skills` and `.agents/skills` (and ~/.cline/skills,
  ~/.agents/skills); Cline reads `name`, `description` and `disabled`/`enabled`; the `skills`
  tool lists the names.
- Workflows: `.clinerules/workflows/<name>.md`; `/<name> ARGS` sends the body (frontmatter
  stripped) with ` ARGS` appended; `$ARGUMENTS` is not substituted.
- Subagents: `.cline/agents/*.yaml` (or `.yml`), a markdown file with YAML frontmatter
  (`name`, `description`, `tools`, `skills`, `providerId`, `modelId`, `maxIterations`) whose
  body is the system prompt; each becomes the tool `subagent_<name>`, described `Use the
  "<name>" subagent: <description>`.
- Hooks: one executable per event, named after it (`.clinerules/hooks/PreToolUse`, ...),
  without a tool matcher: agentrc does not write them (see `hook`).
- MCP servers: only the user's ~/.cline/data/settings/cline_mcp_settings.json.
- Plugins are JavaScript or TypeScript modules (`.cline/plugins`): no `--layout plugin`.
"""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import SHARED_SKILL_DIR, ClientAdapter, place_resources, subagents_only
from agentrc.clients.hookkit import refuse_hook
from agentrc.fidelity import Tracker
from agentrc.model import Item, Kind
from agentrc.vocabulary import split_model

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict

# Cline's built-in tool names (the tools of its model request); it has no web search tool.
TOOL_NAMES = {
    "read": "read_files", "write": "editor", "edit": "editor", "bash": "run_commands", "grep": "search_codebase",
    "glob": "search_codebase", "web-fetch": "fetch_web_content",
}
# Skill keys Cline reads beyond name and description (plus the Agent Skills standard's).
SKILL_FIELDS = frozenset({"compatibility"})
RULES_DIR = ".clinerules"
WORKFLOWS_DIR = ".clinerules/workflows"
AGENTS_DIR = ".cline/agents"
ARGUMENTS_NOTE = "In these instructions, `$ARGUMENTS` stands for the text the user typed after the command."
HOOKS_NOT_WRITTEN = ("Cline runs one executable per event file (.clinerules/hooks/<Event>) with no tool matcher; "
                     "agentrc writes no such dispatcher, so Cline does not get this hook")


class Cline(ClientAdapter):
    name = "cline"
    family = "cline"
    title = "Cline"
    ignore_file = ignorefile.none(
        "deprecated .clineignore (it never blocked access, Cline's docs say), so agentrc writes none; "
        "Cline's Block Ignored File Access plugin reads .gitignore instead")
    passthrough_block = "cline"
    passthrough_example = {"maxIterations": 20}
    # Cline 3.0.65 also loads .agents/skills, where Codex, Gemini CLI, OpenClaw and Hermes write
    # skills (and rules, commands and agents as skills): checked by its model request.
    also_reads = {Kind.SKILL: (SHARED_SKILL_DIR,), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: (SHARED_SKILL_DIR,), Kind.AGENT: (SHARED_SKILL_DIR,)}

    kinds = tuple(Kind)
    capabilities = frozenset()  # MCP servers only in the user's cline_mcp_settings.json
    resource_root = ".cline/agentrc"
    skill_dir = ".cline/skills"
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES

    def rule(self, item, ctx, tracker, fm, body):
        if "name" in item.fields:
            tracker.mapped("name", "file name (the rule's ## heading in the system prompt)")
        tracker.dropped("description", "Cline rules have no description; the rule's text is what loads")
        if item.scope_paths:
            fm["paths"] = list(item.scope_paths)
            tracker.degraded("scope", "paths: (Cline's editor extension loads the rule for matching files; the Cline "
                                      "CLI loads it always)")
        body, extra = self.place(item, RULES_DIR, body, tracker)
        return f"{RULES_DIR}/{item.name}.md", body, extra

    def command(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="workflow description (the body is what /name sends)")
        if "name" in item.fields:
            tracker.mapped("name", "file name is the /command name")
        for key, why in (("argument-hint", "Cline workflows have no argument hint"),
                         ("agent", "a workflow runs in the current agent, never in a named one"),
                         ("model", "a workflow cannot pick a model"),
                         ("tools", "a workflow cannot restrict tools")):
            if key in item.fields:
                tracker.dropped(key, why)
        if "$ARGUMENTS" in body:
            body = f"{ARGUMENTS_NOTE}\n\n{body}"
            before = tracker.outcomes["body"].detail
            tracker.degraded("body", (f"{before}; " if before else "") + "workflows do not substitute $ARGUMENTS (the "
                             "text after /name is appended): kept, with a first line saying what it stands for")
        body, extra = place_resources(item, WORKFLOWS_DIR, f"{self.resource_root}/commands/{item.name}", body,
                                      self.owner(item), tracker)
        return f"{WORKFLOWS_DIR}/{item.name}.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker,
                      description_detail='the subagent tool\'s description: Use the "<name>" subagent: ...')
        subagents_only(item, tracker, f"{AGENTS_DIR} holds subagents", "Cline custom agents are always subagents")
        if item.model is not None:
            self._model(item.model, fm, tracker)
        if item.tools is not None:
            self._tools(item, fm, tracker)
        if item.preload_skills:
            fm["skills"] = [name for name, _ in item.preload_skills]
            tracker.mapped("preload-skills", "skills: (the subagent gets those skills)")
        body, extra = self.place(item, AGENTS_DIR, body, tracker)
        return f"{AGENTS_DIR}/{item.name}.yaml", body, extra

    def _tools(self, item: Item, fm: Dict[str, Any], tracker: Tracker) -> None:
        assert item.tools is not None
        names = self.native_tools(item.tools)
        missing = [t for t in item.tools if t not in TOOL_NAMES]
        if names:
            fm["tools"] = names
        if not missing:
            tracker.mapped("tools", "tools: Cline tool names")
        elif names:
            tracker.degraded("tools", f"tools: Cline tool names; Cline has no {', '.join(missing)} tool")
        else:
            tracker.degraded("tools", f"Cline has no {', '.join(missing)} tool: tools omitted, so the subagent has "
                                      "every tool")

    def _model(self, model: str, fm: Dict[str, Any], tracker: Tracker) -> None:
        provider, ident = split_model(model)
        if provider is None and ident == "inherit":
            tracker.mapped("model", "omitted: a Cline subagent uses the session's provider and model by default")
        elif provider is None:
            tracker.dropped("model", f"Cline needs a provider and a model id; no mapping for {ident!r}")
        else:
            fm["providerId"] = provider
            fm["modelId"] = ident
            tracker.mapped("model", "providerId: and modelId:")

    def hook(self, item, ctx, tracker):
        return refuse_hook(tracker, HOOKS_NOT_WRITTEN)

