"""Reading a consumer's sources: a source fetched (at its locked commit when pinned) and read
as a registry, through a published layout's reader when it has one (`pipeline.published`),
style normalized on the way in (`portable.normalize`); what reading found judged for the
selected closure only (`_judged`), the files a build of it reads (`_built_files`), the tree
the lock's digests are taken over (`_digested`); the project's fetcher with its rule for
local sources (`ProjectFetcher`), the origin rule for what a source may require
(`_required_source`) and a marketplace's plugins in other repositories (`_redirected`).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import weakref
from dataclasses import fields, replace

from agentrc.classcode import dataclass
from agentrc.consumer import unchanged
from agentrc.diagnostics import Diagnostic, Diagnostics, hide_credentials
from agentrc.importers import published as layouts
from agentrc.inputs.fetch import Fetched, Fetcher
from agentrc.inputs.tree import real_path
from agentrc.memo import cache
from agentrc.model import Kind, Registry, SourceFile, SourceTree
from agentrc.names import bundle_stem, is_bundle_file
from agentrc.pipeline import published, stages
from agentrc.portable import discovery, normalize, resolve
from agentrc.sources import lock as lockfile
from agentrc.sources.dsl import PATH, Source, SourceError, check_subpath, parse
from agentrc.sources.lock import Entry, Lock

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

WHERE = "<command line>"
LOCK = lockfile.LOCK_FILE


def _redirected(fetched: Fetched, registry: Registry, src: Source, bundles: Sequence[str], whole: bool,
                queue: List, diags: Diagnostics) -> Sequence[str]:
    """`bundles` without the marketplace plugins that live in other repositories (each
    queued from its own source, judged by this source's origin: AR226); with nothing asked
    for, the marketplace's own plugins only, and one warning naming how to add the others."""
    layout = fetched.layout if isinstance(fetched, _Read) else None
    redirects = {r.name: r for r in (layout.redirects if layout is not None else ())}
    if not redirects:
        return bundles
    wanted = [b for b in bundles if b in redirects and registry.bundle(b) is None]
    if not bundles and whole and registry.bundle(next(iter(redirects))) is None:
        # The whole source: its own plugins. Those it lists from other repositories are each
        # a fetch of its own (a marketplace lists hundreds), asked for by name.
        first = sorted(redirects)[0]
        diags.warning(redirects[first].path, redirects[first].pos, "AR262",
                      f"{len(redirects)} plugin(s) of this marketplace live in other repositories and are not "
                      f"installed with it: add one with --bundle NAME (for example --bundle {first})")
    for name in wanted:
        r = redirects[name]
        try:
            child = _required_source(src, r.locator, fetched.commit)
        except SourceError as exc:
            diags.error(r.path, r.pos, exc.code, f"plugin {name} from {hide_credentials(r.locator)!r}: {exc}")
            continue
        queue.append((child, [name], [], None, None))
    return [b for b in bundles if b not in wanted]


class ProjectFetcher(Fetcher):
    """The fetches of one command on a project. A local directory it reads must lie inside
    the project or inside a directory the consumer named on this command line (`allowed`:
    the source of `add`, `--allow-local DIR`): a lock is committed, so a local source it
    names (`/`, `~/.ssh`, a sibling checkout) is not the consumer's word."""

    def __init__(self, project: str, allowed: Sequence[str] = (), clients: Sequence[str] = ()):
        super().__init__(project)
        self.allowed = tuple(_real(os.path.join(project, os.path.expanduser(a))) for a in allowed) \
            + (_real(project),)
        self._memo: Optional[cache.Memo] = None
        # The clients the command renders for: with them, a source read into an empty memo is
        # parsed and rendered by the build's forked workers too (`warm_up`).
        self.clients = tuple(clients)
        self._workers: Any = None
        self._settle = weakref.finalize(self, _close, [])

    @property
    def memo_path(self) -> str:
        """The project's own memo (parsed item directories and renderings, by content digest,
        in the user's cache): apart from any build's, which reads content strictly."""
        return unchanged.memo_path(self.base)

    @property  # type: ignore[override]
    def memo(self) -> "cache.Memo":
        """Loaded on first use: a command that reads no source opens no memo."""
        if self._memo is None:  # a source is read, then its selection planned: parsed once (`keep_parsed`)
            self._memo = cache.load(self.memo_path).keep_parsed()
        return self._memo

    def warm_up(self, tree: SourceTree) -> None:
        """The build's forked workers (`pipeline.warm`) started on `tree`, a source's item
        directories as the command reads them, when the memo holds nothing yet (a new project,
        a fresh clone): they parse and render their share for the command's clients while this
        process parses its own, as a cold `agentrc build` does. Issue 36: a cold `add` of 1,000
        items parsed and rendered on one core took 1.2 s of its 2.3 s. Once per command."""
        if not self.clients or self._workers is not None or not self.memo.empty:
            return
        from agentrc.pipeline import warm  # only a cold read of a large source forks

        self._workers = warm.warm(tree, self.clients, self.memo, warm.cpus()) or False
        if self._workers:
            self._settle.detach()
            self._settle = weakref.finalize(self, _close, [self._workers])

    def settle(self) -> None:
        """The workers stopped and reaped once the command's plan has what it needs."""
        self._settle()

    def save_memo(self) -> None:
        """What this command parsed and rendered, kept for the next (after a write that worked)."""
        if self._memo is not None:
            with contextlib.suppress(OSError):
                cache.save(self.memo_path, self._memo)

    def outside(self, source: Source) -> Optional[str]:
        """Why `source` may not be read (a local directory outside what is allowed); None if it may."""
        if source.kind != PATH:
            return None
        where = _real(os.path.join(self.base, os.path.expanduser(source.location)))
        if any(where == a or where.startswith(a.rstrip(os.sep) + os.sep) for a in self.allowed):
            return None
        return (f"the local source {source.location} lies outside the project: a lock's local sources are read "
                f"only inside it, or when named on the command line (--allow-local {source.location})")


def _close(workers: List[Any]) -> None:
    for w in workers:
        w.close()


def _real(path: str) -> str:
    """`path` by real path (`inputs.tree.real_path`, bounded); a link loop or chain compares as
    a path no directory has, so it is never allowed by accident."""
    try:
        return real_path(path)
    except OSError:
        return os.path.abspath(path) + os.sep + "\0"


def _fetch_and_load(fetcher: Fetcher, source: Source, commit: Optional[str], diags: Diagnostics,
                    selected: Optional[Sequence[Entry]] = None) -> Optional[Tuple[Fetched, Registry]]:
    """`source` fetched (at `commit` when pinned) and read as a registry whose `source:`
    references the caller resolves; None, with the problems in `diags`, when either fails.

    Style never blocks consuming (issue 31): the registry is read from the tree with its
    bodies' style fixed (`normalize`; the Fetched keeps the bytes as fetched, which the
    lock's digests are of), and what reading found is judged only for the selected closure
    (`_judged`): `selected` entries now, else by the caller once it has selected."""
    refused = fetcher.outside(source)
    if refused is not None:
        diags.error(source.label, (0, 0), "AR226", refused)
        return None
    fetched = fetcher.fetch(source, commit)
    diags.extend(fetched.diagnostics)
    if not fetched.ok:
        return None
    read, registry = _loaded(fetcher, fetched)
    if selected is not None:
        diags.extend(_judged(read, registry, selected))
        if diags.has_errors:
            return None
    return read, registry


# What a command read from each fetched source, by fetcher: the closure and the render read
# the same commits, and a source of 1,000 items took 0.6 s to read (issue 36).
_LOADED: "weakref.WeakKeyDictionary[Fetcher, Dict[Tuple[Any, ...], Tuple[_Read, Registry]]]" = \
    weakref.WeakKeyDictionary()


def _loaded(fetcher: Fetcher, fetched: Fetched) -> Tuple["_Read", Registry]:
    """`fetched` read as a registry, once per fetcher for a source at a commit (a tree with
    no commit, a local directory, is read each time: it may have changed)."""
    key = (fetched.source.key, fetched.source.ref, fetched.commit, fetched.root) if fetched.commit else None
    memo = _LOADED.setdefault(fetcher, {})
    if key is not None and key in memo:
        return memo[key]
    got = _read(fetched, fetcher.memo, fetcher.warm_up)
    if key is not None:
        memo[key] = got
    return got


def _read(fetched: Fetched, memo: Optional["cache.Memo"] = None,
          warm_up: Optional[Callable[[SourceTree], None]] = None) -> Tuple["_Read", Registry]:
    """`fetched` as a registry; `warm_up` is handed the tree about to be parsed."""
    layout = published.portable(fetched.tree, fetched.root)
    if layout is None:
        fetched = replace(fetched, tree=layouts.plain(fetched.tree, fetched.root))
    tree, style = normalize.normalize_tree(layout.tree if layout is not None else fetched.tree)
    if warm_up is not None:
        warm_up(tree)
    loaded = stages.load(tree, cross_source=True, memo=memo)
    read = _Read(**{f.name: getattr(fetched, f.name) for f in fields(fetched)},
                 normalized=tree, findings=loaded.diagnostics + style + (layout.diagnostics if layout else ()))
    if layout is not None:  # the layout read as portable files; the lock's digests stay of the files as published
        read = replace(read, tree=layout.tree, layout=layout)
    return read, loaded.registry


@dataclass(frozen=True)
class _Read(Fetched):
    """A source as fetched (`tree`: its bytes), with what is built from it: the same files
    with the style of their bodies fixed (`normalized`), and what reading those found, not
    yet judged (`findings`: `_judged` keeps the selected closure's)."""

    normalized: SourceTree = SourceTree(())
    findings: Tuple[Diagnostic, ...] = ()
    # A published layout's reading (`pipeline.published`): its source bytes by item, the
    # plugins a marketplace lists from other repositories, who owns a finding.
    layout: Optional[published.Published] = None


def _digested(read: Fetched) -> SourceTree:
    """The tree the lock's content digests are taken over: the files as fetched, or for a
    published layout, each item's source files (`published.Published.digests`)."""
    return read.layout.digests if isinstance(read, _Read) and read.layout is not None else read.tree


def _owners(read: Fetched, registry: Registry, entries: Sequence[Entry],
            wanted: Sequence[str] = ()) -> Tuple[Callable[[str], Optional[str]], Set[str]]:
    """(the item directory or bundle file a path belongs to, None for the source's other
    files; the owners of the `entries`). Item directories are the ones discovery finds, so an
    item too broken to load still owns its files. `wanted`: names asked for that did not load
    (AR205): the bundle files and item directories of that name are judged too, so what keeps
    them from loading is said."""
    dirs, bundle_files = _layout(read.tree)
    chosen: Set[str] = {p for p in bundle_files if bundle_stem(p) in wanted}
    chosen.update(d for d in dirs if posixpath.basename(d) in wanted)
    for e in entries:
        b = registry.bundle(e.name) if e.kind == "bundle" else None
        item = registry.item(Kind(e.kind), e.name) if e.kind != "bundle" else None
        chosen.update([b.path] if b is not None else [item.directory] if item is not None else [])

    layout = read.layout if isinstance(read, _Read) else None

    def owner(path: str) -> Optional[str]:
        # a path of the portable files first; a published layout's file (a finding about it) after
        found = path if path in bundle_files else discovery.owner(path, dirs)
        return found if found is not None or layout is None else layout.owner(path)

    return owner, chosen


# id(tree) -> the tree, its item directories and its bundle files, for the last few trees:
# a command asks `_owners` of one source's tree two or three times (4 ms each at 1,000 items).
# The tree is kept with them, so an id is never taken for another tree's.
_LAYOUTS: Dict[int, Tuple[SourceTree, Dict[str, List[str]], Set[str]]] = {}


def _layout(tree: SourceTree) -> Tuple[Dict[str, List[str]], Set[str]]:
    """The item directories (`discovery.item_dirs`) and the bundle files of `tree`."""
    hit = _LAYOUTS.get(id(tree))
    if hit is None or hit[0] is not tree:
        if len(_LAYOUTS) >= 8:
            _LAYOUTS.clear()
        hit = _LAYOUTS[id(tree)] = (tree, discovery.item_dirs(f.path for f in tree.files),
                                    {f.path for f in tree.files if is_bundle_file(posixpath.basename(f.path))})
    return hit[1], hit[2]


def _judged(read: Fetched, registry: Registry, entries: Sequence[Entry],
            wanted: Sequence[str] = ()) -> Tuple[Diagnostic, ...]:
    """What reading `read` found that concerns `entries` (and the names `wanted` that did not
    load): the findings in their own files and in the source's files that belong to no item
    or bundle. Items and bundles nobody selected are not linted: their errors never block."""
    if not isinstance(read, _Read):
        return ()
    owner, chosen = _owners(read, registry, entries, wanted)
    kept = []
    for d in read.findings:
        mine = owner(d.path)
        if mine is None or mine in chosen:
            kept.append(d)
    return tuple(kept)


def _built_files(read: Fetched, registry: Registry, entries: Sequence[Entry]) -> Tuple[SourceFile, ...]:
    """The files of `read` a build of `entries` reads: the normalized ones, without the
    items and bundles not selected (which are not linted, so must not be built either)."""
    if not isinstance(read, _Read):
        return read.tree.files
    owner, chosen = _owners(read, registry, entries)
    return tuple(f for f in read.normalized.files if owner(f.path) is None or owner(f.path) in chosen)


def _required_source(parent: Source, text: str, commit: Optional[str] = None) -> Source:
    """The source a `{ name, source }` reference of `parent` names, judged by the parent's
    origin. A source fetched over the network (https, ssh, owner/repo) may require only
    network sources and paths inside its own tree; a `file://` repository may also require
    `file://` repositories and directories the consumer's disk holds; a local directory may
    require anything, relative paths from the directory it was read from. A relative path
    in a git source is a directory of the same repository at the same commit (`commit`)."""
    child = parse(text)
    if parent.kind == PATH:
        if child.kind != PATH or child.location.startswith(("/", "~")):
            return child
        base = posixpath.join(parent.location, parent.subpath) if parent.subpath else parent.location
        rel = posixpath.normpath(posixpath.join(base, child.location))
        rel = rel if rel.startswith(("../", "/")) or rel == ".." else "./" + rel
        return Source(PATH, rel, rel, None, child.subpath)
    local_parent = parent.location.lower().startswith("file://")
    if child.kind == PATH and not child.location.startswith(("/", "~")):
        inside = posixpath.normpath(posixpath.join(parent.subpath or ".", child.location))
        if inside == ".." or inside.startswith("../"):
            raise SourceError(f"{text!r} leads outside the source's own tree", "AR226")
        sub = posixpath.join(inside, child.subpath) if child.subpath else inside
        sub = "" if sub == "." else check_subpath(sub)
        return replace(parent, ref=commit or parent.ref, subpath=sub)
    if local_parent:
        return child
    if child.kind == PATH or child.location.lower().startswith("file://"):
        raise SourceError(f"a source fetched over the network cannot require {text!r} on the consumer's disk "
                          "(only https and ssh sources, and paths inside its own tree)", "AR226")
    return child


def _cross_cycles(lock: Lock, cross: Set[Tuple[str, str]], diags: Diagnostics) -> None:
    by_id = {e.id: e for e in lock.entries}
    children: Dict[str, List[str]] = {}
    for e in lock.entries:
        for p in e.required_by:
            children.setdefault(p, []).append(e.id)

    def report(cycle: List[str]) -> None:
        edges = list(zip(cycle, cycle[1:] + cycle[:1]))
        if any(edge in cross for edge in edges):
            text = " -> ".join(f"{i} ({by_id[i].source})" for i in cycle + cycle[:1])
            diags.error(WHERE, (0, 0), "AR071", f"requires cycle across sources: {text}")

    resolve.find_cycles(sorted(by_id), lambda n: sorted(children.get(n, [])), report)
