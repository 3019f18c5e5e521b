"""The canonical document (spec 000): layers -> merge -> validate -> normalize -> the model.

A project configured the spec-000 way has layers: presets (a nested chain, depth first),
the `.ai/` directory, the root AGENTS.md and `ai.config.*`. Each layer is a partial
canonical document; `merge()` deep-merges them (later layers win per key, §4.1), appends
`context.global` in §4.3 order and records, for every capability and every overridden key,
which layer and file it came from. `to_registry()` then maps the document onto the one
internal model (Items and McpServers), so the same client adapters render it.

Everything here is pure: the layers' files come in as SourceTrees (agentrc.inputs.config reads
them from disk and evaluates `ai.config.js` with Node).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import posixpath
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from agentrc import names, schemas
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.frozen import FrozenMap, freeze, thaw
from agentrc.model import Bundle, ClientNames, Item, Kind, McpServer, Registry, Resource, SourceFile, SourceTree
from agentrc.portable import checks
from agentrc.portable.items import make_item
from agentrc.text.frontmatter import split
from agentrc.text.markdown import demote_headings, has_h1
from agentrc.text.markedblock import block_render
from agentrc.text.yamlpos import Located, YamlError
from agentrc.text.yamlpos import load as load_yaml

CAPABILITIES = ("rules", "commands", "skills", "agents", "hooks", "mcp")
# Keys of ai.config.* besides the capabilities: how the layers are found, not content.
CONFIG_KEYS = ("presets", "preset", "language", "context", "tools", "$schema")


@dataclass(frozen=True)
class Layer:
    """One input layer: its data as a partial canonical document and, for each capability
    entry (`rules.x`, `mcp.servers.y`, `context.global`), the file it came from."""

    label: str  # "preset base", ".ai", "AGENTS.md", "ai.config.js"
    root: str  # display path of the layer's directory or file
    data: FrozenMap
    files: FrozenMap = field(default_factory=FrozenMap)


@dataclass(frozen=True)
class Origin:
    key: str  # dotted path: "rules.style", "rules.style.globs", "context.global"
    layer: str
    file: str
    replaced: Tuple[Tuple[str, str], ...] = ()  # (layer, file) of the definitions it overrode


@dataclass(frozen=True)
class Document:
    """The merged, normalized document, with provenance."""

    context: Tuple[Tuple[str, str, str], ...]  # (text, layer, file), in append order
    capabilities: FrozenMap  # {"rules": {...}, ..., "mcp": {"servers": {...}}}
    tools: FrozenMap  # target -> that target's own configuration
    origins: Tuple[Origin, ...]

    def origin(self, key: str) -> Optional[Origin]:
        for o in self.origins:
            if o.key == key:
                return o
        return None

    def to_json(self) -> dict:
        caps = thaw(self.capabilities)
        return {"context": {"global": "\n\n".join(t for t, _, _ in self.context)} if self.context else {},
                **{k: caps[k] for k in CAPABILITIES if k in caps},
                "tools": thaw(self.tools),
                "provenance": {
                    "context.global": [{"layer": layer, "file": f} for _, layer, f in self.context],
                    **{o.key: {"layer": o.layer, "file": o.file,
                               "overrides": [{"layer": lyr, "file": f} for lyr, f in o.replaced]}
                       for o in self.origins},
                }}


# --- reading one layer's files (§4.2) -------------------------------------------------

def layer_from_tree(label: str, root: str, tree: SourceTree, diags: Diagnostics,
                    config: Optional[Dict[str, Any]] = None, config_path: str = "",
                    language: str = "") -> Layer:
    """A directory with the §4.2 layout (a preset or `.ai/`), or a config file's data."""
    files = {f.path: f for f in tree.files}
    data: Dict[str, Any] = {}
    origin: Dict[str, str] = {}

    # The files' display paths are normalized (`.ai/x`, never `./.ai/x`): so is the prefix.
    prefix = posixpath.normpath(root) + "/" if root else ""

    def rel(path: str) -> str:
        if prefix == "./":
            return path[2:] if path.startswith("./") else path
        return path[len(prefix):] if prefix and path.startswith(prefix) else path

    by_rel = {rel(p): f for p, f in files.items()}

    def pick(directory: str, names: Sequence[str]) -> Optional[SourceFile]:
        """prompt.<language>.md before prompt.md (ai-jue's localized files)."""
        for name in names:
            stem, ext = posixpath.splitext(name)
            for candidate in ([f"{stem}.{language}{ext}"] if language else []) + [name]:
                f = by_rel.get(posixpath.join(directory, candidate) if directory else candidate)
                if f is not None:
                    return f
        return None

    context = pick("", ["AGENTS.md"])
    if context is not None:
        data["context"] = {"global": _text(context, diags)}
        origin["context.global"] = context.path
    for section, candidates in (("rules", ["prompt.md", "AGENTS.md"]), ("commands", ["prompt.md"]),
                                ("agents", ["prompt.md", "AGENTS.md"]), ("skills", ["SKILL.md"])):
        for name in _subdirs(by_rel, section):
            d = f"{section}/{name}"
            f = pick(d, candidates)
            meta_file = by_rel.get(f"{d}/index.json")
            meta = _meta(meta_file, diags)
            if f is None:
                if meta_file is not None:
                    diags.error(meta_file.path, (1, 1), "AR115", f"{section}/{name} has index.json but no "
                                f"{' or '.join(candidates)}")
                continue
            attrs, body = _markdown(f, diags)
            entry = {**meta, **attrs, "content": body}
            if section == "skills":
                entry.update(_sidecars(by_rel, d, f))
            data.setdefault(section, {})[name] = entry
            origin[f"{section}.{name}"] = f.path
    for name in _subdirs(by_rel, "hooks"):
        d = f"hooks/{name}"
        meta_file, prompt = by_rel.get(f"{d}/index.json"), pick(d, ["prompt.md"])
        meta = _meta(meta_file, diags)
        if prompt is not None:
            script = _text(prompt, diags).strip()
            data.setdefault("hooks", {})[name] = {**meta, "script": script} if meta else script
        elif meta:
            data.setdefault("hooks", {})[name] = meta
        else:
            continue
        source = prompt or meta_file
        assert source is not None  # `meta` is non-empty only when read from meta_file
        origin[f"hooks.{name}"] = source.path
    mcp = by_rel.get("mcp.json")
    if mcp is not None:
        data["mcp"] = _json(mcp, diags)
        for name in _mapping(data["mcp"].get("servers")) if isinstance(data["mcp"], dict) else {}:
            origin[f"mcp.servers.{name}"] = mcp.path
    for name in _subdirs(by_rel, "tools"):
        f = by_rel.get(f"tools/{name}/config.json")
        if f is not None:
            data.setdefault("tools", {})[name] = _json(f, diags)
            origin[f"tools.{name}"] = f.path
    if config is not None:
        for key, value in config.items():
            if key in ("presets", "preset", "language", "$schema"):
                continue
            data[key] = value
            if key == "context" and isinstance(value, dict) and "global" in value:
                origin["context.global"] = config_path
            elif isinstance(value, dict):
                for name in value:
                    origin[f"{key}.{name}"] = config_path
                    if key == "mcp" and name == "servers" and isinstance(value[name], dict):
                        for server in value[name]:
                            origin[f"mcp.servers.{server}"] = config_path
            else:
                origin[key] = config_path
    return Layer(label, root, freeze(data), FrozenMap(origin))


