"""The client shapes several importers share, each read into its canonical entry.

What enters is a value an importer has read from a client file (a skill directory, an
agent's `tools:`, a Claude-style `hooks` object, one hook handler, an `mcpServers` entry, a
glob or tool list); what leaves is the canonical entry added to the Reader's document (or
returned to the importer to finish), and AR130/AR131 for what it cannot hold. Claude Code,
Codex, Cursor and VS Code borrowed these forms from one another, so each is read once here
rather than once per client; a form only one client writes stays in that client's module.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re

from agentrc.importers import hookfiles
from agentrc.importers.base import PORTABLE, Reader
from agentrc.importers.cleanup import project_command
from agentrc.model import ENTRYPOINTS, HOOK_EVENTS, MATCHER_EVENTS, TOOL_EVENTS
from agentrc.patterns import pattern
from agentrc.vocabulary import CLAUDE_TOOL_TABLE, TOOLS, check_model

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Union

    from agentrc.vocabulary import Resolved


SIDECAR_GROUPS = ("references", "scripts", "assets")
# An item's per-client override file (RULE.claude.md): in a skill, the registry reads it as one.
OVERRIDE_RE = pattern(r"^(?:%s)\.[^/]+\.md$" % "|".join(e[:-3] for e in ENTRYPOINTS))
# The eight Claude Code tool names canonical hooks use (agentrc.canonical.document.HOOK_TOOLS
# reads them case-insensitively).
CLAUDE_TOOLS = ("Read", "Write", "Edit", "Bash", "Grep", "Glob", "WebFetch", "WebSearch")
# A hook matcher's tool names -> canonical ones, for clients that use Claude Code's names.
CLAUDE_HOOK_TOOLS = {t: t for t in CLAUDE_TOOLS}
# The hook events about a tool call: the only ones a matcher or a tool list applies to.
# Environment variables one client sets for its hooks and MCP servers.
CLIENT_VARS = {"CLAUDE_PROJECT_DIR": "Claude Code", "CLAUDE_PLUGIN_ROOT": "Claude Code",
               "CURSOR_PROJECT_DIR": "Cursor", "CURSOR_PLUGIN_ROOT": "Cursor"}
DEFAULT_RE = pattern(r"\$\{[A-Za-z_][A-Za-z0-9_]*:-")
# A portable `${VAR}` reference (the form `requires-env` is inferred from).
ENV_REF_RE = pattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


# --- skills and agents ------------------------------------------------------------------

def skill_files(r: Reader, skills_dir: str) -> List[str]:
    """The SKILL.md of each skill directory right below `skills_dir`."""
    return r.under(skills_dir + "/", "/SKILL.md", depth=2)


def skill(r: Reader, rel: str, fm: Dict[str, Any], body: str, name: str,
          skip: Callable[[str], bool] = lambda rel: False) -> Dict[str, Any]:
    """A skill entry: description, body and the sidecar maps of the files beside SKILL.md
    (`rel`)."""
    entry: Dict[str, Any] = {}
    if isinstance(fm.get("description"), str):
        entry["description"] = fm["description"]
    entry["content"] = r.body(body, rel, name, kind="skill")
    entry.update(sidecars(r, rel, skip))
    return entry


def sidecars(r: Reader, entry_rel: str, skip: Callable[[str], bool] = lambda rel: False
             ) -> Dict[str, Dict[str, Any]]:
    """The files beside a skill's SKILL.md (`entry_rel`), by sidecar group."""
    directory = posixpath.dirname(entry_rel)
    out: Dict[str, Dict[str, Any]] = {}
    for rel in r.under(directory + "/"):
        if rel == entry_rel or skip(rel):
            continue
        rest = rel[len(directory) + 1:]
        base = posixpath.basename(rest)
        if base in ENTRYPOINTS or OVERRIDE_RE.match(base) or base.endswith(".bundle.yaml"):
            # The registry would read it as an item, an override or a bundle of its own.
            r.lossy(rel, f"{base} inside the skill {posixpath.basename(directory)} would be read as "
                         f"{'a bundle' if base.endswith('.yaml') else 'an item file'} of its own in the registry; "
                         "not imported (rename it to keep it)")
            continue
        head, _, tail = rest.partition("/")
        group = head if head in SIDECAR_GROUPS and tail else "files"
        content = r.files[rel].content
        try:
            value: Any = content.decode("utf-8")
        except UnicodeDecodeError:
            value = {"content": base64.b64encode(content).decode("ascii"), "encoding": "base64"}
        out.setdefault(group, {})[tail if group != "files" else rest] = value
        if r.files[rel].executable != (group == "scripts"):
            r.modes.setdefault(directory, {})[rest] = r.files[rel].executable
    return out


