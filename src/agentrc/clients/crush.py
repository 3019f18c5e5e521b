"""Crush (charmbracelet/crush, npm `@charmland/crush`, command `crush`): the shared AGENTS.md,
Agent Skills in the shared `.agents/skills` (rules and agents become skills, as for OpenClaw
and Hermes), project commands in `.crush/commands`, and MCP servers and PreToolUse hooks in
the project's `crush.json`.

No judge: the npm package's install script downloads the binary from GitHub releases, which
this machine cannot reach, so nothing here runs Crush. Verified in Crush's own repository (a
snapshot of August 2026, after v0.90.0: docs/config/README.md, docs/hooks/README.md,
internal/config/config.go, internal/agent/prompt/prompt.go, internal/commands/commands.go,
internal/skills/skills.go):
- Configuration: `.crushrc` / `crushrc` (Bash commands) or the legacy JSON `.crush.json` /
  `crush.json` in the project, merged with the user's; JSON is deprecated but supported,
  and it is what agentrc merges keys into.
- Context: every file of the default context paths, AGENTS.md among them, and also
  CLAUDE.md, GEMINI.md, CRUSH.md, .github/copilot-instructions.md, .cursorrules and every
  file under .cursor/rules/ (walked whole: Cursor's rules are always-on context here).
- Skills: `.agents/skills`, `.crush/skills`, `.claude/skills` and `.cursor/skills` by
  default; SKILL.md keys name, description, license, compatibility, metadata,
  user-invocable, disable-model-invocation. No rule, agent or subagent files.
- Commands: every .md under `.crush/commands` (the data directory) is `project:<name>`; the
  whole file is the prompt, and each `$UPPER_CASE` word is an argument Crush asks for.
- Hooks: `hooks.PreToolUse[] = {matcher, command, timeout}` (PreToolUse is the only event);
  `matcher` is a regex on Crush's tool names, exit code 2 blocks, Claude Code-compatible.
- MCP: `mcp.<name>` = {type: stdio|sse|http, command, args, env, url, headers}; commands,
  args, env, URLs and headers are shell-expanded ($VAR, ${VAR:-default}, $(cmd)).
"""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    canonical_server_outcomes,
    has_defaults,
    hook_docs,
    hook_script,
    narrowing_lost,
    refuse_hook,
    server_strings,
    tool_event,
)
from agentrc.clients.openclaw import AgentSkillsClient
from agentrc.fidelity import Tracker
from agentrc.files import OutputFile, fragment
from agentrc.frozen import thaw
from agentrc.model import Item, Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Sequence

# Crush's tool names (internal/agent/tools): what a hook `matcher:` tests.
TOOL_NAMES = {
    "read": "view", "write": "write", "edit": "edit", "bash": "bash", "grep": "grep", "glob": "glob",
    "web-fetch": "fetch", "web-search": "web_search",
}
CLAUDE_TOOLS = {"Bash": "bash", "Read": "view", "Write": "write", "Edit": "edit", "MultiEdit": "multiedit",
                "Grep": "grep", "Glob": "glob", "WebFetch": "fetch", "WebSearch": "web_search"}
MODELS: Dict[str, str] = {}
CONFIG = "crush.json"
COMMANDS_DIR = ".crush/commands"
CRUSH_SKILL_KEYS = frozenset({"user-invocable", "disable-model-invocation"})
# Crush writes `.crush/.gitignore` holding `*` when the directory has none (internal/cmd/root.go),
# which would keep the commands and hook scripts agentrc writes there out of git.
GITIGNORE = (b"# Crush's state (database, logs) stays out of git; the files agentrc writes here do not.\n"
             b"*\n!.gitignore\n!commands/\n!commands/**\n!agentrc/\n!agentrc/**\n")
VERIFIED = "from Crush's repository, August 2026; no Crush runs here"