def strip_managed_block(text: str) -> str:
    """The root AGENTS.md minus agentrc's own generated block: input never includes output."""
    return block_render(text, None)


def _subdirs(by_rel: Dict[str, SourceFile], section: str) -> List[str]:
    return sorted({p.split("/")[1] for p in by_rel if p.startswith(section + "/") and p.count("/") >= 2})


def _text(f: SourceFile, diags: Diagnostics) -> str:
    try:
        return f.content.decode("utf-8").replace("\r\n", "\n").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        diags.error(f.path, (1, 1), "AR008", f"not UTF-8 (byte {exc.start})")
        return ""


def _json(f: SourceFile, diags: Diagnostics) -> Any:
    try:
        return json.loads(_text(f, diags) or "null")
    except ValueError as exc:
        diags.error(f.path, (getattr(exc, "lineno", 1), getattr(exc, "colno", 1)), "AR110", f"invalid JSON: {exc.msg}"
                    if hasattr(exc, "msg") else f"invalid JSON: {exc}")
        return {}


def _meta(f: Optional[SourceFile], diags: Diagnostics) -> Dict[str, Any]:
    """An entry's index.json: its keys merge into the entry, so anything but an object (null,
    a list, a number) is an error here rather than a TypeError in the merge."""
    if f is None:
        return {}
    data = _json(f, diags)
    if not isinstance(data, dict):
        diags.error(f.path, (1, 1), "AR115", f"index.json holds {_json_type(data)}, not an object of fields")
        return {}
    return data


