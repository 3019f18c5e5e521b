"""Qwen Code (QwenLM/qwen-code, npm `@qwen-code/qwen-code`, command `qwen`): rules in
`.qwen/rules`, skills in `.qwen/skills`, subagents in `.qwen/agents`, Markdown commands in
`.qwen/commands`, hooks and MCP servers in `.qwen/settings.json`, and the shared AGENTS.md,
which Qwen Code reads beside its own QWEN.md.

Verified with qwen 0.24.4 run offline (tests/conformance/test_qwen_discovery.py: the
stream-json init message, the first model request sent to a local OpenAI-compatible
endpoint, `qwen mcp list`, and the debug log in ~/.qwen/debug), and in the docs the package
ships (bundled/qc-helper/docs: features/{rules,skills,sub-agents,commands,hooks,mcp,memory}):
- Context: `QWEN.md` and `AGENTS.md` (both, in that order); not CLAUDE.md.
- Rules: every `.md` under `.qwen/rules` (subdirectories too) with optional `description`
  and `paths:`; without `paths:` the rule is in the system prompt from the start, with it the
  rule is injected once a tool touches a matching file (globs relative to the project root).
- Skills: `.qwen/skills` and `.agents/skills` (project and home); SKILL.md keys read besides
  name and description: allowed-tools, hooks, model, argument-hint, when_to_use,
  disable-model-invocation, user-invocable, paths, priority. Each skill is also `/<name>`.
- Subagents: `.qwen/agents/<name>.md` (name, description, tools, disallowedTools, model,
  color, hooks, mcpServers, maxTurns, approvalMode/permissionMode, background); a system
  prompt under 10 characters is refused ("Validation failed" in the debug log).
- Commands: `.qwen/commands/<name>.md`, frontmatter `description`; `{{args}}` is replaced by
  the text after the command (else it is appended).
- Hooks: `hooks.<Event>[] = {matcher, hooks: [{type: command, command, timeout, async}]}` in
  `.qwen/settings.json`, Claude Code's events; `matcher` takes Qwen tool ids and Claude Code's
  tool names as aliases; `$QWEN_PROJECT_DIR` is set for every command hook; a command hook's
  `timeout` of 1000 or more is read as milliseconds.
- MCP: `mcpServers` of `.qwen/settings.json` (`command`/`args`/`env`; `url` for SSE,
  `httpUrl` for Streamable HTTP; `headers`), `$VAR` and `${VAR}` expanded. Qwen Code also
  lists the servers of Claude Code's `.mcp.json`.
- Extensions (`--layout plugin`, QwenExtension): qwen-extension.json (name, version,
  mcpServers, contextFileName) with commands/, skills/, agents/, rules/ (conditional rules
  only: a rule without `paths:` is skipped with a warning), hooks/hooks.json (with
  `${CLAUDE_PLUGIN_ROOT}` replaced by the extension's directory) and the context file.
"""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    ClientAdapter,
    default_outcome,
    hook_docs,
    hook_script,
    json_file,
    narrowing_lost,
    refuse_hook,
    resource_files,
    server_outcomes,
    server_without_defaults,
    stdio_entry,
    subagents_only,
    with_skills_section,
)
from agentrc.clients.hookkit import settings_hook, tool_matcher
from agentrc.fidelity import DROPPED, EMITTED, MAPPED, Tracker
from agentrc.files import OutputFile, fragment
from agentrc.frozen import thaw
from agentrc.model import Item, Kind, McpServer
from agentrc.vocabulary import TOOLS

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence, Tuple

TOOL_NAMES = {
    "read": "read_file", "write": "write_file", "edit": "edit", "bash": "run_shell_command", "grep": "grep_search",
    "glob": "glob", "web-fetch": "web_fetch", "web-search": "web_search",
}
EXTENSION_MANIFEST = "qwen-extension.json"
EXTENSION_CONTEXT = "QWEN.md"
# Qwen Code's `model:` is inherit, fast, a model id or authType:modelId; the portable aliases
# name Claude models, which a Qwen Code session reaches only through an anthropic provider.
MODELS = {"inherit": "inherit"}
AUTH_TYPES = frozenset({"openai", "anthropic", "gemini", "vertex-ai", "qwen-oauth"})
# Skill frontmatter Qwen Code 0.24.4 reads beyond name/description (SkillManager.parseSkillContent);
# `model` is left out: its values are Qwen model ids, not the portable aliases.
SKILL_FIELDS = frozenset({"allowed-tools", "hooks", "argument-hint", "when_to_use", "disable-model-invocation",
                          "user-invocable", "paths"})
