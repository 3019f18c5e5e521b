"""opencode: `opencode.json` (instructions, mcp, agent, command, the rest as tools.opencode),
`.opencode/skills`, `.opencode/agents`, `.opencode/commands` (and their singular V1 names),
AGENTS.md (CLAUDE.md when there is none, as opencode falls back). Hooks are JavaScript
plugins, which are reported."""

from __future__ import annotations

import posixpath
import re

import pathspec

from agentrc.importers.base import Reader, by_directory, by_stem, stem
from agentrc.importers.cleanup import split_skills_section
from agentrc.importers.shapes import (
    Fields,
    description,
    env_syntax,
    mapping,
    opencode_capabilities,
    skill,
    skill_files,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

CONFIGS = ("opencode.json", "opencode.jsonc")
RULES_DIR = ".agents/rules"
# The permission map the adapter writes for an agent without a tool list.
DEFAULT_PERMISSION = {k: "allow" for k in ("read", "edit", "bash", "grep", "glob", "webfetch", "websearch")}
OPENCODE_ENV = env_syntax(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


class OpencodeImporter:
    name = "opencode"
    family = "opencode"
    own = ("opencode.json", "opencode.jsonc", ".opencode/")  # its own layout (what `agentrc init` detects)

    def wants(self, rel: str) -> bool:
        return (rel.startswith((".opencode/", ".agents/", ".claude/skills/")) or rel in CONFIGS + ("AGENTS.md",)
                or rel.endswith((".md", ".txt")))

    def read(self, r: Reader) -> None:
        context = next((p for p in ("AGENTS.md", "CLAUDE.md") if r.has(p)), None)
        if context is not None:
            r.add_context_file(context)
        config_rel = next((p for p in CONFIGS if r.has(p)), None)
        if config_rel is not None:
            config = r.json_object(config_rel)
            if config is not None:
                self.config(r, config_rel, config, context)
        for d in (".opencode/skills", ".opencode/skill", ".claude/skills"):
            for rel, name, fm, body in r.entries(skill_files(r, d), "skill", by_directory):
                if name in r.doc.get("skills", {}):
                    continue
                entry = skill(r, rel, fm, body, name)
                f = Fields(r, rel, f"skill {name}", fm, ("name", "description"))
                f.skill()
                r.add("skills", name, entry, rel, f.done("opencode"))
        for d in (".opencode/agents/", ".opencode/agent/"):
            for rel, name, fm, body in r.entries(r.under(d, ".md"), "agent", by_stem(".md")):
                self.agent(r, rel, name, fm, body)
        for d in (".opencode/commands/", ".opencode/command/"):
            for rel, name, fm, body in r.entries(r.under(d, ".md"), "command", by_stem(".md")):
                self.command(r, rel, name, fm, r.body(body, rel, name, arguments=True))
        for d in (".opencode/plugins/", ".opencode/plugin/"):
            for rel in r.under(d):
                if rel.endswith((".js", ".ts", ".mjs")):
                    r.lossy(rel, "an opencode plugin (JavaScript hooks): canonical hooks run commands; not imported")

    # --- opencode.json ---------------------------------------------------------------
    def config(self, r: Reader, rel: str, config: Dict[str, Any], context: Optional[str] = None) -> None:
        instructions = config.get("instructions")
        for entry in instructions if isinstance(instructions, list) else []:
            self.instruction(r, rel, str(entry), context)
        mcp = config.get("mcp") or {}
        for name, raw in mcp.items() if isinstance(mcp, dict) else ():
            self.server(r, rel, name, raw)
        for name, raw in mapping(config.get("agent")).items():
            agent_name = r.name(name, rel, "agent")
            if agent_name is None or not isinstance(raw, dict):
                continue
            raw = dict(raw)
            prompt = self.file_ref(r, rel, raw.pop("prompt", ""))
            self.agent(r, rel, agent_name, raw, prompt, where=f"agent.{name}")
        for name, raw in mapping(config.get("command")).items():
            command_name = r.name(name, rel, "command")
            if command_name is None or not isinstance(raw, dict):
                continue
            raw = dict(raw)
            template = self.file_ref(r, rel, raw.pop("template", ""))
            self.command(r, rel, command_name, raw, r.body(template, rel, command_name, arguments=True),
                         where=f"command.{name}")
        # Everything else is opencode's own configuration: tools.opencode (spec 000 §2.2),
        # which a build merges back into opencode.json.
        r.set_tools("opencode", {k: v for k, v in config.items()
                                 if k not in ("instructions", "mcp", "agent", "command", "$schema")})

    def file_ref(self, r: Reader, rel: str, value: Any) -> str:
        """opencode's `{file:./path}` (relative to the config) read from the project."""
        value = str(value or "")
        m = re.fullmatch(r"\s*\{file:([^}]+)\}\s*", value)
        if not m:
            return value
        target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), m.group(1)))
        text = r.text(target) if r.has(target) else None
        if text is None:
            r.lossy(rel, f"{{file:{m.group(1)}}}: the file is not in the project; not imported")
            return ""
        return text

    def instruction(self, r: Reader, rel: str, entry: str, context: Optional[str] = None) -> None:
        """One `instructions` entry: a file or glob of always-on instructions. The file read
        as the global context (`context`: AGENTS.md, which opencode reads anyway) is that
        only, never a rule too."""
        if re.match(r"^https?://", entry):
            r.lossy(rel, f"instructions: {entry} is fetched from the web; not imported")
            return
        if entry.startswith(("~", "/")):
            r.lossy(rel, f"instructions: {entry} is outside the project; not imported")
            return
        pattern = entry[2:] if entry.startswith("./") else entry
        spec = pathspec.GitIgnoreSpec.from_lines(["/" + pattern])
        matched = [p for p in sorted(r.files) if spec.match_file(p)]
        if not matched:
            r.lossy(rel, f"instructions: {entry} matches no file in the project; not imported")
        matched = [p for p in matched if p != context]
        for path, name, fm, body in r.entries(matched, "rule", rule_name):
            item: Dict[str, Any] = description(fm)
            item["content"] = r.body(body, path, name, kind="rule")
            r.extra_fields(path, fm, ("name", "description"), f"rule {name}")
            r.add("rules", name, item, path)

    def server(self, r: Reader, rel: str, name: str, raw: Any) -> None:
        if not isinstance(raw, dict):
            r.unreadable(rel, f"mcp.{name}: expected an object")
            return
        out: Dict[str, Any] = {}
        kind = raw.get("type")
        if kind == "local" or (kind is None and "command" in raw):
            command = raw.get("command")
            command = command if isinstance(command, list) else [command] if isinstance(command, str) else []
            if not command:
                r.unreadable(rel, f"mcp.{name}: a local server needs a command")
                return
            out["command"] = OPENCODE_ENV(str(command[0]))
            if len(command) > 1:
                out["args"] = [OPENCODE_ENV(str(a)) for a in command[1:]]
            if raw.get("environment"):
                out["env"] = {k: OPENCODE_ENV(str(v)) for k, v in mapping(raw["environment"]).items()}
            known = ("type", "command", "environment", "enabled")
        else:
            if not isinstance(raw.get("url"), str):
                r.unreadable(rel, f"mcp.{name}: a remote server needs a url")
                return
            out["url"] = OPENCODE_ENV(raw["url"])
            if raw.get("headers"):
                out["headers"] = {k: OPENCODE_ENV(str(v)) for k, v in mapping(raw["headers"]).items()}
            known = ("type", "url", "headers", "enabled")
        if raw.get("enabled") is False:
            out["disabled"] = True
        for key, value in raw.items():
            if key not in known:
                r.lossy(rel, f"mcp.{name}: {key} has no canonical field; not imported")
        server_name = r.name(name, rel, "mcp server")
        if server_name is not None:
            r.add_server(server_name, out, rel)

    # --- agents and commands ---------------------------------------------------------
    def agent(self, r: Reader, rel: str, name: str, fm: Dict[str, Any], body: str, where: str = "") -> None:
        body, skills = split_skills_section(r.body(body, rel, name, kind="agent"))
        entry: Dict[str, Any] = description(fm)
        entry["content"] = body
        if skills:
            entry["skills"] = skills
        f = Fields(r, rel, where or f"agent {name}", fm, ["description", "name"])
        f.common()
        mode = fm.get("mode", "subagent")
        if mode == "subagent":
            f.handled.add("mode")
        elif mode in ("primary", "all"):
            f.set("mode", mode)
        f.model()
        if "disable" in fm and fm["disable"] is False:
            f.handled.add("disable")
        allowed = opencode_capabilities(f, fm.get("permission"), fm.get("tools"))
        f.tools(allowed, "permission", "tools")
        for key in ("permission", "tools"):
            # opencode keeps its own map unless the adapter writes the same one back.
            if key in fm and not (key == "permission" and fm[key] == permission_for(allowed)):
                f.keep(key)
        r.add("agents", name, entry, rel, f.done("opencode"))

    def command(self, r: Reader, rel: str, name: str, fm: Dict[str, Any], prompt: str, where: str = "") -> None:
        entry: Dict[str, Any] = description(fm)
        entry["prompt"] = prompt
        if not prompt.strip():
            r.lossy(rel, f"{where or 'command ' + name}: empty prompt; not imported")
            return
        f = Fields(r, rel, where or f"command {name}", fm, ["description"])
        f.common()
        if isinstance(fm.get("agent"), str) and fm["agent"].strip():
            f.set("agent", fm["agent"])
        f.model()
        r.add("commands", name, entry, rel, f.done("opencode"))


def permission_for(allowed: Any) -> Dict[str, str]:
    """The permission map the adapter writes for an agent's capabilities (None: all)."""
    if allowed is None:
        return dict(DEFAULT_PERMISSION)
    out: Dict[str, str] = {}
    for cap, key in (("read", "read"), ("write", "edit"), ("edit", "edit"), ("bash", "bash"), ("grep", "grep"),
                     ("glob", "glob"), ("web-fetch", "webfetch"), ("web-search", "websearch")):
        if cap in allowed:
            out[key] = "allow"
        else:
            out.setdefault(key, "deny")
    return out


def rule_name(path: str, fm: Dict[str, Any]) -> str:
    """An instruction file's raw rule name: its directory for the RULE.md the adapter writes,
    else its file name."""
    if path.startswith(RULES_DIR + "/") and path.endswith("/RULE.md"):
        return by_directory(path, fm)
    return stem(path, posixpath.splitext(path)[1])
