"""Gemini CLI: skills (and rules, as skills) in the shared `.agents/skills`, subagents in
`.gemini/agents`, TOML commands in `.gemini/commands`, and hooks, MCP servers and
`context.fileName` (so Gemini CLI reads the shared AGENTS.md, and a GEMINI.md as well) in
`.gemini/settings.json` (docs: geminicli.com/docs and github.com/google-gemini/gemini-cli
docs/: cli/custom-commands, cli/skills, core/subagents, hooks/index, tools/mcp-server,
reference/configuration).

Folder trust is on by default (`security.folderTrust.enabled`): in a folder the user has not
trusted, Gemini CLI loads none of the project's `.gemini/settings.json` (so no hooks, MCP
servers or context.fileName, hence no AGENTS.md), commands, agents or workspace skills.
Headless runs in an untrusted folder fail unless `--skip-trust` or
`GEMINI_TRUST_WORKSPACE=true` is given.
"""

from __future__ import annotations

import dataclasses

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    ClientAdapter,
    RenderContext,
    context_section,
    default_outcome,
    hook_docs,
    hook_script,
    json_file,
    narrowing_lost,
    place_resources,
    refuse_hook,
    resource_files,
    server_outcomes,
    server_without_defaults,
    stdio_entry,
    subagents_only,
    sync_only,
    tool_event,
    with_skills_section,
)
from agentrc.fidelity import DROPPED, EMITTED, MAPPED, Tracker
from agentrc.files import OutputFile, fragment
from agentrc.frozen import FrozenMap
from agentrc.model import Item, Kind, McpServer
from agentrc.text import tomledit
from agentrc.text.markdown import format_body

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence, Tuple

# Gemini CLI's built-in tool names (packages/core/src/tools/definitions/coreTools.ts).
TOOL_NAMES = {
    "read": "read_file", "write": "write_file", "edit": "replace", "bash": "run_shell_command",
    "grep": "grep_search", "glob": "glob", "web-fetch": "web_fetch", "web-search": "google_web_search",
}
# Gemini CLI runs Gemini models only: the Claude aliases have no counterpart (the agent then
# inherits the session's model); `google/<id>` is written as `<id>`.
MODELS = {"inherit": "inherit"}
MODEL_PROVIDER = "google"
# Portable (Claude Code) hook events -> Gemini CLI events (docs hooks/index: "Migrating from
# Claude Code"). SubagentStop has none.
EVENTS = {
    "PreToolUse": "BeforeTool", "PostToolUse": "AfterTool", "UserPromptSubmit": "BeforeAgent",
    "Stop": "AfterAgent", "SessionStart": "SessionStart", "SessionEnd": "SessionEnd",
    "PreCompact": "PreCompress", "Notification": "Notification",
}
# Claude Code tool names a raw `matcher:` may hold, and Gemini CLI's names for them.
CLAUDE_TOOLS = {
    "Read": "read_file", "Write": "write_file", "Edit": "replace", "MultiEdit": "replace",
    "Bash": "run_shell_command", "Grep": "grep_search", "Glob": "glob", "WebFetch": "web_fetch",
    "WebSearch": "google_web_search",
}
# `.agents/skills` is shared with Codex, OpenClaw and Hermes: only the Agent Skills standard
# keys are written there, so every client produces the same bytes (the standard's license and
# metadata are SSOT-only fields in agentrc, never written). Gemini CLI itself reads only name
# and description.
SKILL_FIELDS = frozenset({"compatibility", "allowed-tools"})
SETTINGS = ".gemini/settings.json"
CONTEXT_FILES = ("AGENTS.md", "GEMINI.md")
TRUST = "loaded only in a trusted folder"


