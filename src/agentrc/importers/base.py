"""What every client importer shares: the Protocol, and a Reader that collects one client's
files into a canonical document (spec 000 §3) with diagnostics.

An importer reads exactly the files the client adapter of the same name writes, plus the
forms people write by hand, and reports with AR130 whatever the canonical shapes cannot
hold (AR131 when a file cannot be read at all). Bodies are cleaned so the document builds
and the portable items lint clean: agentrc's own `# <name>` title is dropped, other H1s
demoted, skipped heading levels closed, bare fences given a language, and client-specific
constructs fenced off for their client. Pure: the files come in as a SourceTree.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from agentrc.portable.body import CONSTRUCTS, CONSTRUCT_HINT_RE, LINK_RE, SCHEME_RE
from agentrc.diagnostics import Diagnostics
from agentrc.portable.directives import END_RE, OPEN_RE
from agentrc.text.frontmatter import split
from agentrc.output.merge import BEGIN, CONTEXT_TITLE, END
from agentrc.text.markdown import ATX_RE, FENCE_RE, format_body, heading_level, scan, strip_inline_code
from agentrc.model import HOOK_EVENTS, SourceFile, SourceTree
from agentrc.text.yamlpos import YamlError, load as load_yaml

try:
    from typing import Protocol
except ImportError:  # pragma: no cover - Python < 3.8
    Protocol = object  # type: ignore[assignment,misc]

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SIDECAR_GROUPS = ("references", "scripts", "assets")
# The eight Claude Code tool names canonical hooks use (agentrc.canonical.document.HOOK_TOOLS).
CLAUDE_TOOLS = ("Read", "Write", "Edit", "Bash", "Grep", "Glob", "WebFetch", "WebSearch")
# The sentence agentrc.clients.base.with_skills_section writes for preload-skills.
# Environment variables one client sets for its hooks and MCP servers.
CLIENT_VARS = {"CLAUDE_PROJECT_DIR": "Claude Code", "CLAUDE_PLUGIN_ROOT": "Claude Code",
               "CURSOR_PROJECT_DIR": "Cursor", "CURSOR_PLUGIN_ROOT": "Cursor"}
DEFAULT_RE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:-")
SKILLS_INTRO = ("This agent relies on the following skills, installed alongside it. "
                "Use them when relevant:")


class Importer(Protocol):
    """One client's import: which files it needs, and how it reads them."""

    name: str
    family: str  # the directive family of the client's own body constructs

    def wants(self, rel: str) -> bool:
        """Whether the file at `rel` (relative to the project root) is one this import reads."""
        ...

    def read(self, r: "Reader") -> None:
        """Read the client's files from `r` into `r.doc` (through r.add*)."""
        ...


