"""What a consumer selection installs (spec 001 §3.7), as lock entries with provenance.

`select` takes one loaded source and the bundles and items asked for, and returns the
closure the resolver defines (`agentrc.portable.resolve`: bundle `requires`, the items of
every reached bundle, item `requires`, preloaded skills present in the source), each entry
recording its source, ref, commit, the SHA-256 of its content and `required_by`: the
bundles and items that pulled it in. `merge` adds entries to a lock (AR206 when a name is
already installed from another source or ref); `prune` drops direct entries and what only
they required. Pure: the content digests come from the `SourceTree` the source was read as.
"""

from __future__ import annotations

import bisect
import collections
import hashlib
import posixpath
from dataclasses import replace

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.model import Bundle, Item, Kind, Registry, SourceTree
from agentrc.sources.dsl import Source, SourceError, parse
from agentrc.sources.lock import Entry, Lock

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple
    ItemKey = Tuple[str, str]  # (kind or "bundle", name)
WHERE = "<command line>"


def content_sha(tree: SourceTree, root: str, directory: str) -> str:
    """SHA-256 over the files below `directory` (or the one file `directory` names): each
    file's path relative to `root`, its bytes' digest and whether it is executable, in path
    order. The same content gives the same digest on every machine and cache location.

    The tree's files are sorted once (`_by_path`) and the ones below `directory` found by
    bisection: a source of N entries is digested in O(N log N), not N passes over its files
    (1,000 entries: 1.5 s before). A directory digested already in this tree is not again
    (`install --frozen` resolves the lock's closure twice: to install and to compare)."""
    paths, files = _by_path(tree)
    done = _SORTED[id(tree)][3]
    key = (root, directory)
    if key in done:
        return done[key]
    done[key] = digest = _content_sha(paths, files, root, directory)
    return digest


def _content_sha(paths: Tuple[str, ...], files: Tuple[Any, ...], root: str, directory: str) -> str:
    h = hashlib.sha256()
    exact = bisect.bisect_left(paths, directory)
    first = bisect.bisect_left(paths, directory.rstrip("/") + "/")
    last = bisect.bisect_left(paths, directory.rstrip("/") + "0")  # "0" follows "/"
    chosen = ([exact] if exact < len(paths) and paths[exact] == directory else []) + list(range(first, last))
    # A file below the root is its path past the root's, when that rest is normalised: what
    # `relpath` gives, without its two `abspath`s per file (a tenth of an `add` of 1,000 items;
    # a fetched source's root is its locator, `file:///...@v1`, which `normpath` would change).
    prefix = root.rstrip("/") + "/" if root else None
    for i in chosen:
        f = files[i]
        path = f.path
        rest = path[len(prefix):] if prefix is not None and path.startswith(prefix) else None
        if rest is not None and _plain_relative(rest):
            rel = rest
        else:
            rel = posixpath.relpath(path, root) if root else path
        h.update(rel.encode("utf-8") + b"\0" + hashlib.sha256(f.content).digest() + (b"x" if f.executable else b"-"))
    return h.hexdigest()


def _plain_relative(rest: str) -> bool:
    """Whether `relpath(root + "/" + rest, root)` is `rest` itself, for any root: a relative
    path with no empty, "." or ".." part."""
    return bool(rest) and posixpath.normpath(rest) == rest and rest != "." and not rest.startswith(("/", "../")) \
        and rest != ".."


# id(tree) -> the tree, its paths and files sorted, and `content_sha`'s digests of its directories.
_SORTED: "collections.OrderedDict[int, Tuple[SourceTree, Tuple[str, ...], Tuple[Any, ...], Dict[Any, str]]]" = \
    collections.OrderedDict()


def _by_path(tree: SourceTree) -> Tuple[Tuple[str, ...], Tuple[Any, ...]]:
    """The tree's paths and files in path order, for the last few trees asked about (the
    tree itself is kept with them, so an id is never taken for another tree's)."""
    hit = _SORTED.get(id(tree))
    if hit is not None and hit[0] is tree:
        _SORTED.move_to_end(id(tree))
        return hit[1], hit[2]
    files = tuple(sorted(tree.files, key=lambda f: f.path))
    paths = tuple(f.path for f in files)
    _SORTED[id(tree)] = (tree, paths, files, {})  # the last: `content_sha`'s digests
    while len(_SORTED) > 8:
        _SORTED.popitem(last=False)
    return paths, files


@dataclass(frozen=True)
class External:
    """A `{ name, source }` reference to another source, met in the closure: what the
    caller fetches next. `parent` is the id (`KIND:NAME`) of the entry that requires it;
    `path` and `pos` point at the reference."""

    source: str
    kind: str  # "bundle" or an item kind
    name: str
    parent: str
    path: str
    pos: Tuple[int, int]
    version: Optional[str] = None  # a bundle's version constraint


