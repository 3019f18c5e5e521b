"""OpenClaw (openclaw/openclaw, npm `openclaw`): the shared AGENTS.md and Agent Skills in the
shared `.agents/skills`; every rule, agent and command becomes such a skill too. MCP servers
and hooks exist only in user-level configuration, so they are reported dropped with the
command or file to use (docs: docs.openclaw.ai, concepts/agent-workspace, tools/skills,
tools/slash-commands, automation/hooks, cli/mcp, gateway/config-agents).

The output root is the repository. OpenClaw reads it when the repository is its configured
agent workspace (`agents.defaults.workspace`, `OPENCLAW_WORKSPACE_DIR`) or the session's
execution workspace (a folder picked for the session): then it loads the folder's
`AGENTS.md` and its `.agents/skills`. agentrc never writes `~/.openclaw/openclaw.json`, the
only configuration file (strict schema: a wrong key stops the Gateway).

Verified in OpenClaw's docs (docs.openclaw.ai, mirror of September 2026):
- `AGENTS.md` is the workspace's operating rules and the only file loaded from an
  execution workspace; 20,000 characters per file, 60,000 in total, then truncated.
- Skills: `<workspace>/skills` (OpenClaw only) and `<workspace>/.agents/skills`; `name` and
  `description` are required; OpenClaw reads `metadata.openclaw` (gating: `requires`,
  `os`, `primaryEnv`, ...), `user-invocable`, `disable-model-invocation`, `homepage` and
  `command-*` keys; `allowed-tools` is not an OpenClaw field (no tool restriction).
- A user-invocable skill runs as `/skill <name>` or `/<name>` with the name turned into
  `a-z0-9_`, at most 32 characters.
- There is no rule, agent or command file format. Agents are `agents.entries.<id>`
  entries of openclaw.json (own workspace, `model: "provider/model"`, `tools.allow`).
- Hooks are Gateway lifecycle hooks (`command:new`, `message:received`, `message:sent`,
  `session:compact:before`, ...), never tool calls; each is `hooks/<name>/HOOK.md` plus a
  JavaScript/TypeScript handler in the configured workspace, off until
  `openclaw hooks enable <name>`. Tool interception needs a TypeScript plugin.
- MCP servers: `mcp.servers.<name>` in openclaw.json, set with `openclaw mcp set <name>
  '<json>'`; remote servers default to `transport: "sse"`, so Streamable HTTP is written
  as `"streamable-http"`.

Unverified:
- That `$ARGUMENTS` is never substituted in a skill run as a command (no substitution is
  documented; the arguments reach the model as the request).
- That OpenClaw ignores frontmatter keys it does not know (the `hermes:` block's keys in
  the shared SKILL.md); Hermes is documented to ignore unknown keys.
- Rules as skills and agents as skills are agentrc's choice, not an OpenClaw feature: a
  rule appended to AGENTS.md would reach every client reading that shared file, unscoped.

The shared `.agents/skills/<name>/SKILL.md` is written identically by OpenClaw and Hermes
(`AgentSkillsClient`), and for skills, rules and commands identically to Codex and Gemini
CLI too: name, description, the Agent Skills standard keys, the body, supporting files
beside it (a command's named agent is asked for in the text; `$ARGUMENTS` stays). The
`openclaw:` and `hermes:` passthrough blocks are merged into that frontmatter by both
clients (a `metadata:` map in both is merged, so
`openclaw: {metadata: {openclaw: {requires: {bins: [gh]}}}}` gives OpenClaw's gating); an
item with such a block built for Codex or Gemini CLI too needs other bytes at that path,
which the build reports as AR090.
"""

from __future__ import annotations

import json
import shlex

from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    ClientAdapter,
    redacted,
    resource_files,
    stdio_entry,
    with_skills_section,
)
from agentrc.clients.hookkit import refuse_hook
from agentrc.fidelity import Tracker
from agentrc.files import OutputFile
from agentrc.frozen import thaw
from agentrc.model import Item, Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List

# Agents become skills, which cannot restrict tools or pick a model: no capability or
# model alias maps to anything (an OpenClaw agent's `tools.allow` and `model` live in
# ~/.openclaw/openclaw.json).
TOOL_NAMES: Dict[str, str] = {}
MODELS: Dict[str, str] = {}
# The Agent Skills standard keys an item can carry as extra skill fields (license and
# metadata are SSOT-only, spec 001): the shared .agents/skills holds no other key.
SKILL_FIELDS = frozenset({"compatibility", "allowed-tools"})
# Passthrough blocks merged into every .agents/skills SKILL.md, by every client writing it.
# Skill keys OpenClaw reads outside the standard (tools/skills.md).
OPENCLAW_SKILL_KEYS = frozenset({"homepage", "user-invocable", "disable-model-invocation", "command-dispatch",
                                 "command-tool", "command-arg-mode"})
CONFIG = "~/.openclaw/openclaw.json"

HOOK_HANDLER = ("its hooks are a HOOK.md plus a JavaScript handler in <workspace>/hooks/<name>/, loaded from the "
                "configured workspace only and enabled with `openclaw hooks enable <name>`; agentrc writes no "
                "handler code")
