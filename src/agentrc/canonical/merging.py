"""The canonical document's merge, checks and shape (spec 000 §3, §4): layers in, one
`Document` out, with the layer and file each entry and overridden key came from.

Apart from the reading of a layer's files (`canonical.layers`) and the mapping onto the
one internal model (`canonical.convert`): this is the part that knows the document's
shapes and merge order, and nothing of directory layouts or of items. Pure.
"""

from __future__ import annotations

import base64
import binascii
import math
import posixpath
from dataclasses import field

from agentrc import schemas
from agentrc.canonical.layers import Layer, layer_from_tree, strip_managed_block  # noqa: F401
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.frozen import FrozenMap, freeze, thaw

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

    from agentrc.canonical.layers import Pos


CAPABILITIES = ("rules", "commands", "skills", "agents", "hooks", "mcp")
# Keys of ai.config.* besides the capabilities: how the layers are found, not content.
CONFIG_KEYS = ("presets", "preset", "language", "context", "tools", "$schema", "capabilities")


@dataclass(frozen=True)
class Origin:
    """Where a merged key of the canonical document was defined, and the definitions it replaced."""
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