class Reader:
    """A project's files for one import, the document being built, and its diagnostics."""

    def __init__(self, client: str, family: str, tree: SourceTree, root: str, diags: Diagnostics):
        self.client = client
        self.family = family
        self.root = root.rstrip("/")
        self.diags = diags
        self.files: Dict[str, SourceFile] = {}
        for f in tree.files:
            rel = f.path[len(self.root) + 1:] if self.root and f.path.startswith(self.root + "/") else f.path
            self.files[rel] = f
        self.doc: Dict[str, Any] = {}
        self.context: List[str] = []
        self.origin: Dict[str, str] = {}  # "rules.x" -> the file it came from

    # --- files -----------------------------------------------------------------------
    def path(self, rel: str) -> str:
        f = self.files.get(rel)
        return f.path if f is not None else (posixpath.join(self.root, rel) if self.root else rel)

    def has(self, rel: str) -> bool:
        return rel in self.files

    def under(self, prefix: str, suffix: str = "", depth: Optional[int] = None) -> List[str]:
        """Files below `prefix` whose names end in `suffix` (at most `depth` levels down)."""
        out = []
        for rel in sorted(self.files):
            if rel.startswith(prefix) and rel.endswith(suffix):
                if depth is None or rel[len(prefix):].count("/") < depth:
                    out.append(rel)
        return out

    def lossy(self, rel: str, message: str, line: int = 0) -> None:
        self.diags.warning(self.path(rel), (line, 1 if line else 0), "AR130", message)

    def unreadable(self, rel: str, message: str, pos: Tuple[int, int] = (0, 0)) -> None:
        self.diags.error(self.path(rel), pos, "AR131", message)

    def text(self, rel: str) -> Optional[str]:
        f = self.files.get(rel)
        if f is None:
            return None
        try:
            return f.content.decode("utf-8").replace("\r\n", "\n").lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            self.unreadable(rel, f"not UTF-8 (byte {exc.start})")
            return None

    def json(self, rel: str) -> Optional[Any]:
        """JSON, with the comments and trailing commas JSONC files (VS Code, opencode) allow."""
        text = self.text(rel)
        if text is None:
            return None
        if not text.strip():
            return {}
        try:
            return json.loads(strip_jsonc(text))
        except ValueError as exc:
            pos = (getattr(exc, "lineno", 0), getattr(exc, "colno", 0))
            self.unreadable(rel, f"invalid JSON: {getattr(exc, 'msg', exc)}", pos)
            return None

    def json_object(self, rel: str) -> Optional[Dict[str, Any]]:
        data = self.json(rel)
        if data is not None and not isinstance(data, dict):
            self.unreadable(rel, "expected a JSON object at the top level")
            return None
        return data

    def toml(self, rel: str) -> Optional[Dict[str, Any]]:
        text = self.text(rel)
        if text is None:
            return None
        try:
            try:
                import tomllib  # type: ignore[import-not-found]  # Python >= 3.11
            except ImportError:
                import tomli as tomllib  # type: ignore[import-not-found,no-redef]
        except ImportError:
            self.unreadable(rel, "reading TOML needs Python 3.11 or the tomli package")
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            self.unreadable(rel, f"invalid TOML: {exc}")
            return None

    def markdown(self, rel: str, raw_keys: Sequence[str] = ()) -> Optional[Tuple[Dict[str, Any], str]]:
        """Frontmatter (empty when the file has none) and body. `raw_keys` are read as the raw
        text after `key:` when written unquoted on one line (Cursor's `globs: **/*.ts`, which
        is not YAML but what Cursor parses)."""
        text = self.text(rel)
        if text is None:
            return None
        parts = split(text)
        if parts.yaml_text is None:
            return {}, text
        if not parts.closed:
            self.unreadable(rel, "the frontmatter block opened with '---' is never closed", (1, 1))
            return None
        yaml_text = parts.yaml_text
        for key in raw_keys:
            yaml_text = re.sub(r"^(%s):[ \t]+([^\s\"'\[{|>].*?)[ \t]*$" % re.escape(key),
                               lambda m: f"{m.group(1)}: {json.dumps(m.group(2))}", yaml_text, flags=re.M)
        try:
            data = load_yaml(yaml_text, parts.yaml_line - 1).data if yaml_text.strip() else {}
        except YamlError as exc:
            self.unreadable(rel, f"invalid YAML frontmatter: {exc.message}", exc.pos)
            return None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self.unreadable(rel, "the frontmatter is not a mapping of keys to values", (2, 1))
            return None
        return data, parts.body

    # --- the document ----------------------------------------------------------------
    def name(self, raw: str, rel: str, what: str) -> Optional[str]:
        """A valid item name for `raw` (a file or directory name, or a name: field)."""
        if NAME_RE.match(raw) and len(raw) <= 64:
            return raw
        slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", raw).lower()).strip("-")[:64]
        slug = slug.rstrip("-")
        if not slug:
            self.lossy(rel, f"{what} {raw!r}: no usable name (lowercase letters, digits and hyphens); not imported")
            return None
        self.lossy(rel, f"{what} {raw!r} is imported as {slug!r}: names are lowercase letters, digits and "
                        "single hyphens, at most 64 characters")
        return slug

    def add(self, section: str, name: str, entry: Dict[str, Any], rel: str) -> bool:
        items = self.doc.setdefault(section, {})
        key = f"{section}.{name}"
        if name in items:
            self.lossy(rel, f"{section[:-1]} {name!r} is also defined by {self.path(self.origin[key])}; "
                            "the first one is imported")
            return False
        items[name] = entry
        self.origin[key] = rel
        return True

    def add_hook(self, event: str, entry: Dict[str, Any], rel: str) -> None:
        self.doc.setdefault("hooks", {}).setdefault(event, []).append(entry)
        self.origin.setdefault(f"hooks.{event}", rel)

    def add_server(self, name: str, entry: Dict[str, Any], rel: str) -> bool:
        servers = self.doc.setdefault("mcp", {}).setdefault("servers", {})
        if name in servers:
            if servers[name] != entry:
                self.lossy(rel, f"mcp server {name!r} is also defined by {self.path(self.origin['mcp.servers.' + name])}; "
                                "the first one is imported")
            return False
        servers[name] = entry
        self.origin[f"mcp.servers.{name}"] = rel
        return True

    def add_context(self, text: str, rel: str) -> None:
        text = text.strip("\n")
        if text.strip():
            self.context.append(text)
            self.origin.setdefault("context.global", rel)

    def set_tools(self, target: str, settings: Dict[str, Any]) -> None:
        if settings:
            self.doc.setdefault("tools", {})[target] = settings

    def agent_tools(self, rel: str, fm: Dict[str, Any], name: str, defaults: Set[str], handled: List[str]) -> None:
        """An agent's `tools:` (marked handled): AR130 unless it is the client's default set,
        since canonical agents have no tool list."""
        tools = tool_list(fm.get("tools"))
        if tools is None:
            return
        handled.append("tools")
        if set(tools) != defaults:
            self.lossy(rel, f"agent {name}: tools: {', '.join(tools)}: canonical agents have no tool list; "
                            "the agent gets every tool")

    def extra_fields(self, rel: str, fm: Dict[str, Any], handled: Sequence[str], what: str,
                     why: str = "") -> None:
        """AR130 for each frontmatter key the import does not map."""
        for key in fm:
            if key not in handled:
                value = json.dumps(fm[key], ensure_ascii=False, default=str)
                if len(value) > 60:
                    value = value[:57] + "..."
                self.lossy(rel, f"{what}: {key}: {value} has no canonical field; not imported"
                                + (f" ({why})" if why else ""))

    def finish(self) -> Dict[str, Any]:
        for name in sorted(set(self.doc.get("commands") or {}) & set(self.doc.get("skills") or {})):
            self.lossy(self.origin[f"commands.{name}"], f"command {name} has the name of a skill: clients that write "
                       "commands as skills (Claude Code, Codex) cannot build both (AR090); rename one")
        out: Dict[str, Any] = {}
        if self.context:
            out["context"] = {"global": "\n\n".join(self.context) + "\n"}
        for section in ("rules", "commands", "skills", "agents"):
            if self.doc.get(section):
                out[section] = {k: self.doc[section][k] for k in sorted(self.doc[section])}
        if self.doc.get("hooks"):
            out["hooks"] = {event: (entries[0] if len(entries) == 1 else entries)
                            for event, entries in self.doc["hooks"].items()}
            for event, value in out["hooks"].items():
                if isinstance(value, dict) and list(value) == ["script"]:
                    out["hooks"][event] = value["script"]
        if self.doc.get("mcp", {}).get("servers"):
            servers = self.doc["mcp"]["servers"]
            out["mcp"] = {"servers": {k: servers[k] for k in sorted(servers)}}
        if self.doc.get("tools"):
            out["tools"] = self.doc["tools"]
        return out

    # --- bodies ----------------------------------------------------------------------
    def body(self, text: str, rel: str, title: str = "", arguments: bool = False, context: bool = False) -> str:
        """A body as the canonical document holds it (see the module docstring)."""
        text, found = clean_body(text, title, arguments, context)
        for family, what in found:
            if context:
                self.lossy(rel, f"{what} ({family} syntax) in the global context is kept as inline code: every "
                                "client reads the same AGENTS.md")
            else:
                self.lossy(rel, f"{what} ({family} syntax) is kept inside a <!-- @client:{family} --> block: the "
                                "other clients do not get those lines")
        text, escaping = unlink_escaping(text)
        for target in escaping:
            self.lossy(rel, f"link {target!r} points outside the item; canonical items carry no files of their "
                            "own besides a skill's, so it is kept as plain text")
        return text

    def skill(self, directory: str, entry_rel: str, fm: Dict[str, Any], body: str, name: str,
              skip: Callable[[str], bool] = lambda rel: False) -> Dict[str, Any]:
        """A skill entry: description, body and the sidecar maps of the files beside SKILL.md."""
        entry: Dict[str, Any] = {}
        if isinstance(fm.get("description"), str):
            entry["description"] = fm["description"]
        entry["content"] = self.body(body, entry_rel, name)
        entry.update(self.sidecars(directory, entry_rel, skip))
        return entry

    def sidecars(self, directory: str, entry_rel: str, skip: Callable[[str], bool] = lambda rel: False
                 ) -> Dict[str, Dict[str, Any]]:
        out: Dict[str, Dict[str, Any]] = {}
        for rel in self.under(directory + "/"):
            if rel == entry_rel or skip(rel):
                continue
            rest = rel[len(directory) + 1:]
            head, _, tail = rest.partition("/")
            group = head if head in SIDECAR_GROUPS and tail else "files"
            content = self.files[rel].content
            try:
                value: Any = content.decode("utf-8")
            except UnicodeDecodeError:
                value = {"content": base64.b64encode(content).decode("ascii"), "encoding": "base64"}
            out.setdefault(group, {})[tail if group != "files" else rest] = value
        return out

    def skill_files(self, skills_dir: str) -> List[Tuple[str, str, str]]:
        """(directory name, skill directory, SKILL.md) of each skill below `skills_dir`."""
        out = []
        for rel in self.under(skills_dir + "/", "/SKILL.md", depth=2):
            d = posixpath.dirname(rel)
            out.append((posixpath.basename(d), d, rel))
        return out

    def context_file(self, rel: str) -> Optional[str]:
        """AGENTS.md-style text: agentrc's block markers and its `# Project instructions` title
        dropped, the text between them kept."""
        text = self.text(rel)
        if text is None:
            return None
        return unmanage(text)

    def hooks_claude_shape(self, rel: str, hooks: Any, events: Dict[str, str], tools: Dict[str, str],
                           handler_keys: Sequence[str] = ("type", "command", "timeout", "async"),
                           label: str = "hooks") -> None:
        """`{Event: [{matcher, hooks: [{type, command, timeout}]}]}` (Claude Code, Codex)."""
        if not isinstance(hooks, dict):
            self.unreadable(rel, f"{label}: expected an object of events")
            return
        for event, groups in hooks.items():
            canonical = events.get(event)
            if canonical is None:
                self.lossy(rel, f"{label}.{event}: not one of the portable hook events "
                                f"({', '.join(HOOK_EVENTS)}); not imported")
                continue
            if not isinstance(groups, list):
                self.unreadable(rel, f"{label}.{event}: expected a list of matcher groups")
                continue
            for group in groups:
                if not isinstance(group, dict):
                    self.unreadable(rel, f"{label}.{event}: expected matcher groups (objects)")
                    continue
                for key in group:
                    if key not in ("matcher", "hooks"):
                        self.lossy(rel, f"{label}.{event}: matcher group key {key!r} has no canonical field; "
                                        "not imported")
                for handler in group.get("hooks") if isinstance(group.get("hooks"), list) else []:
                    entry = self.hook_entry(rel, f"{label}.{event}", handler, handler_keys)
                    if entry is None:
                        continue
                    self.hook_matcher(entry, group.get("matcher"), tools, canonical, rel, f"{label}.{event}")
                    self.add_hook(canonical, entry, rel)

    def hook_entry(self, rel: str, where: str, handler: Any, keys: Sequence[str],
                   command_keys: Sequence[str] = ("command",), timeout_keys: Sequence[str] = ("timeout",)
                   ) -> Optional[Dict[str, Any]]:
        if not isinstance(handler, dict):
            self.unreadable(rel, f"{where}: expected hook objects")
            return None
        kind = handler.get("type", "command")
        if kind != "command":
            self.lossy(rel, f"{where}: a {kind!r} hook has no canonical form (hooks run commands); not imported")
            return None
        command = next((handler[k] for k in command_keys if isinstance(handler.get(k), str) and handler[k].strip()),
                       None)
        if command is None:
            self.unreadable(rel, f"{where}: a hook without a command")
            return None
        entry: Dict[str, Any] = {"script": project_command(command)}
        for k in timeout_keys:
            if isinstance(handler.get(k), (int, float)) and not isinstance(handler.get(k), bool) and handler[k] > 0:
                entry["timeout"] = handler[k]
                break
        if isinstance(handler.get("async"), bool) and "async" in keys:
            if handler["async"]:
                entry["async"] = True
        for key, value in handler.items():
            if key not in keys and key not in command_keys and key not in timeout_keys and key != "matcher":
                self.lossy(rel, f"{where}: hook key {key}: {json.dumps(value, default=str)[:60]} has no canonical "
                                "field; not imported")
        if "/agentrc/hooks/" in command:
            self.lossy(rel, f"{where}: the command runs a script an earlier agentrc build copied into the "
                            "client's directory; canonical hooks hold only the command line, so copy the script "
                            "to a path of your own and change the command")
        else:
            for var in CLIENT_VARS:
                if var in command:
                    self.lossy(rel, f"{where}: the command uses ${var}, which only {CLIENT_VARS[var]} sets; kept "
                                    "as written (other clients run hooks from the project root: a path relative to "
                                    "it works everywhere)")
                    break
        return entry

    def hook_matcher(self, entry: Dict[str, Any], matcher: Any, tools: Dict[str, str], event: str,
                     rel: str, where: str) -> None:
        """A matcher of tool names the canonical vocabulary has becomes `tools`; another
        matcher is kept as written."""
        if not isinstance(matcher, str) or matcher.strip() in ("", "*", ".*"):
            return
        if event not in ("PreToolUse", "PostToolUse"):
            self.lossy(rel, f"{where}: matcher {matcher!r} on an event that is not about tools; not imported")
            return
        tokens = [t.strip() for t in matcher.split("|")]
        mapped = [tools.get(t) for t in tokens]
        if all(mapped):
            entry["tools"] = list(dict.fromkeys(mapped))  # type: ignore[arg-type]
        else:
            entry["matcher"] = matcher

    def server(self, rel: str, name: str, raw: Any, env: Callable[[Any], Any] = lambda v: v,
               known: Sequence[str] = ("type", "command", "args", "env", "url", "headers"),
               where: str = "mcpServers") -> None:
        """A `mcpServers`-style entry (Claude Code, Cursor, VS Code): stdio or remote."""
        if not isinstance(raw, dict):
            self.unreadable(rel, f"{where}.{name}: expected an object")
            return
        server_name = self.name(name, rel, "mcp server")
        if server_name is None:
            return
        entry: Dict[str, Any] = {}
        kind = raw.get("type")
        if isinstance(raw.get("command"), str) and raw["command"]:
            entry["command"] = env(raw["command"])
            if isinstance(raw.get("args"), list) and raw["args"]:
                entry["args"] = [env(str(a)) for a in raw["args"]]
            if raw.get("env"):
                entry["env"] = {k: env(str(v)) for k, v in mapping(raw["env"]).items()}
        elif isinstance(raw.get("url"), str) and raw["url"]:
            if kind in ("sse", "http"):
                entry["type"] = kind
            elif kind == "streamable-http":
                entry["type"] = "http"
            elif kind is not None:
                self.lossy(rel, f"{where}.{name}: transport type {kind!r} is not http or sse; imported as http")
            entry["url"] = env(raw["url"])
            if raw.get("headers"):
                entry["headers"] = {k: env(str(v)) for k, v in mapping(raw["headers"]).items()}
        else:
            self.unreadable(rel, f"{where}.{name}: a server needs a command or a url")
            return
        if DEFAULT_RE.search(json.dumps(entry)):
            self.lossy(rel, f"{where}.{name}: ${{VAR:-default}} is Claude Code's syntax; other clients expand only "
                            "${VAR} (or their own form of it), so they get the text as written")
        if raw.get("disabled") is True:
            entry["disabled"] = True
        if isinstance(raw.get("autoApprove"), list):
            entry["autoApprove"] = [str(t) for t in raw["autoApprove"]]
        for key, value in raw.items():
            if key not in known and key not in ("disabled", "autoApprove"):
                self.lossy(rel, f"{where}.{name}: {key}: {json.dumps(value, default=str)[:60]} has no canonical "
                                "field; not imported")
        self.add_server(server_name, entry, rel)

    def preload_skills(self, body: str) -> Tuple[str, List[str]]:
        return split_skills_section(body)