class Crush(AgentSkillsClient):
    name = "crush"
    family = "crush"
    title = "Crush"
    ignore_file = ignorefile.mapped('.crushignore', "Crush skips these paths as it skips .gitignore's")
    passthrough_block = "crush"
    passthrough_example = {"disable-model-invocation": True}
    shared_block = True  # Crush reads user-invocable and disable-model-invocation in the shared SKILL.md
    tool_names = TOOL_NAMES
    tools_file = CONFIG
    resource_root = ".crush/agentrc"  # not scanned: only .crush/skills and .crush/commands are
    # Crush also loads .claude/skills and .cursor/skills, and walks .cursor/rules/ as context
    # (docs/config/README.md, internal/agent/prompt/prompt.go); not checked with a Crush run.
    also_reads = {Kind.SKILL: ("claude", "cursor", SHARED_SKILL_DIR), Kind.COMMAND: ("claude", SHARED_SKILL_DIR),
                  Kind.RULE: ("cursor", SHARED_SKILL_DIR), Kind.AGENT: (SHARED_SKILL_DIR,)}
    discovery = (f"in the system prompt's available skills; Crush loads .agents/skills by default ({VERIFIED})")
    spawn = "has no custom subagents"

    def foreign_skill_key(self, key: str) -> str:
        if key in CRUSH_SKILL_KEYS:
            return (f"Crush reads it, but {SHARED_SKILL_DIR} is shared with other clients and holds Agent Skills "
                    "standard keys only: set it in the crush: block")
        return super().foreign_skill_key(key)

    def agent_hint(self, item: Item) -> str:
        return "Crush has no custom agent files"

    def agent_model(self, item: Item) -> str:
        return "a skill cannot pick a model (Crush picks models per session)"

    def agent_tools(self, item: Item) -> str:
        return "a skill cannot restrict tools (Crush's permissions are per project, in crushrc or crush.json)"

    def project_files(self, reports):
        """`.crush/.gitignore`, when the build writes into Crush's data directory (GITIGNORE)."""
        if any(p.startswith(".crush/") for r in reports for p in r.outputs):
            return (OutputFile(".crush/.gitignore", GITIGNORE, False, self.name),)
        return ()

    def command(self, item, ctx, tracker, fm, body):
        """The whole file is the prompt, so it carries no frontmatter; `$ARGUMENTS` is one
        named argument Crush asks for."""
        if "name" in item.fields:
            tracker.mapped("name", f"file name: the command is project:{item.name}")
        tracker.dropped("description", "Crush commands have no description (the whole file is the prompt)")
        for key, why in (("argument-hint", "no argument hint; Crush asks for each $UPPER_CASE word by name"),
                         ("agent", "Crush commands run in the main session"), ("model", "no per-command model"),
                         ("tools", "no per-command tools")):
            if key in item.fields:
                tracker.dropped(key, why)
        if self.passthrough_block in item.passthrough:
            tracker.dropped(self.passthrough_block, "a Crush command has no frontmatter to merge it into")
        if "$ARGUMENTS" in body:
            before = tracker.outcomes["body"].detail
            tracker.mapped("body", "$ARGUMENTS is a named argument Crush asks for when the command runs"
                           + (f"; {before}" if before else ""))
        body, extra = self.place(item, COMMANDS_DIR, body, tracker)
        return f"{COMMANDS_DIR}/{item.name}.md", body, extra

    def hook(self, item, ctx, tracker):
        spec = item.hook
        assert spec is not None  # set for every hook item
        if spec.event != "PreToolUse":
            return refuse_hook(tracker, f"Crush has only the PreToolUse hook event, not {spec.event}")
        why = narrowing_lost(item, "Crush")
        if why:
            return refuse_hook(tracker, why)
        hook_docs(item, tracker)
        command, files = hook_script(self, item, tracker)  # Crush runs hooks from the project root
        entry: Dict[str, Any] = {}
        matcher = self._matcher(item, tracker)
        if matcher:
            entry["matcher"] = matcher
        entry["command"] = command
        if spec.timeout is not None:
            entry["timeout"] = spec.timeout
            tracker.emitted("timeout", "seconds")
        if "async" in item.fields:
            if spec.run_async:
                tracker.dropped("async", "Crush waits for every PreToolUse hook")
            else:
                tracker.emitted("async", "Crush waits for every PreToolUse hook")
        self.merge_block(item, entry, tracker, "merged into the hook entry")
        tracker.emitted("event", f"hooks.PreToolUse in {CONFIG}")
        return files + [fragment(CONFIG, "json", ("hooks", "PreToolUse"), entry, self.owner(item), append=True)]

    def _matcher(self, item: Item, tracker: Tracker) -> str:
        spec = item.hook
        assert spec is not None  # set for every hook item
        tool_event(item, tracker)
        names = None
        if spec.tools is not None:
            names = [TOOL_NAMES[t] for t in spec.tools]
            tracker.mapped("tools", "matcher: anchored regex of Crush tool names")
        elif spec.matcher is not None:
            parts = [p.strip() for p in spec.matcher.split("|")]
            if all(p in CLAUDE_TOOLS for p in parts):
                names = [CLAUDE_TOOLS[p] for p in parts]
                tracker.mapped("matcher", "Claude Code tool names as Crush's, anchored")
            else:
                tracker.emitted("matcher", "as written (a regex Crush tests against its tool names)")
                return spec.matcher
        if not names:
            return ""
        names = list(dict.fromkeys(names))
        return f"^{names[0]}$" if len(names) == 1 else f"^({'|'.join(names)})$"

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        running = [v for v in server_strings(server) if "$(" in v or "`" in v]
        if running:
            # Crush shell-expands these values when it reads crush.json: a `$(...)` or a backtick
            # there would run a command, and for a remote server nobody consented to running one.
            tracker.dropped("remote" if server.transport != "stdio" else "local",
                            f"{len(running)} value(s) hold `$(` or a backtick, which Crush would run as a command "
                            "when it expands crush.json; not written")
            if "requires-env" in server.fields:
                tracker.omitted("requires-env", "documents the environment the server needs (spec 001 §3.6); no "
                                                "client field")
            return []
        entry: Dict[str, Any] = {"type": server.transport}
        if server.transport == "stdio":
            entry["command"] = server.command
            if server.args:
                entry["args"] = list(server.args)
            if server.env:
                entry["env"] = thaw(server.env)
            tracker.mapped("local", f"{CONFIG} mcp: stdio server (command, args, env)")
        else:
            entry["url"] = server.url
            if server.headers:
                entry["headers"] = thaw(server.headers)
            tracker.mapped("remote", f"{CONFIG} mcp: {server.transport} server (url, headers, shell-expanded)")
        if "requires-env" in server.fields:
            tracker.omitted("requires-env", "documents the environment the server needs (spec 001 §3.6); no client "
                                            "field")
        if has_defaults(server):
            tracker.emitted("env-defaults", "${VAR:-default} kept: Crush shell-expands commands, args, env, URLs and "
                                            "headers")
        canonical_server_outcomes(server, tracker)
        return [fragment(CONFIG, "json", ("mcp", server.name), entry, self.name)]
