"""Continue (the `cn` CLI, npm `@continuedev/cli`, and the IDE extensions that share its
`.continue/` files; docs: docs.continue.dev): rules in `.continue/rules`, skills in
`.continue/skills` (commands become skills there), agents as agent files in
`.continue/agents`, MCP servers as block files in `.continue/mcpServers`, the shared AGENTS.md.
The module is not `continue.py`: that is a Python keyword.

Verified by running cn 1.5.47 offline (tests/conformance/test_continue_discovery.py: the first
model request of `cn -p`, its model a local sink named by a config.yaml in the isolated home)
and in the source its package carries:
- The system message's `userRules` holds the first of AGENTS.md, AGENT.md, CLAUDE.md and
  CODEX.md, then every `.continue/rules/**/*.md` that is always on (`alwaysApply: true`, or
  no `globs`/`regex`); cn skips a rule with `globs` (the IDE extensions apply it when a
  matching file is in context) and reads every `.md` below `.continue/rules` as a rule, so
  supporting files go to `.continue/agentrc`.
- Skills: `.continue/skills` and `.claude/skills` (not `.agents/skills`), `name` and
  `description` only, listed in the Skills tool. In cn's TUI `/<name>` asks the model to load
  the skill; the text after it is not passed on. cn reads no command or prompt files.
- Agents: `.continue/agents/<name>.md` (name, description, tools as a comma-separated list of
  Continue's tool names, model as a Continue Hub slug, the body as the prompt) runs with
  `cn --agent .continue/agents/<name>.md`, its prompt put before the task; `cn review` runs
  the same files as review checks. Continue's subagents are config.yaml models, not files.
- MCP servers: a block file in `.continue/mcpServers` is loaded by the IDE extensions (Continue's
  docs) and by cn when named (`--mcp .continue/mcpServers/<name>.yaml`); cn does not load the
  folder by itself. `${{ secrets.VAR }}` is read from the environment (and `.env` files).
- Hooks: cn reads Claude-shaped hooks from `.continue/settings.json` and `.claude/settings.json`
  but fires no event, so agentrc writes none.
"""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    ClientAdapter,
    canonical_server_outcomes,
    default_outcome,
    resource_files,
    server_without_defaults,
    with_skills_section,
)
from agentrc.clients.hookkit import refuse_hook
from agentrc.clients.servers import env_refs
from agentrc.fidelity import DROPPED, Tracker
from agentrc.files import OutputFile
from agentrc.frozen import thaw
from agentrc.model import Kind, McpServer
from agentrc.patterns import pattern
from agentrc.text.yamlemit import dump_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Sequence

