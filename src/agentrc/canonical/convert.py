"""The canonical document onto the one internal model (spec 000 §5): each rule, command,
skill, agent, hook and MCP server becomes the `Item` or `McpServer` the portable front
door would make, so the same client adapters render it; what has no portable field is
reported per entry (the front door's fidelity report) or is an error.

Apart from the merge (`canonical.merging`): it knows the portable fields and the
vocabulary, and nothing of layers. Pure.
"""

from __future__ import annotations

import base64
import posixpath
from dataclasses import field

from agentrc import names
from agentrc.canonical.layers import Layer, layer_from_tree, strip_managed_block  # noqa: F401
from agentrc.canonical.merging import Document
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fidelity import DEGRADED, DROPPED, ItemReport, Tracker
from agentrc.frozen import freeze, thaw
from agentrc.model import (
    HOOK_EVENTS,
    Bundle,
    ClientNames,
    IgnoreList,
    Item,
    Kind,
    McpServer,
    Registry,
    Resource,
)
from agentrc.portable import checks
from agentrc.portable.items import make_item
from agentrc.text.markdown import demote_headings, has_h1
from agentrc.text.yamlpos import Located
from agentrc.vocabulary import MODEL_ALIASES, TOOLS, check_model

# --- onto the one internal model ---------------------------------------------------------

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from agentrc.canonical.layers import Pos


# Claude-style tool names canonical hooks use (`tools: ["Bash"]`) -> the portable vocabulary.
HOOK_TOOLS = {"bash": "bash", "edit": "edit", "write": "write", "read": "read", "grep": "grep", "glob": "glob",
              "webfetch": "web-fetch", "websearch": "web-search", "web-fetch": "web-fetch", "web-search": "web-search"}
# An agent's or command's tool names (Claude Code's, read case-insensitively, or portable ones)
# -> portable capabilities. MultiEdit is Claude Code's batch form of Edit: the same capability.
AGENT_TOOLS = dict(HOOK_TOOLS, multiedit="edit")
FRONT_DOOR = "canonical"  # the `client` of the front door's reports


@dataclass(frozen=True)
class Conversion:
    """The document as the model: the registry, what was said about it, and for every entry
    (rule, command, skill, agent, hook, MCP server) what became of each of its keys."""

    registry: Registry
    diagnostics: Tuple[Diagnostic, ...]
    reports: Tuple[ItemReport, ...]


@dataclass
class _Entry:
    """One canonical entry on its way to a portable item: its frontmatter, body, resources and where each key was."""
    kind: Kind
    name: str
    path: str
    fm: Dict[str, Any]
    body: str = ""
    resources: Tuple[Resource, ...] = ()
    positions: Dict[str, Pos] = field(default_factory=dict)  # portable field -> where its source key is
    body_line: int = 1


class _Account:
    """Every key of one canonical entry, accounted for: carried onto a portable field (the
    adapters then report it per client), omitted on purpose, or lost (degraded or dropped:
    an AR119 warning at the key, naming it and what happens to it). `finish()` raises
    UnreportedField for a key without an outcome: the front door cannot drop one silently."""

    def __init__(self, document: Document, key: str, kind: str, name: str, keys: Sequence[str],
                 diags: Diagnostics):
        self.document, self.key, self.kind, self.name, self.diags = document, key, kind, name, diags
        self.tracker = Tracker(keys)
        self.file = document.at(key)[0]
        self.positions: Dict[str, Pos] = {}

    def at(self, field_: str) -> Tuple[str, Pos]:
        return self.document.at(f"{self.key}.{field_}")

    def carried(self, field_: str, portable: str, detail: str = "") -> None:
        """Onto the portable field `portable` (emitted when it is the same field, as written)."""
        if portable == field_ and not detail:
            self.tracker.emitted(field_, "the portable field of the same name")
        else:
            self.tracker.mapped(field_, detail or f"the portable field {portable}")
        file, pos = self.at(field_)
        if file == self.file:
            self.positions.setdefault(portable, pos)

    def omitted(self, field_: str, detail: str) -> None:
        self.tracker.omitted(field_, detail)

    def lost(self, field_: str, status: str, detail: str, message: str = "") -> None:
        self.tracker.set(field_, status, detail)
        self.diags.warning(*self.at(field_), "AR119", message or f"{self.key}.{field_}: {detail}")

    def error(self, field_: str, code: str, message: str, detail: str) -> None:
        self.tracker.dropped(field_, detail)
        self.diags.error(*self.at(field_), code, message)

    def report(self) -> ItemReport:
        return ItemReport(FRONT_DOOR, self.kind, self.name, self.file, True, (), self.tracker.finish(self.key))