class Gemini(ClientAdapter):
    name = "gemini"
    family = "gemini"
    title = "Gemini CLI"
    ignore_file = ignorefile.mapped('.geminiignore', "Gemini CLI's file tools and @ references skip these paths")
    passthrough_block = "gemini"

    kinds = tuple(Kind)
    resource_root = ".gemini/agentrc"
    skill_dir = ".agents/skills"
    skills_file = "shared .agents/skills"  # how the reports name the skill files
    agents_dir = ".gemini/agents"
    commands_dir = ".gemini/commands"
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES
    hooks_file = SETTINGS
    hooks_note = TRUST
    mcp_file = SETTINGS
    mcp_note = TRUST
    # Codex, OpenClaw and Hermes write rules and skills to the same .agents/skills (identical
    # files when they build an item for Gemini CLI too), and their commands as skills there;
    # Gemini CLI 0.61.0 loads whatever is there, also what is not meant for it. Its own
    # workspace setting `skills.disabled` hides a skill by name (checked by
    # tests/conformance/test_cross_discovery.py against the model request).
    also_reads = {Kind.SKILL: (SHARED_SKILL_DIR,), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: (SHARED_SKILL_DIR,), Kind.AGENT: (SHARED_SKILL_DIR,)}  # its own commands are TOML
    skill_switch = f"skills.disabled: [<name>] in {SETTINGS}"

    def hide_skills(self, names):
        return tuple(fragment(SETTINGS, "json", ("skills", "disabled"), name, owner, append=True)
                     for name, owner in names)

    def prepare(self, item, tracker):
        if item.kind in (Kind.RULE, Kind.SKILL) and self.passthrough_block in item.passthrough:
            tracker.dropped(self.passthrough_block, f"the {self.skills_file}/<name>/SKILL.md keeps the Agent Skills "
                                                    "standard form, and Gemini CLI reads only name and description")
            item = dataclasses.replace(item, passthrough=FrozenMap(
                (k, v) for k, v in item.passthrough.items() if k != self.passthrough_block))
        return item

    def whole_file(self, kind):
        return self._command if kind is Kind.COMMAND else super().whole_file(kind)

    def finish(self, item, ctx, tracker, out):
        if item.kind is Kind.AGENT and self.passthrough_block in item.passthrough:
            tracker.emitted(self.passthrough_block, "merged into frontmatter; Gemini CLI rejects the file if a key is "
                                                    "not one it defines (display_name, temperature, max_turns, "
                                                    "timeout_mins, policy, mcp_servers)")
        return out

    # --- skills and rules: the shared Agent Skills directory -----------------------
    def skill(self, item, ctx, tracker, fm, body):
        entry, body, extra = super().skill(item, ctx, tracker, fm, body)
        for key in item.extra:
            if key in self.skill_fields:
                tracker.emitted(key, f"Agent Skills standard field, kept in the {self.skills_file} file; "
                                     "Gemini CLI itself reads only name and description")
            else:
                tracker.dropped(key, f"not an Agent Skills standard field (the {self.skills_file} file holds "
                                     "the standard form only)")
        return entry, body, extra

    def rule(self, item, ctx, tracker, fm, body):
        """Gemini CLI has no rules: a rule becomes a skill, which Gemini loads when a task
        matches its description. The file is the one Codex writes for the rule (name,
        description, the standard skill fields, body, supporting files beside it), so the two
        builds share it."""
        self.identify(item, fm, tracker,
                      description_detail="the skill's description: Gemini CLI loads the rule when a task matches it")
        for key, value in item.extra.items():
            if key in self.skill_fields:
                fm[key] = value
                tracker.emitted(key, f"Agent Skills standard field, kept in the {self.skills_file} file; "
                                     "Gemini CLI itself reads only name and description")
        if item.scope_paths:
            tracker.degraded("scope", f"Gemini CLI has no path-scoped rules; the rule is a skill in {self.skill_dir}, "
                                      f"loaded on demand by its description (paths {', '.join(item.scope_paths)} "
                                      "are not checked)")
        else:
            _note(tracker, "body", "degraded", "Gemini CLI has no always-on rules: the text is a skill in "
                                               f"{self.skill_dir}, loaded on demand by its description (use a "
                                               "CONTEXT.md item for text every session must read)", first=True)
        base = f"{self.skill_dir}/{self.as_skill(item, ctx, fm, tracker)}"
        extra = resource_files(item, base, self.owner(item))
        tracker.emitted("resources", f"{len(extra)} file(s) copied beside SKILL.md" if extra else "none")
        return f"{base}/SKILL.md", body, extra

    # --- agents ----------------------------------------------------------------------
    def agent(self, item, ctx, tracker, fm, body):
        """Gemini CLI rejects an agent file whose frontmatter has a key it does not define
        (name, description, kind, display_name, tools, model, temperature, max_turns,
        timeout_mins, policy, mcp_servers): only those are written, plus the `gemini:` block."""
        self.identify(item, fm, tracker)
        fm["kind"] = "local"
        subagents_only(item, tracker, f"{self.agents_dir} holds subagents", "Gemini CLI agents are always subagents")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            tools = [TOOL_NAMES[t] for t in item.tools]
            if item.preload_skills:
                tools.append("activate_skill")
            fm["tools"] = tools
            tracker.mapped("tools", "Gemini CLI tool names")
        body = with_skills_section(item, body, tracker)
        if item.preload_skills and item.tools is not None:
            tracker.mapped("preload-skills", "## Skills section in the body; activate_skill added to tools so the "
                                             "agent can load them")
        body, extra = self.place(item, self.agents_dir, body, tracker)
        return f"{self.agents_dir}/{item.name}.md", body, extra

    def model_choice(self, provider, ident):
        if provider is None and ident in MODELS:
            return MODELS[ident], EMITTED, "the session's model"
        if provider == MODEL_PROVIDER:
            return ident, MAPPED, f"model id {ident}"
        if provider is None and ident.startswith("gemini-"):
            return ident, EMITTED, "passed through as written"
        if provider is None:
            return None, DROPPED, (f"Gemini CLI runs Gemini models; no counterpart for {ident!r}, the agent "
                                   "inherits the session's model")
        return None, DROPPED, f"Gemini CLI cannot run {provider} models; the agent inherits the session's model"

    # --- commands: TOML ----------------------------------------------------------------
    def _command(self, item: Item, ctx, tracker: Tracker) -> List[Any]:
        body = self.body(item, ctx, tracker)
        tracker.emitted("description", "shown by /help")
        if "name" in item.fields:
            tracker.mapped("name", "file name is the /command name")
        for key, why in (("argument-hint", "Gemini CLI commands have no argument hint"),
                         ("agent", "Gemini CLI commands run in the main session; they cannot name a subagent"),
                         ("model", "Gemini CLI commands have no model; they use the session's"),
                         ("tools", "Gemini CLI commands have no tool list; they use the session's tools")):
            if key in item.fields:
                tracker.dropped(key, why)
        if "$ARGUMENTS" in body:
            body = body.replace("$ARGUMENTS", "{{args}}")
            _note(tracker, "body", "mapped", "$ARGUMENTS as {{args}}")
        # A prompt has no location of its own: links point at the copies from the project
        # root, where Gemini CLI's file tools resolve relative paths.
        body, extra = place_resources(item, "", f"{self.resource_root}/commands/{item.name}", body,
                                      self.owner(item), tracker)
        if extra:
            self._command_resources(item, len(extra), tracker)
        if self.passthrough_block in item.passthrough:
            tracker.dropped(self.passthrough_block, "Gemini CLI command files hold only description and prompt")
        prompt = format_body(body.strip("\n") + "\n") if body.strip() else ""
        text = tomledit.dumps({"description": item.description, "prompt": prompt})
        entry = OutputFile(f"{self.commands_dir}/{item.name}.toml", text.encode("utf-8"), False, self.owner(item))
        return [entry] + list(extra)

    def _command_resources(self, item: Item, count: int, tracker: Tracker) -> None:
        tracker.mapped("resources", f"{count} file(s) copied to {self.resource_root}/commands/{item.name}/, "
                                    "links rewritten relative to the project root (a prompt has no location "
                                    "of its own)")

    # --- hooks: .gemini/settings.json --------------------------------------------------
    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        spec = item.hook
        assert spec is not None  # set for every hook item
        event = EVENTS.get(spec.event)
        if event is None:
            return refuse_hook(tracker, f"Gemini CLI has no {spec.event} event")
        why = narrowing_lost(item, "Gemini CLI")
        if why:
            return refuse_hook(tracker, why)
        hook_docs(item, tracker)
        command, files = self._hook_command(item, tracker)
        handler: Dict[str, Any] = {"type": "command", "command": command, "name": item.name,
                                   "description": item.description}
        tracker.emitted("description", "the hook entry's description")
        if "name" in item.fields:
            tracker.emitted("name", "the hook entry's name (/hooks enable, /hooks disable) and the script's directory")
        if spec.timeout is not None:
            handler["timeout"] = spec.timeout * 1000
            tracker.mapped("timeout", f"{spec.timeout} s as {spec.timeout * 1000} ms (Gemini CLI counts milliseconds)")
        sync_only(item, tracker, "Gemini CLI waits for every hook; it has no asynchronous hooks",
                  "synchronous, Gemini CLI's only mode")
        self.merge_block(item, handler, tracker, "merged into the hook handler")
        entry: Dict[str, Any] = {}
        matcher = gemini_matcher(item, tracker)
        if matcher:
            entry["matcher"] = matcher
        entry["hooks"] = [handler]
        where = f"hooks.{event} in {self.hooks_file} ({self.hooks_note})"
        if spec.event == "Notification":
            tracker.degraded("event", f"{where}; Gemini CLI notifies only of tool-permission requests, not of idle "
                                      "prompts")
        elif event == spec.event:
            tracker.emitted("event", where)
        else:
            tracker.mapped("event", where)
        return files + [fragment(self.hooks_file, "json", ("hooks", event), entry, self.owner(item), append=True)]

    def _hook_command(self, item: Item, tracker: Tracker) -> Tuple[str, List[OutputFile]]:
        return hook_script(self, item, tracker, "$GEMINI_PROJECT_DIR")

    # --- MCP servers: .gemini/settings.json mcpServers ---------------------------------
    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        if server.transport == "stdio":
            entry: Dict[str, Any] = stdio_entry(server)
        else:
            # `httpUrl` is deprecated: `url` with `type` picks the transport.
            entry = {"url": server.url, "type": server.transport}
            if server.headers:
                entry["headers"] = dict(server.headers)
        server_outcomes(server, tracker, f"{self.mcp_file} mcpServers ({self.mcp_note}; Gemini CLI expands ${{VAR}})")
        default_outcome(tracker, "Gemini CLI", written, False)
        return [fragment(self.mcp_file, "json", ("mcpServers", server.name), entry, self.name)]

    # --- the global context --------------------------------------------------------------
    def context(self, item, ctx, tracker):
        """AGENTS.md is shared; Gemini CLI reads only GEMINI.md unless context.fileName names
        other files, so the project settings name both."""
        out = context_section(self, item, ctx, tracker, self.context_file)
        _note(tracker, "body", "mapped", f"a section of AGENTS.md, which Gemini CLI reads because {SETTINGS} sets "
                                         "context.fileName to AGENTS.md and GEMINI.md (a GEMINI.md still loads; "
                                         f"settings are {TRUST})", first=True)
        out.append(fragment(SETTINGS, "json", ("context", "fileName"), list(CONTEXT_FILES), self.name))
        return out