# Continue's built-in tool names (cn 1.5.47's tools/); List only lists a directory, so glob has none.
# edit is written as "Edit, MultiEdit": cn offers one of the two, by model.
TOOL_NAMES = {"read": "Read", "write": "Write", "edit": "Edit", "bash": "Bash", "grep": "Search", "web-fetch": "Fetch"}
MODELS: Dict[str, str] = {}  # an agent file's model is a Continue Hub slug, resolved online
RULES = ".continue/rules"
SKILLS = ".continue/skills"
AGENTS = ".continue/agents"
SERVERS = ".continue/mcpServers"
SAFE_FILE = pattern(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
NO_HOOKS = ("cn 1.5.47 reads hooks from .continue/settings.json but fires no hook event (checked by running it), "
            "so agentrc writes none")


class Continue(ClientAdapter):
    name = "continue"
    family = "continue"
    title = "Continue"
    ignore_file = ignorefile.degraded(
        '.continueignore', "Continue's editor extensions keep these paths out of their index; the cn CLI "
                           "does not read the file")
    passthrough_block = "continue"
    passthrough_example = {"alwaysApply": True}
    # cn loads .claude/skills besides .continue/skills (both copies of a name, checked), where
    # Claude Code writes its skills and commands; hooks in .claude/settings.json are never fired.
    also_reads = {Kind.SKILL: ("claude",), Kind.COMMAND: ("claude",)}
    kinds = tuple(Kind)
    skill_dir = SKILLS
    skill_fields: frozenset = frozenset()  # cn keeps name and description alone
    resource_root = ".continue/agentrc"
    tool_names = TOOL_NAMES

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, description_detail="the rule's description (frontmatter)")
        if item.scope_paths:
            fm["globs"] = list(item.scope_paths) if len(item.scope_paths) > 1 else item.scope_paths[0]
            tracker.degraded("scope", "globs: the Continue IDE extensions apply the rule when a matching file is in "
                                      "context; the cn CLI loads only always-on rules and skips this one")
        body, extra = self.place(item, RULES, body, tracker)
        return f"{RULES}/{item.name}.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, description_detail="the agent file's description")
        if item.mode is not None:
            tracker.degraded("mode", f"Continue's agent files are run by name (cn --agent {AGENTS}/{item.name}.md), "
                                     f"never by another agent (mode {item.mode})")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            self._tools(item.tools, fm, tracker)
        body = with_skills_section(item, body, tracker)
        before = tracker.outcomes["body"].detail
        tracker.degraded("body", f"the agent file's prompt, put before the task when run with cn --agent "
                                 f"{AGENTS}/{item.name}.md (cn review also runs it as a check); Continue's agents "
                                 "are not called by another agent" + (f"; {before}" if before else ""))
        body, extra = self.place(item, AGENTS, body, tracker)
        return f"{AGENTS}/{item.name}.md", body, extra

    def _tools(self, tools: Sequence[str], fm: Dict[str, Any], tracker: Tracker) -> None:
        if not tools:
            tracker.dropped("tools", "an empty tools: gives a Continue agent every built-in tool; no value means none")
            return
        names = self.native_tools(tools)
        if "Edit" in names:  # cn offers MultiEdit instead of Edit to the models it deems capable
            names.insert(names.index("Edit") + 1, "MultiEdit")
        fm["tools"] = ", ".join(names)
        missing = [t for t in tools if t not in TOOL_NAMES]
        if missing:
            tracker.degraded("tools", "Continue's tool names, comma-separated; it has no tool for "
                                      + ", ".join(missing))
        else:
            tracker.mapped("tools", "Continue's tool names, comma-separated (the others are excluded)")

    def command(self, item, ctx, tracker, fm, body):
        name = self.as_skill(item, ctx)
        self.identify(item, fm, tracker, description_detail=f"a skill: /{name} in cn's terminal UI asks the model "
                                                            "to load it, which the model may also do by itself")
        self.as_skill(item, ctx, fm, tracker)
        if "name" in item.fields and "name" not in tracker.outcomes:
            tracker.mapped("name", f"skill {SKILLS}/{name}")
        for key, why in (("argument-hint", "Continue skills have no argument hint"),
                         ("agent", "a Continue skill cannot name an agent"),
                         ("model", "a Continue skill cannot pick a model"),
                         ("tools", "a Continue skill cannot restrict tools")):
            if key in item.fields:
                tracker.dropped(key, why)
        if "$ARGUMENTS" in body:
            before = tracker.outcomes["body"].detail
            tracker.degraded("body", "cn passes no arguments to a skill: $ARGUMENTS stays as text"
                             + (f"; {before}" if before else ""))
        extra = resource_files(item, f"{SKILLS}/{name}", self.owner(item))
        tracker.emitted("resources", f"{len(extra)} file(s) copied beside SKILL.md" if extra else "none")
        return f"{SKILLS}/{name}/SKILL.md", body, extra

    def hook(self, item, ctx, tracker):
        return refuse_hook(tracker, NO_HOOKS)

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        if not SAFE_FILE.match(server.name):
            for f in tracker.expected:
                tracker.dropped(f, f"{server.name!r} cannot name a file in {SERVERS}")
            return []
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        entry: Dict[str, Any] = {"name": server.name}
        if server.transport == "stdio":
            entry.update({"command": server.command, "args": list(server.args)} if server.args
                         else {"command": server.command})
            if server.env:
                entry["env"] = thaw(server.env)
            field = "local"
        else:
            entry.update({"type": "streamable-http" if server.transport == "http" else "sse", "url": server.url})
            if server.headers:
                entry["requestOptions"] = {"headers": thaw(server.headers)}
            field = "remote"
        entry = env_refs(entry, "${{{{ secrets.{} }}}}")
        path = f"{SERVERS}/{server.name}.yaml"
        tracker.degraded(field, f"{path}, a block file the Continue IDE extensions load; the cn CLI loads it only "
                                f"when named (cn --mcp {path}); ${{VAR}} as ${{{{ secrets.VAR }}}}, read from the "
                                "environment")
        if "requires-env" in server.fields:
            tracker.omitted("requires-env",
                            "documents the environment the server needs (spec 001 §3.6); no client field")
        canonical_server_outcomes(server, tracker)
        default_outcome(tracker, "Continue", written, True)
        block = {"name": server.name, "version": "0.0.1", "schema": "v1", "mcpServers": [entry]}
        return [OutputFile(path, dump_yaml(block).encode("utf-8"), owner=f"{self.name}:mcp:{server.name}")]

    def model_choice(self, provider, ident):
        return None, DROPPED, ("an agent file's model is a Continue Hub slug, resolved online; the session's model "
                               "is used")