def to_registry(document: Document, clients: ClientNames) -> Tuple[Registry, Tuple[Diagnostic, ...]]:
    """`convert` without the reports."""
    conversion = convert(document, clients)
    return conversion.registry, conversion.diagnostics


def convert(document: Document, clients: ClientNames) -> Conversion:
    """Items and MCP servers of the document, through the portable format's checks. Each
    canonical key is mapped onto the portable field explicitly, or reported: what has no
    portable equivalent is a warning naming what happens to it, and a report entry."""
    families, passthrough = clients.families, clients.blocks
    diags = Diagnostics()
    caps = thaw(document.capabilities)
    entries: List[_Entry] = []
    reports: List[ItemReport] = []
    for section, kind in (("rules", Kind.RULE), ("commands", Kind.COMMAND), ("skills", Kind.SKILL),
                          ("agents", Kind.AGENT)):
        for name, entry in sorted((caps.get(section) or {}).items()):
            acc = _Account(document, f"{section}.{name}", kind.value, name, list(entry), diags)
            out = _portable(kind, name, entry, acc, passthrough)
            reports.append(acc.report())
            if out is not None:
                entries.append(out)
    for event, value in sorted((caps.get("hooks") or {}).items()):
        hooks = value if isinstance(value, list) else [value]
        for i, hook in enumerate(hooks, 1):
            hook = {"script": hook} if isinstance(hook, str) else dict(hook)
            name = _slug(event) + (f"-{i}" if len(hooks) > 1 else "")
            acc = _Account(document, f"hooks.{event}", Kind.HOOK.value, name, list(hook), diags)
            out = _hook(event, name, hook, acc)
            reports.append(acc.report())
            if out is not None:
                entries.append(out)
    for i, (text, layer, path) in enumerate(document.context):
        name = _slug(f"context-{i + 1}-{layer}")[:64].rstrip("-")
        entries.append(_Entry(Kind.CONTEXT, name, path, {"description": f"context.global from {layer} ({path})",
                                                         "order": i}, _demote(text)))
    items, item_diags = _items(entries, families, passthrough)
    servers = []
    for name, server in sorted(((caps.get("mcp") or {}).get("servers") or {}).items()):
        acc = _Account(document, f"mcp.servers.{name}", "mcp", name, list(server), diags)
        servers.append(_server(name, server, acc))
        reports.append(acc.report())
    where = {o.key: o.file for o in document.origins}
    bundle = Bundle(name="ai-config", path=where.get("mcp.servers", "<config>"), schema=1,
                    description="the project's canonical document", items=(), servers=tuple(servers))
    tools = thaw(document.tools)
    if not isinstance(tools, dict):  # a layer's `tools: [...]` the merge let through
        diags.error(*document.at("tools"), "AR115", "tools: expected an object of settings per client")
        tools = {}
    _check_tools(tools, clients, document, diags)
    registry = Registry(tuple(sorted(items, key=lambda i: (i.kind.value, i.name))), (bundle,) if servers else (),
                        freeze({k: v for k, v in tools.items() if isinstance(v, dict)}))
    return Conversion(registry, tuple(sorted(set(diags.sorted() + item_diags))), tuple(reports))


def _check_tools(tools: Dict[str, Any], clients: ClientNames, document: Document, diags: Diagnostics) -> None:
    """`tools.<target>`: a client's name and an object of settings; its `ignore`, the lines of
    the client's ignore file (clients.ignorefile), a list of one-line patterns."""
    for target in sorted(tools):
        if target not in clients.tool_targets:
            diags.warning(*document.at(f"tools.{target}"), "AR119",
                          f"tools.{target}: no client of that name; its configuration is not used")
        elif not isinstance(tools[target], dict):
            diags.error(*document.at(f"tools.{target}"), "AR115", f"tools.{target}: expected an object of settings")
        elif "ignore" in tools[target]:
            patterns = tools[target]["ignore"]
            if not isinstance(patterns, list) or len(patterns) > IgnoreList.MAX_PATTERNS:
                diags.error(*document.at(f"tools.{target}.ignore"), "AR115", f"tools.{target}.ignore: expected a "
                            f"list of at most {IgnoreList.MAX_PATTERNS} gitignore patterns")
                continue
            for i, pattern in enumerate(patterns):
                problem = IgnoreList.problem(pattern)
                if problem:
                    diags.error(*document.at(f"tools.{target}.ignore"), "AR115",
                                f"tools.{target}.ignore[{i}]: {problem}")


