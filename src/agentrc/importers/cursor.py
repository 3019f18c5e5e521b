"""Cursor: `.cursor/rules/*.mdc` (globs read the way Cursor reads them, unquoted), the legacy
`.cursorrules`, `.cursor/skills`, `.cursor/agents`, `.cursor/commands`, hooks in
`.cursor/hooks.json`, MCP servers in `.cursor/mcp.json`, and AGENTS.md."""

from __future__ import annotations

import re

from agentrc.importers.base import Reader, by_directory, by_name_field, by_path, by_stem, may_run
from agentrc.importers.cleanup import split_skills_section
from agentrc.importers.shapes import (
    READ_ONLY,
    Fields,
    description,
    env_syntax,
    glob_list,
    hook_entry,
    hook_matcher,
    server,
    skill,
    skill_files,
)
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict

# Cursor hook events -> the portable ones (the adapter's EVENTS, reversed).
EVENTS = {"sessionStart": "SessionStart", "sessionEnd": "SessionEnd", "beforeSubmitPrompt": "UserPromptSubmit",
          "preToolUse": "PreToolUse", "postToolUse": "PostToolUse", "stop": "Stop", "subagentStop": "SubagentStop",
          "preCompact": "PreCompact"}
# Cursor tool names in hook matchers -> the Claude Code names canonical hooks use. Cursor has
# one Write tool for edits and new files.
HOOK_TOOLS = {"Shell": "Bash", "Write": "Write", "Read": "Read", "Grep": "Grep", "WebFetch": "WebFetch",
              "WebSearch": "WebSearch"}
