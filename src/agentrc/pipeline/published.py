"""A published layout (`importers.published`) as a portable registry: what a consumed
source of that layout installs, and what `agentrc import` of it writes.

Each part is imported by its client's importer into a canonical document and written as
portable items (`importing.portable_that_lints`, so what comes out lints clean): a named
part (a plugin) below a directory of its name with a bundle of its name listing its items
and MCP servers; a flat part (a Copilot layout) at the root, with no bundle unless it has
MCP servers. Two plugins with an item of one kind and name: each is installed as
`PLUGIN-NAME`, with a warning (the same deterministic choice on every machine).

`digests` holds, for each item directory and bundle, the source bytes it was read from
(`importers.published.origins_of`): the lock's digests stay digests of the files as
published, not of agentrc's reading of them, so a new agentrc that reads a layout better
does not make a locked install look changed.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import field, replace

from agentrc.classcode import dataclass
from agentrc.diagnostics import WARNING, Diagnostic
from agentrc.importers import published as layouts
from agentrc.importers.published import Part, Redirect
from agentrc.model import SourceFile, SourceTree
from agentrc.names import valid_name
from agentrc.text.lazy import lazy_module
from agentrc.text.yamlemit import dump_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set, Tuple

    from agentrc.importers import document as importer
    from agentrc.pipeline import importing
else:  # imported once a source has a published layout: a portable one installs without the importers
    importer = lazy_module("agentrc.importers.document")
    importing = lazy_module("agentrc.pipeline.importing")

KINDS = ("rules", "skills", "agents", "commands", "hooks", "contexts")
_HEAD = "schema: 1\nname: imported\ndescription: Everything agentrc import found in the project\n"


@dataclass(frozen=True)
class Published:
    """A published layout read as a registry: its portable files (display paths below the
    source's root), the source bytes each item and bundle came from (`digests`), the
    plugins that live in other repositories, and what reading found."""

    layout: str
    tree: SourceTree
    digests: SourceTree
    redirects: Tuple[Redirect, ...]
    diagnostics: Tuple[Diagnostic, ...]
    # A file as published -> the item directory or bundle file it was read into (a file of
    # several items, a plugin's manifest: its bundle): what a finding about it concerns.
    owners: Dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    parts: Tuple[Tuple[str, str], ...] = ()  # a plugin's directory as published -> its bundle file

    def owner(self, path: str) -> Optional[str]:
        """The item directory or bundle a finding at `path` (as published) concerns."""
        found = self.owners.get(path)
        if found is not None:
            return found
        for root, bundle in self.parts:
            if path == root or path.startswith(root + "/"):
                return bundle
        return None


def portable(tree: SourceTree, root: str = "") -> Optional[Published]:
    """`tree`'s published layout as portable items and bundles; None when it has none."""
    layout = layouts.read(tree, root)
    if layout is None:
        return None
    root = layouts.root_of(tree, root)
    sources = {f.path: f for f in tree.files}
    # a plugin's hooks are named after it (two plugins' PreToolUse hooks never clash)
    read = [(part, importer.import_project(part.client, part.tree, part.root, source=part.name or ""))
            for part in layout.parts]
    renames, shared = _clashes(read), _shared(read)
    if len(read) > 1:  # `plugin:name` in one plugin's bodies may name another's item: read again knowing all
        namespaces = _namespaces(read, renames)
        read = [(part, importer.import_project(part.client, part.tree, part.root, source=part.name or "",
                                               namespaces=namespaces)) for part, _ in read]
    out = _Out(list(layout.diagnostics))
    for index, (part, imported) in enumerate(read):
        mine = renames.get(index, {})
        doc, fields = _renamed(imported.document, imported.fields, mine)
        prefix = _join(root, part.name) if part.name else root
        where = _origin(part, "")
        items, written = importing.portable_that_lints(doc, fields, prefix, where)
        old_of = {new: old for (_, old), new in mine.items()}
        out.found.extend(_back(part, d) for d in imported.diagnostics)
        out.found.extend(_written_back(part, prefix, d, old_of) for d in written)
        for (kind, old), new in sorted(mine.items()):
            out.found.append(Diagnostic(where, 1, 1, WARNING, "AR130", f"{kind[:-1]} {old} of plugin {part.name} "
                                        f"is installed as {new}: another plugin of this source has one of that name"))
        placed, bundle = _placed(part, items, prefix, shared.get(index, set()))
        out.files.extend(placed)
        if bundle is not None:
            out.digests.append(bundle)
            if part.name is not None:
                out.parts.append((part.root, bundle.path))
        out.digest(part, prefix, [f for f in placed if f is not bundle], old_of, sources)
    return out.published(layout)


class _Out:
    """What `portable` gathers over the parts."""

    def __init__(self, found: List[Diagnostic]):
        self.found = found
        self.files: List[SourceFile] = []
        self.digests: List[SourceFile] = []
        self.owners: Dict[str, Set[str]] = {}
        self.parts: List[Tuple[str, str]] = []

    def digest(self, part: Part, prefix: str, placed: List[SourceFile], old_of: Dict[str, str],
               sources: Dict[str, SourceFile]) -> None:
        """Each placed item directory's source files, as published, below that directory."""
        dirs = sorted({"/".join(posixpath.relpath(f.path, prefix).split("/")[:2]) for f in placed})
        origin = layouts.origins_of(part, sorted({old_of.get(d.split("/")[1], d.split("/")[1]) for d in dirs}))
        for d in dirs:
            directory = _join(prefix, d)
            for src in origin[old_of.get(d.split("/")[1], d.split("/")[1])]:
                self.owners.setdefault(src, set()).add(directory)
                f = sources.get(src)
                if f is not None:
                    rel = posixpath.relpath(src, part.root) if part.root else src
                    self.digests.append(SourceFile(f"{directory}/{rel}", f.content, f.executable))

    def published(self, layout: layouts.Layout) -> Published:
        return Published(layout.kind, SourceTree(tuple(sorted(self.files, key=lambda f: f.path))),
                         SourceTree(tuple(sorted(self.digests, key=lambda f: f.path))), layout.redirects,
                         tuple(sorted(set(self.found))),
                         {src: next(iter(d)) for src, d in self.owners.items() if len(d) == 1},
                         tuple(sorted(self.parts, key=lambda p: -len(p[0]))))


def _join(root: str, rel: str) -> str:
    return posixpath.join(root, rel) if root and root != "." else rel


def _origin(part: Part, path: str) -> str:
    """The source file a placed display path came from (the path itself when it was not
    placed: the part's root for "")."""
    if not path:
        return next(iter(sorted(part.origins.values())), part.root or ".") if part.name is None else \
            _join(part.root, layouts.PLUGIN)
    return part.origins.get(path, path)


def _back(part: Part, d: Diagnostic) -> Diagnostic:
    """`d` pointing at the file as published; an importer's error is a warning here (a file
    that cannot be imported is skipped, as `agentrc import` does without --strict)."""
    return replace(d, path=part.origins.get(d.path, d.path), severity=WARNING if d.is_error else d.severity)


def _written_back(part: Part, prefix: str, d: Diagnostic, old_of: Dict[str, str]) -> Diagnostic:
    """A finding about a portable item (lint of what the import wrote) at the file it was
    read from, as published."""
    rel = posixpath.relpath(d.path, prefix) if prefix else d.path
    bits = rel.split("/")
    if len(bits) < 3 or bits[0] not in KINDS:
        return d
    name = old_of.get(bits[1], bits[1])
    srcs = layouts.origins_of(part, [name])[name]
    entry = [p for p in srcs if p.endswith(".md")] or srcs
    return replace(d, path=entry[0], line=1, col=1) if entry else d


def _clashes(read: List[Tuple[Part, importer.Imported]]) -> Dict[int, Dict[Tuple[str, str], str]]:
    """For each part, its items whose kind and name another part also has: the new name
    (`PLUGIN-NAME`, when that is a valid name no part has)."""
    owners: Dict[Tuple[str, str], List[int]] = {}
    for index, (_, imported) in enumerate(read):
        for kind in KINDS:
            for name in (imported.document.get(kind) or {}):
                owners.setdefault((kind, name), []).append(index)
    taken: Set[Tuple[str, str]] = set(owners)
    renames: Dict[int, Dict[Tuple[str, str], str]] = {}
    for (kind, name), indexes in sorted(owners.items()):
        if len(indexes) < 2 or len({_signature(read[i][1], kind, name) for i in indexes}) == 1:
            continue  # one name, or the same item listed by several plugins (written once: `_shared`)
        for index in indexes:
            plugin = read[index][0].name or "root"
            new = f"{plugin}-{name}"
            if valid_name(new) and (kind, new) not in taken:
                taken.add((kind, new))
                renames.setdefault(index, {})[(kind, name)] = new
    return renames


def _signature(imported: importer.Imported, kind: str, name: str) -> str:
    """What an item is, to compare two plugins' items of one name."""
    return json.dumps([imported.document[kind][name], imported.fields.get(f"{kind}.{name}")], sort_keys=True,
                      default=str)


def _shared(read: List[Tuple[Part, importer.Imported]]) -> Dict[int, Set[str]]:
    """For each part, the item directories ("skills/NAME") an earlier part writes the same
    item at: the later part's bundle lists it, its files are written once."""
    first: Dict[Tuple[str, str], int] = {}
    later: Dict[int, Set[str]] = {}
    for index, (_, imported) in enumerate(read):
        for kind in KINDS:
            for name in (imported.document.get(kind) or {}):
                if (kind, name) not in first:
                    first[(kind, name)] = index
                elif _signature(read[first[(kind, name)]][1], kind, name) == _signature(imported, kind, name):
                    later.setdefault(index, set()).add(f"{kind}/{name}")
    return later


def _namespaces(read: List[Tuple[Part, importer.Imported]], renames: Dict[int, Dict[Tuple[str, str], str]]
                ) -> Dict[str, Dict[str, str]]:
    """plugin -> item name -> the name it is installed under, for every named part."""
    found: Dict[str, Dict[str, str]] = {}
    for index, (part, imported) in enumerate(read):
        if part.name is None:
            continue
        mine = renames.get(index, {})
        found[part.name] = {name: mine.get((kind, name), name) for kind in KINDS
                            for name in (imported.document.get(kind) or {})}
    return found


def _renamed(doc: Dict[str, Any], fields: Dict[str, Dict[str, Any]], renames: Dict[Tuple[str, str], str]
             ) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]:
    """The document and item fields with `renames` ((kind, old) -> new) applied."""
    if not renames:
        return doc, fields
    doc = dict(doc)
    fields = dict(fields)
    for (kind, old), new in renames.items():
        entries = dict(doc.get(kind) or {})
        if old in entries:
            entries[new] = entries.pop(old)
            doc[kind] = entries
        if f"{kind}.{old}" in fields:
            fields[f"{kind}.{new}"] = fields.pop(f"{kind}.{old}")
    return doc, fields