SETTINGS = ".qwen/settings.json"
RULES_DIR = ".qwen/rules"
AGENTS_DIR = ".qwen/agents"
COMMANDS_DIR = ".qwen/commands"
CHECKED = "checked with qwen 0.24.4"  # the version tests/conformance/test_qwen_discovery.py runs


class Qwen(ClientAdapter):
    name = "qwen"
    family = "qwen"
    title = "Qwen Code"
    ignore_file = ignorefile.mapped('.qwenignore', "Qwen Code's file tools skip these paths")
    passthrough_block = "qwen"
    passthrough_example = {"color": "blue"}
    kinds = tuple(Kind)
    resource_root = ".qwen/agentrc"  # not scanned: only .qwen/rules, skills, agents, commands are
    skill_dir = ".qwen/skills"
    rules_dir = RULES_DIR
    agents_dir = AGENTS_DIR
    commands_dir = COMMANDS_DIR
    hooks_file = SETTINGS  # where hooks.<Event> goes
    mcp_file = SETTINGS  # where mcpServers.<name> goes
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES
    tools_file = SETTINGS
    # Qwen Code loads .agents/skills too (SKILL_PROVIDER_CONFIG_DIRS = .qwen, .agents): the
    # skills, and the rules, commands and agents other clients write there as skills.
    also_reads = {Kind.SKILL: (SHARED_SKILL_DIR,), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: (SHARED_SKILL_DIR,), Kind.AGENT: (SHARED_SKILL_DIR,)}

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail=f"kept in the rule's frontmatter ({CHECKED})")
        if item.scope_paths:
            fm["paths"] = list(item.scope_paths)
            tracker.mapped("scope", "paths: list (the rule is injected once a tool touches a matching file)")
        # Every .md under .qwen/rules is a rule: supporting files go to the resource root.
        body, extra = self.place(item, self.rules_dir, body, tracker)
        return f"{self.rules_dir}/{item.name}.md", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker)
        subagents_only(item, tracker, f"{self.agents_dir}/ holds subagents", "Qwen Code custom agents are subagents")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            if item.tools:
                fm["tools"] = self.native_tools(item.tools)
            else:  # an empty allowlist: every portable tool is also disallowed, never "all tools"
                fm["tools"] = []
                fm["disallowedTools"] = self.native_tools(TOOLS)
            tracker.mapped("tools", "tools: list of Qwen Code tool ids")
        body = with_skills_section(item, body, tracker)
        body, extra = self.place(item, self.agents_dir, body, tracker)
        return f"{self.agents_dir}/{item.name}.md", body, extra

    def model_choice(self, provider, ident):
        if provider is None and ident in MODELS:
            return MODELS[ident], EMITTED, "inherits the session's model"
        if provider in AUTH_TYPES:
            return f"{provider}:{ident}", MAPPED, f"{provider}:{ident} (authType:modelId)"
        if provider is None:
            return None, DROPPED, (f"{ident} names no Qwen Code model; the agent inherits the session's model "
                                   "(write provider/model, e.g. openai/qwen3-coder-plus)")
        return None, DROPPED, f"{provider} is no Qwen Code auth type; the agent inherits the session's model"

    def command(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False, description_detail="shown in /help")
        if "argument-hint" in item.fields:
            tracker.dropped("argument-hint", "Qwen Code Markdown commands read only description")
        if "agent" in item.fields:
            tracker.dropped("agent", "Qwen Code commands run in the main session")
        if item.model is not None:
            tracker.dropped("model", "Qwen Code commands cannot pick a model")
        if item.tools is not None:
            tracker.dropped("tools", "Qwen Code commands cannot restrict tools")
        if "$ARGUMENTS" in body:
            body = body.replace("$ARGUMENTS", "{{args}}")
            before = tracker.outcomes["body"].detail
            tracker.mapped("body", "$ARGUMENTS as {{args}}" + (f"; {before}" if before else ""))
        body, extra = self.place(item, self.commands_dir, body, tracker)
        return f"{self.commands_dir}/{item.name}.md", body, extra

    def hook(self, item, ctx, tracker):
        spec = item.hook
        assert spec is not None  # set for every hook item
        why = narrowing_lost(item, "Qwen Code")
        if why:
            return refuse_hook(tracker, why)
        hook_docs(item, tracker)
        command, files = self._hook_command(item, tracker)
        handler: Dict[str, Any] = {"type": "command", "command": command}
        if spec.timeout is not None:
            # 1000 or more is read as milliseconds (the old unit).
            handler["timeout"] = spec.timeout if spec.timeout < 1000 else spec.timeout * 1000
            tracker.emitted("timeout", "seconds (milliseconds from 1000 s up, as Qwen Code reads them)")
        if "async" in item.fields:
            if spec.run_async:
                handler["async"] = True
            tracker.emitted("async")
        return files + [settings_hook(self, item, tracker, handler, self.hooks_file, spec.event,
                                      lambda: self._matcher(item, tracker))]

    def _hook_command(self, item: Item, tracker: Tracker) -> Tuple[str, List[OutputFile]]:
        return hook_script(self, item, tracker, "$QWEN_PROJECT_DIR")

    def _matcher(self, item: Item, tracker: Tracker) -> str:
        return tool_matcher(item, tracker, TOOL_NAMES, "matcher: Qwen Code tool ids, each compared exactly",
                            "as written (Qwen Code accepts Claude Code tool names as matcher aliases)")

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        if server.transport == "stdio":
            entry: Dict[str, Any] = stdio_entry(server)
        else:
            entry = {"httpUrl" if server.transport == "http" else "url": server.url}
            if server.headers:
                entry["headers"] = thaw(server.headers)
        server_outcomes(server, tracker, f"{self.mcp_file} mcpServers", ", ${VAR} expanded by Qwen Code")
        default_outcome(tracker, "Qwen Code", written, False)
        return [fragment(self.mcp_file, "json", ("mcpServers", server.name), entry, self.name)]