# --- hooks ------------------------------------------------------------------------------

def hooks_claude_shape(r: Reader, rel: str, hooks: Any, events: Dict[str, str], tools: Dict[str, str],
                       handler_keys: Sequence[str] = ("type", "command", "timeout", "async"),
                       label: str = "hooks") -> None:
    """`{Event: [{matcher, hooks: [{type, command, timeout}]}]}` (Claude Code, Codex)."""
    if not isinstance(hooks, dict):
        r.unreadable(rel, f"{label}: expected an object of events")
        return
    for event, groups in hooks.items():
        canonical = events.get(event)
        if canonical is None:
            r.lossy(rel, f"{label}.{event}: not one of the portable hook events "
                         f"({', '.join(HOOK_EVENTS)}); not imported")
            continue
        if not isinstance(groups, list):
            r.unreadable(rel, f"{label}.{event}: expected a list of matcher groups")
            continue
        for group in groups:
            if not isinstance(group, dict):
                r.unreadable(rel, f"{label}.{event}: expected matcher groups (objects)")
                continue
            for key in group:
                if key not in ("matcher", "hooks"):
                    r.lossy(rel, f"{label}.{event}: matcher group key {key!r} has no canonical field; "
                                 "not imported")
            handlers = group.get("hooks")
            for handler in handlers if isinstance(handlers, list) else []:
                entry = hook_entry(r, rel, f"{label}.{event}", handler, handler_keys)
                if entry is None:
                    continue
                hook_matcher(r, entry, group.get("matcher"), tools, canonical, rel, f"{label}.{event}")
                r.add_hook(canonical, entry, rel)


def hook_entry(r: Reader, rel: str, where: str, handler: Any, keys: Sequence[str],
               command_keys: Sequence[str] = ("command",), timeout_keys: Sequence[str] = ("timeout",)
               ) -> Optional[Dict[str, Any]]:
    """One hook handler (`{type, command, timeout, ...}`) as a canonical hook entry, or None
    when it has no canonical form or the file its command runs cannot travel (`hookfiles`).
    What the canonical entry cannot hold goes to its portable fields (`PORTABLE`, which
    `Reader.add_hook` files under the hook): the `./file` script and its files, an `if`
    condition, and the client's other handler keys (asyncRewake, statusMessage, ...) in the
    client's passthrough block, which gives them back to that client as written."""
    if not isinstance(handler, dict):
        r.unreadable(rel, f"{where}: expected hook objects")
        return None
    kind = handler.get("type", "command")
    if kind != "command":
        r.lossy(rel, f"{where}: a {kind!r} hook has no canonical form (hooks run commands); not imported")
        return None
    command = next((handler[k] for k in command_keys if isinstance(handler.get(k), str) and handler[k].strip()),
                   None)
    if command is None:
        r.unreadable(rel, f"{where}: a hook without a command")
        return None
    cwd = handler.get("cwd") if "cwd" in keys and isinstance(handler.get("cwd"), str) else ""
    base = posixpath.normpath(cwd) if cwd else "."
    resolved = hookfiles.resolve(r, rel, where, command, "" if base == "." else base)
    if resolved is None:
        return None
    entry: Dict[str, Any] = {"script": project_command(command)}
    portable: Dict[str, Any] = {}
    if resolved.files:
        portable.update({"script": resolved.script, hookfiles.FILES: resolved.files})
    elif cwd and posixpath.normpath(cwd) != ".":
        r.lossy(rel, f"{where}: cwd {cwd!r}: hooks run from the project root in other clients; the command is kept "
                     "as written")
    for k in timeout_keys:
        if isinstance(handler.get(k), (int, float)) and not isinstance(handler.get(k), bool) and handler[k] > 0:
            entry["timeout"] = handler[k]
            break
    if handler.get("async") is True and "async" in keys or handler.get("asyncRewake") is True:
        entry["async"] = True  # asyncRewake runs in the background too (and wakes Claude on exit 2)
    if isinstance(handler.get("if"), str) and handler["if"].strip():
        portable["if"] = handler["if"].strip()
    own = {key: value for key, value in handler.items()
           if key not in keys and key not in command_keys and key not in timeout_keys
           and key not in ("matcher", "if", "cwd", "async")}
    if own:
        portable[r.client] = own
        r.lossy(rel, f"{where}: {', '.join(sorted(own))}: no portable field; kept for {r.client} only (its "
                     "passthrough block in HOOK.md), the other clients run the hook without it")
    if portable:
        entry[PORTABLE] = portable
    client_paths(r, rel, where, command, resolved.script)
    return entry


