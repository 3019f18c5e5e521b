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
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from agentrc import names, schemas
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fidelity import DEGRADED, DROPPED, ItemReport, Tracker
from agentrc.frozen import FrozenMap, freeze, thaw
from agentrc.model import (
    HOOK_EVENTS,
    Bundle,
    ClientNames,
    Item,
    Kind,
    McpServer,
    Registry,
    Resource,
    SourceFile,
    SourceTree,
)
from agentrc.portable import checks
from agentrc.portable.items import make_item
from agentrc.text.frontmatter import split
from agentrc.text.markdown import demote_headings, has_h1
from agentrc.text.markedblock import block_render
from agentrc.text.position import line_col
from agentrc.text.yamlpos import Located, YamlError
from agentrc.text.yamlpos import load as load_yaml
from agentrc.vocabulary import MODEL_ALIASES, TOOLS, check_model

Pos = Tuple[int, int]
CAPABILITIES = ("rules", "commands", "skills", "agents", "hooks", "mcp")
# Keys of ai.config.* besides the capabilities: how the layers are found, not content.
CONFIG_KEYS = ("presets", "preset", "language", "context", "tools", "$schema", "capabilities")


@dataclass(frozen=True)
class Layer:
    """One input layer: its data as a partial canonical document and, for each capability
    entry (`rules.x`, `mcp.servers.y`, `context.global`), the file it came from."""

    label: str  # "preset base", ".ai", "AGENTS.md", "ai.config.js"
    root: str  # display path of the layer's directory or file
    data: FrozenMap
    files: FrozenMap = field(default_factory=FrozenMap)
    # (line, column) in its file of each key the layer sets, where known (`agents.x.tools`,
    # `agents.x.content` for a body's first line); diagnostics point there.
    positions: FrozenMap = field(default_factory=FrozenMap)


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
    # dotted key -> (file, (line, column)) of the definition that won, where known
    spots: FrozenMap = field(default_factory=FrozenMap)

    def origin(self, key: str) -> Optional[Origin]:
        for o in self.origins:
            if o.key == key:
                return o
        return None

    def at(self, key: str) -> Tuple[str, Pos]:
        """The file and position of a dotted key: where it was written when known, else the
        first line of the file of its nearest enclosing entry."""
        spot = self.spots.get(key)
        if spot is not None:
            return spot[0], tuple(spot[1])  # type: ignore[return-value]
        where = {o.key: o.file for o in self.origins}
        parts = key.split(".")
        for n in range(len(parts), 0, -1):
            f = where.get(".".join(parts[:n]))
            if f:
                return f, (1, 1)
        return "<config>", (1, 1)

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
                    language: str = "", config_positions: Optional[Dict[str, Pos]] = None,
                    layout: Optional[Dict[str, str]] = None) -> Layer:
    """A directory with the §4.2 layout (a preset or `.ai/`), or a config file's data.
    `layout`, when given, places each file (by its display path) in the layout instead of
    its path under `root` (a capability reference's files, shown where they came from)."""
    files = {f.path: f for f in tree.files}
    data: Dict[str, Any] = {}
    origin: Dict[str, str] = {}
    positions: Dict[str, Pos] = {}

    # The files' display paths are normalized (`.ai/x`, never `./.ai/x`): so is the prefix.
    prefix = posixpath.normpath(root) + "/" if root else ""

    def rel(path: str) -> str:
        if prefix == "./":
            return path[2:] if path.startswith("./") else path
        return path[len(prefix):] if prefix and path.startswith(prefix) else path

    by_rel = {(layout[p] if layout is not None else rel(p)): f for p, f in files.items()
              if layout is None or p in layout}

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
            if meta_file is not None:
                positions.update(_json_positions(meta_file, meta, f"{section}.{name}"))
            if f is None:
                if meta_file is not None:
                    diags.error(meta_file.path, (1, 1), "AR115", f"{section}/{name} has index.json but no "
                                f"{' or '.join(candidates)}")
                continue
            attrs, body, where = _markdown(f, diags)
            positions.update({f"{section}.{name}.{k}": p for k, p in where.items()})
            entry = {**meta, **attrs, "content": body}
            if section == "skills":
                entry.update(_sidecars(by_rel, d, f))
            data.setdefault(section, {})[name] = entry
            origin[f"{section}.{name}"] = f.path
    for name in _subdirs(by_rel, "hooks"):
        d = f"hooks/{name}"
        meta_file, prompt = by_rel.get(f"{d}/index.json"), pick(d, ["prompt.md"])
        meta = _meta(meta_file, diags)
        if meta_file is not None:
            positions.update(_json_positions(meta_file, meta, f"hooks.{name}"))
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
            if key in ("presets", "preset", "language", "$schema", "capabilities"):
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
    if config is not None and config_positions:
        positions.update({k: p for k, p in config_positions.items() if k.split(".")[0] in data})
    return Layer(label, root, freeze(data), FrozenMap(origin), FrozenMap(positions))