def _items(entries: Sequence[_Entry], families, passthrough) -> Tuple[List[Item], Tuple[Diagnostic, ...]]:
    """Items from the document's entries, through the same schema, name, field and body
    checks as items read from entrypoints, at the positions of the keys they came from.
    They have no item directory: a hook's `./script` is a path from the project root, run
    as written, so no hook gets a `script_file`."""
    diags = Diagnostics()
    out = []
    for e in entries:
        located = Located(e.fm, key_pos={(k,): p for k, p in e.positions.items()})
        path, kind, data = e.path, e.kind, e.fm
        if not checks.schema_ok(path, data, located, kind.value, diags, passthrough):
            continue
        checks.check_name(path, (1, 1), e.name, kind, e.name, False, diags)
        checks.check_description(path, located.pos(("description",)), data["description"], kind, diags)
        checks.check_fields(path, data, located, kind, families, passthrough, diags)
        readers = frozenset(data.get("audience", ())) & families or families
        blocks = checks.check_body(path, e.body, e.body_line, families, diags, readers, kind is Kind.COMMAND,
                                   kind=kind)
        out.append(make_item(kind, e.name, posixpath.dirname(path), path, data, located, e.body, e.body_line, blocks,
                             {}, tuple(e.resources), passthrough))
    return out, diags.sorted()


# Portable fields a canonical entry may also hold under their portable names (besides the
# spec 000 keys each kind maps below), carried as written and checked as portable fields.
_CARRIED = ("schema", "license", "metadata", "audience", "requires", "ignore")


def _portable(kind: Kind, name: str, entry: Dict[str, Any], acc: _Account,
              passthrough: Sequence[str]) -> Optional[_Entry]:
    """The portable item of a rule, command, skill or agent; None when it cannot be built
    (an error was reported)."""
    fm: Dict[str, Any] = {}
    body, body_line = _description_and_body(kind, name, entry, fm, acc)
    ok, resources = _kind_fields(kind, name, entry, fm, acc)
    _other_keys(kind, entry, fm, acc, passthrough)
    if not ok:
        return None
    return _Entry(kind, name, acc.file, fm, body, tuple(resources), acc.positions, body_line)


def _description_and_body(kind: Kind, name: str, entry: Dict[str, Any], fm: Dict[str, Any],
                          acc: _Account) -> Tuple[str, int]:
    """`description` (one naming the entry when it has none), the body and its first line,
    and `prompt` and `name`, which say again what the body and the key say."""
    path = acc.file
    if entry.get("description"):
        fm["description"] = entry["description"]
        acc.carried("description", "description")
    else:
        fm["description"] = f"{name} ({kind.value} from {path})"
        if "description" in entry:
            acc.omitted("description", "empty; a description naming the entry is written")
    body, body_line = str(entry.get("content") or ""), 1
    if "content" in entry:
        file, pos = acc.at("content")
        body_line = pos[0] if file == path else 1
        if has_h1(body):
            body = demote_headings(body)
            acc.carried("content", "body", "the body, every heading demoted one level: it has an H1, and the "
                        "generated file has its own title")
        else:
            acc.carried("content", "body", "the body")
    if "prompt" in entry:
        acc.omitted("prompt", "the same text as content (spec 000 mirrors them); the body")
    if "name" in entry:
        if entry["name"] == name:
            acc.omitted("name", "the same as the entry's key, which names the item")
        else:
            acc.lost("name", DROPPED, f"{entry['name']!r} differs from the key; the key names the {kind.value}",
                     f"{acc.key}: name {entry['name']!r} differs from the key; the key names the {kind.value}")
    return body, body_line


