"""Reading one layer of a canonical project (spec 000 §4.2): a preset's or `.ai/`'s files,
or an `ai.config.*` file's data, as a partial canonical document with, for each entry,
the file it came from and where its keys are written.

Kept apart from the merge and the conversion (`canonical.document`, `canonical.convert`)
because it is the one part that knows the directory layout: `rules/<name>/prompt.md`,
`skills/<name>/SKILL.md` with its files, `hooks/<name>/index.json`, `mcp.json`,
`tools/<tool>/config.json`. Pure: the files come in as a `SourceTree`.
"""

from __future__ import annotations

import base64
import json
import posixpath
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.frozen import FrozenMap, freeze
from agentrc.model import SourceFile, SourceTree
from agentrc.text.frontmatter import split
from agentrc.text.markedblock import block_render
from agentrc.text.position import line_col
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple
    Pos = Tuple[int, int]
# The directories of a layer holding a markdown entry, and the files that may be its body.
_SECTIONS = (("rules", ("prompt.md", "AGENTS.md")), ("commands", ("prompt.md",)),
             ("agents", ("prompt.md", "AGENTS.md")), ("skills", ("SKILL.md",)))
# Keys of ai.config.* that say how the layers are found: not content of the layer.
_NOT_CONTENT = ("presets", "preset", "language", "$schema", "capabilities")


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


def layer_from_tree(label: str, root: str, tree: SourceTree, diags: Diagnostics,
                    config: Optional[Dict[str, Any]] = None, config_path: str = "",
                    language: str = "", config_positions: Optional[Dict[str, Pos]] = None,
                    layout: Optional[Dict[str, str]] = None) -> Layer:
    """A directory with the §4.2 layout (a preset or `.ai/`), or a config file's data.
    `layout`, when given, places each file (by its display path) in the layout instead of
    its path under `root` (a capability reference's files, shown where they came from)."""
    reading = _Reading(_by_layout(root, tree, layout), language, diags)
    reading.context()
    reading.sections()
    reading.hooks()
    reading.mcp_and_tools()
    if config is not None:
        reading.config(config, config_path)
        if config_positions:
            reading.positions.update({k: p for k, p in config_positions.items() if k.split(".")[0] in reading.data})
    return Layer(label, root, freeze(reading.data), FrozenMap(reading.origin), FrozenMap(reading.positions))


def _by_layout(root: str, tree: SourceTree, layout: Optional[Dict[str, str]]) -> Dict[str, SourceFile]:
    """The tree's files by their path in the layout: under `root`, or as `layout` places them."""
    if layout is not None:
        return {layout[f.path]: f for f in tree.files if f.path in layout}
    # The files' display paths are normalized (`.ai/x`, never `./.ai/x`): so is the prefix.
    prefix = posixpath.normpath(root) + "/" if root else ""

    def rel(path: str) -> str:
        if prefix == "./":
            return path[2:] if path.startswith("./") else path
        return path[len(prefix):] if prefix and path.startswith(prefix) else path
    return {rel(f.path): f for f in tree.files}