def _json_type(value: Any) -> str:
    """What a JSON value is, named as JSON names it (for messages; never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _markdown(f: SourceFile, diags: Diagnostics) -> Tuple[Dict[str, Any], str]:
    text = _text(f, diags)
    parts = split(text)
    if parts.yaml_text is None or not parts.closed:
        return {}, text.strip("\n") + "\n" if text.strip() else ""
    try:
        data = load_yaml(parts.yaml_text, parts.yaml_line - 1).data
    except YamlError as exc:
        diags.error(f.path, exc.pos, exc.code or "AR001", exc.message)
        return {}, parts.body
    if not isinstance(data, dict):
        diags.error(f.path, (1, 1), "AR003", "frontmatter is not a mapping")
        data = {}
    return data, parts.body


def _sidecars(by_rel: Dict[str, SourceFile], d: str, entry: SourceFile) -> Dict[str, Any]:
    """A skill's files beside SKILL.md: references/, scripts/, assets/ and any other file."""
    out: Dict[str, Dict[str, Any]] = {}
    for path, f in sorted(by_rel.items()):
        if not path.startswith(d + "/") or f is entry:
            continue
        rest = path[len(d) + 1:]
        if rest == "index.json":
            continue
        head, _, tail = rest.partition("/")
        group = head if head in ("references", "scripts", "assets") and tail else "files"
        key = tail if group != "files" else rest
        try:
            value: Any = f.content.decode("utf-8")
        except UnicodeDecodeError:
            value = {"content": base64.b64encode(f.content).decode("ascii"), "encoding": "base64"}
        out.setdefault(group, {})[key] = value
    return out


# --- merge (§4) -------------------------------------------------------------------------

def merge(layers: Sequence[Layer]) -> Tuple[Dict[str, Any], Tuple[Tuple[str, str, str], ...], Tuple[Origin, ...]]:
    """Deep merge, later layers winning per key; context.global appended in layer order.
    Provenance: each capability entry (`rules.x`, `mcp.servers.y`) names the last layer that
    set it and the layers it overrode; each leaf key a later layer replaced does too."""
    doc: Dict[str, Any] = {}
    context: List[Tuple[str, str, str]] = []
    owner: Dict[str, Tuple[str, str]] = {}
    replaced: Dict[str, List[Tuple[str, str]]] = {}
    leaves: Dict[str, Tuple[str, str]] = {}
    for layer in layers:
        data = thaw(layer.data)
        ctx = data.pop("context", None)
        if isinstance(ctx, dict) and isinstance(ctx.get("global"), str) and ctx["global"].strip():
            context.append((ctx["global"].strip("\n") + "\n", layer.label,
                            layer.files.get("context.global", layer.root)))
        for key, value in data.items():
            for path, entry in _entries(key, value):
                who = (layer.label, _file_for(layer, path))
                if path in owner:
                    replaced.setdefault(path, []).append(owner[path])
                owner[path] = who
                _deep_set(doc, path.split("."), entry, who, leaves, replaced)
    origins = tuple(Origin(k, lyr, f, tuple(replaced.get(k, ()))) for k, (lyr, f) in sorted(owner.items()))
    overridden = tuple(Origin(k, leaves[k][0], leaves[k][1], tuple(v)) for k, v in sorted(replaced.items())
                       if k not in owner)
    return doc, tuple(context), origins + overridden