# --- text helpers -------------------------------------------------------------------

def strip_jsonc(text: str) -> str:
    """JSON with // and /* */ comments and trailing commas -> strict JSON (strings untouched)."""
    out: List[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))  # keep line numbers for error positions
            i = j
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def project_command(command: str) -> str:
    """A hook command with a leading `./path` written so that agentrc does not take it for a
    file of the hook item (HOOK.md's `./FILE`): `scripts/x.sh` (a path with a slash runs
    from the current directory as `./scripts/x.sh` does), or `"./x.sh"` for a file at the
    root. The shell runs either the same way."""
    command = command.strip()
    first, sep, rest = command.partition(" ")
    if not first.startswith("./"):
        return command
    path = first[2:]
    return (path if "/" in path else f'"{first}"') + sep + rest


def unmanage(text: str) -> str:
    """A file agentrc shares with its user (AGENTS.md, CLAUDE.md): the user's text with
    agentrc's block inlined, without the markers and without the title agentrc adds."""
    start = text.find(BEGIN)
    if start < 0:
        return text
    end = text.find(END, start)
    end = len(text) if end < 0 else end
    inner = text[start + len(BEGIN):end].strip("\n")
    lines = inner.split("\n")
    if lines and lines[0].strip() == f"# {CONTEXT_TITLE}":
        inner = "\n".join(lines[1:]).strip("\n")
    after = text[end + len(END):] if end < len(text) else ""
    parts = [p.strip("\n") for p in (text[:start], inner, after) if p.strip()]
    return "\n\n".join(parts) + "\n" if parts else ""