EXTENSION_MANIFEST = "gemini-extension.json"
EXTENSION_CONTEXT = "GEMINI.md"


class GeminiExtension(Gemini):
    """The same content as a Gemini CLI extension (`--layout plugin`): gemini-extension.json
    (name, version, description, and the MCP servers, which an extension declares there),
    commands/*.toml, skills/ (rules as skills, as in the project layout), agents/*.md,
    hooks/hooks.json, and the context items as the extension's GEMINI.md, named by
    contextFileName (geminicli.com/docs/extensions/reference). `gemini extensions install DIR`
    (or `link`) installs the directory as it is; there is no marketplace file. Gemini CLI
    replaces ${extensionPath} in hooks/hooks.json and gemini-extension.json with the
    extension's directory, which is how hooks call their scripts. An extension's agents need
    no acknowledgement and its files no folder trust."""

    title = "Gemini CLI extension"
    layout = "plugin"
    resource_root = "agentrc"
    skill_dir = "skills"
    skills_file = "extension's skills"
    agents_dir = "agents"
    commands_dir = "commands"
    also_reads: Dict[Kind, Any] = {}
    skill_switch = ""
    hooks_file = "hooks/hooks.json"
    hooks_note = "the extension's hooks"
    mcp_file = EXTENSION_MANIFEST
    mcp_note = "the extension's manifest"
    context_file = EXTENSION_CONTEXT

    def _hook_command(self, item: Item, tracker: Tracker) -> Tuple[str, List[OutputFile]]:
        return hook_script(self, item, tracker, plugin_root="${extensionPath}",
                           root_note="Gemini CLI replaces it with the extension's directory")

    def _command_resources(self, item: Item, count: int, tracker: Tracker) -> None:
        tracker.degraded("resources", f"{count} file(s) copied to {self.resource_root}/commands/{item.name}/ in the "
                                      "extension, links rewritten relative to the extension's directory; Gemini CLI "
                                      "resolves a prompt's paths from the workspace, where they are not")

    def context(self, item, ctx, tracker):
        """The extension's context file: every session with the extension active reads it."""
        out = context_section(self, item, ctx, tracker, self.context_file)
        _note(tracker, "body", "mapped", f"a section of the extension's {self.context_file}, named by contextFileName "
                                         f"in {EXTENSION_MANIFEST}; Gemini CLI loads it in every session the "
                                         "extension is active in", first=True)
        out.append(fragment(EXTENSION_MANIFEST, "json", ("contextFileName",), self.context_file, self.name))
        return out

    def manifest(self, name: str, description: str, version: str = "") -> OutputFile:
        """name, version (Gemini CLI requires one: 0.0.0 when the bundle has none) and
        description; contextFileName and mcpServers are the keys the items wrote (the
        pipeline joins them into this file)."""
        data = {"name": name, "version": version or "0.0.0", "description": description}
        return json_file(EXTENSION_MANIFEST, data, self.name)

    def marketplace(self, name: str, plugin: str, description: str) -> None:
        """None: Gemini CLI installs or links an extension from its directory."""
        return None