def client_paths(r: Reader, rel: str, where: str, command: str, script: str) -> None:
    """AR130 for what in a hook's `script` (its command, the file it runs rewritten to
    `./file`) only one client understands."""
    if "/agentrc/hooks/" in command:
        r.lossy(rel, f"{where}: the command runs a script an earlier agentrc build copied into the "
                     "client's directory; canonical hooks hold only the command line, so copy the script "
                     "to a path of your own and change the command")
        return
    for var in CLIENT_VARS:
        if var in script:
            r.lossy(rel, f"{where}: the command uses ${var}, which only {CLIENT_VARS[var]} sets; kept "
                         "as written (other clients run hooks from the project root: a path relative to "
                         "it works everywhere)")
            break


def hook_matcher(r: Reader, entry: Dict[str, Any], matcher: Any, tools: Dict[str, str], event: str,
                 rel: str, where: str) -> None:
    """A matcher of tool names the canonical vocabulary has becomes `tools`; another
    matcher is kept as written, as is one on SessionStart and the other MATCHER_EVENTS (the
    hook must not fire on more than its source says)."""
    if not isinstance(matcher, str) or matcher.strip() in ("", "*", ".*"):
        return
    if event in MATCHER_EVENTS and event not in TOOL_EVENTS:
        entry["matcher"] = matcher  # what started the event (SessionStart: startup|clear|compact)
        return
    if event not in TOOL_EVENTS:
        r.lossy(rel, f"{where}: matcher {matcher!r} on an event that matches nothing (the client ignores it); "
                     "not imported")
        return
    tokens = [t.strip() for t in matcher.split("|")]
    mapped = [tools.get(t) for t in tokens]
    if all(mapped):
        entry["tools"] = list(dict.fromkeys(mapped))  # type: ignore[arg-type]
    else:
        entry["matcher"] = matcher


# --- MCP servers ------------------------------------------------------------------------

def server(r: Reader, rel: str, name: str, raw: Any, env: Callable[[Any], Any] = lambda v: v,
           known: Sequence[str] = ("type", "command", "args", "env", "url", "headers"),
           where: str = "mcpServers") -> None:
    """A `mcpServers`-style entry (Claude Code, Cursor, VS Code): stdio or remote."""
    if not isinstance(raw, dict):
        r.unreadable(rel, f"{where}.{name}: expected an object")
        return
    server_name = r.name(name, rel, "mcp server")
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
            r.lossy(rel, f"{where}.{name}: transport type {kind!r} is not http or sse; imported as http")
        entry["url"] = env(raw["url"])
        if raw.get("headers"):
            entry["headers"] = {k: env(str(v)) for k, v in mapping(raw["headers"]).items()}
    else:
        r.unreadable(rel, f"{where}.{name}: a server needs a command or a url")
        return
    if DEFAULT_RE.search(json.dumps(entry)):
        r.lossy(rel, f"{where}.{name}: ${{VAR:-default}} is Claude Code's syntax, kept for it; the clients that "
                     "expand only ${VAR} (or their own form of it) get the default in its place, and ${VAR:-} as "
                     "${VAR} (their build report says so under env-defaults)")
    if raw.get("disabled") is True:
        entry["disabled"] = True
    if isinstance(raw.get("autoApprove"), list):
        entry["autoApprove"] = [str(t) for t in raw["autoApprove"]]
    for key, value in raw.items():
        if key not in known and key not in ("disabled", "autoApprove"):
            # The key only: a server's settings hold credentials (envFile, oauth, tokens).
            r.lossy(rel, f"{where}.{name}: {key} has no canonical field; not imported")
    r.add_server(server_name, entry, rel)


