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

import posixpath
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Set, Tuple

from agentrc.diagnostics import WARNING, Diagnostic
from agentrc.importers import document as importer
from agentrc.importers import published as layouts
from agentrc.importers.published import Part, Redirect
from agentrc.model import SourceFile, SourceTree
from agentrc.names import valid_name
from agentrc.pipeline import importing
from agentrc.text.yamlemit import dump_yaml

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
    owners: Tuple[Tuple[str, str], ...] = ()
    parts: Tuple[Tuple[str, str], ...] = ()  # a plugin's directory as published -> its bundle file

    def owner(self, path: str) -> Optional[str]:
        """The item directory or bundle a finding at `path` (as published) concerns."""
        found = dict(self.owners).get(path)
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
    read = [(part, importer.import_project(part.client, part.tree, part.root)) for part in layout.parts]
    renames = _clashes(read)
    files: List[SourceFile] = []
    digests: List[SourceFile] = []
    found: List[Diagnostic] = list(layout.diagnostics)
    owners: Dict[str, Set[str]] = {}
    parts: List[Tuple[str, str]] = []
    for index, (part, imported) in enumerate(read):
        mine = renames.get(index, {})
        doc, fields = _renamed(imported.document, imported.fields, mine)
        prefix = _join(root, part.name) if part.name else root
        where = _origin(part, "")
        items, written = importing.portable_that_lints(doc, fields, prefix, where)
        found.extend(_back(part, d) for d in imported.diagnostics + written)
        for (kind, old), new in sorted(mine.items()):
            found.append(Diagnostic(where, 1, 1, WARNING, "AR130", f"{kind[:-1]} {old} of plugin {part.name} is "
                                    f"installed as {new}: another plugin of this source has one of that name"))
        placed, bundle = _placed(part, items, prefix)
        files.extend(placed)
        if bundle is not None and part.name is not None:
            parts.append((part.root, bundle.path))
        old_of = {new: old for (_, old), new in mine.items()}
        names = sorted({posixpath.relpath(f.path, prefix).split("/")[1] for f in placed if f is not bundle})
        origin = layouts.origins_of(part, [old_of.get(n, n) for n in names])
        done: Set[str] = set()
        for f in placed:
            if f is bundle:
                digests.append(f)
                continue
            kind, name = posixpath.relpath(f.path, prefix).split("/")[:2]
            directory = _join(prefix, f"{kind}/{name}")
            if directory in done:
                continue
            done.add(directory)
            for src in origin[old_of.get(name, name)]:
                owners.setdefault(src, set()).add(directory)
                f0 = sources.get(src)
                if f0 is not None:
                    rel = posixpath.relpath(src, part.root) if part.root else src
                    digests.append(SourceFile(f"{directory}/{rel}", f0.content, f0.executable))
    return Published(layout.kind, SourceTree(tuple(sorted(files, key=lambda f: f.path))),
                     SourceTree(tuple(sorted(digests, key=lambda f: f.path))), layout.redirects,
                     tuple(sorted(set(found))),
                     tuple(sorted((src, next(iter(dirs))) for src, dirs in owners.items() if len(dirs) == 1)),
                     tuple(sorted(parts, key=lambda p: -len(p[0]))))


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
        if len(indexes) < 2:
            continue
        for index in indexes:
            plugin = read[index][0].name or "root"
            new = f"{plugin}-{name}"
            if valid_name(new) and (kind, new) not in taken:
                taken.add((kind, new))
                renames.setdefault(index, {})[(kind, name)] = new
    return renames


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


def _placed(part: Part, items: SourceTree, prefix: str) -> Tuple[List[SourceFile], Optional[SourceFile]]:
    """The portable files of one part below `prefix`, its bundle named after the part (a
    flat part keeps a bundle only for its MCP servers)."""
    out: List[SourceFile] = []
    bundle = None
    for f in items.files:
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
