"""Windsurf, renamed Devin Desktop on 2026-06-02: rules in `.windsurf/rules`, skills in
`.windsurf/skills`, commands as workflows in `.windsurf/workflows` (all three read by the
legacy Cascade agent and by Devin Local, the new default agent), custom subagents in
`.devin/agents`, hooks in `.devin/hooks.v1.json` (Devin Local, Claude Code format) and
`.windsurf/hooks.json` (Cascade, snake_case events), MCP servers in `.devin/config.json`,
and the shared AGENTS.md (docs: docs.devin.ai/cli/extensibility, cli.devin.ai/docs,
docs.windsurf.com/windsurf/cascade).

Devin Local "shares its agent harness with Devin CLI": it uses the Devin CLI formats and
also imports Windsurf's `.windsurf/rules`, `.windsurf/skills`, `.windsurf/workflows` and
Claude Code's `.claude/` skills, commands, subagents and hooks (`read_config_from`, on by
default). Fidelity statuses are Devin Local's; a detail names what Cascade loses.

Verified in Devin's docs (docs.devin.ai, cli.devin.ai) and Windsurf's docs:
- Rules: `.windsurf/rules/*.md` with `trigger: always_on | glob | model_decision |
  manual`, `description`, `globs`; Devin requires `globs` as a YAML list. Windsurf reads
  at most 12,000 characters of a rule or workflow file: a longer one is reported degraded.
- Skills: `.windsurf/skills/<name>/SKILL.md` (Devin and Cascade; Cascade also reads
  `.agents/skills`, Devin CLI's docs list `.devin/skills` and `.windsurf/skills` only);
  Devin reads `argument-hint`, `model` (aliases such as `sonnet`, `opus`), `allowed-tools`
  (a list of Devin tool names: read, write, edit, exec, grep, glob), `triggers: [user,
  model]`, `subagent: true` and `agent: <profile>` (built-ins subagent_explore and
  subagent_general).
- Workflows: `.windsurf/workflows/<name>.md`, `description` frontmatter, run as `/<name>`.
- Custom subagents: `.devin/agents/<name>/AGENT.md` (Devin Local only; Cascade has no
  custom agents).
- Hooks: `.devin/hooks.v1.json` is an event map (PreToolUse, PostToolUse,
  UserPromptSubmit, Stop, SessionStart, SessionEnd, PermissionRequest) of `{matcher,
  hooks: [{type: command, command, timeout (s)}]}`, matcher a regex on Devin tool names
  (exec, edit, read, grep, glob, mcp__<server>__<tool>); `DEVIN_PROJECT_DIR` is set.
  Cascade's `.windsurf/hooks.json` is `{"hooks": {<event>: [{"command": ...}]}}` with
  events pre/post_read_code, pre/post_write_code, pre/post_run_command,
  pre/post_mcp_tool_use, pre_user_prompt, post_cascade_response; exit code 2 blocks.
- MCP: `.devin/config.json` `mcpServers` (`command`/`args`/`env`, or `url`/`transport:
  http|sse`/`headers`); Cascade reads MCP servers from the user's
  ~/.codeium/windsurf/mcp_config.json only.

Unverified:
- The AGENT.md fields (`name`, `description`, `model`, `allowed-tools`) come from
  third-party descriptions of the Devin docs; the file location is Devin's own.
- Devin's tool names for web fetch and web search (so those capabilities are dropped
  from tool lists and hook matchers) and whether `write` ever reaches a hook's tool_name.
- Whether Devin expands `${VAR}` in `.devin/config.json` (a server using one is reported
  degraded, with the fallback: the value in the gitignored `.devin/config.local.json`).
- Cascade: hook timeouts (none documented), its working directory for hooks (the command
  falls back to `.` when DEVIN_PROJECT_DIR is unset), and that it ignores skill keys
  outside the Agent Skills standard.
- When claude is built too, `.devin/hooks.v1.json` gets no entries: Devin runs the hooks
  of `.claude/settings.json` already, and would otherwise run each twice.
"""

from __future__ import annotations

import re

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    ENV_REF_RE,
    SHARED_SKILL_DIR,
    ClientAdapter,
    RenderContext,
    canonical_server_outcomes,
    document,
    hook_docs,
    hook_script,
    narrowing_lost,
    place_resources,
    refuse_hook,
    resource_files,
    stdio_entry,
    subagents_only,
    sync_only,
    tool_event,
    with_skills_section,
)
from agentrc.fidelity import DROPPED, EMITTED, MAPPED, Tracker
from agentrc.files import fragment
from agentrc.frozen import thaw
from agentrc.model import TOOL_EVENTS, Item, Kind, McpServer
from agentrc.vocabulary import join_model

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