def env_syntax(pattern: str) -> Callable[[Any], Any]:
    """A converter from a client's environment reference syntax to the portable `${VAR}`."""
    rx = re.compile(pattern)

    def convert(value: Any) -> Any:
        return rx.sub(lambda m: "${%s}" % m.group(1), value) if isinstance(value, str) else value

    return convert


# --- field values -----------------------------------------------------------------------

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
    """`{"description": ...}` when the frontmatter has a non-empty one, else nothing."""
    value = fm.get("description")
    if isinstance(value, str) and value.strip():
        return {"description": value.strip()}
    return {}


# --- portable item fields beyond the canonical entry ------------------------------------

# Capabilities (spec 001 §4) no client call can change the project with.
READ_ONLY = tuple(t for t in TOOLS if t not in ("write", "edit", "bash"))
# Claude Code tool names -> capabilities (the adapter's names, read back; MultiEdit is Edit's
# batch form). `claude_tool` also reads permission rules (`Bash(git:*)`) and the nearest ones.
CLAUDE_CAPABILITIES = {k: caps for k, (caps, note) in CLAUDE_TOOL_TABLE.items() if not note}
# Copilot's tool aliases -> capabilities (the adapter folds these capabilities into them);
# `copilot_tool` reads every Copilot and VS Code tool name through one table.
COPILOT_CAPABILITIES = {"read": ("read",), "edit": ("write", "edit"), "execute": ("bash",),
                        "search": ("grep", "glob"), "web": ("web-fetch", "web-search")}
# opencode permission keys and tool names -> capabilities (`edit` covers writes).
OPENCODE_PERMISSIONS = {"read": ("read",), "edit": ("write", "edit"), "bash": ("bash",), "grep": ("grep",),
                        "glob": ("glob",), "webfetch": ("web-fetch",), "websearch": ("web-search",)}
OPENCODE_TOOLS = dict(OPENCODE_PERMISSIONS, write=("write",), edit=("edit",))


class Fields:
    """The portable frontmatter of one imported item beyond its canonical entry (spec 001 §3:
    model, tools, mode, argument-hint, agent, license, metadata, compatibility), and every
    other key of the client's frontmatter in the client's passthrough block, so that nothing
    the client file said is lost: the client itself gets it back as written."""

    def __init__(self, r: Reader, rel: str, what: str, fm: Dict[str, Any], handled: Sequence[str] = ()):
        self.r, self.rel, self.what, self.fm = r, rel, what, fm
        self.handled: Set[str] = set(handled)
        self.portable: Dict[str, Any] = {}
        self.block: Dict[str, Any] = {}

    def set(self, key: str, value: Any, source: str = "") -> None:
        """The portable field `key`, read from the client's key `source` (default `key`)."""
        self.portable[key] = value
        self.handled.add(source or key)

    def keep(self, key: str) -> None:
        """The client's `key` as written, in its passthrough block."""
        if key in self.fm:
            self.block[key] = self.fm[key]
        self.handled.add(key)

    def common(self) -> None:
        """license and metadata, when they have the portable shape (else kept as written)."""
        if isinstance(self.fm.get("license"), str) and self.fm["license"].strip():
            self.set("license", self.fm["license"])
        if isinstance(self.fm.get("metadata"), dict):
            self.set("metadata", self.fm["metadata"])

    def skill(self) -> None:
        self.common()
        value = self.fm.get("compatibility")
        if isinstance(value, str) and value.strip() and len(value) <= 500:
            self.set("compatibility", value)

    def model(self, key: str = "model", aliases: Optional[Dict[str, str]] = None, provider: str = "",
              prefix: str = "") -> None:
        """A model the portable format can name (an alias, `provider/id`, or the client's own
        id starting with `prefix`, qualified with `provider`); another is kept as written."""
        value = self.fm.get(key)
        if not isinstance(value, str) or not value.strip():
            return
        value = value.strip()
        if aliases and value in aliases:
            self.set("model", aliases[value], key)
        elif check_model(value):
            self.set("model", value, key)
        elif provider and value.startswith(prefix) and check_model(f"{provider}/{value}"):
            self.set("model", f"{provider}/{value}", key)

    def tools(self, allowed: Optional[List[str]], *keys: str) -> None:
        """The portable tool list (None: every tool, written as no list), read from the
        client's `keys` (default `tools`)."""
        self.handled.update(keys or ("tools",))
        if allowed is not None:
            self.portable["tools"] = [t for t in TOOLS if t in allowed]

    def lossy(self, message: str) -> None:
        self.r.lossy(self.rel, f"{self.what}: {message}")

    def done(self, block: str) -> Dict[str, Any]:
        """The portable fields, with every key not handled in the `block` passthrough block."""
        for key in self.fm:
            if key not in self.handled:
                self.block[key] = self.fm[key]
        out = dict(self.portable)
        if self.block and block:
            out[block] = self.block
        return out


