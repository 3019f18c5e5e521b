"""An edit replayed onto the last build: work that grows with the edit, not the registry.

A one-edit build of the whole pipeline still touches every item: its memo entries are read,
it goes through planning, and the writer compares every output. When the last build's
record shows that the edit can only have changed the bytes of a few outputs, this module
builds those alone:

- The last successful full build left, beside its stamp (outside the output tree), a replay
  record (`save_record`): its key, the options, the items it rendered, and the output paths
  that more than one rendering produced, with how many (`Plan.shared`). The stamp
  keeps that key (`replay`) through the edits replayed since, which change none of it.
- A new build qualifies when that record and the stamp match its options, the output is as
  the last build wrote it (`writer.untouched`), and its sources differ from the recorded
  ones only in the bytes of files inside item directories (no file added or removed, no
  executable bit, bundle, registry marker or file named on the command line changed).
- Each item directory holding a changed file is parsed again; its old items and
  diagnostics come from the memo (the last build's entry). Its items are rendered again;
  their old renderings come from the memo too. Then the facts the rest of the build reads
  are compared, not reasoned about: the items, apart from their bodies and the bytes of
  their supporting files; the directory's diagnostics; every rendering's report, fragments
  and files (path, mode, owner, merge keys; a merged file's bytes too); which other clients
  load those items' copies (`plan.cross_discovery`, on these items alone);  and an output
  that several renderings plan must be planned by these items' renderings alone, which
  agree on its new bytes. If all are equal, every other output,
  diagnostic and count of the build is the last build's, and the new bytes are written
  through `writer.Output.replay` (the same journaled transaction as a full write).
- Anything else falls back to the full build (`None`), which does the work as before.

`--report`, `--check`, `--no-cache`, the plugin layout and canonical projects always take
the full build. `LAST` tells which way the last build went and what it read (the tests'
proof that the work grows with the edit).
"""

from __future__ import annotations

import dataclasses
import json
import os
import posixpath
from collections.abc import Mapping

from agentrc import pickling
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fdio import open_regular
from agentrc.inputs.stamp import RecordedFiles, recorded_files
from agentrc.inputs.tree import DeferredFile, SourcesChanged
from agentrc.memo import cache
from agentrc.memo import stamp as stampfile
from agentrc.model import ENTRYPOINTS, Kind, Resource, SourceFile
from agentrc.names import is_bundle_file, is_registry_marker
from agentrc.output import parents, writer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    from agentrc.building.build import BuildOptions
    from agentrc.inputs.read import Inputs

RECORD_VERSION = 3  # 2: the render context's facts kept (`save_record`); 3: items selected by entrypoint too


@dataclass(frozen=True)
class Outcome:
    """What the last `replay` did: `path` is "replay" (it built the edit alone), "full" (it
    fell back, `reason` says why) or "" (not tried)."""

    path: str = ""
    reason: str = ""
    dirs: int = 0  # item directories parsed again
    renders: int = 0  # items rendered again (per client)
    memo_reads: int = 0  # memo entries read from disk
    written: int = 0  # outputs written


LAST = Outcome()


def options_key(options: BuildOptions, explicit: Sequence[str]) -> str:
    """The options a replay record holds: the stamp key's, without the sources' digest."""
    return json.dumps([list(options.clients), list(options.bundles), options.strict, list(explicit),
                       options.layout, options.plugin_name] + ([] if options.shared_copies else ["no-shared-copies"])
                      + options.ignore.key())


def _record_path(stamp_path: str) -> str:
    return stampfile.beside(stamp_path, ".replay")


def eligible(options: BuildOptions, inputs: Inputs) -> bool:
    """Whether a build of `options` over `inputs` can record (and later take) a replay."""
    return (options.cache and not options.report and not options.check and options.layout == "project"
            and not options.keep_clients and inputs.canonical is None and not inputs.documents
            and inputs.signature is not None)


def save_record(stamp_path: str, key: str, options: BuildOptions, inputs: Inputs, plan) -> None:
    """The replay record of a successful full build (`plan`) of stamp key `key` (the stamp's
    `replay`). It keeps what the build's render context took from its items (`Plan.context`:
    the skills' names, the names given to items that would collide as Agent Skills), so a
    replay renders in the same context without computing it again from 10,000 names."""
    ctx = plan.context
    if ctx is None:  # a plan that rendered nothing: no replay after it
        forget_record(stamp_path)
        return
    selected = sorted({(r.kind, r.name, r.source) for r in plan.reports if r.kind in _KINDS})
    record = {"version": RECORD_VERSION, "key": key, "options": options_key(options, inputs.explicit),
              "selected": tuple(selected), "shared": dict(plan.shared),
              "context": (ctx.skills, ctx.renamed)}
    _write(stamp_path, record)