def select(registry: Registry, tree: SourceTree, root: str, source: Source, commit: Optional[str],
           bundles: Sequence[str], items: Sequence[Tuple[str, str]], requested_by: Optional[str] = None,
           externals: Optional[List[External]] = None) -> Tuple[Tuple[Entry, ...], Tuple[Diagnostic, ...]]:
    """The entries installing `bundles` and `items` ((kind, name)) of one source needs;
    nothing asked for means every bundle and every item. Unknown names are AR205.
    `requested_by`: the entry of another source that requires these (they are then not
    direct). Cross-source references met on the way are appended to `externals`."""
    idx = _Names(registry)
    diags = Diagnostics()
    if not bundles and not items and requested_by is None:
        bundles = [b.name for b in registry.bundles]
        items = [(i.kind.value, i.name) for i in registry.items]
    required_by: Dict[ItemKey, Set[str]] = {}
    direct: Set[ItemKey] = set()
    pending = _asked(idx, source, bundles, items, diags)
    for key in pending:
        _root(key, requested_by, direct, required_by)
    seen: Set[ItemKey] = set()
    while pending:
        key = pending.pop()
        if key in seen:
            continue
        seen.add(key)
        parent = f"{key[0]}:{key[1]}"
        for child in _children(idx, key, parent, externals):
            if child != key:
                required_by.setdefault(child, set()).add(parent)
            pending.append(child)
    entries = []
    for key in sorted(seen):
        if key[0] == "bundle":
            path = idx.bundles[key[1]].path
        else:
            path = idx.items[(Kind(key[0]), key[1])].directory
        entries.append(Entry(key[0], key[1], source.name, source.ref, commit, content_sha(tree, root, path),
                             key in direct, tuple(required_by.get(key, ()))))
    return tuple(entries), diags.sorted()


def _asked(idx: _Names, source: Source, bundles: Sequence[str], items: Sequence[Tuple[str, str]],
           diags: Diagnostics) -> List[ItemKey]:
    """The bundles and items asked for that the source has, in the order asked; AR205 for
    each other name."""
    asked: List[ItemKey] = []
    for name in bundles:
        if name not in idx.bundles:
            names = ", ".join(sorted(idx.bundles)) or "none"
            diags.error(WHERE, (0, 0), "AR205",
                        f"the source {source.label!r} has no bundle {name!r} (its bundles: {names})")
            continue
        asked.append(("bundle", name))
    for kind, name in items:
        try:
            k = Kind(kind)
        except ValueError:
            diags.error(WHERE, (0, 0), "AR205", f"--item {kind}:{name}: {kind!r} is not a kind "
                        f"({', '.join(x.value for x in Kind)})")
            continue
        if (k, name) not in idx.items:
            diags.error(WHERE, (0, 0), "AR205", f"the source {source.label!r} has no {kind} {name!r}")
            continue
        asked.append((kind, name))
    return asked


def _children(idx: _Names, key: ItemKey, parent: str, externals: Optional[List[External]]) -> List[ItemKey]:
    """What a bundle or item of the closure requires in the same source (its bundles, items
    and preloaded skills); what it requires from other sources is appended to `externals`."""
    children: List[ItemKey] = []
    if key[0] == "bundle":
        b = idx.bundles[key[1]]
        children += [("bundle", r.name) for r in b.requires if r.source is None and r.name in idx.bundles]
        children += [(r.kind.value, r.name) for r in b.items if (r.kind, r.name) in idx.items]
        if externals is not None:
            externals += [External(r.source, "bundle", r.name, parent, b.path, r.pos, r.version)
                          for r in b.requires if r.source is not None]
        return children
    item = idx.items[(Kind(key[0]), key[1])]
    children += [(r.kind.value, r.name) for r in item.requires if r.source is None and (r.kind, r.name) in idx.items]
    if externals is not None:
        externals += [External(r.source, r.kind.value, r.name, parent, item.entrypoint, r.pos)
                      for r in item.requires if r.source is not None]
    children += [(Kind.SKILL.value, s) for s, _ in item.preload_skills if (Kind.SKILL, s) in idx.items]
    return children


class _Names:
    """One source's items by (kind, name) and bundles by name. A source is read as one
    registry: with several registry roots in it (agentrc-registry.yaml), the first of a
    name wins here, while lint of the source reports the clash."""

    def __init__(self, registry: Registry):
        self.items: Dict[Tuple[Kind, str], Item] = {}
        for i in registry.items:
            self.items.setdefault((i.kind, i.name), i)
        self.bundles: Dict[str, Bundle] = {}
        for b in registry.bundles:
            self.bundles.setdefault(b.name, b)


def _root(key: ItemKey, requested_by: Optional[str], direct: Set[ItemKey], required_by: Dict[ItemKey, Set[str]]
          ) -> None:
    if requested_by is None:
        direct.add(key)
    else:
        required_by.setdefault(key, set()).add(requested_by)