def _entries(key: str, value: Any):
    """The capability entries a layer's top-level key holds, as (dotted path, value)."""
    if key in ("rules", "commands", "skills", "agents", "hooks", "tools") and isinstance(value, dict):
        return [(f"{key}.{name}", v) for name, v in value.items()]
    if key == "mcp" and isinstance(value, dict):
        out = []
        for k, v in value.items():
            if k == "servers" and isinstance(v, dict):
                out += [(f"mcp.servers.{name}", s) for name, s in v.items()]
            else:
                out.append((f"mcp.{k}", v))
        return out
    return [(key, value)]


def _deep_set(target: Dict[str, Any], parts: List[str], value: Any, who: Tuple[str, str],
              leaves: Dict[str, Tuple[str, str]], replaced: Dict[str, List[Tuple[str, str]]],
              prefix: str = "") -> None:
    key = parts[0]
    path = f"{prefix}.{key}" if prefix else key
    if len(parts) > 1:
        if not isinstance(target.get(key), dict):
            target[key] = {}
        _deep_set(target[key], parts[1:], value, who, leaves, replaced, path)
        return
    if isinstance(target.get(key), dict) and isinstance(value, dict):
        for k, v in value.items():
            _deep_set(target[key], [k], v, who, leaves, replaced, path)
        return
    if key in target and path in leaves and target[key] != value:
        replaced.setdefault(path, []).append(leaves[path])
    target[key] = value
    _mark(value, path, who, leaves)


def _mark(value: Any, path: str, who: Tuple[str, str], leaves: Dict[str, Tuple[str, str]]) -> None:
    leaves[path] = who
    if isinstance(value, dict):
        for k, v in value.items():
            _mark(v, f"{path}.{k}", who, leaves)


def _file_for(layer: Layer, path: str) -> str:
    parts = path.split(".")
    for n in range(len(parts), 0, -1):
        f = layer.files.get(".".join(parts[:n]))
        if f:
            return f
    return layer.root


# --- validate and normalize (§3, §6) -------------------------------------------------------

def validate(doc: Dict[str, Any], origins: Sequence[Origin], diags: Diagnostics) -> None:
    where = {o.key: o.file for o in origins}

    def file_of(key: str) -> str:
        parts = key.split(".")
        for n in range(len(parts), 0, -1):
            if ".".join(parts[:n]) in where:
                return where[".".join(parts[:n])]
        return "<config>"

    for key in doc:
        if key not in CAPABILITIES and key not in CONFIG_KEYS:
            diags.error(file_of(key), (1, 1), "AR118", f"unknown top-level capability {key!r} "
                        f"(spec 000 §2: {', '.join(CAPABILITIES)})")
    body = {k: v for k, v in doc.items() if k in CAPABILITIES}
    for err in sorted(schemas.errors("canonical", body), key=lambda e: list(map(str, e.absolute_path))):
        while err.context:
            err = max(err.context, key=lambda e: len(e.absolute_path))
        path = ".".join(map(str, err.absolute_path))
        diags.error(file_of(path), (1, 1), "AR115", f"{path or '(document)'}: {err.message}")
    # The schema errors above name a section that is not an object; these checks skip it.
    for name, cmd in _mapping(doc.get("commands")).items():
        if isinstance(cmd, dict) and not str(cmd.get("prompt") or cmd.get("content") or "").strip():
            diags.error(file_of(f"commands.{name}"), (1, 1), "AR116", f"command {name!r} has no prompt or content")
    for name, skill in _mapping(doc.get("skills")).items():
        if not isinstance(skill, dict):
            continue
        targets: Dict[str, str] = {}
        for group in ("references", "scripts", "assets", "files"):
            sidecars = skill.get(group)
            for path, value in (sidecars.items() if isinstance(sidecars, dict) else ()):
                source = file_of(f"skills.{name}")
                problem = _unsafe_path(path)
                if problem:
                    diags.error(source, (1, 1), "AR117", f"skills.{name}.{group}: unsafe path {path!r} ({problem})")
                    continue
                target = path if group == "files" else f"{group}/{path}"
                clash = next((t for t in targets if t == target or t.startswith(target + "/")
                              or target.startswith(t + "/")), None)
                if clash is not None:
                    diags.error(source, (1, 1), "AR117", f"skills.{name}.{group}.{path} and {targets[clash]} cannot "
                                "both be files of the skill (one is the other's directory, or the same file)")
                targets[target] = f"{group}.{path}"
                if isinstance(value, dict) and isinstance(value.get("content"), str) and \
                        value.get("encoding") == "base64" and not _base64_ok(value["content"]):
                    diags.error(source, (1, 1), "AR115", f"skills.{name}.{group}.{path}: content is not valid base64")
    for event, value in _mapping(doc.get("hooks")).items():
        for hook in value if isinstance(value, list) else [value]:
            timeout = hook.get("timeout") if isinstance(hook, dict) else None
            if isinstance(timeout, float) and not math.isfinite(timeout):
                diags.error(file_of(f"hooks.{event}"), (1, 1), "AR115",
                            f"hooks.{event}: timeout is not a finite number of seconds")


