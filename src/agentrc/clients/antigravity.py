"""Antigravity CLI (`agy`), Google's successor of Gemini CLI for consumer accounts: a
workspace `.agents/` root (rules in `.agents/rules`, custom agents in
`.agents/agents/<name>/agent.md`, MCP servers in `.agents/mcp_config.json`), Agent Skills in
the shared `.agents/skills` (commands become skills there, as `agy plugin import gemini` turns
Gemini CLI commands into skills), and the shared AGENTS.md (it also reads GEMINI.md).

No judge: `agy` is a closed-source binary installed by Google's own bootstrapper, in no
package registry, so this layout is verified from Google's documentation of 2026-12-06
(antigravity.google/docs, mirrored in google-antigravity/antigravity-cli docs/):
- cli/gcli-migration: workspace `GEMINI.md` and `AGENTS.md`, global `~/.gemini/GEMINI.md`;
  workspace skills in `.agents/skills/` (global `~/.gemini/antigravity-cli/skills/`); MCP
  servers in `.agents/mcp_config.json` (global `~/.gemini/config/mcp_config.json`) under
  `mcpServers`, remote servers with `serverUrl` (not `url`/`httpUrl`); Gemini CLI
  commands become skills.
- cli/plugins: every skill is also a slash command; hooks live in a plugin's `hooks.json`
  or the user's `settings.json` only; a plugin is `plugin.json` (`name`, `description`,
  nothing else) with `mcp_config.json`, `hooks.json`, `skills/`, `agents/`, `rules/`.
- cli/commands/agents: custom agents in `.agents/agents/<name>/agent.md` (global
  `~/.gemini/config/agents/`), frontmatter `name` and `description`, body the instructions;
  the user switches to one in `/agents` (it is the session's agent, not a subagent).
- Workspace rules in `.agents/rules/` (Google's staff on its forum: `.agents/` replaced
  `.agent/`, which still loads); their `trigger:` frontmatter (`always_on`, `glob` with
  `globs:`, `model_decision` with `description:`, `manual`) is from the Antigravity IDE's
  rules page as third parties quote it, not from the CLI's pages.

Not documented, so not written: a hook format for the workspace (one report says `agy`
loads no `.agents/hooks.json`), agent frontmatter beyond name and description, a header key
for remote MCP servers (written as `headers`, as the MCP JSON files of other clients do).
"""

from __future__ import annotations

import dataclasses

from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    default_outcome,
    json_file,
    place_resources,
    server_outcomes,
    server_without_defaults,
    stdio_entry,
    with_skills_section,
)
from agentrc.clients.hookkit import refuse_hook
from agentrc.clients.openclaw import AgentSkillsClient
from agentrc.fidelity import Tracker
from agentrc.files import OutputFile, fragment
from agentrc.frozen import FrozenMap, thaw
from agentrc.model import Item, Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Sequence

ROOT = ".agents"
MCP_FILE = f"{ROOT}/mcp_config.json"
HOOKS = ("Antigravity CLI reads hooks only from an installed plugin's hooks.json and the user's "
         "~/.gemini/antigravity-cli/settings.json, whose hook format its documentation does not give; agentrc "
         "writes no hook for it")
# Rules longer than this are cut by Antigravity (its rules page, as quoted).
RULE_LIMIT = 12000