def _kind_fields(kind: Kind, name: str, entry: Dict[str, Any], fm: Dict[str, Any],
                 acc: _Account) -> Tuple[bool, List[Resource]]:
    """The fields of one kind (a rule's scope, a skill's files, tools, model, ...): whether
    they could be built, and the skill's resources."""
    ok = True
    resources: List[Resource] = []
    if kind is Kind.RULE:
        _rule_scope(entry, fm, acc)
    elif kind is Kind.SKILL:
        resources = _skill(entry, fm, acc)
    elif kind is Kind.AGENT:
        if "skills" in entry:
            fm["preload-skills"] = list(entry["skills"])
            acc.carried("skills", "preload-skills", "preload-skills")
        ok = _tool_list(entry, fm, acc, "tools")
    elif kind is Kind.COMMAND:
        for canon in ("triggers", "disableModelInvocation", "userInvocable"):
            if canon in entry:
                acc.lost(canon, DROPPED, "no portable command field; commands are user-invoked slash commands",
                         f"commands.{name}.{canon} has no portable command field; commands are user-invoked slash "
                         "commands")
        ok = _tool_list(entry, fm, acc, "tools")
    if kind in (Kind.AGENT, Kind.COMMAND) and "model" in entry:
        _model(entry["model"], fm, acc)
    return ok, resources


def _other_keys(kind: Kind, entry: Dict[str, Any], fm: Dict[str, Any], acc: _Account,
                passthrough: Sequence[str]) -> None:
    """Every key no step above took: carried under its own name where the kind has the field,
    a passthrough block names it, or the entry is a skill; dropped, and said so, elsewhere."""
    handled = set(acc.tracker.outcomes)
    own = set(checks.KIND_FIELDS[kind]) - {"tools", "model", "preload-skills"}
    for key, value in entry.items():
        if key in handled:
            continue
        if key in _CARRIED or key in own or key in passthrough or kind is Kind.SKILL:
            if key in fm:
                acc.lost(key, DROPPED, f"{key} is already set from another key, which wins")
                continue
            fm[key] = value
            acc.carried(key, key, f"the {key} passthrough block" if key in passthrough else "")
        else:
            acc.lost(key, DROPPED, f"no portable {kind.value} field {key!r}; it is not written for any client",
                     f"{acc.key}.{key}: no portable {kind.value} field of that name; it is not written for any "
                     "client")


def _rule_scope(entry: Dict[str, Any], fm: Dict[str, Any], acc: _Account) -> None:
    globs = entry.get("globs")
    globs = split_globs(globs) if isinstance(globs, str) else list(globs or [])
    always = entry.get("alwaysApply")
    if always is True and globs:
        acc.lost("globs", DEGRADED, "alwaysApply: true wins over globs; the rule is always on",
                 f"{acc.key}: alwaysApply: true wins over globs; the rule is always on")
        acc.carried("alwaysApply", "scope", "always on: no scope")
        return
    if globs:
        fm["scope"] = {"paths": globs}
        acc.carried("globs", "scope", "scope.paths")
        if "alwaysApply" in entry:
            acc.omitted("alwaysApply", "false with globs: the rule applies to the globs' files")
        return
    if "globs" in entry:
        acc.carried("globs", "scope", "no globs: no scope, the rule is always on")
    if always is False:
        acc.lost("alwaysApply", DEGRADED, "false without globs (apply when relevant) has no portable form; the "
                 "rule is always on", f"{acc.key}: alwaysApply: false without globs (apply when relevant) has no "
                 "portable form; the rule is always on")
    elif always is True:
        acc.carried("alwaysApply", "scope", "always on: no scope")


def _skill(entry: Dict[str, Any], fm: Dict[str, Any], acc: _Account) -> List[Resource]:
    fm.update(skill_fields(entry))
    both = "allowed-tools" in entry and "allowedTools" in entry
    for key, portable in (("allowed-tools", "allowed-tools"), ("allowedTools", "allowed-tools"),
                          ("disableModelInvocation", "disable-model-invocation"),
                          ("userInvocable", "user-invocable")):
        if key not in entry:
            continue
        if key == "allowedTools" and both:
            if _words(entry["allowedTools"]) == _words(entry["allowed-tools"]):
                acc.omitted(key, "the same tools as allowed-tools")
            else:
                acc.lost(key, DROPPED, "allowed-tools is given too, and wins")
        elif not entry[key] and key in ("allowed-tools", "allowedTools"):
            acc.omitted(key, "empty: no tools pre-approved")
        else:
            acc.carried(key, portable, "" if key == portable else portable)
    resources: List[Resource] = []
    for group in ("references", "scripts", "assets", "files"):
        if group not in entry:
            continue
        for rel, value in sorted((entry.get(group) or {}).items()):
            target = rel if group == "files" else f"{group}/{rel}"
            if isinstance(value, dict):
                content = base64.b64decode(value["content"])
            else:
                content = str(value).encode("utf-8")
            resources.append(Resource(target, content, group == "scripts"))
        acc.carried(group, "resources", f"{len(entry.get(group) or {})} supporting file(s) of the skill")
    return resources