def _placed(part: Part, items: SourceTree, prefix: str,
            elsewhere: Set[str]) -> Tuple[List[SourceFile], Optional[SourceFile]]:
    """The portable files of one part below `prefix`, its bundle named after the part (a
    flat part keeps a bundle only for its MCP servers); items another part writes
    (`elsewhere`) are listed, not written again."""
    out: List[SourceFile] = []
    bundle = None
    for f in items.files:
        if "/".join(f.path.split("/")[:2]) in elsewhere:
            continue
        if f.path != importer.BUNDLE:
            out.append(SourceFile(_join(prefix, f.path), f.content, f.executable))
            continue
        text = f.content.decode("utf-8")
        if part.name is not None:
            head = dump_yaml({"schema": 1, "name": part.name, "description": part.description})
            bundle = SourceFile(_join(prefix, f"{part.name}.bundle.yaml"), text.replace(_HEAD, head, 1).encode())
        elif "\nmcps:" in text:
            head = dump_yaml({"schema": 1, "name": "mcp-servers",
                              "description": "The MCP servers of the source's layout"})
            body = text.replace(_HEAD, head, 1)
            body = body.split("items:\n")[0] + "mcps:" + body.split("\nmcps:", 1)[1] if "items:\n" in body else body
            bundle = SourceFile(_join(prefix, "mcp-servers.bundle.yaml"), body.encode())
        if bundle is not None:
            out.append(bundle)
    return out, bundle