def clean_body(text: str, title: str = "", arguments: bool = False, context: bool = False
               ) -> Tuple[str, List[Tuple[str, str]]]:
    """(body, (family, construct) of each kind of client-specific syntax fenced off or quoted).
    See the module docstring. Idempotent."""
    lines = text.replace("\r\n", "\n").lstrip("\ufeff").strip("\n").split("\n")
    # agentrc's generated title: `# <name>` as the first line.
    if title and lines and re.match(r"^#\s+%s\s*$" % re.escape(title), lines[0]):
        lines = lines[1:]
    text = "\n".join(lines).strip("\n")
    text = _fix_headings(text)
    text = _fence_languages(text)
    text, families = _constructs(text, arguments, context)
    return (format_body(text) if text.strip() else ""), families


def _fix_headings(text: str) -> str:
    """No H1 (all headings move down a level when there is one) and no skipped levels."""
    lines = text.split("\n")
    scanned = scan(text)
    levels = [heading_level(scanned, i) for i in range(len(lines))]
    setext = {i for i, lv in enumerate(levels) if lv == 1 and not ATX_RE.match(lines[i])}
    shift = 1 if 1 in levels else 0
    out: List[str] = []
    previous = 1
    skip_next = False
    for i, line in enumerate(lines):
        if skip_next:
            skip_next = False
            continue
        level = levels[i]
        if not level:
            out.append(line)
            continue
        new = min(level + shift, previous + 1, 6)
        previous = new
        if i in setext:
            out.append("#" * new + " " + line.strip())
            skip_next = True
            continue
        m = ATX_RE.match(line)
        out.append("#" * new + (" " + m.group(2) if m and m.group(2) else ""))
    return "\n".join(out)