def _words(value: Any) -> List[str]:
    return value.replace(",", " ").split() if isinstance(value, str) else [str(v) for v in value or ()]


def _tool_list(entry: Dict[str, Any], fm: Dict[str, Any], acc: _Account, portable: str) -> bool:
    """An agent's or command's tools (`tools`, or Claude Code's `allowed-tools` of a command),
    and an agent's `disallowedTools`, as portable capability names. A tool list is never
    widened: a name with no portable capability is AR123, an error, rather than an item with
    every tool. False when it is."""
    keys = [k for k in ("tools", "allowed-tools", "allowedTools") if k in entry]
    deny = [k for k in ("disallowedTools", "disallowed-tools") if k in entry]
    if not keys and not deny:
        return True
    def capabilities(key: str, why: str) -> Optional[List[str]]:
        """The portable names of `entry[key]`'s tools; None (AR123, saying `why`) when one has none."""
        names = _words(entry[key])
        mapped = [AGENT_TOOLS.get(n.lower()) for n in names]
        bad = [n for n, m in zip(names, mapped) if m is None]
        if bad:
            acc.error(key, "AR123", f"{acc.key}.{key}: {', '.join(map(repr, bad))} has no portable capability name "
                      f"(portable: {', '.join(TOOLS)}); {why}", "not carried: a tool with no portable name (AR123)")
            return None
        return list(dict.fromkeys(m for m in mapped if m))

    ok = True
    allowed: Optional[List[str]] = None
    for key in keys:
        tools = capabilities(key, f"without its tool list the {acc.kind} would get every tool")
        if tools is None:
            ok = False
            continue
        if allowed is not None:
            acc.lost(key, DROPPED, f"{keys[0]} is given too, and wins")
            continue
        allowed = tools
        acc.carried(key, portable, f"portable {portable}: {', '.join(tools) or '(none)'}")
    for key in deny:
        removed = capabilities(key, f"the {acc.kind}'s tools cannot be narrowed without it")
        if removed is None:
            ok = False
            continue
        base = list(allowed if allowed is not None else TOOLS)
        allowed = [t for t in base if t not in removed]
        acc.carried(key, portable, f"removed from portable {portable}: {', '.join(allowed) or '(none)'} remain")
    if ok and allowed is not None:
        fm[portable] = allowed
    return ok


def _model(model: Any, fm: Dict[str, Any], acc: _Account) -> None:
    if isinstance(model, str) and check_model(model):
        fm["model"] = model
        acc.carried("model", "model")
    elif isinstance(model, str) and model.startswith("claude-") and check_model(f"anthropic/{model}"):
        fm["model"] = f"anthropic/{model}"
        acc.carried("model", "model", f"model: anthropic/{model}")
    else:
        acc.lost("model", DROPPED, f"{model!r} is neither a portable alias ({', '.join(MODEL_ALIASES)}) nor "
                 "provider/model; each client uses its default model")


def _hook(event: str, name: str, hook: Dict[str, Any], acc: _Account) -> Optional[_Entry]:
    path = acc.file
    if event not in HOOK_EVENTS:
        detail = f"the hook is dropped: {event!r} is not a hook event agentrc knows ({', '.join(HOOK_EVENTS)})"
        for key in hook:
            acc.tracker.dropped(key, detail)
        acc.diags.warning(*acc.document.at(acc.key), "AR119", f"{acc.key}: {detail}")
        return None
    fm: Dict[str, Any] = {"description": f"{event} hook from {path}", "event": event, "script": hook["script"]}
    acc.carried("script", "script")
    for key in ("matcher", "async", "if"):  # `if`: the hook's condition, kept or the hook refused per client
        if key in hook:
            fm[key] = hook[key]
            acc.carried(key, key)
    if "timeout" in hook:
        fm["timeout"] = max(1, int(round(hook["timeout"])))
        if fm["timeout"] == hook["timeout"]:
            acc.carried("timeout", "timeout")
        else:
            acc.lost("timeout", DEGRADED, f"{hook['timeout']} s rounded to {fm['timeout']} s (whole seconds)")
    if "tools" in hook:
        mapped = [HOOK_TOOLS.get(t.lower()) for t in hook["tools"]]
        if not hook["tools"]:
            acc.omitted("tools", "empty: the hook runs for every tool")
        elif all(mapped):
            fm["tools"] = list(dict.fromkeys(m for m in mapped if m))
            acc.carried("tools", "tools", f"portable tools: {', '.join(fm['tools'])}")
        elif "matcher" in hook:
            acc.lost("tools", DROPPED, "names a tool with no portable name, and matcher is given too, which wins")
        else:
            fm["matcher"] = "|".join(hook["tools"])
            acc.carried("tools", "matcher", f"matcher {fm['matcher']!r} (not all are portable tool names)")
    if "type" in hook:
        if hook["type"] == "command":
            acc.omitted("type", "command: every portable hook runs a command")
        else:
            acc.lost("type", DEGRADED, f"{hook['type']!r} is not portable; written as a command hook",
                     f"hooks.{event}: type {hook['type']!r} is not portable; written as a command hook")
    for key in hook:
        if key not in acc.tracker.outcomes:
            acc.lost(key, DROPPED, f"no portable hook field {key!r}; it is not written for any client")
    return _Entry(Kind.HOOK, name, path, fm, positions=acc.positions)


