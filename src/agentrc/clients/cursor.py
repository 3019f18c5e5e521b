"""Cursor: `.cursor/rules/*.mdc`, `.cursor/skills`, `.cursor/agents`, `.cursor/commands`, hooks in
`.cursor/hooks.json`, MCP servers in `.cursor/mcp.json`, the shared AGENTS.md
(docs: cursor.com/docs/rules, /skills, /subagents, /hooks, /reference/third-party-hooks, /mcp).

Cursor also loads Claude Code's files by default ("Include Third-Party Plugins, Skills, and
Other Configs"): `.claude/skills`, `.claude/agents` and the hooks of `.claude/settings.json`.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    ClientAdapter,
    RenderContext,
    default_outcome,
    env_refs,
    expand_braces,
    hook_docs,
    hook_script,
    narrowing_lost,
    place_resources,
    refuse_hook,
    server_outcomes,
    server_without_defaults,
    subagents_only,
    sync_only,
    tool_event,
    with_skills_section,
)
from agentrc.fidelity import EMITTED, MAPPED, Tracker
from agentrc.files import fragment
from agentrc.model import Item, Kind, McpServer
from agentrc.patterns import pattern
from agentrc.vocabulary import TOOLS

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

    from agentrc.clients.base import Rendering

# Cursor agents have no tool list (only `readonly:`); these are the tool names Cursor's hook
# matchers use (preToolUse/postToolUse), the same mapping Cursor applies to Claude Code's
# hooks (third-party-hooks: Bash->Shell, Edit->Write). Glob has no Cursor equivalent.
TOOL_NAMES = {
    "read": "Read", "write": "Write", "edit": "Write", "bash": "Shell", "grep": "Grep",
    "web-fetch": "WebFetch", "web-search": "WebSearch",
}
# Claude Code tool names in a raw `matcher:`, as Cursor translates them for .claude/settings.json.
CLAUDE_TOOLS = {
    "Bash": "Shell", "Read": "Read", "Write": "Write", "Edit": "Write", "MultiEdit": "Write", "Grep": "Grep",
    "Task": "Task", "WebFetch": "WebFetch", "WebSearch": "WebSearch",
}
# Cursor model ids (cursor.com/docs/models-and-pricing); review when new models ship
# (docs/clients/cursor.md). `inherit` is Cursor's own default for subagents.
MODELS = {"sonnet": "claude-sonnet-5", "opus": "claude-opus-5", "haiku": "claude-haiku-4-5", "inherit": "inherit"}
# Skill frontmatter Cursor reads beyond name/description (cursor.com/docs/skills); `globs` is
# the legacy name of `paths`.
SKILL_FIELDS = frozenset({"paths", "globs", "disable-model-invocation", "icon", "color"})
# Portable hook events -> Cursor's (the mapping of Cursor's third-party-hooks page).
EVENTS = {
    "SessionStart": "sessionStart", "SessionEnd": "sessionEnd", "UserPromptSubmit": "beforeSubmitPrompt",
    "PreToolUse": "preToolUse", "PostToolUse": "postToolUse", "Stop": "stop", "SubagentStop": "subagentStop",
    "PreCompact": "preCompact",
}
# Capabilities a `readonly: true` subagent loses (no file edits, no state-changing shell commands).
WRITE_TOOLS = ("write", "edit", "bash")
HOOKS_FILE = ".cursor/hooks.json"
MCP_FILE = ".cursor/mcp.json"


class Cursor(ClientAdapter):
    name = "cursor"
    family = "cursor"
    title = "Cursor"
    ignore_file = ignorefile.mapped(
        '.cursorignore', 'Cursor keeps these paths from its agent, Tab and codebase indexing')
    passthrough_block = "cursor"
    # Cursor loads skills from .claude/skills, .codex/skills and .agents/skills (Codex, Gemini
    # CLI, OpenClaw and Hermes write there), so also Claude's commands (user-invoked skills),
    # and agents from .claude/agents (.cursor/ wins a name clash, but agents outside Cursor's
    # audience still load).
    prefers_own = frozenset({Kind.AGENT})  # `.cursor/agents` wins a name clash (cursor.com/docs)
    also_reads = {Kind.SKILL: ("claude", SHARED_SKILL_DIR), Kind.COMMAND: ("claude", SHARED_SKILL_DIR),
                  Kind.AGENT: ("claude", SHARED_SKILL_DIR), Kind.RULE: (SHARED_SKILL_DIR,)}

    resource_root = ".cursor/agentrc"
    skill_dir = ".cursor/skills"
    rules_dir = ".cursor/rules"
    agents_dir = ".cursor/agents"
    commands_dir = ".cursor/commands"
    hooks_file = HOOKS_FILE
    hooks_version = True  # project hooks.json has "version": 1; a plugin's has only "hooks"
    hook_var = ""  # project hooks run from the project root
    mcp_file = MCP_FILE
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES

    kinds = tuple(Kind)
    tools_file = ".cursor/settings.json"  # spec 000 §5.2.1: tools.cursor

    def finish(self, item, ctx, tracker, out):
        if item.kind is Kind.RULE:
            out[0] = replace(out[0], content=raw_globs(out[0].content))
        return out

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="" if item.scope_paths else
                      "documentation only: Cursor ignores it on an alwaysApply rule")
        if item.scope_paths:
            patterns = expand_braces(item.scope_paths)
            fm["globs"] = ",".join(patterns)
            fm["alwaysApply"] = False
            expanded = len(patterns) != len(item.scope_paths) or any("{" in p for p in item.scope_paths)
            tracker.mapped("scope", "globs: comma-separated, unquoted, no spaces (the form Cursor parses)"
                           + ("; {a,b} alternatives expanded" if expanded else "") + ", alwaysApply: false")
        else:
            fm["alwaysApply"] = True
        body, extra = self.place(item, self.rules_dir, body, tracker)
        return f"{self.rules_dir}/{item.name}.mdc", body, extra

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker)
        subagents_only(item, tracker, f"{self.agents_dir}/ holds subagents",
                       "Cursor custom agents are always subagents")
        self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            self._readonly(item.tools, fm, tracker)
        body = with_skills_section(item, body, tracker)
        body, extra = self.place(item, self.agents_dir, body, tracker)
        return f"{self.agents_dir}/{item.name}.md", body, extra

    def _readonly(self, tools: Sequence[str], fm: Dict[str, Any], tracker: Tracker) -> None:
        """Cursor subagents have no tool list: `readonly: true` is the one restriction."""
        missing = [t for t in TOOLS if t not in tools]
        if not any(t in tools for t in WRITE_TOOLS):
            fm["readonly"] = True
            tracker.mapped("tools", "readonly: true (no write, edit or bash); Cursor has no finer tool list")
        elif not missing:
            tracker.mapped("tools", "every capability: Cursor's default (readonly: false)")
        else:
            tracker.degraded("tools", "Cursor subagents have no tool list; with write, edit or bash listed the agent "
                                      f"cannot be readonly and also gets {', '.join(missing)}")

    def model_choice(self, provider, ident):
        if provider is None and ident == "inherit":
            return "inherit", EMITTED, "Cursor's own value: the parent agent's model"
        if provider is None and ident in MODELS:
            return MODELS[ident], MAPPED, f"Cursor model id {MODELS[ident]}"
        if provider is not None:
            return ident, MAPPED, f"Cursor model id {ident} (Cursor ids carry no provider prefix)"
        return ident, EMITTED, "passed through as written (a Cursor model id)"

    def command(self, item: Item, ctx: RenderContext, tracker: Tracker, fm: Dict[str, Any],
                body: str) -> Rendering:
        """A Cursor slash command: the file's text is the prompt, and whatever the user types
        after /name is sent with it (Cursor does not substitute $ARGUMENTS)."""
        self.identify(item, fm, tracker)
        if "name" in item.fields:
            tracker.mapped("name", "name: and the file name, which is the /command")
        notes: List[str] = []
        hint = item.fields.get("argument-hint")
        if "$ARGUMENTS" in body:
            notes.append(f"`$ARGUMENTS` below stands for the text typed after `/{item.name}`"
                         + (f" ({_code(hint)})" if hint else "") + ".")
            before = tracker.outcomes["body"].detail
            tracker.degraded("body", (f"{before}; " if before else "") + "Cursor does not substitute $ARGUMENTS (it "
                             "sends the text typed after /name with the prompt); a note tells the model what it "
                             "stands for")
            if hint:
                tracker.mapped("argument-hint", "in the note about $ARGUMENTS")
        elif hint:
            notes.append(f"The text typed after `/{item.name}` is {_code(hint)}.")
            tracker.mapped("argument-hint", "a note at the top of the prompt")
        if "agent" in item.fields:
            notes.append(f"Delegate this task to the `{item.fields['agent']}` subagent "
                         f"(`/{item.fields['agent']}`).")
            tracker.degraded("agent", "Cursor commands cannot pick an agent; the prompt asks to delegate to it")
        if item.model is not None:
            tracker.dropped("model", "Cursor commands run with the session's model")
        if item.tools is not None:
            tracker.dropped("tools", "Cursor commands run with the agent's tools")
        if notes:
            body = "\n".join(f"> {n}" if i == 0 else f">\n> {n}" for i, n in enumerate(notes)) + "\n\n" + body
        body, extra = place_resources(item, self.commands_dir, f"{self.resource_root}/commands/{item.name}", body,
                                      self.owner(item), tracker)
        return f"{self.commands_dir}/{item.name}.md", body, extra

    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        """One flat entry in `.cursor/hooks.json`: the Claude event renamed as Cursor renames
        it for .claude/settings.json, a matcher of Cursor tool names, timeout in seconds."""
        spec = item.hook
        assert spec is not None  # set for every hook item
        hook_docs(item, tracker)
        event = EVENTS.get(spec.event)
        if event is None:
            return refuse_hook(tracker, f"Cursor has no {spec.event} hook event")
        why = narrowing_lost(item, "Cursor")
        if "claude" in ctx.clients and item.targets("claude"):
            # Cursor runs the hooks of .claude/settings.json by default: a second copy in
            # .cursor/hooks.json would run every hook twice.
            for f in ("if", "matcher"):
                if why and f in item.fields:
                    tracker.degraded(f, "Cursor runs the Claude Code copy of this hook (.claude/settings.json); its "
                                        f"hooks document no {f}: for this event, so it may run the hook more often")
            if self.passthrough_block in item.passthrough:
                tracker.dropped(self.passthrough_block, "Cursor runs the Claude Code copy of this hook (built for "
                                                        "claude), so cursor: settings do not apply")
            if spec.tools is not None and "glob" in spec.tools:
                tracker.degraded("tools", "Cursor runs the Claude Code copy of this hook; Glob has no Cursor tool name")
            for f in ("event", "script", "tools", "matcher", "if", "timeout", "async", "resources"):
                if f in tracker.expected and f not in tracker.outcomes:
                    tracker.mapped(f, "Cursor runs this hook from .claude/settings.json (built for claude; Cursor's "
                                      "third-party configs setting is on by default); no second copy in "
                                      f"{self.hooks_file}")
            return []
        if why:
            return refuse_hook(tracker, why)
        matcher = self._matcher(item, tracker)
        if matcher is None:
            return refuse_hook(tracker, "none of the hook's tools has a Cursor tool name (glob)")
        command, files = hook_script(self, item, tracker, self.hook_var)
        entry: Dict[str, Any] = {"command": command}
        if spec.timeout is not None:
            entry["timeout"] = spec.timeout
            tracker.emitted("timeout", "seconds")
        if matcher:
            entry["matcher"] = matcher
        sync_only(item, tracker, "Cursor hooks have no async option; the agent waits for the hook",
                  "synchronous, Cursor's default")
        self.merge_block(item, entry, tracker, "merged into the hook entry")
        tracker.mapped("event", f"hooks.{event} in {self.hooks_file}")
        top = [fragment(self.hooks_file, "json", ("version",), 1, self.name)] if self.hooks_version else []
        return files + top + [fragment(self.hooks_file, "json", ("hooks", event), entry, self.owner(item), append=True)]

    def _matcher(self, item: Item, tracker: Tracker) -> Optional[str]:
        """Cursor tool names joined with `|` for the tool events; "" for every tool; None when
        no listed tool exists in Cursor (the hook would otherwise run for every tool)."""
        spec = item.hook
        assert spec is not None  # set for every hook item
        if not tool_event(item, tracker):
            return ""
        if spec.tools is not None:
            names = self.native_tools(spec.tools)
            if not names:
                return None
            if "glob" in spec.tools:
                tracker.degraded("tools", f"matcher {'|'.join(names)}: glob has no Cursor tool name")
            else:
                tracker.mapped("tools", "matcher of Cursor tool names (bash->Shell, edit/write->Write)")
            return "|".join(names)
        if spec.matcher is None or spec.matcher in ("", "*", ".*"):
            if spec.matcher is not None:
                tracker.emitted("matcher", "every tool")
            return ""
        tokens = spec.matcher.split("|")
        if all(t in CLAUDE_TOOLS or t == "Glob" for t in tokens):
            names = list(dict.fromkeys(CLAUDE_TOOLS[t] for t in tokens if t in CLAUDE_TOOLS))
            if not names:
                return None
            translated = "|".join(names)
            if translated == spec.matcher:
                tracker.emitted("matcher", "Claude Code and Cursor tool names agree")
            elif "Glob" in tokens:
                tracker.degraded("matcher", f"Claude Code tool names as Cursor's ({translated}); Glob has none")
            else:
                tracker.mapped("matcher", f"Claude Code tool names as Cursor's ({translated})")
            return translated
        tracker.degraded("matcher", "written as is: not a plain list of Claude Code tool names, and Cursor matches "
                                    "its own names (Shell, Write, Read, Grep, MCP:<tool>)")
        return spec.matcher

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        """`.cursor/mcp.json` mcpServers: stdio entries carry `type`, remote ones only `url`
        (Cursor infers streamable HTTP or SSE); `${VAR}` becomes `${env:VAR}`."""
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        if server.transport == "stdio":
            entry: Dict[str, Any] = {"type": "stdio", "command": server.command}
            if server.args:
                entry["args"] = list(server.args)
            if server.env:
                entry["env"] = dict(server.env)
        else:
            entry = {"url": server.url}
            if server.headers:
                entry["headers"] = dict(server.headers)
        server_outcomes(server, tracker, f"{self.mcp_file} mcpServers",
                        ", ${VAR} as ${env:VAR}; Cursor infers the transport from the url")
        default_outcome(tracker, "Cursor", written, False)
        return [fragment(self.mcp_file, "json", ("mcpServers", server.name), env_refs(entry, "${{env:{}}}"),
                         self.name)]


class CursorPlugin(Cursor):
    """The same content as a Cursor plugin (`--layout plugin`, spec 000 §5.2.2): rules/*.mdc,
    skills/, agents/, commands/, hooks/hooks.json (no version key) and mcp.json at the plugin
    root, described by .cursor-plugin/plugin.json (cursor.com/docs/reference/plugins).
    Plugins carry no global context."""

    title = "Cursor plugin"
    layout = "plugin"
    kinds = (Kind.RULE, Kind.SKILL, Kind.AGENT, Kind.COMMAND, Kind.HOOK)
    tools_file = ""  # plugins omit project-only tools.cursor settings (spec 000 §5.2.2)
    also_reads: Dict[Kind, Any] = {}
    resource_root = "agentrc"
    skill_dir = "skills"
    rules_dir = "rules"
    agents_dir = "agents"
    commands_dir = "commands"
    hooks_file = "hooks/hooks.json"
    hooks_version = False
    # Cursor expands ${CURSOR_PLUGIN_ROOT} in a plugin's MCP config; in a hook command the
    # shell sees it, and `:-.` falls back to the plugin root as the working directory.
    hook_var = "${CURSOR_PLUGIN_ROOT}"
    manifest_file = ".cursor-plugin/plugin.json"
    marketplace_file = ".cursor-plugin/marketplace.json"
    mcp_file = "mcp.json"


def _code(text: Any) -> str:
    text = str(text)
    return f"`{text}`" if "`" not in text else text


_GLOBS_LINE_RE = pattern(r'^globs: (".*")$', re.M)


def raw_globs(content: bytes) -> bytes:
    """Write `globs:` unquoted. Cursor reads rule frontmatter with a line reader that keeps
    quotes as part of the pattern (so `"**/*.ts"` matches nothing); its own rule editor
    writes `globs: **/*.ts`, which is not strict YAML but is what Cursor parses."""
    text = content.decode("utf-8")
    if not text.startswith("---\n"):
        return content
    end = text.find("\n---\n", 3)
    if end < 0:
        return content
    head = _GLOBS_LINE_RE.sub(lambda m: "globs: " + json.loads(m.group(1)), text[:end + 1], count=1)
    return (head + text[end + 1:]).encode("utf-8")