def forget_record(stamp_path: str) -> None:
    try:
        os.unlink(_record_path(stamp_path))
    except OSError:
        pass


def _write(stamp_path: str, record: dict) -> None:
    try:
        os.makedirs(os.path.dirname(stamp_path) or ".", exist_ok=True)
        tmp = stampfile.beside(stamp_path, ".replay.tmp")
        with open(tmp, "wb") as fh:
            pickling.dump(record, fh, protocol=pickling.PROTOCOL)
        os.replace(tmp, _record_path(stamp_path))
    except OSError:
        pass  # an optimisation: the next edit takes the full build


def _load(stamp_path: str) -> Optional[dict]:
    try:
        with open_regular(_record_path(stamp_path)) as fh:  # a FIFO planted there: a miss
            record = pickling.load(fh)
    except Exception:  # missing, damaged or foreign: no replay
        return None
    return record if isinstance(record, dict) and record.get("version") == RECORD_VERSION else None


_KINDS = frozenset(k.value for k in Kind)


class Fallback(Exception):
    """The edit reaches further than a replay can vouch for: build everything."""


@dataclass(frozen=True)
class Replayed:
    """A replayed edit's result, as `BuildResult`'s. (A dataclass: a `NamedTuple` of this
    module, under `from __future__ import annotations`, compiled its three annotations at
    every import.)"""
    diagnostics: Tuple[Diagnostic, ...]
    summary: Any
    changes: Optional[writer.Changes]  # None: the output could not be used (as `BuildResult`'s)


def replay(options: BuildOptions, memo_path: str, stamp: dict, inputs: Inputs, key: str,
           notify=None, stamp_path: Optional[str] = None) -> Tuple[Optional[Replayed], Optional[cache.Memo]]:
    """The build of `options` over `inputs` (stamp key `key`) as a replay of the last one
    (`stamp`); or (None, memo) when it must be built whole (`LAST` says why), with the memo
    it loaded for the full build to go on with (None: load it again), so that the items it
    parsed and rendered are not parsed and rendered twice. `stamp_path`: where the stamp and
    the replay record live (`memo_path` unless the paths were typed relative)."""
    global LAST
    work = Work()
    LAST = Outcome("replay", "under way")  # what a run killed in the middle leaves
    try:
        result = _replay(options, memo_path, stamp_path or memo_path, stamp, inputs, key, notify, work)
    except (Fallback, SourcesChanged) as exc:
        why = str(exc) if isinstance(exc, Fallback) else "a source changed while it was read"
        LAST = Outcome("full", why, work.dirs, work.renders, _reads(work.memo))
        if work.saved and work.memo is not None and work.memo.store is not None:
            work.memo.store.close()  # saved already: its packs may have been rewritten since
        return None, None if work.saved else work.memo
    LAST = Outcome("replay", "", work.dirs, work.renders, _reads(work.memo),
                   len(result.changes.update) if result.changes is not None else 0)
    if work.memo is not None and work.memo.store is not None:
        work.memo.store.close()
    return result, None


@dataclass
class Work:
    """What a replayed edit did, for the tests that count work: item directories parsed, renderings made, the memo."""
    dirs: int = 0
    renders: int = 0
    memo: Optional[cache.Memo] = None
    saved: bool = False  # the memo is saved (then a full build loads it again)


def _reads(memo: Optional[cache.Memo]) -> int:
    return memo.store.reads if memo is not None and memo.store is not None else 0


