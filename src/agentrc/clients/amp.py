"""Amp (npm `@ampcode/cli`, renamed from `@sourcegraph/amp`; ampcode.com/manual): the shared
AGENTS.md, Agent Skills in the shared `.agents/skills` (rules, agents and commands become
skills there, the same files OpenClaw and Hermes write), MCP servers in the workspace's
`.amp/settings.json` (`amp.mcpServers`). Hooks, custom commands and agents are TypeScript
plugins (`.amp/plugins`), which agentrc does not write.

Verified by running amp 0.0.1790142911 offline (tests/conformance/test_amp_discovery.py):
- `amp skill list --json` (a dummy `AMP_API_KEY`, nothing reached) lists the workspace's
  `.agents/skills` (source `workspace-agents`) and `.claude/skills` (`workspace-claude`), one
  skill per name, `.agents/skills` first; not `.claude/commands`, `.agents/commands`,
  `.amp/skills`, `.opencode/skills`, `.github/skills`, `.cursor/skills` or the others'.
- `amp mcp list --json` lists every `.amp/settings.json` `amp.mcpServers` entry as a workspace
  server (`command`/`args`/`env`, or `url`/`headers`), as written, without starting it; a
  workspace server runs only after `amp mcp approve <name>`.

From Amp's manual, not checked offline: AGENTS.md (and those in subdirectories) is read at the
start of a thread (AGENT.md or CLAUDE.md only where there is no AGENTS.md); Amp has no model
selector and no custom subagent file; `${VAR}` in a server entry is passed as written here.
"""

from __future__ import annotations

from agentrc.clients.base import SHARED_SKILL_DIR, canonical_server_outcomes, stdio_entry
from agentrc.clients.hookkit import refuse_hook
from agentrc.clients.openclaw import AgentSkillsClient
from agentrc.fidelity import Tracker
from agentrc.files import fragment
from agentrc.frozen import thaw
from agentrc.model import Item, Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Sequence

# Skills cannot restrict tools or pick a model, and Amp picks its models itself.
TOOL_NAMES: Dict[str, str] = {}
MODELS: Dict[str, str] = {}
SETTINGS = ".amp/settings.json"
SERVERS_KEY = "amp.mcpServers"
NO_CODE = "Amp's {what} are TypeScript plugins (.amp/plugins); agentrc writes no code"


class Amp(AgentSkillsClient):
    name = "amp"
    family = "amp"
    title = "Amp"
    passthrough_block = "amp"
    passthrough_example = {"key": "value"}
    tool_names = TOOL_NAMES
    # Amp reads .claude/skills too (its own .agents/skills wins a name clash), and everything
    # the other writers of .agents/skills put there: amp skill list, checked offline.
    also_reads = {Kind.SKILL: ("claude", SHARED_SKILL_DIR), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: ("claude", SHARED_SKILL_DIR), Kind.AGENT: (SHARED_SKILL_DIR,)}
    prefers_own = frozenset({Kind.SKILL, Kind.COMMAND})  # .agents/skills wins over .claude/skills
    # The shared SKILL.md holds the Agent Skills keys only; Amp reads no other.
    passthrough_in_frontmatter = False

    resource_root = ".amp/agentrc"  # nothing is written there: hooks are dropped
    tools_file = SETTINGS
    discovery = "in amp skill list; Amp loads a skill of .agents/skills when the task matches its description"
    spawn = "starts a subagent (the Task tool)"
    slash = ("shown in amp skill list; Amp has no custom slash commands, so the skill loads when asked for by "
             "name or when the task matches its description")

    def agent_hint(self, item: Item) -> str:
        return NO_CODE.format(what="custom agents")

    def agent_model(self, item: Item) -> str:
        return "Amp has no model selector: it picks the model itself"

    def agent_tools(self, item: Item) -> str:
        return "a skill cannot restrict tools (Amp's permissions live in amp.permissions of its settings)"

    def finish(self, item, ctx, tracker, out):
        if self.passthrough_block in item.passthrough and self.passthrough_block not in tracker.outcomes:
            tracker.dropped(self.passthrough_block, f"{SHARED_SKILL_DIR} is shared and holds Agent Skills keys only; "
                                                    "Amp reads no other skill key")
        return out

    def hook(self, item, ctx, tracker):
        return refuse_hook(tracker, NO_CODE.format(what="hooks"))

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        where = f"{SETTINGS} {SERVERS_KEY}"
        if server.transport == "stdio":
            entry: Dict[str, Any] = stdio_entry(server)
            tracker.mapped("local", f"{where}: command, args, env as written; it runs once approved "
                                    "(amp mcp approve <name>)")
        else:
            entry = {"url": server.url}
            if server.headers:
                entry["headers"] = thaw(server.headers)
            how = "Amp picks the transport from the server" if server.transport == "sse" else "Streamable HTTP"
            tracker.mapped("remote", f"{where}: url and headers as written ({how})")
        if "requires-env" in server.fields:
            tracker.omitted("requires-env", "documents the environment the server needs (spec 001 §3.6); no client "
                                            "field")
        canonical_server_outcomes(server, tracker)
        return [fragment(SETTINGS, "json", (SERVERS_KEY, server.name), entry, self.name)]
