"""A package replayed onto the last package of the same shape: the Pants backend's edit.

`agentrc build` replays an edit onto its last build from the record it keeps beside its
stamp (agentrc.building.incremental). The Pants backend keeps no files of its own, so the
daemon keeps the last package of each shape in memory instead (`Packaged`, the caller's to
keep), the shape being what the package was asked for and every source's path, executable
bit and link target. A package whose sources differ from the last one's only in the bytes of
files inside item directories is made as the CLI's replay makes a build: the edited
directories are parsed and rendered again (the caller's memo entries hold the new parse and
renderings, `Packaged.entries` the old ones), the facts the rest of the plan reads are
compared with the last package's by the same checks (`incremental.reparse`, `rerender`), and
the last package's files come back with the new bytes swapped in; its diagnostics and its
report stay, since nothing they are made of changed. Anything else is None, and the caller
packages in full: a 5,000-item registry's plan is 0.7-1.5 s of every edit in pantsd, the
replay of one directory a few milliseconds.
"""

from __future__ import annotations

import posixpath
from collections import OrderedDict
from dataclasses import replace

from agentrc.building import incremental
from agentrc.classcode import dataclass
from agentrc.clients import registry as client_registry
from agentrc.diagnostics import Diagnostic
from agentrc.memo.cache import Memo
from agentrc.model import IgnoreList, SourceTree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, Hashable, List, Mapping, Optional, Sequence, Set, Tuple
    Entries = Tuple[Tuple[Any, Any], ...]  # one item directory group's memo entries (parse and renders)
if TYPE_CHECKING:
    PackageFiles = Tuple[Tuple[str, bytes, bool], ...]  # what `stages.package` returns: (path, bytes, executable)


@dataclass(frozen=True)
class Packaged:
    """What a successful full package leaves for the next package of the same `options`."""

    options: Hashable  # everything the package was asked for but its sources
    clients: Tuple[str, ...]
    sources: Mapping[str, Tuple[bool, bytes, Optional[str]]]  # path -> (executable, sha256, link)
    entries: Mapping[str, Entries]  # item directory group (`warm.item_dir_groups`) -> its memo entries
    explicit: FrozenSet[str]
    diagnostics: Tuple[Diagnostic, ...]
    count: int  # the plan's files (the report aside)
    files: PackageFiles
    context: Any  # the plan's RenderContext
    selected: FrozenSet[Tuple[str, str, str]]  # (kind, name, entrypoint) of every item rendered
    shared: Mapping[str, int]  # output path -> renderings that planned it, where more than one


class LastPackages:
    """The last package of each shape, which the next package of that shape replays onto; a
    few (`kept`): the Pants backend keeps them in pantsd for its life. `replayed` counts the
    packages made by a replay (tests count the work of an edit)."""

    def __init__(self, kept: int = 8):
        self.kept = kept
        self.last: "OrderedDict[Any, Packaged]" = OrderedDict()
        self.replayed = 0

    def package(self, tree: SourceTree, entries: Mapping[str, Entries], clients: Tuple[str, ...],
                bundles: Tuple[str, ...] = (), entrypoints: Optional[Tuple[str, ...]] = None, strict: bool = False,
                explicit: Tuple[str, ...] = (), cross_source: bool = False, skip_servers: Tuple[str, ...] = (),
                shared_copies: bool = True, ignore: IgnoreList = IgnoreList()
                ) -> Tuple[PackageFiles, Tuple[Diagnostic, ...], int]:
        """`stages.package` of `tree` (its files, diagnostics and count of planned files), with
        every item directory group's memo entries (`entries`), replayed onto the last package
        of its shape when only item directories' bytes changed since."""
        from agentrc.pipeline import stages

        options = (clients, bundles, entrypoints, strict, explicit, cross_source, skip_servers, shared_copies,
                   ignore)
        shape = (options, tuple(f.path for f in tree.files))
        done = replay(self.last.get(shape), options, tree, entries)
        if done is not None:
            self.replayed += 1
            self._keep(shape, done.packaged)
            return done.files, done.diagnostics, done.count
        memo = Memo({k: v for part in entries.values() for k, v in part})
        plan, files = stages.package(tree, clients, bundles, entrypoints, strict, explicit, memo, cross_source,
                                     frozenset(skip_servers), shared_copies, ignore)
        self._keep(shape, remember(options, clients, tree, entries, explicit, plan, files))
        return files, plan.diagnostics, len(plan.files)

    def _keep(self, shape: Any, packaged: Optional[Packaged]) -> None:
        if packaged is None:  # a failed package: the last good one stays what an edit replays onto
            return
        self.last[shape] = packaged
        self.last.move_to_end(shape)
        while len(self.last) > self.kept:
            self.last.popitem(last=False)


