"""Claude Code: `.claude/rules`, `.claude/skills` (user-invoked skills are commands),
`.claude/commands`, `.claude/agents`, hooks and settings in `.claude/settings.json`, MCP
servers in `.mcp.json`, and `CLAUDE.md` (its `@path` imports inlined, so `@AGENTS.md` brings
in the shared AGENTS.md)."""

from __future__ import annotations

import posixpath
import re

from agentrc.importers.base import Reader, by_directory, by_name_field, by_path, by_stem, may_run
from agentrc.importers.cleanup import unmanage
from agentrc.importers.shapes import (
    CLAUDE_CAPABILITIES,
    CLAUDE_HOOK_TOOLS,
    CLAUDE_TOOLS,
    Fields,
    allowed_tools,
    argument_hint,
    capabilities,
    description,
    glob_list,
    hooks_claude_shape,
    server,
    sidecars,
    skill,
    skill_files,
    tool_list,
)
from agentrc.model import HOOK_EVENTS
from agentrc.patterns import pattern
from agentrc.vocabulary import TOOLS, claude_tool

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set

SETTINGS = ".claude/settings.json"
# An agent's tools when it names none: what the adapter writes for a canonical agent.
DEFAULT_TOOLS = set(CLAUDE_TOOLS)
IMPORT_RE = pattern(r"(?<![\w@/`.-])@((?:~|\.{1,2})?/?[\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]+)\b")