class _Reading:
    """One layer's data, origins and positions as its files are read, in §4.2's order."""

    def __init__(self, by_rel: Dict[str, SourceFile], language: str, diags: Diagnostics) -> None:
        self.by_rel, self.language, self.diags = by_rel, language, diags
        self.data: Dict[str, Any] = {}
        self.origin: Dict[str, str] = {}
        self.positions: Dict[str, Pos] = {}

    def pick(self, directory: str, names: Sequence[str]) -> Optional[SourceFile]:
        """prompt.<language>.md before prompt.md (ai-jue's localized files)."""
        for name in names:
            stem, ext = posixpath.splitext(name)
            for candidate in ([f"{stem}.{self.language}{ext}"] if self.language else []) + [name]:
                f = self.by_rel.get(posixpath.join(directory, candidate) if directory else candidate)
                if f is not None:
                    return f
        return None

    def context(self) -> None:
        context = self.pick("", ["AGENTS.md"])
        if context is not None:
            self.data["context"] = {"global": _text(context, self.diags)}
            self.origin["context.global"] = context.path

    def sections(self) -> None:
        for section, candidates in _SECTIONS:
            for name in _subdirs(self.by_rel, section):
                self.entry(section, name, candidates)

    def entry(self, section: str, name: str, candidates: Sequence[str]) -> None:
        """`<section>/<name>/`: its markdown file, with index.json's fields (and a skill's files)."""
        d = f"{section}/{name}"
        f = self.pick(d, candidates)
        meta_file = self.by_rel.get(f"{d}/index.json")
        meta = _meta(meta_file, self.diags)
        if meta_file is not None:
            self.positions.update(_json_positions(meta_file, meta, f"{section}.{name}"))
        if f is None:
            if meta_file is not None:
                self.diags.error(meta_file.path, (1, 1), "AR115", f"{section}/{name} has index.json but no "
                                 f"{' or '.join(candidates)}")
            return
        attrs, body, where = _markdown(f, self.diags)
        self.positions.update({f"{section}.{name}.{k}": p for k, p in where.items()})
        entry = {**meta, **attrs, "content": body}
        if section == "skills":
            entry.update(_sidecars(self.by_rel, d, f))
        self.data.setdefault(section, {})[name] = entry
        self.origin[f"{section}.{name}"] = f.path

    def hooks(self) -> None:
        for name in _subdirs(self.by_rel, "hooks"):
            hook = _hook_from_tree(self.by_rel, name, self.pick(f"hooks/{name}", ["prompt.md"]), self.diags)
            if hook is not None:
                self.data.setdefault("hooks", {})[name], self.origin[f"hooks.{name}"], where = hook
                self.positions.update(where)

    def mcp_and_tools(self) -> None:
        mcp = self.by_rel.get("mcp.json")
        if mcp is not None:
            self.data["mcp"] = _json(mcp, self.diags)
            servers = self.data["mcp"].get("servers") if isinstance(self.data["mcp"], dict) else None
            for name in servers if isinstance(servers, dict) else {}:
                self.origin[f"mcp.servers.{name}"] = mcp.path
        for name in _subdirs(self.by_rel, "tools"):
            f = self.by_rel.get(f"tools/{name}/config.json")
            if f is not None:
                self.data.setdefault("tools", {})[name] = _json(f, self.diags)
                self.origin[f"tools.{name}"] = f.path

    def config(self, config: Dict[str, Any], config_path: str) -> None:
        """An `ai.config.*` file's keys: every entry comes from the file itself."""
        for key, value in config.items():
            if key in _NOT_CONTENT:
                continue
            self.data[key] = value
            if key == "context" and isinstance(value, dict) and "global" in value:
                self.origin["context.global"] = config_path
            elif isinstance(value, dict):
                for name in value:
                    self.origin[f"{key}.{name}"] = config_path
                    if key == "mcp" and name == "servers" and isinstance(value[name], dict):
                        for server in value[name]:
                            self.origin[f"mcp.servers.{server}"] = config_path
            else:
                self.origin[key] = config_path


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


def _meta(f: Optional[SourceFile], diags: Diagnostics, array: bool = False) -> Any:
    """An entry's index.json: its keys merge into the entry, so anything but an object (null,
    a number; a list where `array` is False) is an error here rather than a TypeError in the
    merge. A hook's may hold a list (`array`): its definitions, checked with the document."""
    if f is None:
        return {}
    data = _json(f, diags)
    if array and isinstance(data, list):
        return data
    if not isinstance(data, dict):
        want = "an object of fields or an array of hooks" if array else "an object of fields"
        diags.error(f.path, (1, 1), "AR115", f"index.json holds {_json_type(data)}, not {want}")
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


def _hook_from_tree(by_rel: Dict[str, SourceFile], name: str, prompt: Optional[SourceFile],
                    diags: Diagnostics) -> Optional[Tuple[Any, str, Dict[str, Pos]]]:
    """hooks/<name>/index.json, with prompt.md as the script, -> hooks.<name> (spec 000 §4.2)
    as (value, the file it came from, positions), or None for an empty directory. index.json
    holds an object of fields, or an array of whole hook definitions, each with its script:
    §3.6 allows an array (several hooks for one event) wherever hooks are written, so the
    `.ai/` tree takes what `ai.config` takes. prompt.md beside an array is AR115: it could be
    the script of any of them."""
    meta_file = by_rel.get(f"hooks/{name}/index.json")
    meta = _meta(meta_file, diags, array=True)
    if isinstance(meta, list):
        assert meta_file is not None  # a list is read only from meta_file
        if prompt is not None:
            diags.error(prompt.path, (1, 1), "AR115", f"hooks/{name}: prompt.md beside an index.json that holds "
                        "an array; each hook of the array carries its own script")
            return None
        return (meta, meta_file.path, {f"hooks.{name}": (1, 1)}) if meta else None
    where = _json_positions(meta_file, meta, f"hooks.{name}") if meta_file is not None else {}
    if prompt is not None:
        script = _text(prompt, diags).strip()
        return ({**meta, "script": script} if meta else script), prompt.path, where
    if meta_file is not None and meta:
        return meta, meta_file.path, where
    return None


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