def _replay(options: BuildOptions, memo_path: str, stamp_path: str, stamp: dict, inputs: Inputs, key: str,
            notify, work: Work) -> Replayed:
    if not eligible(options, inputs):
        raise Fallback("options or sources a replay does not cover")
    record = _load(stamp_path)
    if record is None or record.get("key") != stamp.get("replay") \
            or record.get("options") != options_key(options, inputs.explicit):
        raise Fallback("no replay record for the last build with these options")
    out = options.out
    manifest = writer.untouched_manifest(out, stamp.get("manifest", ""), stamp.get("outputs"))
    if manifest is None:
        raise Fallback("the output is not as the last build left it")
    old_sources = stamp.get("sources")
    # Each record decoded once (its paths split, their places mapped at the first lookup).
    old_files, new_files = recorded_files(old_sources), recorded_files(inputs.signature)
    changed = _changed(old_files, new_files)
    files = _sources(inputs, new_files)
    owners = edited_dirs(changed, files, inputs.explicit)
    from agentrc.clients import registry as client_registry

    memo = work.memo = cache.load(memo_path)
    names = client_registry.client_names()
    pairs: List[Tuple[Any, Any]] = []  # (old item, new item)
    for d in owners:
        work.dirs += 1
        pairs.extend(reparse(d, files, lambda path: _old_file(old_files, path), names, memo))
    adapters = client_registry.get(list(options.clients), options.layout)
    ctx = _context(record["context"], options.clients, options.shared_copies)
    selected = set(record["selected"])
    chosen = [(o, n) for o, n in pairs if (o.kind.value, o.name, o.entrypoint) in selected]
    write, old = rerender(adapters, chosen, ctx, memo, dict(record["shared"]), work)
    work.saved = True
    # As the full build, saved once the plan is known good; every entry stays (this build read
    # only a few), so its new ones are appended, the rest neither read nor rewritten.
    cache.append(memo_path, memo)
    changes, replayed, written = _write_outputs(out, stamp, write, old, notify, manifest)
    diags = tuple(Diagnostic(**d) for d in stamp["diagnostics"]) + written
    if changes is None:  # the output could not be used: as the full build reports it
        return Replayed(tuple(sorted(set(diags))), stamp["summary"], None)
    if replayed is not None and not any(d.is_error for d in written):
        (digest, outputs), held = replayed
        stampfile.save_stamp(stamp_path, dict(stamp, key=key, manifest=digest, outputs=outputs,
                                             sources=inputs.signature, parents=held))
    return Replayed(tuple(sorted(set(diags))), stamp["summary"], changes)


# The sources' record (`Inputs.signature`, kept in the stamp as "sources") is read through
# `recorded_files` (agentrc.inputs.stamp) alone, and its files through these two.


def _recorded_paths(record: Any) -> Optional[Sequence[str]]:
    """The source paths `record` keeps, in its order (None: not a record read here)."""
    files = recorded_files(record)
    return files.paths if files is not None else None


def _recorded_file(files: Optional[RecordedFiles], path: str) -> Optional[Tuple[int, bytes]]:
    """The (mode, sha256) that the record's `files` keep for source `path`, or None when they
    keep none (or there is no record)."""
    i = files.find(path) if files is not None else None
    return None if files is None or i is None else (files.mode(i), files.sha(i))


def _changed(was: Optional[RecordedFiles], now: Optional[RecordedFiles]) -> List[str]:
    """The sources whose bytes differ from the record `was` (files of the old record, `now` of
    the new, as `recorded_files` reads them; None: no record); Fallback when a file was added
    or removed, or changed its mode. Records of the same paths in the same order (every
    build but one that added, removed or renamed a file) compare their digests a block at
    a time: at 10,000 items a few dozen comparisons."""
    if now is None or was is None or len(now.paths) != len(was.paths):
        raise Fallback("a source was added or removed")
    if now.joined == was.joined:
        if now.modes() != was.modes():
            raise Fallback("a source's mode changed")
        out = [now.paths[i] for i in _differing(now.shas, was.shas, 32)]
    elif set(now.paths) != set(was.paths):
        raise Fallback("a source was added or removed")
    else:
        out = []
        for path in now.paths:
            before, after = _recorded_file(was, path), _recorded_file(now, path)
            assert before is not None and after is not None
            if before[0] != after[0]:
                raise Fallback("a source's mode changed")
            if before[1] != after[1]:
                out.append(path)
    if not out:
        raise Fallback("no source's bytes changed")
    return out