def _note(tracker: Tracker, field: str, status: str, detail: str, first: bool = False) -> None:
    """Set `field` to `status`, keeping the detail it already had (directives, override)."""
    old = tracker.outcomes.get(field)
    if old is not None and old.detail:
        detail = f"{detail}; {old.detail}" if first else f"{old.detail}; {detail}"
    tracker.set(field, status, detail)


def _anchored(names: Sequence[str]) -> str:
    names = list(dict.fromkeys(names))
    return f"^{names[0]}$" if len(names) == 1 else f"^({'|'.join(names)})$"


def gemini_matcher(item: Item, tracker: Tracker) -> str:
    """Gemini CLI tests a matcher as an unanchored regex against its tool names (an MCP tool
    is `mcp_<server>_<tool>`), so portable tools become an anchored alternation."""
    spec = item.hook
    assert spec is not None  # set for every hook item
    if not tool_event(item, tracker):
        return ""
    if spec.tools is not None:
        tracker.mapped("tools", "matcher: anchored regex of Gemini CLI tool names")
        return _anchored([TOOL_NAMES[t] for t in spec.tools])
    if spec.matcher is not None:
        tokens = [t.strip() for t in spec.matcher.split("|")]
        if all(t in CLAUDE_TOOLS for t in tokens):
            tracker.mapped("matcher", "Claude Code tool names as Gemini CLI's, anchored")
            return _anchored([CLAUDE_TOOLS[t] for t in tokens])
        claude = [t for t in tokens if t in CLAUDE_TOOLS]
        if claude:
            tracker.degraded("matcher", f"as written; Gemini CLI has no tool named {', '.join(claude)}, so that part "
                                        "never matches")
        else:
            tracker.emitted("matcher", "as written (a regex Gemini CLI tests against its tool names)")
        return spec.matcher
    return ""