def _fence_languages(text: str) -> str:
    lines = text.split("\n")
    for ln in scan(text):
        if ln.fence_open and not ln.fence_info:
            m = FENCE_RE.match(ln.text)
            if m:
                lines[ln.index] = m.group(1) + m.group(2) + "text"
    return "\n".join(lines)


def _constructs(text: str, arguments: bool, context: bool) -> Tuple[str, List[Tuple[str, str]]]:
    lines = text.split("\n")
    marked: Dict[int, str] = {}
    found: List[Tuple[str, str]] = []
    in_block = False
    for ln in scan(text):
        if ln.in_fence or ln.fence_open or ln.fence_close:
            continue
        if OPEN_RE.match(ln.text) or END_RE.match(ln.text):
            in_block = bool(OPEN_RE.match(ln.text))
            continue
        if in_block or not CONSTRUCT_HINT_RE.search(ln.text):
            continue  # a directive block already says who reads these lines
        plain = strip_inline_code(ln.text)
        hits = []
        for family, what, rx in CONSTRUCTS:
            for m in rx.finditer(plain):
                if arguments and m.group(0) == "$ARGUMENTS":
                    continue
                hits.append((m.start(), m.end(), family, what))
        if not hits:
            continue
        if context:
            line = ln.text
            for start, end, family, what in sorted(hits, reverse=True):
                token = line[start:end]
                quoted = f"``{token}``" if "`" in token else f"`{token}`"
                line = line[:start] + quoted + line[end:]
                found.append((family, what))
            lines[ln.index] = line
        else:
            marked[ln.index] = hits[0][2]
            found.extend((family, what) for _, _, family, what in hits)
    if marked:
        out: List[str] = []
        open_family = None
        for i, line in enumerate(lines):
            family = marked.get(i)
            if open_family is not None and family != open_family:
                out.append("<!-- @endclient -->")
                open_family = None
            if family is not None and open_family is None:
                out.append(f"<!-- @client:{family} -->")
                open_family = family
            out.append(line)
        if open_family is not None:
            out.append("<!-- @endclient -->")
        lines = out
    return "\n".join(lines), list(dict.fromkeys(found))