class ClaudeImporter:
    name = "claude"
    family = "claude"
    own = ("CLAUDE.md", ".claude/")  # where its own layout starts (what `agentrc init` detects it by)

    def wants(self, rel: str) -> bool:
        return (may_run(rel) or rel.startswith(".claude/")
                or rel in (".mcp.json", "CLAUDE.md", "AGENTS.md", "CLAUDE.local.md") or rel.endswith(".md"))

    def read(self, r: Reader) -> None:
        self.context(r)
        self.rules(r)
        self.skills(r)
        self.commands(r)
        self.agents(r)
        self.settings(r)
        mcp = r.json_object(".mcp.json") if r.has(".mcp.json") else None
        if mcp is not None:
            servers = mcp.get("mcpServers") or {}
            for name, raw in servers.items() if isinstance(servers, dict) else ():
                server(r, ".mcp.json", name, raw)
            for key in mcp:
                if key != "mcpServers":
                    r.lossy(".mcp.json", f"key {key!r} is not part of the MCP server list; not imported")
        if r.has("CLAUDE.local.md"):
            r.lossy("CLAUDE.local.md", "personal instructions (not checked in); not imported")
        if r.has(".claude/settings.local.json"):
            r.lossy(".claude/settings.local.json", "personal settings (not checked in); not imported")

    # --- CLAUDE.md -----------------------------------------------------------------
    def context(self, r: Reader) -> None:
        main = next((p for p in ("CLAUDE.md", ".claude/CLAUDE.md") if r.has(p)), None)
        if main is None:
            r.add_context_file("AGENTS.md")
            return
        text = self.expand(r, main, set(), 0)
        if text is not None:
            r.add_context(r.body(text, main, context=True), main)
        for rel in r.under("", "/CLAUDE.md"):
            if rel != ".claude/CLAUDE.md":
                r.lossy(rel, f"CLAUDE.md of the directory {posixpath.dirname(rel)}/ (loaded for files there): the "
                             "canonical document has one global context; not imported")

    def expand(self, r: Reader, rel: str, seen: Set[str], depth: int) -> Optional[str]:
        """The file's text with its `@path` imports replaced by the imported files' text, as
        Claude Code loads it (up to five levels deep, outside code)."""
        text = r.context_file(rel)
        if text is None:
            return None
        seen = seen | {rel}
        out: List[str] = []
        fence = None
        for line in text.split("\n"):
            m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
            if m:
                fence = None if fence and line.strip().startswith(fence) else (fence or m.group(1))
                out.append(line)
                continue
            if fence or "@" not in line:
                out.append(line)
                continue
            parts: List[str] = []
            pos = 0
            for im in IMPORT_RE.finditer(line):
                target = im.group(1)
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target)) \
                    if not target.startswith(("~", "/")) else None
                parts.append(line[pos:im.start()])
                pos = im.end()
                if resolved is None or not r.has(resolved):
                    r.lossy(rel, f"import @{target}: the file is not in the project; the line keeps it as text")
                    parts.append(im.group(0))
                elif resolved in seen or depth >= 5:
                    r.lossy(rel, f"import @{target}: imported again or too deep (Claude Code stops at five levels)")
                else:
                    inner = self.expand(r, resolved, seen, depth + 1)
                    parts.append("\n" + (inner or "").strip("\n") + "\n")
            parts.append(line[pos:])
            out.append("".join(parts))
        return unmanage("\n".join(out))

    # --- rules ---------------------------------------------------------------------
    def rules(self, r: Reader) -> None:
        for rel, name, fm, body in r.entries(r.under(".claude/rules/", ".md"), "rule", by_path(".claude/rules/")):
            entry: Dict[str, Any] = description(fm)
            paths = glob_list(fm.get("paths"))
            if paths:
                entry["globs"] = paths
            entry["content"] = r.body(body, rel, name, kind="rule")
            r.extra_fields(rel, fm, ("description", "paths"), f"rule {name}")
            r.add("rules", name, entry, rel)

    # --- skills and commands -------------------------------------------------------
    def skills(self, r: Reader) -> None:
        for rel, name, fm, body in r.entries(skill_files(r, ".claude/skills"), "skill", by_directory):
            if fm.get("disable-model-invocation") is True and not sidecars(r, rel):
                # Claude Code merged commands into skills: a skill only the user invokes, with
                # no files of its own, is what agentrc writes for a command (spec 000 §5.1).
                self.command(r, rel, name, fm, body, skill=True)
                continue
            entry = skill(r, rel, fm, body, name)
            fields = self.skill_fields(r, rel, name, fm, entry)
            r.add("skills", name, entry, rel, fields)

    @staticmethod
    def skill_fields(r: Reader, rel: str, name: str, fm: Dict[str, Any], entry: Dict[str, Any],
                     block: str = "claude") -> Dict[str, Any]:
        """The skill's canonical fields into `entry`; its portable ones (license, metadata,
        compatibility) and the client's own keys (in `block`) returned for its item."""
        if "allowed-tools" in fm:
            allowed_tools(entry, fm["allowed-tools"])
        for portable, canon in (("disable-model-invocation", "disableModelInvocation"),
                                ("user-invocable", "userInvocable")):
            if isinstance(fm.get(portable), bool):
                entry[canon] = fm[portable]
        if isinstance(fm.get("name"), str) and fm["name"] != name:
            r.lossy(rel, f"skill {name}: name {fm['name']!r} differs from the directory name, which names it")
        f = Fields(r, rel, f"skill {name}", fm, ("name", "description", "allowed-tools", "disable-model-invocation",
                                                 "user-invocable"))
        f.skill()
        return f.done(block)

    def commands(self, r: Reader) -> None:
        for rel, name, fm, body in r.entries(r.under(".claude/commands/", ".md"), "command", by_stem(".md")):
            self.command(r, rel, name, fm, body)

    @staticmethod
    def command(r: Reader, rel: str, name: str, fm: Dict[str, Any], body: str, skill: bool = False) -> None:
        entry: Dict[str, Any] = description(fm)
        entry["prompt"] = r.body(body, rel, name, arguments=True)
        if not entry["prompt"].strip():
            r.lossy(rel, f"command {name}: empty prompt; not imported")
            return
        f = Fields(r, rel, f"command {name}", fm, ["name", "description", "disable-model-invocation"])
        f.common()
        hint = argument_hint(fm.get("argument-hint"))
        if hint:
            f.set("argument-hint", hint)
        f.model(provider="anthropic", prefix="claude-")
        if fm.get("context") == "fork" and isinstance(fm.get("agent"), str) and fm["agent"].strip():
            # Runs in that subagent: the portable agent field, which the adapter writes back so.
            f.set("agent", fm["agent"])
            f.handled.add("context")
        f.tools(capabilities(f, tool_list(fm.get("allowed-tools")), claude_tool, None, "allowed-tools"),
                "allowed-tools")
        r.add("commands", name, entry, rel, f.done("claude"))

    # --- agents --------------------------------------------------------------------
    def agents(self, r: Reader) -> None:
        for rel, name, fm, body in r.entries(r.under(".claude/agents/", ".md"), "agent", by_name_field(".md")):
            entry: Dict[str, Any] = description(fm)
            entry["content"] = r.body(body, rel, name, kind="agent")
            f = Fields(r, rel, f"agent {name}", fm, ["name", "description"])
            if isinstance(fm.get("skills"), list) and fm["skills"]:
                entry["skills"] = [str(s) for s in fm["skills"]]
                f.handled.add("skills")
            f.common()
            f.model(provider="anthropic", prefix="claude-")
            f.tools(self.tools(f, fm), "tools", "disallowedTools")
            r.add("agents", name, entry, rel, f.done("claude"))

    @staticmethod
    def tools(f: Fields, fm: Dict[str, Any]) -> Optional[List[str]]:
        """An agent's capabilities: its `tools:` (every tool when there is none) without its
        `disallowedTools:`. A denial of part of a tool (`Bash(rm:*)`) leaves the whole
        capability out for the other clients; Claude Code keeps both lists as written."""
        caps = capabilities(f, tool_list(fm.get("tools")), claude_tool, DEFAULT_TOOLS)
        denied = tool_list(fm.get("disallowedTools"))
        if not denied:
            return caps
        f.keep("disallowedTools")
        removed: List[str] = []
        for n in denied:
            head = n.split("(", 1)[0].strip()
            removed.extend(CLAUDE_CAPABILITIES.get(head, ()))
            if head != n and head in CLAUDE_CAPABILITIES:
                f.lossy(f"disallowedTools: {n} denies part of {head}; the other clients do not get "
                        f"{', '.join(CLAUDE_CAPABILITIES[head])} at all")
        return [t for t in (caps if caps is not None else TOOLS) if t not in removed]

    # --- .claude/settings.json ---------------------------------------------------------
    def settings(self, r: Reader) -> None:
        if not r.has(SETTINGS):
            return
        data = r.json_object(SETTINGS)
        if data is None:
            return
        if "hooks" in data:
            hooks_claude_shape(r, SETTINGS, data["hooks"], {e: e for e in HOOK_EVENTS}, CLAUDE_HOOK_TOOLS)
        # The rest is Claude Code's own configuration: tools.claude (spec 000 §2.2), which a
        # build merges back into .claude/settings.json.
        r.set_tools("claude", {k: v for k, v in data.items() if k not in ("hooks", "$schema")})