def _sources(tree: SourceTree) -> Dict[str, Tuple[bool, bytes, Optional[str]]]:
    return {f.path: (f.executable, f.sha256(), f.link) for f in tree.files}


def remember(options: Hashable, clients: Sequence[str], tree: SourceTree, entries: Mapping[str, Entries],
             explicit: Sequence[str], plan, files: PackageFiles) -> Optional[Packaged]:
    """What the package `plan`, `files` of `tree` (`stages.package`) leaves for a replay; None
    for a package that failed or rendered nothing."""
    if not plan.ok or plan.context is None or not files:
        return None
    selected = frozenset((r.kind, r.name, r.source) for r in plan.reports)
    return Packaged(options, tuple(clients), _sources(tree), dict(entries), frozenset(explicit), plan.diagnostics,
                    len(plan.files), files, plan.context, selected, dict(plan.shared))


@dataclass(frozen=True)
class Replayed:
    """One package of a Pants build replayed after an edit: what it leaves for the next, its files and diagnostics."""
    packaged: Packaged  # what this package leaves for the next
    files: PackageFiles
    diagnostics: Tuple[Diagnostic, ...]
    count: int
    dirs: int  # item directories parsed again


def replay(last: Optional[Packaged], options: Hashable, tree: SourceTree,
           entries: Mapping[str, Entries]) -> Optional[Replayed]:
    """The package of `tree` for `options` as a replay of `last`, or None when it must be made
    in full. `entries`: every item directory group's memo entries for `tree`, as the caller's
    memo holds them."""
    if last is None or last.options != options:
        return None
    try:
        return _replay(last, tree, entries)
    except incremental.Fallback:
        return None


def _replay(last: Packaged, tree: SourceTree, entries: Mapping[str, Entries]) -> Replayed:
    sources = _sources(tree)
    if sources.keys() != last.sources.keys():
        raise incremental.Fallback("a source was added or removed")
    changed = [p for p, now in sources.items() if now != last.sources[p]]
    if not changed:
        return Replayed(replace(last, entries=dict(entries)), last.files, last.diagnostics, last.count, 0)
    files = {f.path: f for f in tree.files}
    owners, groups = _edited(last, sources, changed, files, entries)
    data: Dict[Any, Any] = {}
    for g in groups:
        data.update(last.entries.get(g, ()))  # the old side: a miss is a fallback (`reparse`)
        data.update(entries[g])
    memo = Memo(data)
    names = client_registry.client_names()
    pairs: List[Tuple[Any, Any]] = []
    for d in owners:
        pairs.extend(incremental.reparse(d, files, lambda path: last.sources[path][:2], names, memo))
    chosen = [(o, n) for o, n in pairs if (o.kind.value, o.name, o.entrypoint) in last.selected]
    adapters = client_registry.get(list(last.clients), "project")
    try:
        write, _ = incremental.rerender(adapters, chosen, last.context, memo, dict(last.shared), incremental.Work())
    finally:
        last.context.formatted.clear()  # what rendering formatted: kept for one item (`plan`), not the daemon's life
    new = {f.path: f for f in write}
    out = tuple((p, new[p].content, x) if p in new else (p, c, x) for p, c, x in last.files)
    packaged = replace(last, sources=sources, entries=dict(entries), files=out)
    return Replayed(packaged, out, last.diagnostics, last.count, len(owners))


def _edited(last: Packaged, sources: Mapping[str, Tuple[bool, bytes, Optional[str]]], changed: Sequence[str],
            files: Mapping[str, Any], entries: Mapping[str, Entries]) -> Tuple[List[str], Set[str]]:
    """The item directories holding the `changed` sources (`incremental.edited_dirs`), and the
    groups holding those; Fallback when a change is more than bytes inside an item directory."""
    if any(sources[p][0] != last.sources[p][0] or sources[p][2] != last.sources[p][2] for p in changed):
        raise incremental.Fallback("a source's mode or link changed")
    owners = incremental.edited_dirs(changed, files, tuple(last.explicit))
    groups: Set[str] = set()
    for d in owners:
        group = _group(d, entries)
        if group is None:
            raise incremental.Fallback("a file outside every item directory group changed")
        groups.add(group)
    return owners, groups


def _group(d: str, entries: Mapping[str, Entries]) -> Optional[str]:
    """The item directory group holding item directory `d` (its outermost item directory)."""
    top = None
    while True:
        if d in entries:
            top = d
        parent = posixpath.dirname(d)
        if parent == d:
            return top
        d = parent