def unlink_escaping(text: str) -> Tuple[str, List[str]]:
    """Links leaving the item directory (`../x`, `/x`) as plain text `label (target)`."""
    lines = text.split("\n")
    found: List[str] = []
    for ln in scan(text):
        if ln.in_fence or ln.fence_open or ln.fence_close or "](" not in ln.text:
            continue
        def repl(m: "re.Match[str]") -> str:
            target = m.group(1)
            if SCHEME_RE.match(target) or target.startswith(("#", "//")):
                return m.group(0)
            norm = posixpath.normpath(target.split("#", 1)[0])
            if not (target.startswith("/") or norm == ".." or norm.startswith("../")):
                return m.group(0)
            found.append(target)
            label = re.match(r"!?\[((?:[^\]\\]|\\.)*)\]", m.group(0))
            return f"{label.group(1) if label else ''} ({target})"
        lines[ln.index] = LINK_RE.sub(repl, ln.text)
    return "\n".join(lines), found


def split_skills_section(body: str) -> Tuple[str, List[str]]:
    """The `## Skills` section agentrc appends for preload-skills (clients without a skills
    field), taken off the body's end and read back as the list of skill names."""
    m = re.search(r"(?:^|\n)## Skills\n\n" + re.escape(SKILLS_INTRO) + r"\n\n((?:- [^\n]+\n?)+)$", body)
    if not m:
        return body, []
    names = [ln[2:].strip() for ln in m.group(1).strip("\n").split("\n")]
    rest = body[:m.start()].rstrip("\n")
    return (rest + "\n" if rest.strip() else ""), names