class Antigravity(AgentSkillsClient):
    name = "antigravity"
    family = "antigravity"
    title = "Antigravity CLI"
    passthrough_block = "antigravity"
    passthrough_example = {"trigger": "manual"}

    resource_root = f"{ROOT}/agentrc"
    rules_dir = f"{ROOT}/rules"
    agents_dir = f"{ROOT}/agents"
    mcp_file = MCP_FILE
    tool_names: Dict[str, str] = {}
    discovery = "listed in /skills and run as /<name>; the model loads it when a task matches"
    slash = "a skill: Antigravity CLI runs every skill as /{name}"
    spawn = "spawns subagents itself"
    # Codex, Gemini CLI, OpenClaw and Hermes write skills (and rules, commands or agents as
    # skills) into the .agents/skills Antigravity CLI loads (from its documentation).
    also_reads = {Kind.SKILL: (SHARED_SKILL_DIR,), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: (SHARED_SKILL_DIR,), Kind.AGENT: (SHARED_SKILL_DIR,)}

    def prepare(self, item, tracker):
        """The shared SKILL.md keeps the Agent Skills form (the same bytes Codex and Gemini
        CLI write): the `antigravity:` block has no place there."""
        if item.kind in (Kind.SKILL, Kind.COMMAND) and self.passthrough_block in item.passthrough:
            tracker.dropped(self.passthrough_block, f"the {SHARED_SKILL_DIR}/<name>/SKILL.md is shared and keeps the "
                                                    "Agent Skills standard form")
            item = dataclasses.replace(item, passthrough=FrozenMap(
                (k, v) for k, v in item.passthrough.items() if k != self.passthrough_block))
        return item

    def rule(self, item, ctx, tracker, fm, body):
        """`.agents/rules/<name>.md`, its activation in `trigger:`: always on, or by glob."""
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="the rule's description (what model_decision rules are chosen by)")
        if "name" in item.fields:
            tracker.mapped("name", "file name")
        if item.scope_paths:
            fm["trigger"] = "glob"
            fm["globs"] = ",".join(item.scope_paths)
            tracker.mapped("scope", "trigger: glob with the paths in globs: (comma-separated)")
        else:
            fm["trigger"] = "always_on"
        if len(body) > RULE_LIMIT:
            before = tracker.outcomes["body"].detail
            tracker.degraded("body", f"{len(body)} characters: Antigravity reads at most {RULE_LIMIT} of a rule file"
                             + (f"; {before}" if before else ""))
        body, extra = self.place(item, self.rules_dir, body, tracker)
        return f"{self.rules_dir}/{item.name}.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        """`.agents/agents/<name>/agent.md`: a custom agent the user switches to in /agents."""
        self.identify(item, fm, tracker)
        if item.mode == "subagent":
            tracker.degraded("mode", "Antigravity CLI's custom agents are session agents the user picks in /agents; "
                                     "it spawns its subagents itself and takes no definition for them")
        elif item.mode is not None:
            tracker.emitted("mode", "a custom agent the user picks in /agents")
        if item.model is not None:
            tracker.dropped("model", "agent.md has no documented model key; the session's model (/model) is used")
        if item.tools is not None:
            tracker.dropped("tools", "agent.md has no documented tool list; tool permissions are the user's "
                                     "(/permissions)")
        body = with_skills_section(item, body, tracker)
        base = f"{self.agents_dir}/{item.name}"
        # The agent keeps its own directory: supporting files sit beside agent.md.
        body, extra = place_resources(item, base, base, body, self.owner(item), tracker)
        return f"{base}/agent.md", body, extra

    def agent_hint(self, item: Item) -> str:  # AgentSkillsClient's; agents are not skills here
        return ""

    def hook(self, item, ctx, tracker):
        return refuse_hook(tracker, HOOKS)

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        if server.transport == "stdio":
            entry: Dict[str, Any] = stdio_entry(server)
        else:
            entry = {"serverUrl": server.url}
            if server.headers:
                entry["headers"] = thaw(server.headers)
        server_outcomes(server, tracker, f"{self.mcp_file} mcpServers (remote servers as serverUrl)")
        default_outcome(tracker, "Antigravity CLI", written, False)
        return [fragment(self.mcp_file, "json", ("mcpServers", server.name), entry, self.name)]


class AntigravityPlugin(Antigravity):
    """The same content as an Antigravity plugin (`--layout plugin`): plugin.json (name and
    description, the only keys its schema allows), skills/ (commands as skills), agents/,
    rules/ and mcp_config.json, installed with `agy plugin install DIR`. Context items go to
    the project's AGENTS.md in the project layout only: a plugin has no context file."""

    title = "Antigravity CLI plugin"
    layout = "plugin"
    kinds = (Kind.RULE, Kind.SKILL, Kind.AGENT, Kind.COMMAND, Kind.HOOK)
    resource_root = "agentrc"
    skill_dir = "skills"
    rules_dir = "rules"
    agents_dir = "agents"
    mcp_file = "mcp_config.json"
    also_reads: Dict[Kind, Any] = {}

    def skill(self, item, ctx, tracker, fm, body):
        entry, body, extra = super().skill(item, ctx, tracker, fm, body)
        return self._in_plugin(entry, extra, body)

    def command(self, item, ctx, tracker, fm, body):
        entry, body, extra = super().command(item, ctx, tracker, fm, body)
        return self._in_plugin(entry, extra, body)

    def _in_plugin(self, entry: str, extra: Sequence[OutputFile], body: str):
        """The shared-directory paths of AgentSkillsClient moved under the plugin's skills/."""
        def moved(path: str) -> str:
            return self.skill_dir + path[len(SHARED_SKILL_DIR):] if path.startswith(SHARED_SKILL_DIR + "/") else path
        return moved(entry), body, [dataclasses.replace(f, path=moved(f.path)) for f in extra]

    def manifest(self, name: str, description: str, version: str = "") -> OutputFile:
        """plugin.json: its schema allows name and description only (no version)."""
        return json_file("plugin.json", {"name": name, "description": description}, self.name)

    def marketplace(self, name: str, plugin: str, description: str) -> None:
        """None: `agy plugin install DIR` installs the directory itself."""
        return None