TOOL_HOOK = ("OpenClaw hooks see Gateway events, never tool calls: intercepting tools needs a plugin's typed "
             "hook (before_tool_call / after_tool_call) in TypeScript, which agentrc does not write")
HOOK_REASONS = {
    "PreToolUse": TOOL_HOOK,
    "PostToolUse": TOOL_HOOK,
    "SessionStart": "the nearest OpenClaw event is command:new (also command:reset, agent:bootstrap); " + HOOK_HANDLER,
    "UserPromptSubmit": "the nearest OpenClaw event is message:received (observe only); " + HOOK_HANDLER,
    "Stop": "the nearest OpenClaw event is message:sent (observe only, per message); " + HOOK_HANDLER,
    "PreCompact": "the nearest OpenClaw event is session:compact:before (observe only); " + HOOK_HANDLER,
    "SessionEnd": ("OpenClaw has no session-end hook event (command:stop aborts a run); a plugin's session_end "
                   "hook needs TypeScript"),
    "SubagentStop": "OpenClaw has no subagent hook event; a plugin's subagent_ended hook needs TypeScript",
    "Notification": "OpenClaw has no notification hook event",
}


class AgentSkillsClient(ClientAdapter):
    """A client that reads no rule, agent or command files, only Agent Skills in the shared
    `.agents/skills` and the shared AGENTS.md: skills keep their place, rules, agents and
    commands become skills. OpenClaw and Hermes write every such file with the same bytes
    (no client-specific text in them), so a build for both merges them."""

    kinds = tuple(Kind)
    skill_dir = SHARED_SKILL_DIR
    skill_fields = SKILL_FIELDS
    # What the subclass says in reports.
    config = ""  # the user-level file that holds what a project cannot
    discovery = ""  # when the client reads .agents/skills
    slash = ""  # how a skill runs as a command ("{name}" is replaced)
    spawn = ""  # how the client spawns a subagent

    def _resources(self, item: Item, tracker: Tracker, name: str = "") -> List[OutputFile]:
        base = f"{SHARED_SKILL_DIR}/{name or item.name}"
        files = resource_files(item, base, self.owner(item))
        tracker.emitted("resources", f"{len(files)} file(s) copied beside SKILL.md" if files else "none")
        return files

    def _name(self, item: Item, tracker: Tracker, detail: str) -> None:
        if "--" in item.name:
            tracker.degraded("name", f"{detail}; Agent Skills names may not contain '--', rename the item")
        elif "name" in item.fields:
            tracker.mapped("name", detail)

    def skill(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, description_detail=self.discovery)
        for key, value in item.extra.items():
            if key not in SKILL_FIELDS:
                tracker.dropped(key, self.foreign_skill_key(key))
                continue
            fm[key] = value
            if key == "allowed-tools":
                tracker.degraded(key, f"kept (an Agent Skills key; the file is shared) but {self.title} does not "
                                      "restrict a skill's tools")
            else:
                tracker.emitted(key, "Agent Skills standard key")
        return f"{SHARED_SKILL_DIR}/{item.name}/SKILL.md", body, self._resources(item, tracker)

    def foreign_skill_key(self, key: str) -> str:
        return (f"not an Agent Skills standard key ({SHARED_SKILL_DIR} is shared and holds those only), and "
                f"{self.title} does not read it")

    def rule(self, item, ctx, tracker, fm, body):
        """The rule as a skill: the file Codex and Gemini CLI write for it too (name,
        description, standard skill fields, body, supporting files beside it)."""
        self.identify(item, fm, tracker, description_detail=f"the skill's description: {self.title} loads the rule "
                                                            "when a task matches it")
        for key, value in item.extra.items():
            if key in SKILL_FIELDS:
                fm[key] = value
        self._name(item, tracker, f"skill {SHARED_SKILL_DIR}/{item.name}")
        if item.scope_paths:
            tracker.degraded("scope", f"{self.title} has no path-scoped rules: the rule is a skill loaded when its "
                                      f"description matches the task (paths {', '.join(item.scope_paths)} are not "
                                      "checked)")
        before = tracker.outcomes["body"].detail
        tracker.degraded("body", f"{self.title} has no rule files: the text is a skill in {SHARED_SKILL_DIR}, loaded "
                         "on demand, not always in context (use a CONTEXT.md item for text every session must read)"
                         + (f"; {before}" if before else ""))
        name = self.as_skill(item, ctx, fm, tracker)
        return f"{SHARED_SKILL_DIR}/{name}/SKILL.md", body, self._resources(item, tracker, name)

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, description_detail="skill description: when the model loads it")
        self._name(item, tracker, f"skill {SHARED_SKILL_DIR}/{item.name}")
        body = with_skills_section(item, body, tracker)
        if item.mode is not None:
            tracker.dropped("mode", f"a skill has no mode; {self.agent_hint(item)}")
        if item.model is not None:
            tracker.dropped("model", self.agent_model(item))
        if item.tools is not None:
            tracker.dropped("tools", self.agent_tools(item))
        before = tracker.outcomes["body"].detail
        tracker.degraded("body", (f"{before}; " if before else "") + "the agent's prompt is the instructions of a "
                         f"skill in {SHARED_SKILL_DIR}, which the main agent loads when relevant (no own context, "
                         f"tools or model); {self.agent_hint(item)}")
        name = self.as_skill(item, ctx, fm, tracker)
        return f"{SHARED_SKILL_DIR}/{name}/SKILL.md", body, self._resources(item, tracker, name)

    def agent_hint(self, item: Item) -> str:
        raise NotImplementedError

    def agent_model(self, item: Item) -> str:
        raise NotImplementedError

    def agent_tools(self, item: Item) -> str:
        raise NotImplementedError

    def command(self, item, ctx, tracker, fm, body):
        """The command as a skill: the file Codex writes for it too (a named agent is asked
        for in the text; `$ARGUMENTS` stays, the text typed after the command tells its value)."""
        self.identify(item, fm, tracker, description_detail=self.slash.format(name=item.name))
        self._name(item, tracker, f"skill {SHARED_SKILL_DIR}/{item.name}")
        if "argument-hint" in item.fields:
            tracker.dropped("argument-hint", f"{self.title} skills have no argument hint")
        if "agent" in item.fields:
            body = f"Spawn the `{item.fields['agent']}` subagent and give it this task.\n\n" + body
            tracker.degraded("agent", f"asked for in the skill's text: {self.title} {self.spawn} when the prompt asks "
                                      "for one, but agents are skills here, not subagent definitions")
        if item.model is not None:
            tracker.dropped("model", f"{self.title} skills cannot pick a model")
        if item.tools is not None:
            tracker.dropped("tools", f"{self.title} skills cannot restrict tools")
        if "$ARGUMENTS" in body:
            before = tracker.outcomes["body"].detail
            tracker.degraded("body", f"{self.title} substitutes no $ARGUMENTS: the placeholder stays and the model "
                             "takes the value from the text typed after the command"
                             + (f"; {before}" if before else ""))
        name = self.as_skill(item, ctx, fm, tracker)
        return f"{SHARED_SKILL_DIR}/{name}/SKILL.md", body, self._resources(item, tracker, name)