def _mapping(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _unsafe_path(path: str) -> str:
    """Why a skill's file name cannot be written inside the skill ("" when it can)."""
    norm = posixpath.normpath(path) if path else ""
    if path.startswith("/") or norm == ".." or norm.startswith("../") or "\\" in path:
        return "relative paths inside the skill only"
    if not path or norm == "." or path.endswith("/") or "\x00" in path or path != norm:
        return "a file name: no empty, '.' or trailing '/' parts, no NUL"
    return ""


def _base64_ok(text: str) -> bool:
    """Whether `_portable` can decode it (leniently, as it does: line breaks are fine)."""
    try:
        base64.b64decode(text)
        return True
    except (binascii.Error, ValueError):
        return False


def normalize(doc: Dict[str, Any]) -> Dict[str, Any]:
    """prompt/content mirrored (commands, skills, agents); rules read `content`; hooks kept
    structured (a string stays a script, arrays stay arrays)."""
    out = {k: v for k, v in doc.items() if k in CAPABILITIES}
    for section in ("commands", "skills", "agents", "rules"):
        for name, entry in (out.get(section) or {}).items():
            if isinstance(entry, dict):
                text = entry.get("content") if entry.get("content") not in (None, "") else entry.get("prompt")
                entry["content"] = text or ""
                if section != "rules":
                    entry["prompt"] = text or ""
                else:
                    entry.pop("prompt", None)
    return out


def build_document(layers: Sequence[Layer]) -> Tuple[Document, Tuple[Diagnostic, ...]]:
    diags = Diagnostics()
    doc, context, origins = merge(layers)
    not_text = _lone_surrogate(doc)
    if not_text is None and not all(_encodable(text) for text, _, _ in context):
        not_text = "context.global"
    if not_text is not None:
        # JSON's \ud800 escapes decode to text no file can hold: writing it would fail.
        where = {o.key: o.file for o in origins}
        diags.error(where.get(not_text, next(iter(where.values()), "<config>")), (1, 1), "AR115",
                    f"{not_text or '(document)'}: a string holds a lone surrogate (a \\ud800-style JSON escape), "
                    "which is not text")
        return Document(tuple(context), freeze({}), freeze({}), origins), diags.sorted()
    tools = doc.pop("tools", {}) or {}
    validate(doc, origins, diags)
    caps = normalize(doc) if not any(d.is_error for d in diags.items) else {}
    return Document(context, freeze(caps), freeze(tools), origins), diags.sorted()


def _lone_surrogate(value: Any, path: str = "") -> Optional[str]:
    """The dotted path of the first key or string that cannot be encoded as UTF-8, else None."""
    if isinstance(value, str):
        return None if _encodable(value) else path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        sub = f"{path}.{k}" if path else str(k)
        if isinstance(k, str) and not _encodable(k):
            return path
        found = _lone_surrogate(v, sub)
        if found is not None:
            return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


# --- onto the one internal model ---------------------------------------------------------

# Claude-style tool names canonical hooks use (`tools: ["Bash"]`) -> the portable vocabulary.
HOOK_TOOLS = {"bash": "bash", "edit": "edit", "write": "write", "read": "read", "grep": "grep", "glob": "glob",
              "webfetch": "web-fetch", "websearch": "web-search", "web-fetch": "web-fetch", "web-search": "web-search"}


def to_registry(document: Document, clients: ClientNames) -> Tuple[Registry, Tuple[Diagnostic, ...]]:
    """Items and MCP servers of the document, through the portable format's checks. Each
    canonical field is mapped onto the portable one explicitly; what has no portable
    equivalent is a warning naming what happens to it."""
    families, passthrough = clients.families, clients.blocks
    diags = Diagnostics()
    caps = thaw(document.capabilities)
    entries: List[Tuple[Kind, str, str, str, Dict[str, Any], str, Tuple[Resource, ...]]] = []
    where = {o.key: o.file for o in document.origins}
    for section, kind in (("rules", Kind.RULE), ("commands", Kind.COMMAND), ("skills", Kind.SKILL),
                          ("agents", Kind.AGENT)):
        for name, entry in sorted((caps.get(section) or {}).items()):
            path = where.get(f"{section}.{name}", "<config>")
            fm, resources = _portable(kind, name, entry, path, diags)
            entries.append((kind, name, posixpath.dirname(path), path, fm, entry.get("content", ""), resources))
    for event, value in sorted((caps.get("hooks") or {}).items()):
        path = where.get(f"hooks.{event}", "<config>")
        hooks = value if isinstance(value, list) else [value]
        for i, hook in enumerate(hooks, 1):
            hook = {"script": hook} if isinstance(hook, str) else dict(hook)
            name = _slug(event) + (f"-{i}" if len(hooks) > 1 else "")
            fm = {"description": f"{event} hook from {path}", "event": event, "script": hook["script"]}
            for key in ("matcher", "async"):
                if key in hook:
                    fm[key] = hook[key]
            if "timeout" in hook:
                fm["timeout"] = max(1, int(round(hook["timeout"])))
            if hook.get("tools"):
                mapped = [HOOK_TOOLS.get(t.lower()) for t in hook["tools"]]
                if all(mapped):
                    fm["tools"] = list(dict.fromkeys(mapped))
                else:
                    fm["matcher"] = "|".join(hook["tools"])
            if hook.get("type", "command") != "command":
                diags.warning(path, (1, 1), "AR119", f"hooks.{event}: type {hook['type']!r} is not portable; "
                              "written as a command hook")
            entries.append((Kind.HOOK, name, posixpath.dirname(path), path, fm, "", ()))
    for i, (text, layer, path) in enumerate(document.context):
        name = _slug(f"context-{i + 1}-{layer}")[:64].rstrip("-")
        entries.append((Kind.CONTEXT, name, posixpath.dirname(path), path,
                        {"description": f"context.global from {layer} ({path})", "order": i}, _demote(text), ()))
    items, item_diags = _items(entries, families, passthrough)
    servers = []
    for name, server in sorted(((caps.get("mcp") or {}).get("servers") or {}).items()):
        path = where.get(f"mcp.servers.{name}", "<config>")
        servers.append(_server(name, server, path))
    bundle = Bundle(name="ai-config", path=where.get("mcp.servers", "<config>"), schema=1,
                    description="the project's canonical document", items=(), servers=tuple(servers))
    tools = thaw(document.tools)
    for target in sorted(tools):
        if target not in clients.tool_targets:
            diags.warning(where.get(f"tools.{target}", "<config>"), (1, 1), "AR119",
                          f"tools.{target}: no client of that name; its configuration is not used")
        elif not isinstance(tools[target], dict):
            diags.error(where.get(f"tools.{target}", "<config>"), (1, 1), "AR115",
                        f"tools.{target}: expected an object of settings")
    registry = Registry(tuple(sorted(items, key=lambda i: (i.kind.value, i.name))), (bundle,) if servers else (),
                        freeze({k: v for k, v in tools.items() if isinstance(v, dict)}))
    return registry, tuple(sorted(set(diags.sorted() + item_diags)))


def _items(entries: Sequence[Tuple[Kind, str, str, str, Dict[str, Any], str, Tuple[Resource, ...]]],
           families, passthrough) -> Tuple[List[Item], Tuple[Diagnostic, ...]]:
    """Items from the document's entries (kind, name, directory, source path, portable
    frontmatter, body, resources), through the same schema, name, field and body checks as
    items read from entrypoints. They have no item directory: a hook's `./script` is a path
    from the project root, run as written, so no hook gets a `script_file`."""
    diags = Diagnostics()
    out = []
    for kind, name, d, path, data, body, resources in entries:
        located = Located(data)
        if not checks.schema_ok(path, data, located, kind.value, diags, passthrough):
            continue
        checks.check_name(path, (1, 1), name, kind, name, False, diags)
        checks.check_description(path, (1, 1), data["description"], kind, diags)
        checks.check_fields(path, data, located, kind, families, passthrough, diags)
        readers = frozenset(data.get("audience", ())) & families or families
        blocks = checks.check_body(path, body, 1, families, diags, readers, kind is Kind.COMMAND)
        out.append(make_item(kind, name, d, path, data, located, body, 1, blocks, {}, tuple(resources), passthrough))
    return out, diags.sorted()


def _portable(kind: Kind, name: str, entry: Dict[str, Any], path: str,
              diags: Diagnostics) -> Tuple[Dict[str, Any], Tuple[Resource, ...]]:
    fm: Dict[str, Any] = {"description": entry.get("description") or f"{name} ({kind.value} from {path})"}
    if kind is Kind.RULE:
        globs = entry.get("globs")
        globs = split_globs(globs) if isinstance(globs, str) else list(globs or [])
        if entry.get("alwaysApply") is True and globs:
            diags.warning(path, (1, 1), "AR119",
                          f"rules.{name}: alwaysApply: true wins over globs; the rule is always on")
        elif globs:
            fm["scope"] = {"paths": globs}
        elif entry.get("alwaysApply") is False:
            diags.warning(path, (1, 1), "AR119", f"rules.{name}: alwaysApply: false without globs (apply when "
                          "relevant) has no portable form; the rule is always on")
    elif kind is Kind.SKILL:
        if entry.get("name") and entry["name"] != name:
            diags.warning(path, (1, 1), "AR119", f"skills.{name}: name {entry['name']!r} differs from the key; "
                          "the key names the skill")
        fm.update(skill_fields(entry))
    elif kind is Kind.AGENT:
        if entry.get("skills"):
            fm["preload-skills"] = list(entry["skills"])
    elif kind is Kind.COMMAND:
        for canon in ("triggers", "disableModelInvocation", "userInvocable"):
            if canon in entry:
                diags.warning(path, (1, 1), "AR119", f"commands.{name}.{canon} has no portable command field; "
                              "commands are user-invoked slash commands")
    resources: List[Resource] = []
    if kind is Kind.SKILL:
        for group in ("references", "scripts", "assets", "files"):
            for rel, value in sorted((entry.get(group) or {}).items()):
                target = rel if group == "files" else f"{group}/{rel}"
                if isinstance(value, dict):
                    content = base64.b64decode(value["content"])
                else:
                    content = str(value).encode("utf-8")
                resources.append(Resource(target, content, group == "scripts"))
    return fm, tuple(resources)


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


def _server(name: str, server: Dict[str, Any], path: str) -> McpServer:
    raw: Dict[str, Any] = {}
    if "url" in server:
        remote = {"type": server.get("type", "http"), "url": server["url"]}
        if server.get("headers"):
            remote["headers"] = server["headers"]
        raw["remote"] = remote
    else:
        local = {"command": server["command"]}
        for key in ("args", "env"):
            if server.get(key):
                local[key] = server[key]
        raw["local"] = local
    for key in ("disabled", "autoApprove", "scope"):
        if key in server:
            raw[key] = server[key]
    common = dict(name=name, bundle="ai-config", path=path, pos=(1, 1), fields=freeze(raw))
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
