"""OpenAI Codex CLI: the shared AGENTS.md, skills in the shared `.agents/skills` (rules and
commands too, since Codex has no path-scoped rules and no project commands), subagents in
`.codex/agents/<name>.toml`, hooks in `.codex/hooks.json`, MCP servers in `.codex/config.toml`
`[mcp_servers.<name>]` (docs: developers.openai.com/codex: guides/agents-md, skills,
subagents, hooks, mcp, config-reference).

Trust: Codex reads a project's `.codex/` directory (config.toml, so its MCP servers, and
hooks.json and agents/) only once the project is trusted, that is
`[projects."<absolute path>"] trust_level = "trusted"` in ~/.codex/config.toml, which Codex
offers to write on first run. AGENTS.md and skills load without trust. Each project hook must
also be approved once in `/hooks` (Codex records its hash).
"""

from __future__ import annotations

import posixpath

from agentrc.clients.base import (
    ENV_REF_RE,
    SHARED_SKILL_DIR,
    ClientAdapter,
    RenderContext,
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
    subagents_only,
    sync_only,
    tool_event,
    with_skills_section,
)
from agentrc.fidelity import DROPPED, EMITTED, MAPPED, Tracker
from agentrc.files import OutputFile, fragment
from agentrc.frozen import thaw
from agentrc.model import Item, Kind, McpServer
from agentrc.patterns import pattern
from agentrc.text import tomledit
from agentrc.text.markdown import format_body
from agentrc.text.yamlemit import dump_yaml
from agentrc.vocabulary import MODEL_ALIASES, TOOLS

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