def tool_list(value: Any) -> Optional[List[str]]:
    """A tools field as a list: YAML list, or a comma- or space-separated string."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    if isinstance(value, str):
        sep = "," if "," in value else None
        return [t.strip() for t in value.split(sep) if t.strip()]
    return None


def allowed_tools(entry: Dict[str, Any], value: Any) -> None:
    """A skill's allowed-tools: a list when it splits cleanly, else the string as written."""
    if isinstance(value, str) and "(" not in value:
        entry["allowedTools"] = tool_list(value)
    elif isinstance(value, list):
        entry["allowedTools"] = [str(v) for v in value]
    elif isinstance(value, str):
        entry["allowed-tools"] = value


def mapping(value: Any) -> Dict[str, Any]:
    """`value` when it is an object, else an empty one (malformed files are read leniently)."""
    return value if isinstance(value, dict) else {}


def glob_list(value: Any) -> List[str]:
    """Globs of a list, or of a comma-separated string (`applyTo`, Cursor's `globs`); a comma
    inside `{a,b}` belongs to the pattern."""
    if isinstance(value, str):
        parts, depth, start = [], 0, 0
        for i, c in enumerate(value):
            depth += {"{": 1, "}": -1}.get(c, 0)
            if c == "," and depth <= 0:
                parts.append(value[start:i])
                start = i + 1
        parts.append(value[start:])
        return [g.strip() for g in parts if g.strip()]
    if isinstance(value, list):
        return [str(g).strip() for g in value if str(g).strip()]
    return []


def description(fm: Dict[str, Any]) -> Dict[str, Any]:
    value = fm.get("description")
    if isinstance(value, str) and value.strip():
        return {"description": value.strip()}
    return {}


def env_syntax(pattern: str) -> Callable[[Any], Any]:
    """A converter from a client's environment reference syntax to the portable `${VAR}`."""
    rx = re.compile(pattern)

    def convert(value: Any) -> Any:
        return rx.sub(lambda m: "${%s}" % m.group(1), value) if isinstance(value, str) else value

    return convert


def stem(rel: str, suffix: str) -> str:
    base = posixpath.basename(rel)
    return base[:-len(suffix)] if suffix and base.endswith(suffix) else posixpath.splitext(base)[0]