def _differing(a: bytes, b: bytes, size: int) -> List[int]:
    """Where `a` and `b` (as long as each other, records of `size` bytes) differ, by record:
    compared 64 records at a time, and record by record only in a block that differs."""
    out: List[int] = []
    block = 64 * size
    for start in range(0, len(a), block):
        if a[start:start + block] != b[start:start + block]:
            ends = range(start, min(start + block, len(a)), size)
            out.extend(i // size for i in ends if a[i:i + size] != b[i:i + size])
    return out


class _Picked(Mapping[str, SourceFile]):
    """The sources by path, each file made when asked for (`DeferredTree.file`): a replay
    looks at the paths of all and the files of one item directory."""

    def __init__(self, tree: Any, paths: Mapping[str, Any]):
        self.tree, self.paths = tree, paths

    def __getitem__(self, path: str) -> SourceFile:
        f = self.tree.file(path) if path in self.paths else None
        if f is None:
            raise KeyError(path)
        return f

    def __contains__(self, path: object) -> bool:
        return path in self.paths

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


def _sources(inputs: Inputs, files: Optional[RecordedFiles]) -> Mapping[str, SourceFile]:
    """The sources of `inputs` by path (`files`: its record's, decoded); from a `DeferredTree`
    without making all its files."""
    if files is not None and callable(getattr(type(inputs.tree), "file", None)):
        return _Picked(inputs.tree, files.index())
    return {f.path: f for f in inputs.tree.files}


class _Recorded:
    """The memo as the last build left it, for the old side of a comparison: a miss is a
    fallback, never a parse (the old bytes are gone)."""

    def __init__(self, memo: cache.Memo):
        self.memo = memo

    def get(self, key):
        hit = self.memo.get(key)
        if hit is None:
            raise Fallback("the memo does not hold the last build's entry")
        return hit

    def put(self, key, value) -> None:
        pass


def _gone(path: str):
    def load() -> bytes:
        raise Fallback(f"{path}: the last build's bytes are not kept")
    return load


def edited_dirs(changed: Sequence[str], files: Mapping[str, Any], explicit: Sequence[str]) -> List[str]:
    """The item directories holding the `changed` sources, sorted; Fallback when one of them
    is a file named on the command line, a registry-level file, or outside every item
    directory (the CLI's replay and the Pants backend's, `replan`, both ask)."""
    if set(changed) & set(explicit):
        raise Fallback("a file named on the command line changed")
    if any(p not in files or is_registry_marker(p) or is_bundle_file(p) for p in changed):
        raise Fallback("a registry-level file changed")
    found = {owner(p, files) for p in changed}
    owners = sorted(d for d in found if d is not None)
    if len(owners) != len(found):
        raise Fallback("a file outside every item directory changed")
    return owners


def owner(path: str, files: Mapping[str, Any]) -> Optional[str]:
    """`discovery.owner(path, discovery.item_dirs(files))` (the nearest directory above `path`
    holding an item's entrypoint), found by looking up the entrypoints of `path`'s ancestors
    alone, not by listing every item directory of the registry."""
    d = posixpath.dirname(path)
    while True:
        prefix = d + "/" if d else ""
        if any(prefix + name in files and not is_registry_marker(prefix + name) for name in ENTRYPOINTS):
            return d
        parent = posixpath.dirname(d)
        if parent == d:
            return None
        d = parent


def _old_file(files: Optional[RecordedFiles], path: str) -> Optional[Tuple[bool, bytes]]:
    """(executable, sha256) of source `path` as the stamp's record keeps it (`files`)."""
    recorded = _recorded_file(files, path)
    return None if recorded is None else (bool(recorded[0] & 0o100), recorded[1])


def reparse(d: str, files: Mapping[str, Any], old_file: Callable[[str], Optional[Tuple[bool, bytes]]], names,
            memo: cache.Memo) -> List[Tuple[Any, Any]]:
    """The items of directory `d` before and after the edit, compared (Fallback if they
    differ in anything but their bodies and supporting files' bytes). `old_file`: the
    (executable, sha256) of a source before the edit, None when unknown; the memo holds the
    directory's parse of those. The item directories that matter to `d`'s members are `d`
    and those below it."""
    from agentrc.portable import discovery
    from agentrc.portable.load import _parse_dir_memo

    prefix = d + "/" if d else ""
    below = {p: files[p] for p in files if p.startswith(prefix) and not is_registry_marker(p)}
    dirs = discovery.item_dirs(below)
    members = discovery.members(below, dirs, Diagnostics()).get(d, [])
    old_files: List[SourceFile] = []
    for f in members:
        recorded = old_file(f.path)
        if recorded is None:
            raise Fallback("a malformed source record")
        old_files.append(DeferredFile(f.path, recorded[0], recorded[1], _gone(f.path)))
    was, now = Diagnostics(), Diagnostics()
    before = _parse_dir_memo(d, dirs[d], old_files, names.families, names.blocks, was, _Recorded(memo))
    after = _parse_dir_memo(d, dirs[d], members, names.families, names.blocks, now, memo)
    if was.items != now.items:
        raise Fallback(f"{d}: its diagnostics changed")
    if len(before) != len(after) or any(_shape(o) != _shape(n) for o, n in zip(before, after)):
        raise Fallback(f"{d}: more than bodies and supporting files' bytes changed")
    return list(zip(before, after))


def _shape(item) -> Any:
    """What the rest of a build may read of an item: all of it but its body (and the
    directive blocks parsed from it) and the bytes of its supporting files, which only its
    own renderings read (and those are compared)."""
    return dataclasses.replace(item, body="", blocks=(), digest="",
                               resources=tuple(Resource(r.path, b"", r.executable) for r in item.resources))


def _context(facts: Tuple[FrozenSet[str], Any], clients: Sequence[str], shared: bool = True):
    """The render context of the last build, from the facts its record keeps (`save_record`):
    they depend on the kinds and names of the items rendered alone, which the edit did not
    change."""
    from agentrc.clients import registry as client_registry

    skills, renamed = facts
    return client_registry.render_context(skills, frozenset(clients), renamed, shared)


def rerender(adapters, pairs, ctx, memo: cache.Memo, shared: Dict[str, int], work: Work
              ) -> Tuple[List[Any], Dict[str, str]]:
    """The outputs to write (new bytes) and the digests they replace; Fallback when any
    rendering differs in more than its files' bytes, or the items' copies are loaded
    differently by other clients."""
    from agentrc.output import plan as planning

    write: Dict[str, Any] = {}
    old: Dict[str, str] = {}
    new: Dict[str, str] = {}
    producers: Dict[str, int] = {}  # path -> renderings of the edited items that planned it
    old_entries: Dict[tuple, Any] = {}
    new_entries: Dict[tuple, Any] = {}
    for adapter in adapters:
        for before, after in pairs:
            was = planning.memoized(adapter, before, ctx, memo)
            if was is None:
                raise Fallback("the memo does not hold the last build's rendering")
            work.renders += 1
            now = planning._render(adapter, after, ctx, memo)
            if was.report != now.report or was.fragments != now.fragments or len(was.files) != len(now.files):
                raise Fallback(f"{after.label}: {adapter.name}'s report or fragments changed")
            for a, b in zip(was.files, now.files):
                if (a.path, a.executable, a.owner, a.merge, a.keys) != (b.path, b.executable, b.owner, b.merge,
                                                                         b.keys):
                    raise Fallback(f"{after.label}: {adapter.name}'s files changed place or kind")
                producers[b.path] = producers.get(b.path, 0) + 1
                if b.path in old:  # another rendering of these items planned it too: the same bytes?
                    if old[b.path] != a.sha256() or new[b.path] != b.sha256():
                        raise Fallback(f"{b.path}: its renderings disagree")
                    continue
                old[b.path], new[b.path] = a.sha256(), b.sha256()
                if a.sha256() == b.sha256():
                    continue
                if b.merge:
                    raise Fallback(f"{b.path}: a merged output changed")
                write[b.path] = b
            if was.files:
                old_entries[(adapter.name, before.kind, before.name)] = was.files[0]
                new_entries[(adapter.name, after.kind, after.name)] = now.files[0]
    for path in write:
        if shared.get(path, 1) != producers[path]:
            raise Fallback(f"{path}: an output other items or files also plan changed")
    if pairs and planning.cross_discovery(adapters, [o for o, _ in pairs], old_entries) != \
            planning.cross_discovery(adapters, [n for _, n in pairs], new_entries):
        raise Fallback("other clients load the edited items' copies differently")
    return list(write.values()), {p: old[p] for p in write}


def _write_outputs(out: str, stamp: dict, files: Sequence[Any], old: Dict[str, str], notify, manifest: bytes):
    """Through `writer.Output.replay`: the changes, the new manifest's (digest, record) with
    the statuses of the directories holding directories (`output.parents`, taken under the
    lock as of when the replay began checking them), and the write's diagnostics (an error:
    the stamp stays the last build's). `manifest`: the
    bytes of the last build's, as read before the lock."""
    try:
        with writer.session(out, write=True, notify=notify) as tree:
            tree.expect(stamp.get("manifest", ""), stamp.get("outputs"), manifest, stamp.get("parents"))
            done = tree.replay(files, old, stamp["files"])
            if done is None:
                raise Fallback("the output changed under the lock")
            replayed = writer.replayed_statuses(tree)
            # Only the directories written into change (renames into them); the others stood.
            held = parents.again(out, stamp.get("parents"), tree.checked_at,
                                 {f.path.rpartition("/")[0] for f in files} if tree.parents_stood else None) \
                if tree.checked_at else None
            if held is None and replayed is not None:
                held = parents.verified(out, replayed[1][0])
            return done[0], (replayed, held) if replayed is not None else None, done[1]
    except writer.OutputError as exc:
        return None, None, tuple(exc.diagnostics)