# Tool names as Codex hooks match them (PreToolUse, PostToolUse): the shell tool is `Bash` and
# every file change is `apply_patch` (`Edit` and `Write` are aliases of it). Reads, searches and
# web tools run through the shell or through tools hooks do not see (read_file, web_search), so
# those capabilities have no name here. Codex agents have no tool list at all (see WRITE_TOOLS).
TOOL_NAMES = {"write": "apply_patch", "edit": "apply_patch", "bash": "Bash"}
# Capabilities that need a writable sandbox: an agent that lists none of them gets
# `sandbox_mode = "read-only"`, any other tool list `workspace-write`.
WRITE_TOOLS = frozenset({"write", "edit", "bash"})
# Codex runs OpenAI models: the portable aliases name Anthropic tiers, so none is mapped, and
# `openai/<id>` is written as `<id>` (e.g. gpt-5.4, gpt-5.4-mini).
MODELS: Dict[str, str] = {}
# `.agents/skills` is shared with Gemini CLI, OpenClaw and Hermes, which must write the same
# bytes there: only the Agent Skills standard's optional keys (Codex itself reads name and
# description). The standard's `license` and `metadata` are agentrc's SSOT-only fields, never
# written (spec 001 §3.1).
SKILL_FIELDS = frozenset({"compatibility", "allowed-tools"})
# Portable (Claude) hook events -> Codex events (all checked against Codex 0.171's hooks/list).
# Codex has no Notification event. SessionEnd is newer than the documented set (0.134), which
# ignores it, and Codex clamps its timeout to SESSION_END_TIMEOUT seconds.
EVENTS = {
    "SessionStart": "SessionStart", "UserPromptSubmit": "UserPromptSubmit", "PreToolUse": "PreToolUse",
    "PostToolUse": "PostToolUse", "Stop": "Stop", "SubagentStop": "SubagentStop", "PreCompact": "PreCompact",
    "SessionEnd": "SessionEnd",
}
SESSION_END_TIMEOUT = 3
AGENTS_DIR = ".codex/agents"
HOOKS_FILE = ".codex/hooks.json"
CONFIG = ".codex/config.toml"
# Codex's own settings of a skill, beside its SKILL.md: interface, policy, dependencies.
SIDECAR = "agents/openai.yaml"
TRUSTED = "read only in trusted projects"
# Hooks run in the session's directory; scripts are called from the repository root.
ROOT = "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
_BEARER_RE = pattern(r"Bearer \$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class Codex(ClientAdapter):
    name = "codex"
    family = "codex"
    rejects_long_description = True  # refuses a skill whose description is over 1,024 characters
    title = "Codex CLI"
    passthrough_block = "codex"
    kinds = tuple(Kind)

    resource_root = ".codex/agentrc"
    skill_dir = ".agents/skills"
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES
    hooks_file = HOOKS_FILE
    hooks_note = f"{TRUSTED}; approve the hook once in /hooks"

    # Gemini CLI, OpenClaw and Hermes write to the same .agents/skills (the same file when an
    # item is for Codex too): Codex 0.171.0 loads everything there, also what is not meant
    # for it (tests/conformance/test_cross_discovery.py). agentrc writes no switch for it;
    # the report names those copies.
    # Every SKILL.md there: skills, and the rules, commands and agents other clients write as
    # skills (OpenClaw's and Hermes' agents too); `plan` keeps to the files under the directory.
    also_reads = {Kind.SKILL: (SHARED_SKILL_DIR,), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: (SHARED_SKILL_DIR,), Kind.AGENT: (SHARED_SKILL_DIR,)}

    # Agents are TOML files; rules, skills and commands are all Agent Skills, whose SKILL.md
    # stays in the standard form and whose Codex settings (the `codex:` block, a command's
    # explicit-only invocation) go to agents/openai.yaml beside it.
    passthrough_in_frontmatter = False

    def whole_file(self, kind):
        return self._agent if kind is Kind.AGENT else super().whole_file(kind)

    def finish(self, item: Item, ctx: RenderContext, tracker: Tracker, out: List[Any]) -> List[Any]:
        if item.kind not in (Kind.RULE, Kind.SKILL, Kind.COMMAND):
            return out
        sidecar: Dict[str, Any] = {}
        if item.kind is Kind.COMMAND or (item.kind is Kind.SKILL
                                         and item.extra.get("disable-model-invocation") is True):
            sidecar["policy"] = {"allow_implicit_invocation": False}
        if self.passthrough_block in item.passthrough:
            for key, value in self.passthrough(item).items():
                if isinstance(value, dict) and isinstance(sidecar.get(key), dict):
                    sidecar[key] = dict(sidecar[key], **value)
                else:
                    sidecar[key] = value
            tracker.emitted(self.passthrough_block, f"written to {SIDECAR} beside SKILL.md (Codex's skill settings: "
                                                    "interface, policy, dependencies)")
        if sidecar:
            out.append(OutputFile(f"{posixpath.dirname(out[0].path)}/{SIDECAR}", dump_yaml(sidecar).encode("utf-8"),
                                  False, self.owner(item)))
        return out

    # --- rules, skills, commands: skills in .agents/skills --------------------------
    def rule(self, item, ctx, tracker, fm, body):
        """Codex has no instruction rules: the rule becomes a skill the model loads when a task
        matches its description (AGENTS.md is for CONTEXT.md items, not rewritten per rule).
        The file is the one Gemini CLI writes for the rule (name, description, the standard
        skill fields, body, supporting files beside it), so the two builds share it."""
        self.identify(item, fm, tracker,
                      description_detail="the skill's description: Codex loads the rule when a task matches it")
        for key, value in item.extra.items():
            if key in self.skill_fields:
                fm[key] = value
        self._standard_fields(item, tracker)
        self.as_skill(item, ctx, fm, tracker)
        if item.scope_paths:
            tracker.degraded("scope", "no path scoping in Codex; the rule is a skill loaded on demand by its "
                                      f"description (paths {', '.join(item.scope_paths)} are not checked)")
        else:
            _note(tracker, "body", "degraded", "Codex has no always-on rules: the text is a skill in "
                  f"{self.skill_dir}/, loaded on demand by its description (use a CONTEXT.md item for "
                  "text every session must read)")
        return self._skill_dir(item, ctx, tracker, body)

    def skill(self, item, ctx, tracker, fm, body):
        entry, body, extra = super().skill(item, ctx, tracker, fm, body)
        self._standard_fields(item, tracker)
        if "disable-model-invocation" in item.extra:
            if item.extra["disable-model-invocation"] is True:
                tracker.mapped("disable-model-invocation", f"policy.allow_implicit_invocation: false in {SIDECAR}: "
                                                           f"the skill runs only when invoked as ${item.name}")
            else:
                tracker.omitted("disable-model-invocation", "the default: Codex may pick the skill by itself")
        return entry, body, extra

    def _standard_fields(self, item: Item, tracker: Tracker) -> None:
        for key in item.extra:
            if key == "allowed-tools":
                tracker.dropped(key, "kept in the shared SKILL.md (Agent Skills standard); Codex does not restrict "
                                     "a skill's tools")
            elif key in self.skill_fields:
                tracker.emitted(key, "Agent Skills standard field, kept in the shared SKILL.md; Codex itself reads "
                                     "only name and description")

    def command(self, item, ctx, tracker, fm, body):
        """Custom prompts are user-level (~/.codex/prompts) and deprecated in favour of skills:
        a command becomes a skill the user runs as `$name`, which the model does not pick by
        itself (policy.allow_implicit_invocation: false in agents/openai.yaml)."""
        self.identify(item, fm, tracker,
                      description_detail=f"the skill's description; {SIDECAR} turns implicit invocation off, so "
                                         f"it runs only when invoked as ${item.name}")
        if "name" in item.fields:
            tracker.emitted("name", f"skill name: the user runs it as ${item.name}")
        self.as_skill(item, ctx, fm, tracker)
        if "argument-hint" in item.fields:
            tracker.dropped("argument-hint", "Codex skills take no arguments and show no hint")
        if "agent" in item.fields:
            body = f"Spawn the `{item.fields['agent']}` subagent and give it this task.\n\n" + body
            tracker.degraded("agent", "asked for in the skill's text: Codex spawns a subagent when the prompt asks "
                                      "for one (the agent must be built for codex)")
        if "model" in item.fields:
            tracker.dropped("model", "Codex skills run on the session's model")
        if "tools" in item.fields:
            tracker.dropped("tools", "Codex skills cannot restrict the tools")
        if "$ARGUMENTS" in body:
            _note(tracker, "body", "degraded", "Codex substitutes no $ARGUMENTS in skills: the placeholder stays "
                  "and the model takes the value from the text typed after the skill's name")
        return self._skill_dir(item, ctx, tracker, body)

    def _skill_dir(self, item: Item, ctx: RenderContext, tracker: Tracker, body: str
                   ) -> Tuple[str, str, List[OutputFile]]:
        base = f"{self.skill_dir}/{self.as_skill(item, ctx)}"
        extra = resource_files(item, base, self.owner(item))
        tracker.emitted("resources", f"{len(extra)} file(s) copied beside SKILL.md" if extra else "none")
        return f"{base}/SKILL.md", body, extra

    # --- agents: .codex/agents/<name>.toml -------------------------------------------
    def _agent(self, item: Item, ctx, tracker: Tracker) -> List[OutputFile]:
        body = self.body(item, ctx, tracker)
        table: Dict[str, Any] = {}
        self.identify(item, table, tracker,
                      description_detail=f"required by Codex; {AGENTS_DIR}/ is {TRUSTED}")
        subagents_only(item, tracker, f"{AGENTS_DIR}/ holds subagents",
                       "Codex custom agents are subagents the main agent spawns")
        self.map_model(item.model, table, tracker)
        if item.tools is not None:
            self._sandbox(item, table, tracker)
        body = with_skills_section(item, body, tracker)
        # developer_instructions has no location of its own: links point from the project root.
        body, extra = place_resources(item, "", f"{self.resource_root}/agents/{item.name}", body, self.owner(item),
                                      tracker)
        if body.strip():
            instructions = format_body(body)
            _note(tracker, "body", MAPPED, "developer_instructions")
        else:
            instructions = item.description + "\n"
            _note(tracker, "body", "degraded", "empty: developer_instructions repeats the description (Codex "
                  "requires it)")
        self.merge_block(item, table, tracker, "merged into the agent's TOML (Codex agent and config.toml keys)")
        table.setdefault("developer_instructions", instructions)
        content = tomledit.dumps(table).encode("utf-8")
        return [OutputFile(f"{AGENTS_DIR}/{item.name}.toml", content, False, self.owner(item))] + list(extra)

    def model_choice(self, provider, ident):
        if provider == "openai":
            return ident, MAPPED, f"model id {ident}"
        if provider is None and ident == "inherit":
            return None, MAPPED, "omitted: Codex subagents use the session's model by default"
        if provider is None and ident in MODEL_ALIASES:
            return None, DROPPED, (f"Codex runs OpenAI models; the alias {ident} names an Anthropic tier, so the "
                                   "agent uses the session's model")
        if provider is None:
            return ident, EMITTED, "passed through as written"
        return None, DROPPED, f"Codex runs OpenAI models, not {provider} ones; the agent uses the session's model"

    def _sandbox(self, item: Item, table: Dict[str, Any], tracker: Tracker) -> None:
        tools = set(item.tools or ())
        writes = sorted(WRITE_TOOLS & tools)
        table["sandbox_mode"] = "workspace-write" if writes else "read-only"
        if tools >= set(TOOLS):
            tracker.mapped("tools", 'every capability: sandbox_mode = "workspace-write"')
        elif writes:
            tracker.degraded("tools", f'Codex agents have no tool list: sandbox_mode = "workspace-write" (for '
                                      f"{', '.join(writes)}); unlisted tools stay available")
        else:
            tracker.degraded("tools", 'Codex agents have no tool list: sandbox_mode = "read-only" (no file changes, '
                                      "shell commands cannot write); unlisted tools stay available")

    # --- hooks: .codex/hooks.json --------------------------------------------------
    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        """Claude's shape under the only top-level key Codex accepts (`hooks`): matcher groups
        of `{type: command, command, timeout}` handlers, timeouts in seconds."""
        spec = item.hook
        assert spec is not None  # set for every hook item
        hook_docs(item, tracker)
        event = EVENTS.get(spec.event)
        if event is None:
            return refuse_hook(tracker, f"Codex has no {spec.event} hook event (its notify setting runs a program "
                                        "at the end of a turn, not per notification)")
        why = narrowing_lost(item, "Codex", matcher_events=("SessionStart",))
        if why:
            return refuse_hook(tracker, why)
        matcher = self._matcher(item, tracker)
        if matcher is None:
            return refuse_hook(tracker, "none of the hook's tools is visible to Codex hooks")
        root, how = self.script_root()
        command, files = hook_script(self, item, tracker, plugin_root=root, root_note=how)
        handler: Dict[str, Any] = {"type": "command", "command": command}
        if spec.timeout is not None and spec.event == "SessionEnd" and spec.timeout > SESSION_END_TIMEOUT:
            handler["timeout"] = SESSION_END_TIMEOUT
            tracker.degraded("timeout", f"Codex clamps SessionEnd hooks to {SESSION_END_TIMEOUT} seconds")
        elif spec.timeout is not None:
            handler["timeout"] = spec.timeout
            tracker.emitted("timeout", "seconds")
        sync_only(item, tracker, "Codex skips async handlers, so the hook runs synchronously",
                  "synchronous, Codex's only mode")
        self.merge_block(item, handler, tracker, "merged into the hook handler (e.g. statusMessage)")
        entry: Dict[str, Any] = {}
        if matcher:
            entry["matcher"] = matcher
        entry["hooks"] = [handler]
        where = f"hooks.{event} in {self.hooks_file} ({self.hooks_note})"
        if spec.event == "SessionEnd":
            where += "; Codex before SessionEnd support (the documented 0.134 events) ignores it"
        tracker.emitted("event", where)
        return files + [fragment(self.hooks_file, "json", ("hooks", event), entry, self.owner(item), append=True)]

    def script_root(self) -> Tuple[str, str]:
        """The directory a hook calls its copied files from (the script and the `./file`
        arguments naming the hook's own files), and why so."""
        return ROOT, "the repository root: Codex runs hooks in the session's directory"

    def _matcher(self, item: Item, tracker: Tracker) -> Optional[str]:
        """Codex tool names for the tool events ("" matches every tool); None when none of the
        hook's tools is one Codex hooks see."""
        spec = item.hook
        assert spec is not None  # set for every hook item
        if not tool_event(item, tracker):
            if spec.matcher is not None and spec.event == "SessionStart":
                tracker.emitted("matcher", "as written: a regex over how the session started (Codex: startup, "
                                           "resume, clear)")
                return spec.matcher
            return ""
        if spec.tools is not None:
            names = self.native_tools(spec.tools)
            unseen = [t for t in spec.tools if t not in TOOL_NAMES]
            matcher = "|".join(names)
            if not names:
                tracker.dropped("tools", f"Codex hooks do not see {', '.join(unseen)} (only the shell, apply_patch "
                                         "and MCP tools)")
                return None
            if unseen:
                tracker.degraded("tools", f"matcher {matcher}; Codex hooks do not see {', '.join(unseen)}")
            else:
                tracker.mapped("tools", f"matcher of Codex tool names ({matcher})")
            return matcher
        if spec.matcher is not None:
            tracker.emitted("matcher", "as written: a regex over Codex tool names (Bash, apply_patch, which Edit "
                                       "and Write also match, mcp__<server>__<tool>)")
            return spec.matcher
        return ""

    # --- MCP servers: .codex/config.toml [mcp_servers.<name>] -----------------------
    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        """No `type` key: `command` makes a stdio server, `url` a streamable HTTP one. Codex
        expands no `${VAR}` in config.toml: a variable passed through under its own name
        becomes `env_vars`, header variables `bearer_token_env_var` or `env_http_headers`."""
        where = self.server_where(server.name)
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        default_outcome(tracker, "Codex", written, False)
        if server.transport == "sse":
            tracker.dropped("remote", "Codex connects to remote MCP servers over streamable HTTP only; it has no SSE "
                                      "transport")
            if "requires-env" in server.fields:
                tracker.omitted("requires-env",
                                "checked by agentrc at install time (spec 001 §3.6), not a client field")
            return []
        lost: List[str] = []
        if server.transport == "stdio":
            entry, what = _stdio(server, lost)
        else:
            entry, what = _http(server, lost)
        server_outcomes(server, tracker, where)
        key = "local" if server.transport == "stdio" else "remote"
        if lost:
            tracker.degraded(key, f"{where}: {what}; " + "; ".join(lost))
        else:
            tracker.mapped(key, f"{where}: {what}")
        return self.server_files(server.name, entry)

    def server_where(self, name: str) -> str:
        return f"{CONFIG} [mcp_servers.{name}], {TRUSTED}"

    def server_files(self, name: str, entry: Dict[str, Any]) -> List[Any]:
        return [fragment(CONFIG, "toml", ("mcp_servers", name), entry, self.name)]


PLUGIN_MANIFEST = ".codex-plugin/plugin.json"
PLUGIN_MCP = ".mcp.json"
PLUGIN_HOOKS = "hooks/hooks.json"
PLUGIN_SKILLS = "skills"


class CodexPlugin(Codex):
    """The same content as a Codex plugin (`--layout plugin`): skills/ (rules and commands as
    skills, as in the project layout, with agents/openai.yaml beside a command's SKILL.md),
    hooks/hooks.json and .mcp.json at the plugin root, described by .codex-plugin/plugin.json,
    whose component paths (`./skills/`, `./hooks/hooks.json`, `./.mcp.json`) name only what
    the build wrote, and .agents/plugins/marketplace.json listing the plugin at `./`, so
    `codex plugin marketplace add DIR` then `codex plugin add NAME@NAME-marketplace` install
    it (developers.openai.com/codex/plugins/build). Codex plugins carry no subagents and no
    AGENTS.md: agents and context items are dropped. Plugin hooks call their scripts through
    ${PLUGIN_ROOT}, which Codex replaces with the installed plugin's directory."""

    title = "Codex plugin"
    layout = "plugin"
    also_reads: Dict[Kind, Any] = {}
    kinds = (Kind.RULE, Kind.SKILL, Kind.COMMAND, Kind.HOOK)
    resource_root = "agentrc"
    skill_dir = PLUGIN_SKILLS
    hooks_file = PLUGIN_HOOKS
    hooks_note = "approve the hook once in /hooks"

    def finish(self, item, ctx, tracker, out):
        out = super().finish(item, ctx, tracker, out)
        if out and item.kind in (Kind.RULE, Kind.SKILL, Kind.COMMAND):
            out.append(fragment(PLUGIN_MANIFEST, "json", ("skills",), f"./{PLUGIN_SKILLS}/", self.name))
        return out

    def hook(self, item, ctx, tracker):
        out = list(super().hook(item, ctx, tracker))
        if out:
            out.append(fragment(PLUGIN_MANIFEST, "json", ("hooks",), f"./{PLUGIN_HOOKS}", self.name))
        return out

    def script_root(self) -> Tuple[str, str]:
        return "${PLUGIN_ROOT}", "Codex sets it to the installed plugin's directory"

    def server_where(self, name: str) -> str:
        return f"{PLUGIN_MCP} mcpServers.{name} (the Codex server fields; no ${{VAR}} expansion)"

    def server_files(self, name: str, entry: Dict[str, Any]) -> List[Any]:
        return [fragment(PLUGIN_MCP, "json", ("mcpServers", name), entry, self.name),
                fragment(PLUGIN_MANIFEST, "json", ("mcpServers",), f"./{PLUGIN_MCP}", self.name)]

    def manifest(self, name: str, description: str, version: str = "") -> OutputFile:
        """name, version and description; the component paths are the keys the items wrote
        (the pipeline joins them into this file)."""
        data: Dict[str, Any] = {"name": name}
        if version:
            data["version"] = version
        data["description"] = description
        return json_file(PLUGIN_MANIFEST, data, self.name)

    def marketplace(self, name: str, plugin: str, description: str) -> OutputFile:
        """The marketplace Codex reads from a directory (`.agents/plugins/marketplace.json`),
        listing this one plugin at the directory itself."""
        data = {"name": name, "interface": {"displayName": name}, "plugins": [{
            "name": plugin, "source": {"source": "local", "path": "./"},
            "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"}, "category": "Coding"}]}
        return json_file(".agents/plugins/marketplace.json", data, self.name)