def openclaw_server(server: McpServer) -> Dict[str, Any]:
    """An `mcp.servers.<name>` entry of openclaw.json (`${VAR}` in headers is expanded)."""
    if server.transport == "stdio":
        entry: Dict[str, Any] = stdio_entry(server)
        return entry
    entry = {"url": server.url, "transport": "streamable-http" if server.transport == "http" else "sse"}
    if server.headers:
        entry["headers"] = thaw(server.headers)
    return entry


class OpenClaw(AgentSkillsClient):
    name = "openclaw"
    family = "openclaw"
    title = "OpenClaw"
    passthrough_block = "openclaw"
    shared_block = True
    tool_names = TOOL_NAMES

    # Nothing is written here (hooks are dropped, resources sit beside SKILL.md); a
    # directory OpenClaw does not scan, as the interface asks.
    resource_root = ".openclaw/agentrc"
    discovery = ("in the skills list; OpenClaw loads .agents/skills when the repository is its workspace or the "
                 "session's execution workspace")
    spawn = "spawns a subagent (sessions_spawn)"
    slash = ("shown in the skills list; the command runs as /skill {name} (or a direct slash command with the name "
             "in a-z0-9_, at most 32 characters); the model may also load it: disable-model-invocation is not an "
             "Agent Skills key, set it in the openclaw: block")

    def foreign_skill_key(self, key: str) -> str:
        if key in OPENCLAW_SKILL_KEYS:
            return (f"OpenClaw reads it, but {SHARED_SKILL_DIR} is shared with Codex, Gemini CLI and Hermes and holds "
                    "Agent Skills standard keys only: set it in the openclaw: block")
        return super().foreign_skill_key(key)

    def agent_hint(self, item: Item) -> str:
        return (f"a separate OpenClaw agent is an agents.entries.{item.name} entry (own workspace) in {CONFIG}, "
                "which agentrc does not write")

    def agent_model(self, item: Item) -> str:
        return (f"a skill cannot pick a model; set agents.entries.{item.name}.model (\"provider/model\") in "
                f"{CONFIG}")

    def agent_tools(self, item: Item) -> str:
        return f"a skill cannot restrict tools; set agents.entries.{item.name}.tools.allow in {CONFIG}"

    def hook(self, item, ctx, tracker):
        reason = HOOK_REASONS[item.hook.event]
        return refuse_hook(tracker, reason)

    def server(self, server, tracker):
        command = f"openclaw mcp set {server.name} {shlex.quote(json.dumps(redacted(openclaw_server(server))))}"
        for key in tracker.expected:
            if key == "requires-env":
                tracker.omitted(key, "checked by agentrc at install time (spec 001 §3.6), not a client field")
            else:
                tracker.dropped(key, f"OpenClaw reads MCP servers only from {CONFIG} (mcp.servers); run: `{command}`")
        return []