def strip_managed_block(text: str) -> str:
    """The root AGENTS.md minus the blocks a generator wrote into it (agentrc's, and ai-jue's
    `<!-- AI-JUE:START -->` ... `<!-- AI-JUE:END -->`, which holds what it wrote from the
    presets read here as layers): input never includes output."""
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


def _markdown(f: SourceFile, diags: Diagnostics) -> Tuple[Dict[str, Any], str, Dict[str, Pos]]:
    """A prompt.md's frontmatter and body, with the position of each key and of the body's
    first line (under `content`)."""
    text = _text(f, diags)
    parts = split(text)
    if parts.yaml_text is None or not parts.closed:
        first = 1 + len(text) - len(text.lstrip("\n"))
        return {}, text.strip("\n") + "\n" if text.strip() else "", {"content": (first, 1)}
    body_at = {"content": (parts.body_line, 1)}
    try:
        located = load_yaml(parts.yaml_text, parts.yaml_line - 1)
    except YamlError as exc:
        diags.error(f.path, exc.pos, exc.code or "AR001", exc.message)
        return {}, parts.body, body_at
    data = located.data
    if not isinstance(data, dict):
        diags.error(f.path, (1, 1), "AR003", "frontmatter is not a mapping")
        return {}, parts.body, body_at
    return data, parts.body, {**{str(k): located.pos((k,)) for k in data}, **body_at}


def _json_positions(f: SourceFile, data: Dict[str, Any], prefix: str) -> Dict[str, Pos]:
    """Where each top-level key of a JSON object file is written (the first `"key":` in
    the text; a key spelled with escapes is not found and keeps the file's 1:1)."""
    text = _text(f, Diagnostics())
    out: Dict[str, Pos] = {}
    for key in data:
        at = text.find(json.dumps(key, ensure_ascii=False))
        if at >= 0:
            out[f"{prefix}.{key}"] = line_col(text, at)
    return out


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
    doc, context, origins, _ = merge_with_spots(layers)
    return doc, context, origins


def merge_with_spots(layers: Sequence[Layer]):
    """`merge`, plus where each key that won was written: dotted key -> (file, (line, column))."""
    doc: Dict[str, Any] = {}
    context: List[Tuple[str, str, str]] = []
    owner: Dict[str, Tuple[str, str]] = {}
    replaced: Dict[str, List[Tuple[str, str]]] = {}
    leaves: Dict[str, Tuple[str, str]] = {}
    written: Dict[Tuple[Tuple[str, str], str], Pos] = {}
    for layer in layers:
        for key, pos in layer.positions.items():
            written[((layer.label, _file_for(layer, key)), key)] = tuple(pos)  # type: ignore[assignment]
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
    spots = {k: (who[1], written[(who, k)]) for k, who in leaves.items() if (who, k) in written}
    return doc, tuple(context), origins + overridden, spots


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

def validate(doc: Dict[str, Any], origins: Sequence[Origin], diags: Diagnostics,
             spots: Optional[Dict[str, Tuple[str, Pos]]] = None) -> None:
    at = Document((), FrozenMap(), FrozenMap(), tuple(origins), FrozenMap(spots or {})).at

    def error(key: str, code: str, message: str) -> None:
        diags.error(*at(key), code, message)

    for key in doc:
        if key not in CAPABILITIES and key not in CONFIG_KEYS:
            error(key, "AR118", f"unknown top-level capability {key!r} (spec 000 §2: {', '.join(CAPABILITIES)})")
    body = {k: v for k, v in doc.items() if k in CAPABILITIES}
    for err in sorted(schemas.errors("canonical", body), key=lambda e: list(map(str, e.absolute_path))):
        while err.context:
            err = max(err.context, key=lambda e: len(e.absolute_path))
        path = ".".join(map(str, err.absolute_path))
        error(path, "AR115", f"{path or '(document)'}: {err.message}")
    # The schema errors above name a section that is not an object; these checks skip it.
    for name, cmd in _mapping(doc.get("commands")).items():
        if isinstance(cmd, dict) and not str(cmd.get("prompt") or cmd.get("content") or "").strip():
            error(f"commands.{name}", "AR116", f"command {name!r} has no prompt or content")
    for name, skill in _mapping(doc.get("skills")).items():
        if not isinstance(skill, dict):
            continue
        targets: Dict[str, str] = {}
        for group in ("references", "scripts", "assets", "files"):
            sidecars = skill.get(group)
            for path, value in (sidecars.items() if isinstance(sidecars, dict) else ()):
                key = f"skills.{name}.{group}"
                problem = _unsafe_path(path)
                if problem:
                    error(key, "AR117", f"skills.{name}.{group}: unsafe path {path!r} ({problem})")
                    continue
                target = path if group == "files" else f"{group}/{path}"
                clash = next((t for t in targets if t == target or t.startswith(target + "/")
                              or target.startswith(t + "/")), None)
                if clash is not None:
                    error(key, "AR117", f"skills.{name}.{group}.{path} and {targets[clash]} cannot "
                          "both be files of the skill (one is the other's directory, or the same file)")
                targets[target] = f"{group}.{path}"
                if isinstance(value, dict) and isinstance(value.get("content"), str) and \
                        value.get("encoding") == "base64" and not _base64_ok(value["content"]):
                    error(key, "AR115", f"skills.{name}.{group}.{path}: content is not valid base64")
    for event, value in _mapping(doc.get("hooks")).items():
        for hook in value if isinstance(value, list) else [value]:
            timeout = hook.get("timeout") if isinstance(hook, dict) else None
            if isinstance(timeout, float) and not math.isfinite(timeout):
                error(f"hooks.{event}.timeout", "AR115", f"hooks.{event}: timeout is not a finite number of seconds")