class QwenExtension(Qwen):
    """The same content as a Qwen Code extension (`--layout plugin`), installed with `qwen
    extensions install DIR` (or `link`): qwen-extension.json, commands/, skills/, agents/,
    rules/ for the rules with paths: (an extension's rule without them is skipped, so those
    become skills), hooks/hooks.json calling their scripts via ${CLAUDE_PLUGIN_ROOT}, and
    the context items as the extension's QWEN.md (contextFileName)."""

    title = "Qwen Code extension"
    layout = "plugin"
    resource_root = "agentrc"
    skill_dir = "skills"
    rules_dir = "rules"
    agents_dir = "agents"
    commands_dir = "commands"
    hooks_file = "hooks/hooks.json"
    mcp_file = EXTENSION_MANIFEST
    context_file = EXTENSION_CONTEXT
    tools_file = ""
    also_reads: Dict[Kind, Any] = {}

    def rule(self, item, ctx, tracker, fm, body):
        if item.scope_paths:
            return super().rule(item, ctx, tracker, fm, body)
        # An extension's rule without paths: is skipped (rules.md): the rule is a skill.
        self.identify(item, fm, tracker, description_detail="the skill's description: Qwen Code loads the rule "
                                                            "when a task matches it")
        name = self.as_skill(item, ctx, fm, tracker)
        fm["name"] = name
        if "name" in item.fields and "name" not in tracker.outcomes:
            tracker.mapped("name", f"skill {self.skill_dir}/{name}")
        before = tracker.outcomes["body"].detail
        tracker.degraded("body", "an extension's rules need paths: (Qwen Code skips one without), so the text is a "
                         "skill of the extension, loaded on demand" + (f"; {before}" if before else ""))
        extra = resource_files(item, f"{self.skill_dir}/{name}", self.owner(item))
        tracker.emitted("resources", f"{len(extra)} file(s) copied beside SKILL.md" if extra else "none")
        return f"{self.skill_dir}/{name}/SKILL.md", body, extra

    def _hook_command(self, item: Item, tracker: Tracker) -> Tuple[str, List[OutputFile]]:
        return hook_script(self, item, tracker, plugin_root="${CLAUDE_PLUGIN_ROOT}",
                           root_note="Qwen Code replaces it with the extension's directory")

    def context(self, item, ctx, tracker):
        """The extension's QWEN.md: every session with the extension active reads it."""
        out = list(super().context(item, ctx, tracker))
        out.append(fragment(EXTENSION_MANIFEST, "json", ("contextFileName",), EXTENSION_CONTEXT, self.name))
        return out

    def manifest(self, name: str, description: str, version: str = "") -> OutputFile:
        """name, version (0.0.0 when the bundle has none) and description; contextFileName
        and mcpServers are the keys the items wrote."""
        return json_file(EXTENSION_MANIFEST, {"name": name, "version": version or "0.0.0", "description": description},
                         self.name)

    def marketplace(self, name: str, plugin: str, description: str) -> None:
        """None: Qwen Code installs or links an extension from its directory."""
        return None