def capabilities(f: Fields, names: Optional[List[str]],
                 table: Union[Mapping[str, Sequence[str]], Callable[[str], Resolved]],
                 defaults: Optional[Set[str]], key: str = "tools") -> Optional[List[str]]:
    """The capabilities of a client's tool list (`names`; None when there is none), or None
    when it grants every tool: the client's default set, or `*` (Copilot's "all tools"),
    which the client gets back as written. `table` maps a name to its capabilities (a
    mapping, or a function that also says when they are only the nearest ones). A name
    without a capability is left out and one with only a nearest one is kept, each reported
    as degraded: the list never collapses silently, and the client keeps its own list as
    written in its passthrough block."""
    if names is None or (defaults is not None and set(names) == defaults):
        return None
    if "*" in names:
        f.keep(key)
        return None
    resolve = table if callable(table) else (lambda n: (tuple(table.get(n, ())), ""))
    caps: List[str] = []
    unmapped: List[str] = []
    nearest: List[str] = []
    for n in names:
        got, note = resolve(n)
        caps.extend(got)
        if not got:
            unmapped.append(n)
        elif note:
            nearest.append(f"{n} {note}")
    if unmapped or nearest:
        f.keep(key)
    kept = "kept as written for this client in its passthrough block"
    for line in nearest:
        f.lossy(f"{key} degraded: {line}; {kept}")
    if unmapped:
        granted = [t for t in TOOLS if t in caps]
        f.lossy(f"{key} degraded: {', '.join(unmapped)} {'has' if len(unmapped) == 1 else 'have'} no portable "
                f"capability; {kept}, the other clients get "
                + (", ".join(granted) if granted else "no tools (tools: [])"))
    return list(dict.fromkeys(caps))


def opencode_capabilities(f: Fields, permission: Any, tools: Any) -> Optional[List[str]]:
    """What an opencode agent may use, from its `permission` map (allow / ask / deny, per
    key or per command pattern, `*` for the rest) and its legacy `tools` map (name -> bool):
    the capabilities allowed outright. One that asks first, or is allowed for some patterns
    only, is reported and left out: the tool list never grows. None when every capability is
    allowed (no list)."""
    allowed = set(TOOLS)
    partly: List[str] = []
    if isinstance(permission, str):
        permission = {"*": permission}
    if isinstance(permission, dict):
        default = permission.get("*", "allow")
        for key, caps in OPENCODE_PERMISSIONS.items():
            value = permission.get(key, default)
            if isinstance(value, dict):
                value = "allow" if value and all(v == "allow" for v in value.values()) else "partly"
            if value != "allow":
                allowed -= set(caps)
                if value in ("ask", "partly"):
                    partly.append(f"{key} ({'asks first' if value == 'ask' else 'some patterns only'})")
    if isinstance(tools, dict):
        default_on = tools.get("*", True) is not False
        for key, caps in OPENCODE_TOOLS.items():
            if tools.get(key, default_on) is False:
                allowed -= set(caps)
    if partly:
        f.lossy(f"permission {', '.join(partly)}: the portable tool list only allows or leaves out a tool, so the "
                "other clients do not get it; opencode keeps its permission as written")
    return None if allowed == set(TOOLS) else [t for t in TOOLS if t in allowed]


def argument_hint(value: Any) -> str:
    """A command's `argument-hint` as the string every client takes: `[project-name]`
    written without quotes is a YAML list, which Claude Code shows as meant but the Copilot
    CLI refuses ("argument-hint must be a string"), so a list of words becomes `[a] [b]`."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and value and all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                                  for v in value):
        return " ".join(f"[{v}]" for v in value)
    return ""