def _nowhere(key: str) -> Tuple[str, Pos]:
    return "<config>", (1, 1)


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


def normalize(doc: Dict[str, Any], diags: Optional[Diagnostics] = None,
              at: Optional[Callable[[str], Tuple[str, Pos]]] = None) -> Dict[str, Any]:
    """prompt/content mirrored (commands, skills, agents); rules read `content`; hooks kept
    structured (a string stays a script, arrays stay arrays). A `prompt` that differs from a
    non-empty `content` is a warning: content wins, the prompt is not used."""
    out = {k: v for k, v in doc.items() if k in CAPABILITIES}
    for section in ("commands", "skills", "agents", "rules"):
        for name, entry in (out.get(section) or {}).items():
            if isinstance(entry, dict):
                prompt = entry.get("prompt")
                if diags is not None and entry.get("content") not in (None, "") and prompt not in (None, "") \
                        and str(prompt).strip() != str(entry["content"]).strip():
                    diags.warning(*(at or _nowhere)(f"{section}.{name}.prompt"), "AR119",
                                  f"{section}.{name}.prompt differs from its content; the content is the body, "
                                  "the prompt is not used")
                text = entry.get("content") if entry.get("content") not in (None, "") else entry.get("prompt")
                entry["content"] = text or ""
                if section != "rules":
                    entry["prompt"] = text or ""
                else:
                    entry.pop("prompt", None)
    return out


def build_document(layers: Sequence[Layer]) -> Tuple[Document, Tuple[Diagnostic, ...]]:
    diags = Diagnostics()
    doc, context, origins, spots = merge_with_spots(layers)
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
    validate(doc, origins, diags, spots)
    at = Document((), FrozenMap(), FrozenMap(), origins, FrozenMap(spots)).at
    caps = normalize(doc, diags, at) if not any(d.is_error for d in diags.items) else {}
    return Document(context, freeze(caps), freeze(tools), origins, FrozenMap(spots)), diags.sorted()


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
    for target in sorted(tools):
        if target not in clients.tool_targets:
            diags.warning(*document.at(f"tools.{target}"), "AR119",
                          f"tools.{target}: no client of that name; its configuration is not used")
        elif not isinstance(tools[target], dict):
            diags.error(*document.at(f"tools.{target}"), "AR115", f"tools.{target}: expected an object of settings")
    registry = Registry(tuple(sorted(items, key=lambda i: (i.kind.value, i.name))), (bundle,) if servers else (),
                        freeze({k: v for k, v in tools.items() if isinstance(v, dict)}))
    return Conversion(registry, tuple(sorted(set(diags.sorted() + item_diags))), tuple(reports))


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
    path = acc.file
    fm: Dict[str, Any] = {}
    ok = True
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
    resources: List[Resource] = []
    if kind is Kind.RULE:
        _rule_scope(entry, fm, acc)
    elif kind is Kind.SKILL:
        resources = _skill(entry, fm, acc)
    elif kind is Kind.AGENT:
        if "skills" in entry:
            fm["preload-skills"] = list(entry["skills"])
            acc.carried("skills", "preload-skills", "preload-skills")
        ok = _tool_list(entry, fm, acc, "tools") and ok
    elif kind is Kind.COMMAND:
        for canon in ("triggers", "disableModelInvocation", "userInvocable"):
            if canon in entry:
                acc.lost(canon, DROPPED, "no portable command field; commands are user-invoked slash commands",
                         f"commands.{name}.{canon} has no portable command field; commands are user-invoked slash "
                         "commands")
        ok = _tool_list(entry, fm, acc, "tools") and ok
    if kind in (Kind.AGENT, Kind.COMMAND) and "model" in entry:
        _model(entry["model"], fm, acc)
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
    if not ok:
        return None
    return _Entry(kind, name, path, fm, body, tuple(resources), acc.positions, body_line)


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