def _stdio(server: McpServer, lost: List[str]) -> Tuple[Dict[str, Any], str]:
    entry: Dict[str, Any] = {"command": server.command}
    if server.args:
        entry["args"] = list(server.args)
    env: Dict[str, str] = {}
    passed: List[str] = []
    for key, value in thaw(server.env).items():
        value = str(value)
        ref = ENV_REF_RE.fullmatch(value)
        if ref and ref.group(1) == key:
            passed.append(key)
        elif ENV_REF_RE.search(value):
            lost.append(f"env {key} left out (Codex expands no ${{VAR}} in config.toml; only a variable passed "
                        "under its own name can be forwarded)")
        else:
            env[key] = value
    if env:
        entry["env"] = env
    if passed:
        entry["env_vars"] = passed
    if any(ENV_REF_RE.search(s) for s in [server.command or ""] + list(server.args)):
        lost.append("${VAR} in command or args stays literal (Codex expands no variables)")
    written = [k for k in ("args", "env") if k in entry]
    what = "stdio server (command" + "".join(f", {k}" for k in written)
    return entry, what + (", env ${VAR} forwarded by name as env_vars)" if passed else ")")


def _http(server: McpServer, lost: List[str]) -> Tuple[Dict[str, Any], str]:
    entry: Dict[str, Any] = {"url": server.url}
    if ENV_REF_RE.search(server.url or ""):
        lost.append("${VAR} in the url stays literal (Codex expands no variables)")
    static: Dict[str, str] = {}
    from_env: Dict[str, str] = {}
    notes = ["url"]
    for key, value in thaw(server.headers).items():
        value = str(value)
        bearer = _BEARER_RE.fullmatch(value)
        ref = ENV_REF_RE.fullmatch(value)
        if key.lower() == "authorization" and bearer and "bearer_token_env_var" not in entry:
            entry["bearer_token_env_var"] = bearer.group(1)
            notes.append("Authorization: Bearer ${VAR} as bearer_token_env_var")
        elif ref:
            from_env[key] = ref.group(1)
        elif ENV_REF_RE.search(value):
            lost.append(f"header {key} left out (Codex takes a header from a variable only when the variable is its "
                        "whole value, or Authorization: Bearer ${VAR})")
        else:
            static[key] = value
    if static:
        entry["http_headers"] = static
        notes.append("literal headers as http_headers")
    if from_env:
        entry["env_http_headers"] = from_env
        notes.append("${VAR} headers as env_http_headers")
    return entry, f"streamable HTTP server ({', '.join(notes)})"


def _note(tracker: Tracker, field: str, status: str, detail: str) -> None:
    """Set `field`'s outcome, keeping what an earlier step said about it (directives, overrides)."""
    prev = tracker.outcomes.get(field)
    if prev is not None and prev.detail:
        detail = f"{detail}; {prev.detail}"
    tracker.set(field, status, detail)