# Devin's tool names (hooks lifecycle, permissions and skills docs); no documented name for
# web fetch or web search.
TOOL_NAMES = {"read": "read", "write": "write", "edit": "edit", "bash": "exec", "grep": "grep", "glob": "glob"}
# Model aliases Devin's docs use (`model: sonnet` in skills, `devin --model opus`).
MODELS = {"sonnet": "sonnet", "opus": "opus"}
# Skill keys Devin Local reads beyond name/description (creating-skills reference), plus the
# Agent Skills standard's compatibility; Claude's invocation keys become `triggers:`.
SKILL_FIELDS = frozenset({"compatibility", "allowed-tools", "argument-hint", "model", "disable-model-invocation",
                          "user-invocable", "agent", "context"})
# Claude Code's built-in subagents a skill's `agent:` may name, and Devin's built-in profiles.
BUILTIN_AGENTS = {"Explore": "subagent_explore", "general-purpose": "subagent_general"}
CLAUDE_TOOLS = {"Bash": "exec", "Read": "read", "Write": "write", "Edit": "edit", "MultiEdit": "edit", "Grep": "grep",
                "Glob": "glob"}
ARGUMENTS_NOTE = "In these instructions, `$ARGUMENTS` stands for the text the user typed after the command."
CHAR_LIMIT = 12000  # characters Windsurf reads of a rule or workflow file
DEVIN_HOOKS = ".devin/hooks.v1.json"
CASCADE_HOOKS = ".windsurf/hooks.json"
DEVIN_CONFIG = ".devin/config.json"
DEVIN_EVENTS = ("SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
# Cascade splits tool hooks by action: <pre|post>_<suffix>.
CASCADE_ACTIONS = {"bash": "run_command", "read": "read_code", "edit": "write_code", "write": "write_code"}
CASCADE_CLAUDE = {"Bash": "run_command", "Read": "read_code", "Edit": "write_code", "Write": "write_code",
                  "MultiEdit": "write_code"}
CASCADE_ALL = ("read_code", "write_code", "run_command", "mcp_tool_use")
CASCADE_OTHER = {"UserPromptSubmit": "pre_user_prompt", "Stop": "post_cascade_response"}


def _limit(path: str, fm: Dict[str, Any], title: str, body: str, tracker: Tracker) -> None:
    size = len(document(fm, title, body).decode("utf-8"))
    if size > CHAR_LIMIT:
        before = tracker.outcomes["body"].detail
        tracker.degraded("body", (f"{before}; " if before else "") + f"{path} has {size} characters: Windsurf reads "
                                 f"at most {CHAR_LIMIT:,} of a rule or workflow file and ignores the rest")


def _tokens(value: Any) -> List[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [t for t in re.split(r"[\s,]+", str(value)) if t]


class Windsurf(ClientAdapter):
    name = "windsurf"
    family = "windsurf"
    title = "Windsurf (Devin Desktop)"
    ignore_file = ignorefile.degraded(
        '.codeiumignore', 'Windsurf keeps these paths out of its index; Cascade may still open a file it is pointed at')
    passthrough_block = "windsurf"
    # Devin Local imports .claude/skills, commands (as skills) and subagents; Cascade reads
    # .agents/skills, where Codex, Gemini CLI, OpenClaw and Hermes write skills.
    also_reads = {Kind.SKILL: ("claude", SHARED_SKILL_DIR), Kind.COMMAND: ("claude", SHARED_SKILL_DIR),
                  Kind.AGENT: ("claude", SHARED_SKILL_DIR), Kind.RULE: (SHARED_SKILL_DIR,)}

    kinds = tuple(Kind)
    resource_root = ".windsurf/agentrc"
    skill_dir = ".windsurf/skills"
    skill_fields = SKILL_FIELDS
    tool_names = TOOL_NAMES

    def rule(self, item, ctx, tracker, fm, body):
        fm["trigger"] = "glob" if item.scope_paths else "always_on"
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="shown with the rule; it decides only model_decision rules")
        if "name" in item.fields:
            tracker.mapped("name", "file name")
        if item.scope_paths:
            fm["globs"] = list(item.scope_paths)
            tracker.mapped("scope", "trigger: glob with a globs: list")
        body, extra = self.place(item, ".windsurf/rules", body, tracker)
        path = f".windsurf/rules/{item.name}.md"
        _limit(path, fm, item.name, body, tracker)
        return path, body, extra

    def skill(self, item, ctx, tracker, fm, body):
        base = f"{self.skill_dir}/{item.name}"
        self.identify(item, fm, tracker)
        triggers = ["user", "model"]
        for key, value in item.extra.items():
            if key == "compatibility":
                fm[key] = value
                tracker.emitted(key, "Agent Skills standard key")
            elif key == "argument-hint":
                fm[key] = value
                tracker.emitted(key, "Devin Local shows it after /name; Cascade ignores it")
            elif key == "model":
                self.map_model(str(value), fm, tracker, key)
            elif key == "allowed-tools":
                self._skill_tools(value, fm, tracker)
            elif key == "disable-model-invocation":
                if value is True:
                    triggers.remove("model")
                    tracker.mapped(key, "triggers: without model (Devin Local); Cascade ignores it")
                else:
                    tracker.emitted(key, "the default: the model may invoke the skill")
            elif key == "agent":
                fm["agent"] = BUILTIN_AGENTS.get(str(value), value)
                tracker.mapped(key, "agent: runs the skill as that subagent profile (Devin Local; Claude's Explore and "
                                    "general-purpose are subagent_explore and subagent_general)")
            elif key == "context":
                if value == "fork" and "agent" not in item.extra:
                    fm["subagent"] = True
                    tracker.mapped(key, "subagent: true (Devin Local runs the skill in its own context)")
                elif value == "fork":
                    tracker.mapped(key, "implied by agent: (Devin Local runs the skill as that subagent)")
                else:
                    tracker.dropped(key, f"Devin Local has no context {value!r} for skills")
            elif key == "user-invocable":
                if value is False:
                    triggers.remove("user")
                    tracker.mapped(key, "triggers: without user (Devin Local); Cascade ignores it")
                else:
                    tracker.emitted(key, "the default: /name invokes the skill")
            else:
                tracker.dropped(key, f"not a skill field {self.title} reads")
        if triggers != ["user", "model"]:
            fm["triggers"] = triggers
        extra = resource_files(item, base, self.owner(item))
        tracker.emitted("resources", f"{len(extra)} file(s) copied beside SKILL.md" if extra else "none")
        return f"{base}/SKILL.md", body, extra

    def _skill_tools(self, value: Any, fm: Dict[str, Any], tracker: Tracker) -> None:
        devin = set(TOOL_NAMES.values())
        names, unknown = [], []
        for tok in _tokens(value):
            name = CLAUDE_TOOLS.get(tok, tok if tok in devin else None)
            if name is None:
                unknown.append(tok)
            elif name not in names:
                names.append(name)
        if unknown or not names:
            tracker.dropped("allowed-tools", f"no Devin tool name for {', '.join(unknown) or 'an empty list'}: Devin "
                                             "would restrict the skill to tools it does not have")
            return
        fm["allowed-tools"] = names
        tracker.mapped("allowed-tools", "a list of Devin tool names (Devin Local restricts the skill to them)")

    def model_choice(self, provider, ident):
        if provider is None and ident in MODELS:
            return MODELS[ident], EMITTED, "a model alias Devin Local resolves"
        if provider is None and ident == "inherit":
            return None, MAPPED, "omitted: Devin Local uses the session's model by default"
        return None, DROPPED, (f"no documented Devin model id for {join_model(provider, ident)!r}; set model: in "
                               "the windsurf: block")

    def agent(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, description_detail="Devin Local picks the subagent profile by it; legacy "
                                                            "Cascade has no custom agents")
        subagents_only(item, tracker, ".devin/agents holds subagent profiles",
                       "Devin custom agents are always subagent profiles")
        if item.model is not None:
            self.map_model(item.model, fm, tracker)
        if item.tools is not None:
            names = self.native_tools(item.tools)
            missing = [t for t in item.tools if t not in TOOL_NAMES]
            if names:
                fm["allowed-tools"] = names
            if not missing:
                tracker.mapped("tools", "allowed-tools: Devin tool names")
            elif names:
                tracker.degraded("tools", f"allowed-tools: Devin tool names; no Devin tool name for "
                                          f"{', '.join(missing)}, so the agent lacks it")
            else:
                tracker.degraded("tools", f"no Devin tool name for {', '.join(missing)}: allowed-tools omitted, so the "
                                          "agent has every tool")
        body = with_skills_section(item, body, tracker)
        entry_dir = f".devin/agents/{item.name}"
        body, extra = place_resources(item, entry_dir, entry_dir, body, self.owner(item), tracker)
        return f"{entry_dir}/AGENT.md", body, extra

    def command(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="workflow description (Cascade; Devin Local imports workflows)")
        if "name" in item.fields:
            tracker.mapped("name", "file name is the /command name")
        if "argument-hint" in item.fields:
            tracker.dropped("argument-hint", "Windsurf workflows have no argument hint")
        if "agent" in item.fields:
            tracker.dropped("agent", "a workflow runs in the current agent, never in a named one")
        if item.model is not None:
            tracker.dropped("model", "a workflow cannot pick a model")
        if item.tools is not None:
            tracker.dropped("tools", "a workflow cannot restrict tools")
        if "$ARGUMENTS" in body:
            body = f"{ARGUMENTS_NOTE}\n\n{body}"
            before = tracker.outcomes["body"].detail
            tracker.degraded("body", (f"{before}; " if before else "") + "workflows do not substitute $ARGUMENTS (the "
                             "text after /name goes with the request): kept, with a first line saying what it "
                             "stands for")
        body, extra = place_resources(item, ".windsurf/workflows", f"{self.resource_root}/commands/{item.name}", body,
                                      self.owner(item), tracker)
        path = f".windsurf/workflows/{item.name}.md"
        _limit(path, fm, item.name, body, tracker)
        return path, body, extra

    # --- hooks ------------------------------------------------------------------------
    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        spec = item.hook
        assert spec is not None  # set for every hook item
        devin = spec.event in DEVIN_EVENTS
        cascade, cascade_note = self._cascade_events(item)
        via_claude = devin and "claude" in ctx.clients
        claude_note = ("Devin Local runs this hook from .claude/settings.json (built for claude; Devin imports Claude "
                       "Code hooks), so .devin/hooks.v1.json gets no second copy")
        if not devin and not cascade:
            return refuse_hook(tracker, f"neither Devin Local nor Cascade has a {spec.event} hook event")
        why = narrowing_lost(item, "Windsurf")
        if why:
            note = " (Devin Local still runs the Claude Code copy in .claude/settings.json)" if via_claude else ""
            return refuse_hook(tracker, why + note)
        if via_claude and not cascade:
            for f in tracker.expected:
                if f == self.passthrough_block:
                    tracker.dropped(f, f"no {DEVIN_HOOKS} entry to merge it into ({claude_note})")
                elif f not in tracker.outcomes:
                    tracker.mapped(f, f"{claude_note}; Cascade has no {spec.event} hook")
            return []
        hook_docs(item, tracker)
        command, files = hook_script(self, item, tracker, "$DEVIN_PROJECT_DIR")
        out: List[Any] = list(files)
        parts: List[str] = []
        devin_written = False
        if devin and not via_claude:
            devin_written = self._devin_entry(item, command, tracker, out, parts)
        elif via_claude:
            parts.append(claude_note)
        for event in cascade:
            out.append(fragment(CASCADE_HOOKS, "json", ("hooks", event), {"command": command}, self.owner(item),
                                append=True))
        parts.append(cascade_note)
        tracker.mapped("event", "; ".join(parts))
        self._tool_outcomes(item, tracker, via_claude)
        if spec.timeout is not None:
            if devin_written:
                tracker.emitted("timeout", f"seconds in {DEVIN_HOOKS}; Cascade's hooks.json has no timeout")
            elif via_claude:
                tracker.mapped("timeout", f"{claude_note}; Cascade's hooks.json has no timeout")
            else:
                tracker.dropped("timeout", "no Devin Local entry, and Cascade's hooks.json has no timeout")
        sync_only(item, tracker, "Devin Local and Cascade run hooks synchronously",
                  "synchronous, as Devin Local and Cascade run hooks")
        if self.passthrough_block in item.passthrough and self.passthrough_block not in tracker.outcomes:
            tracker.dropped(self.passthrough_block, f"no {DEVIN_HOOKS} entry to merge it into")
        return out

    def _devin_entry(self, item: Item, command: str, tracker: Tracker, out: List[Any], parts: List[str]) -> bool:
        """The hook's Devin Local entry in DEVIN_HOOKS, when one of its tools has a Devin tool
        name; whether it was written (`parts` says what happened)."""
        spec = item.hook
        assert spec is not None
        matcher = self._devin_matcher(item)
        if matcher is None:
            parts.append("no Devin Local entry: none of its tools has a Devin tool name")
            return False
        handler: Dict[str, Any] = {"type": "command", "command": command}
        if spec.timeout is not None:
            handler["timeout"] = spec.timeout
        self.merge_block(item, handler, tracker, f"merged into the {DEVIN_HOOKS} handler")
        entry: Dict[str, Any] = {"matcher": matcher} if matcher else {}
        entry["hooks"] = [handler]
        out.append(fragment(DEVIN_HOOKS, "json", (spec.event,), entry, self.owner(item), append=True))
        parts.append(f"{spec.event} in {DEVIN_HOOKS} (Devin Local)")
        return True

    def _devin_matcher(self, item: Item) -> Optional[str]:
        """The matcher of the Devin entry ("" for every tool), None when no entry fits."""
        spec = item.hook
        assert spec is not None  # set for every hook item
        if spec.event not in TOOL_EVENTS:
            return ""
        if spec.tools is not None:
            names = self.native_tools(spec.tools)
            return "|".join(names) if names else None
        if spec.matcher is not None:
            return "|".join(dict.fromkeys(CLAUDE_TOOLS.get(p.strip(), p.strip()) for p in spec.matcher.split("|")))
        return ""

    def _cascade_events(self, item: Item) -> Tuple[List[str], str]:
        """Cascade's events for the hook, and what the report says about them."""
        spec = item.hook
        assert spec is not None  # set for every hook item
        if spec.event in CASCADE_OTHER:
            event = CASCADE_OTHER[spec.event]
            note = " (observe only)" if spec.event == "Stop" else ""
            return [event], f"{event} in {CASCADE_HOOKS} (Cascade{note})"
        if spec.event not in TOOL_EVENTS:
            return [], f"Cascade has no {spec.event} hook"
        prefix = "pre" if spec.event == "PreToolUse" else "post"
        lost: List[str] = []
        if spec.tools is not None:
            actions = []
            for t in spec.tools:
                if t in CASCADE_ACTIONS:
                    actions.append(CASCADE_ACTIONS[t])
                else:
                    lost.append(t)
        elif spec.matcher is not None:
            actions = []
            for part in (p.strip() for p in spec.matcher.split("|")):
                if part in CASCADE_CLAUDE:
                    actions.append(CASCADE_CLAUDE[part])
                elif part.startswith("mcp__"):
                    actions.append("mcp_tool_use")
                elif part in ("", "*", ".*"):
                    actions.extend(CASCADE_ALL)
                else:
                    lost.append(part)
        else:
            actions = list(CASCADE_ALL)
        events = [f"{prefix}_{a}" for a in dict.fromkeys(actions)]
        if not events:
            return [], f"Cascade has no hook for {', '.join(lost)}"
        note = f"{', '.join(events)} in {CASCADE_HOOKS} (Cascade: one event per action, its own stdin JSON"
        note += f"; no hook for {', '.join(lost)})" if lost else ")"
        return events, note

    def _tool_outcomes(self, item: Item, tracker: Tracker, via_claude: bool) -> None:
        if not tool_event(item, tracker):
            return
        spec = item.hook
        assert spec is not None  # set for every hook item
        devin = "the .claude/settings.json matcher (Devin Local)" if via_claude else "matcher of Devin tool names"
        if spec.tools is not None:
            missing = [t for t in spec.tools if t not in TOOL_NAMES]
            if missing and not via_claude:
                tracker.degraded("tools", f"{devin}, without {', '.join(missing)} (no Devin tool name); Cascade: "
                                          "the events of the matching actions")
            else:
                tracker.mapped("tools", f"{devin}; Cascade: the events of the matching actions")
        elif spec.matcher is not None:
            tracker.mapped("matcher", f"{devin} (Claude tool names translated); Cascade: the events of the "
                                      "matching actions")

    # --- MCP ----------------------------------------------------------------------------
    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        if server.transport == "stdio":
            entry: Dict[str, Any] = stdio_entry(server)
            key, what = "local", "stdio server (command, args, env)"
            values = thaw(server.env)
        else:
            entry = {"url": server.url, "transport": server.transport}
            if server.headers:
                entry["headers"] = thaw(server.headers)
            key, what = "remote", f"{server.transport} server (url, transport, headers)"
            values = thaw(server.headers)
        detail = (f"{DEVIN_CONFIG} mcpServers (Devin Local): {what}; Cascade reads MCP servers only from the user's "
                  "~/.codeium/windsurf/mcp_config.json")
        refs = sorted({m.group(1) for v in values.values() for m in ENV_REF_RE.finditer(v)})
        if refs:
            tracker.degraded(key, f"{detail}; Devin does not document ${{VAR}} expansion in its config: if "
                                  f"{', '.join(refs)} stays literal, put the value in .devin/config.local.json "
                                  "(gitignored)")
        else:
            tracker.mapped(key, detail)
        if "requires-env" in server.fields:
            tracker.omitted("requires-env", "checked by agentrc at install time (spec 001 §3.6), not a client field")
        canonical_server_outcomes(server, tracker)
        return [fragment(DEVIN_CONFIG, "json", ("mcpServers", server.name), entry, self.name)]