def skill_fields(entry: Dict[str, Any]) -> Dict[str, Any]:
    """A canonical skill's fields that have portable (SKILL.md frontmatter) names."""
    fm: Dict[str, Any] = {}
    tools = entry.get("allowed-tools", entry.get("allowedTools"))
    if tools:
        fm["allowed-tools"] = " ".join(tools) if isinstance(tools, list) else tools
    for canon, portable in (("disableModelInvocation", "disable-model-invocation"),
                            ("userInvocable", "user-invocable")):
        if canon in entry:
            fm[portable] = entry[canon]
    return fm


_SERVER_LOCAL = ("command", "args", "env")
_SERVER_REMOTE = ("url", "headers")


def _server(name: str, server: Dict[str, Any], acc: _Account) -> McpServer:
    raw: Dict[str, Any] = {}
    if "url" in server:
        remote = {"type": server.get("type", "http"), "url": server["url"]}
        if server.get("headers"):
            remote["headers"] = server["headers"]
        raw["remote"] = remote
        for key in _SERVER_REMOTE + ("type",):
            if key in server:
                acc.carried(key, "remote", f"remote.{key}" if server[key] or key == "url" else "empty")
        for key in _SERVER_LOCAL:
            if key in server:
                acc.lost(key, DROPPED, "the server has a url: it is a remote server, and this is a local one's key")
    else:
        local = {"command": server["command"]}
        for key in ("args", "env"):
            if server.get(key):
                local[key] = server[key]
        raw["local"] = local
        for key in _SERVER_LOCAL:
            if key in server:
                acc.carried(key, "local", f"local.{key}" if server[key] or key == "command" else "empty")
        if "type" in server:
            if server["type"] == "stdio":
                acc.omitted("type", "stdio: a server with a command is local")
            else:
                acc.lost("type", DROPPED, f"{server['type']!r} without a url: the server runs its command (stdio)")
        for key in _SERVER_REMOTE:
            if key in server:
                acc.lost(key, DROPPED, "the server has no url: it is a local server, and this is a remote one's key")
    for key in ("disabled", "autoApprove", "scope"):
        if key in server:
            raw[key] = server[key]
            acc.carried(key, key)
    for key in server:
        if key not in acc.tracker.outcomes:
            acc.lost(key, DROPPED, f"no MCP server field {key!r} agentrc knows; it is not written for any client")
    common = dict(name=name, bundle="ai-config", path=acc.file, pos=acc.document.at(acc.key)[1], fields=freeze(raw))
    if "url" in server:
        return McpServer(transport=server.get("type", "http"), url=server["url"],
                         headers=freeze(server.get("headers", {})), **common)
    return McpServer(transport="stdio", command=server["command"], args=tuple(server.get("args", ())),
                     env=freeze(server.get("env", {})), **common)


def split_globs(text: str) -> List[str]:
    """Comma-separated globs; a comma inside `{a,b}` belongs to its glob."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (ch == "{") - (ch == "}")
        cur += ch
    out.append(cur)
    return [g.strip() for g in out if g.strip()]


def _demote(text: str) -> str:
    """AGENTS.md files start with an H1; inside the generated document (which has its own)
    every heading moves one level down."""
    return demote_headings(text) if has_h1(text) else text


def _slug(text: str) -> str:
    return names.slug(text) or "item"
