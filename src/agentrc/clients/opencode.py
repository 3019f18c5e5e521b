"""opencode (V1 config format, which V2 still reads): rules registered in opencode.json
`instructions`, `.opencode/skills`, `.opencode/agents`, `.opencode/commands`, MCP servers in
opencode.json `mcp`, the shared AGENTS.md; hooks are JS plugins, which agentrc does not
write (docs: opencode.ai/v1/docs)."""

from __future__ import annotations

from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    ClientAdapter,
    default_outcome,
    env_refs,
    place_resources,
    server_outcomes,
    server_without_defaults,
    with_skills_section,
)
from agentrc.clients.hookkit import refuse_hook
from agentrc.fidelity import DROPPED, EMITTED, MAPPED, Tracker
from agentrc.files import fragment
from agentrc.model import Item, Kind, McpServer
from agentrc.vocabulary import TOOLS, join_model

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Sequence

# opencode agents take a permission map, not a tool list; `write` has no key (edit covers it).
PERMISSIONS = {
    "read": "read", "write": "edit", "edit": "edit", "bash": "bash", "grep": "grep", "glob": "glob",
    "web-fetch": "webfetch", "web-search": "websearch",
}
# provider/model ids (models.dev); review when new models ship (docs/clients/opencode.md).
MODELS = {"sonnet": "anthropic/claude-sonnet-5-5", "opus": "anthropic/claude-opus-5-5",
          "haiku": "anthropic/claude-haiku-4-5"}
# opencode V1 reads only these skill keys (plus name and description).
SKILL_FIELDS = frozenset({"compatibility"})
RULES_DIR = ".agents/rules"
CONFIG = "opencode.json"


class Opencode(ClientAdapter):
    name = "opencode"
    family = "opencode"
    rejects_long_description = True  # refuses a skill whose description is over 1,024 characters
    title = "opencode"
    passthrough_block = "opencode"
    passthrough_example = {"temperature": 0.2}
    # opencode reads .claude/skills and .agents/skills (project and home), where Codex, Gemini
    # CLI, OpenClaw and Hermes write skills (and rules and commands as skills); with a name in
    # two of them, which one it loads varies from run to run (opencode 1.18.33, checked by
    # tests/conformance/test_cross_discovery.py). Turning the scans off takes an environment
    # variable (OPENCODE_DISABLE_CLAUDE_CODE_SKILLS, OPENCODE_DISABLE_EXTERNAL_SKILLS), which
    # agentrc cannot write; a `permission.skill` deny in opencode.json hides one skill by name.
    also_reads = {Kind.SKILL: ("claude", SHARED_SKILL_DIR), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: ("claude", SHARED_SKILL_DIR), Kind.AGENT: (SHARED_SKILL_DIR,)}
    skill_switch = f"permission.skill.<name>: deny in {CONFIG}"
    # (With shared copies on, opencode's own copy of a skill may be the one in .claude/skills.)
    discovery_off = {".claude/skills": "set shared-copies: false in agentrc.yaml and run opencode with "
                                       "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS=1",
                     SHARED_SKILL_DIR: "set shared-copies: false in agentrc.yaml and run opencode with "
                                       "OPENCODE_DISABLE_EXTERNAL_SKILLS=1 (which hides .claude/skills too)"}

    resource_root = ".opencode/agentrc"
    skill_dir = ".opencode/skills"
    skill_fields = SKILL_FIELDS
    permissions = PERMISSIONS

    kinds = tuple(Kind)
    tools_file = CONFIG

    # What a fork (Kilo Code) changes: its name in the report's words, its directories.
    brand = "opencode"
    commands_dir = ".opencode/commands"
    agents_dir = ".opencode/agents"
    plugins_dir = ".opencode/plugins"

    def hide_skills(self, names):
        # A denied skill is left out of the skill tool's list and refused when named.
        return tuple(fragment(self.tools_file, "json", ("permission", "skill", name), "deny", owner)
                     for name, owner in names)

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker,
                      description_detail="loaded with the rule text through opencode.json instructions")
        if item.scope_paths:
            tracker.degraded("scope", "opencode has no path-scoped rules; the rule is always on")
        # The rule keeps its own directory, so resources sit beside it and links stay as written.
        body, extra = place_resources(item, f"{RULES_DIR}/{item.name}", f"{RULES_DIR}/{item.name}", body,
                                      self.owner(item), tracker)
        entry = f"{RULES_DIR}/{item.name}/RULE.md"
        extra = list(extra) + [fragment(CONFIG, "json", ("instructions",), entry, self.owner(item), append=True)]
        return entry, body, extra

    def command(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False)
        if "name" in item.fields:
            tracker.mapped("name", "file name is the command name")
        if "argument-hint" in item.fields:
            tracker.dropped("argument-hint", f"{self.brand} commands have no argument hint")
        if "agent" in item.fields:
            fm["agent"] = item.fields["agent"]
            fm["subtask"] = True
            tracker.mapped("agent", "agent: with subtask: true (runs as that subagent)")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            tracker.dropped("tools", f"{self.brand} commands take the tools of the agent that runs them")
        body, extra = place_resources(item, self.commands_dir, f"{self.resource_root}/commands/{item.name}",
                                      body, self.owner(item), tracker)
        return f"{self.commands_dir}/{item.name}.md", body, extra

    def hook(self, item, ctx, tracker):
        return refuse_hook(tracker, f"{self.brand} hooks are JavaScript plugins ({self.plugins_dir}); agentrc "
                                    "writes no code")

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        if server.transport == "stdio":
            entry: Dict[str, Any] = {"type": "local", "command": [server.command] + list(server.args)}
            if server.env:
                entry["environment"] = env_refs(server.env, "{{env:{}}}")
        else:
            entry = {"type": "remote", "url": server.url}
            if server.headers:
                entry["headers"] = env_refs(server.headers, "{{env:{}}}")
        entry["enabled"] = True
        server_outcomes(server, tracker, "opencode.json mcp", ", ${VAR} as {env:VAR}")
        default_outcome(tracker, "opencode", written, True)
        return [fragment(CONFIG, "json", ("mcp", server.name), entry, self.name)]

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False)
        if "name" in item.fields:
            tracker.mapped("name", "file name is the agent id")
        fm["mode"] = item.mode or "subagent"
        if item.mode:
            tracker.emitted("mode")
        self.map_model(item.model, fm, tracker)
        fm["permission"] = self._permission(item, tracker)
        body = with_skills_section(item, body, tracker)
        body, extra = self.place(item, self.agents_dir, body, tracker)
        return f"{self.agents_dir}/{item.name}.md", body, extra

    def _permission(self, item: Item, tracker: Tracker) -> Dict[str, str]:
        allowed = set(item.tools if item.tools is not None else TOOLS)
        perm: Dict[str, str] = {}
        for tool in TOOLS:
            key = PERMISSIONS[tool]
            if tool in allowed:
                perm[key] = "allow"
            else:
                perm.setdefault(key, "deny")
        if item.tools is not None:
            tracker.mapped("tools", "permission: map (listed capabilities allow, others deny; write folds into edit)")
        return perm

    def model_choice(self, provider, ident):
        if provider is None and ident in MODELS:
            return MODELS[ident], MAPPED, f"{MODELS[ident]}"
        if ident == "inherit" and provider is None:
            return None, MAPPED, f"omitted: {self.brand} subagents inherit the caller's model by default"
        if provider is not None:
            return join_model(provider, ident), EMITTED, ""
        return None, DROPPED, f"{self.brand} needs provider/model ids; no mapping for {ident!r}"