def merge(lock: Lock, entries: Iterable[Entry]) -> Tuple[Lock, Tuple[Diagnostic, ...]]:
    """`lock` with `entries` added. A name already installed from another source, ref or
    commit is AR206 (there is no version solving); the same entry again joins its
    provenance (and stays direct if either was)."""
    diags = Diagnostics()
    by_key = {(e.kind, e.name): e for e in lock.entries}
    for e in entries:
        old = by_key.get((e.kind, e.name))
        if old is None:
            by_key[(e.kind, e.name)] = e
            continue
        if _same(old.source, e.source):
            e = replace(e, source=old.source)  # one spelling of one repository in the lock
        if (old.source, old.ref) == (e.source, e.ref) and old.commit != e.commit:
            diags.error(WHERE, (0, 0), "AR206", f"{e.kind} {e.name} from {_where(e)} is installed at another commit "
                        f"({_where(old)}); 'agentrc update' moves installed sources to their refs' commits")
            continue
        if (old.source, old.ref, old.commit) != (e.source, e.ref, e.commit):
            diags.error(WHERE, (0, 0), "AR206", f"{e.kind} {e.name} from {_where(e)} is already installed from "
                        f"{_where(old)}")
            continue
        by_key[(e.kind, e.name)] = Entry(e.kind, e.name, e.source, e.ref, e.commit, e.sha256, old.direct or e.direct,
                                         old.required_by + e.required_by)
    return lock.with_entries(by_key.values()), diags.sorted()


def _same(a: str, b: str) -> bool:
    """Whether two lock `source`s name one registry (`Source.key`), however written."""
    if a == b:
        return True
    try:
        return parse(a).key == parse(b).key
    except SourceError:  # pragma: no cover - both come from parsed sources
        return False


def _where(e: Entry) -> str:
    return locator(e) + (f" ({e.commit[:12]})" if e.commit else "")


def locator(e: Entry) -> str:
    """The entry's source as it would be written to add it again: `location@ref#subpath`."""
    try:
        return parse(e.source).at(e.ref).label
    except SourceError:  # pragma: no cover - the lock's schema and the DSL agree
        return e.source + (f"@{e.ref}" if e.ref else "")


def prune(lock: Lock, remove: Iterable[ItemKey]) -> Lock:
    """`lock` without the direct entries `remove` names and every entry that only they (or
    what only they pulled in) required: what stays is reachable from a remaining direct
    entry through `required_by`, whose lists lose the parents that went."""
    gone = set(remove)
    kept: Set[str] = {e.id for e in lock.entries if e.direct and (e.kind, e.name) not in gone}
    changed = True
    while changed:
        changed = False
        for e in lock.entries:
            if e.id not in kept and any(p in kept for p in e.required_by):
                kept.add(e.id)
                changed = True
    out = []
    for e in lock.entries:
        if e.id in kept:
            direct = e.direct and (e.kind, e.name) not in gone
            out.append(Entry(e.kind, e.name, e.source, e.ref, e.commit, e.sha256, direct,
                             tuple(p for p in e.required_by if p in kept)))
    return lock.with_entries(out)


def verify(registry: Registry, tree: SourceTree, root: str, entries: Sequence[Entry], label: str,
           commit: Optional[str], strict: bool = True
           ) -> Tuple[Tuple[Entry, ...], Tuple[str, ...], Tuple[Diagnostic, ...]]:
    """The locked `entries` of one source checked against what the source holds now: the
    entries kept, the entrypoints of their items (what to build) and the problems. An entry
    the source no longer has, or whose content differs from the lock's digest, is AR204;
    without `strict` (a local directory, whose content may change) the entry takes the new
    digest instead. What `agentrc install` and the Pants backend's lock target both check."""
    diags = Diagnostics()
    at = f" at {commit[:12]}" if commit else ""
    kept: List[Entry] = []
    points: List[str] = []
    for e in entries:
        if e.kind == "bundle":
            b = registry.bundle(e.name)
            path = b.path if b is not None else None
        else:
            item = registry.item(Kind(e.kind), e.name)
            path = item.directory if item is not None else None
            if item is not None:
                points.append(item.entrypoint)
        if path is None:
            diags.error(label, (0, 0), "AR204", f"the lock installs {e.kind} {e.name}, which {label}{at} does not have")
            continue
        digest = content_sha(tree, root, path)
        if digest != e.sha256:
            if strict:
                diags.error(path, (0, 0), "AR204", f"{e.kind} {e.name} of {label}{at} does not have the content the "
                            f"lock records (sha256 {e.sha256[:12]}..., found {digest[:12]}...)")
                continue
            e = replace(e, sha256=digest)
        kept.append(e)
    return tuple(kept), tuple(points), diags.sorted()