CURSOR_ENV = env_syntax(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
# The notes the adapter puts at the top of a command (Cursor substitutes no $ARGUMENTS and
# cannot pick an agent).
NOTE_RE = pattern(r"^> (?:`\$ARGUMENTS` below stands for the text typed after `/[\w-]+`.*|"
                  r"The text typed after `/[\w-]+` is .*|Delegate this task to the `[\w-]+` subagent .*)$")


class CursorImporter:
    name = "cursor"
    family = "cursor"
    own = (".cursor/", ".cursorrules")  # where its own layout starts (what `agentrc init` detects it by)

    def wants(self, rel: str) -> bool:
        return may_run(rel) or rel.startswith(".cursor/") or rel in (".cursorrules", "AGENTS.md") or rel.endswith(".md")

    def read(self, r: Reader) -> None:
        for rel in ("AGENTS.md", ".cursorrules"):
            r.add_context_file(rel)
        for rel in r.under("", "/AGENTS.md"):
            r.lossy(rel, "AGENTS.md of a subdirectory (applies to files there): the canonical document has one "
                         "global context; not imported")
        self.rules(r)
        for rel, name, fm, body in r.entries(skill_files(r, ".cursor/skills"), "skill", by_directory):
            entry = skill(r, rel, fm, body, name)
            if isinstance(fm.get("disable-model-invocation"), bool):
                entry["disableModelInvocation"] = fm["disable-model-invocation"]
            f = Fields(r, rel, f"skill {name}", fm, ("name", "description", "disable-model-invocation"))
            f.skill()
            r.add("skills", name, entry, rel, f.done("cursor"))
        self.agents(r)
        self.commands(r)
        self.hooks(r)
        if r.has(".cursor/mcp.json"):
            data = r.json_object(".cursor/mcp.json")
            servers = (data or {}).get("mcpServers") or {}
            for name, raw in servers.items() if isinstance(servers, dict) else ():
                server(r, ".cursor/mcp.json", name, raw, CURSOR_ENV)

    def rules(self, r: Reader) -> None:
        rels = [rel for rel in r.under(".cursor/rules/") if rel.endswith((".mdc", ".md"))]
        for rel, name, fm, body in r.entries(rels, "rule", by_path(".cursor/rules/"), raw_keys=("globs",)):
            entry: Dict[str, Any] = description(fm)
            globs = glob_list(fm.get("globs"))
            if fm.get("alwaysApply") is True:
                entry["alwaysApply"] = True
                if globs:
                    r.lossy(rel, f"rule {name}: globs {', '.join(globs)} are ignored with alwaysApply: true (as "
                                 "Cursor ignores them); not imported")
            elif globs:
                entry["globs"] = globs
            else:
                # Applied when the model finds the description relevant, or only when @-mentioned.
                entry["alwaysApply"] = False
            entry["content"] = r.body(body, rel, name, kind="rule")
            r.extra_fields(rel, fm, ("description", "globs", "alwaysApply"), f"rule {name}")
            r.add("rules", name, entry, rel)

    def agents(self, r: Reader) -> None:
        for rel, name, fm, body in r.entries(r.under(".cursor/agents/", ".md"), "agent", by_name_field(".md")):
            body, skills = split_skills_section(r.body(body, rel, name, kind="agent"))
            entry: Dict[str, Any] = description(fm)
            entry["content"] = body
            if skills:
                entry["skills"] = skills
            f = Fields(r, rel, f"agent {name}", fm, ["name", "description"])
            f.common()
            f.model()
            if fm.get("readonly") is False:
                f.handled.add("readonly")
            elif fm.get("readonly") is True:
                f.tools(list(READ_ONLY), "readonly")  # what the adapter writes back as readonly: true
            r.add("agents", name, entry, rel, f.done("cursor"))

    def commands(self, r: Reader) -> None:
        for rel, name, fm, body in r.entries(r.under(".cursor/commands/", ".md"), "command", by_stem(".md")):
            body = self.without_notes(r, rel, name, body)
            entry: Dict[str, Any] = description(fm)
            entry["prompt"] = r.body(body, rel, name, arguments=True)
            if not entry["prompt"].strip():
                r.lossy(rel, f"command {name}: empty prompt; not imported")
                continue
            f = Fields(r, rel, f"command {name}", fm, ("name", "description"))
            f.common()
            r.add("commands", name, entry, rel, f.done("cursor"))

    @staticmethod
    def without_notes(r: Reader, rel: str, name: str, body: str) -> str:
        """The body without the blockquote of notes the adapter puts before it."""
        lines = body.lstrip("\n").split("\n")
        if lines and lines[0].startswith(f"# {name}"):
            lines = lines[1:]
            while lines and not lines[0].strip():
                lines = lines[1:]
        quote = []
        for line in lines:
            if not line.startswith(">"):
                break
            quote.append(line)
        notes = [q for q in quote if q.strip() != ">"]
        if notes and all(NOTE_RE.match(q) for q in notes):
            for q in notes:
                m = re.match(r"^> Delegate this task to the `([\w-]+)`", q)
                if m:
                    r.lossy(rel, f"command {name}: runs in the {m.group(1)} subagent; canonical commands name no "
                                 "agent, so the note asking to delegate is not imported")
            return "\n".join(lines[len(quote):])
        return body

    def hooks(self, r: Reader) -> None:
        rel = ".cursor/hooks.json"
        if not r.has(rel):
            return
        data = r.json_object(rel)
        if data is None:
            return
        for key in data:
            if key not in ("version", "hooks"):
                r.lossy(rel, f"key {key!r} has no canonical field; not imported")
        hooks = data.get("hooks") or {}
        for event, entries in hooks.items() if isinstance(hooks, dict) else ():
            canonical = EVENTS.get(event)
            if canonical is None:
                r.lossy(rel, f"hooks.{event}: a Cursor-only event with no portable equivalent; not imported")
                continue
            for raw in entries if isinstance(entries, list) else []:
                entry = hook_entry(r, rel, f"hooks.{event}", raw, ("type", "command", "timeout"))
                if entry is None:
                    continue
                hook_matcher(r, entry, raw.get("matcher"), HOOK_TOOLS, canonical, rel, f"hooks.{event}")
                r.add_hook(canonical, entry, rel)
