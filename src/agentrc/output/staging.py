"""Staging a write: new bytes and the plan's data in `.agentrc/txn/`, fsync'd before the commit.

`apply` stages every new file (a forked child takes a share of a large write,
`agentrc.output.forked`), fsyncs them, writes the plan's data (`writesteps.CHUNK`) and hands it
to the roll-forward, a plan of `output.steps` whose first step is the commit point; a failure
before the commit leaves the directory as it was.
"""

from __future__ import annotations

import contextlib
import os
import struct
from dataclasses import field

from agentrc import __version__
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.files import OutputFile
from agentrc.output.directory import PARALLEL_MIN, PARTIAL, Changes, _directories
from agentrc.output.fsync import SYNC_BATCH, _noter
from agentrc.output.manifest import _journal_chunks, _manifest_bytes, _path_of, _section, _stat, _write_chunks
from agentrc.output.recovery import _Recovering
from agentrc.output.tree import _FS_ERRORS, MANIFEST, STATE, TXN, _Unsafe, sha
from agentrc.output.writesteps import CHUNK, NotCommitted

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

# The child's share of the files staged: the build's process stages the rest and meanwhile
# makes the manifest's digests, directories and encoded `files` section. At 10,000 items
# (46,128 files) staging took 0.51 s in one process, and with a child 0.40 s (its 60%)
# against 0.29 + 0.18 s in the build's: two processes staging at once each go about 40%
# slower per file than one alone on the 2-core machine of docs/benchmarks.md.
CHILD_SHARE = 0.6


_STATUS = struct.Struct("<qqq")  # a staged file's size, mtime_ns and mode, from the child


# (path, file, mode, exact, staged directory): staged as f"{i}.new" in the staging directory
# when the staged directory is None, else under its own name there.
if TYPE_CHECKING:
    _Todo = Tuple[str, Any, int, bool, Optional[str]]


@dataclass
class _StagePlan:
    """Where `_stage` stages each file, and the journal's entries for them."""

    txn: Optional[int] = None  # the staging directory, made at the first file
    todo: List[_Todo] = field(default_factory=list)
    puts: List[dict] = field(default_factory=list)
    trees: List[dict] = field(default_factory=list)
    created_dirs: Set[str] = field(default_factory=set)
    # A new file whose directory is new too is staged in a tree of its own: the topmost
    # directory missing above it (`tops`, its parent there already) is staged whole as
    # `{n}.dir` and renamed into place in one step, instead of every file below it being
    # linked into place and unlinked from the staging directory (two system calls a file,
    # 92,000 for a cold build of 10,000 items) and its name written into the journal.
    tops: Dict[str, str] = field(default_factory=dict)  # topmost missing directory -> its staged name
    staged_in: Dict[str, str] = field(default_factory=dict)  # a new file's directory -> where it is staged

    def staged_dir(self, parent: str) -> str:
        """Where a new file in the new directory `parent` is staged: in its topmost missing
        directory's staged tree."""
        if parent not in self.staged_in:
            top = parent
            while top.rpartition("/")[0] in self.created_dirs:
                top = top.rpartition("/")[0]
            tmp = self.tops.get(top)
            if tmp is None:
                tmp = self.tops[top] = f"{len(self.tops)}.dir"
                self.trees.append({"path": top, "tmp": tmp})
            self.staged_in[parent] = f"{TXN}/{tmp}{parent[len(top):]}"
        return self.staged_in[parent]


class _Staging(_Recovering):
    """`apply`: staging the new files and the journal, then committing."""

    def apply(self, files: Sequence[OutputFile], changes: Changes) -> Tuple[Diagnostic, ...]:
        """Make the directory hold `files` as `changes` (from this session's diff) says: stage,
        commit the journal, roll forward. Errors are returned as diagnostics: before the
        commit nothing visible changed; after it, the next run completes the write."""
        if not self.write:
            raise ValueError("apply() on an output opened for checking")
        by_path = {f.path: f for f in files}
        by_path.update(changes.merged_files)
        files = [by_path[f.path] for f in files]
        try:
            self._sweep([f.path for f in files] + list(changes.delete),
                        changes.create + changes.update + changes.delete)
            journal = self._stage(files, by_path, changes)
        except _FS_ERRORS as exc:
            return self._abandon(exc)
        if journal is None:
            return ()
        try:
            conflicts = self._roll_forward(journal, fresh=True)
            self._finish()
        except NotCommitted as exc:
            return self._abandon(exc.cause)
        except _FS_ERRORS as exc:
            d = Diagnostics()
            d.items.append(self._problem(exc, self.where))
            d.error(self._show(STATE), (0, 0), "AR142", f"{PARTIAL}; the next agentrc run in this directory "
                    "completes it before doing anything else")
            return d.sorted()
        d = Diagnostics()
        for rel in conflicts:
            d.error(self._show(rel), (0, 0), "AR091", "appeared while agentrc was writing; kept, and not owned by "
                    "agentrc")
        return d.sorted()

    def _stage(self, files: Sequence[OutputFile], by_path: Dict[str, OutputFile], changes: Changes
               ) -> Optional[dict]:
        """Stage every new byte and the plan's data (`writesteps.CHUNK`, the shape the writer's
        journal had); None when nothing at all changes. Nothing is committed yet."""
        tree = self.tree
        assert tree is not None
        written: Dict[str, list] = {}
        tree.absent.clear()  # looked at anew from here on: the diff's view may be old
        plan = self._plan_staging(by_path, changes)
        txn = plan.txn
        # What the manifest holds apart from the staged files' statuses: made while a child
        # stages the files' larger share (`_stage_files`), else after the files are staged.
        known: Dict[str, Any] = {}

        def prepare() -> None:
            # In the order of their paths, as `_manifest_bytes` writes them: sorting an
            # ordered list again is one comparison per entry.
            ordered = sorted(files, key=_path_of)
            final = [f.path for f in files if not f.merge] + list(changes.merged) + list(changes.kept)
            digests = {f.path: f.sha256() for f in ordered if not f.merge}
            digests.update(changes.kept)
            known.update(ordered=ordered, needed=_directories(final), ours=set(changes.dirs) | plan.created_dirs,
                         digests=digests, encoded={"files": _section("files", digests)})

        if txn is not None:
            self._stage_files(txn, plan.todo, written, prepare)
        if not known:
            prepare()
        if txn is not None:
            self.where = TXN
            os.fsync(txn)  # the staged files' names, durable before the journal can name them
        new_manifest = self._new_manifest(changes, known, written)
        needed, ours = known["needed"], known["ours"]
        if not plan.puts and not plan.trees and not changes.delete and new_manifest is None:
            return None
        journal = {"version": 2, "put": plan.puts, "trees": plan.trees,
                   "delete": [{"path": p, "sha": changes.delete_sha[p]} for p in changes.delete],
                   "prune": sorted(ours - needed, key=lambda d: (-d.count("/"), d)), "manifest": new_manifest}
        if txn is None:
            tree.dir(STATE, create=True)
            txn = tree.dir(TXN, create=True)
            assert txn is not None
        self.where = f"{TXN}/{CHUNK}"
        _write_chunks(txn, "journal.tmp", _journal_chunks(journal, self.staged_manifest), 0o644)
        os.replace("journal.tmp", CHUNK, src_dir_fd=txn, dst_dir_fd=txn)
        os.fsync(txn)  # the plan's data, durable before a journal names it (`_roll_forward`: the commit)
        return journal

    def _plan_staging(self, by_path: Dict[str, OutputFile], changes: Changes) -> _StagePlan:
        """Where each created and updated file is staged, with which mode, and the journal's
        `put` and `trees` entries; the staging directory is made at the first file, and the
        missing directories above each file are found (`_check_parents`)."""
        tree = self.tree
        assert tree is not None
        plan = _StagePlan()
        checked: Set[str] = set()
        new = len(changes.create)  # the first `new` staged are created, the rest updated
        txn_dev = 0
        for i, path in enumerate(changes.create + changes.update):
            if plan.txn is None:
                tree.dir(STATE, create=True)
                plan.txn = tree.dir(TXN, create=True)
                assert plan.txn is not None
                txn_dev = os.fstat(plan.txn).st_dev
            f = by_path[path]
            self.where = path
            parent = path.rpartition("/")[0]
            if parent not in checked and parent not in plan.created_dirs:  # else its walk is done
                if parent.rpartition("/")[0] in plan.created_dirs:
                    plan.created_dirs.add(parent)  # below a missing directory: missing too
                else:
                    self._check_parents(path, plan.created_dirs, txn_dev, checked)
            sdir: Optional[str] = None
            if i < new:
                mode, exact = (0o755 if f.executable else 0o644), False
                if parent in plan.created_dirs:
                    sdir = plan.staged_dir(parent)
            elif f.merge:
                mode, exact = changes.modes.get(path, 0o644), True  # the user's file keeps its mode
            else:
                mode, exact = (0o755 if f.executable else 0o644), True
            plan.todo.append((path, f, mode, exact, sdir))
            if sdir is None:
                plan.puts.append({"path": path, "tmp": f"{i}.new", "create": i < new})
        return plan

    def _new_manifest(self, changes: Changes, known: Dict[str, Any], written: Dict[str, list]) -> Optional[dict]:
        """The manifest this write leaves (None when its bytes are those on disk already); its
        bytes are serialised once, here, into `staged_manifest` for `_roll_forward`."""
        tree = self.tree
        assert tree is not None
        stats = {}
        seen = changes.seen
        for f in known["ordered"]:
            st_known = seen.get(f.path) or written.get(f.path)
            if st_known is None:
                st = tree.lstat(f.path)
                st_known = _stat(st) if st is not None else [0, 0, 0]
            stats[f.path] = st_known
        for path in changes.kept:  # as recorded: a later build's cheap check still applies
            if self.manifest is not None and path in self.manifest.stats:
                stats[path] = self.manifest.stats[path]
        needed, ours = known["needed"], known["ours"]
        manifest: Dict[str, Any] = {
            "version": 1, "generator": f"agentrc {__version__}",
            "files": known["digests"],
            "stat": stats}
        if changes.merged:
            manifest["merged"] = changes.merged
        if ours & needed:
            manifest["dirs"] = sorted(ours & needed)
        new_manifest: Optional[dict] = manifest
        current = self.manifest_raw if self.manifest is not None else tree.read(MANIFEST)
        data = _manifest_bytes(manifest, known["encoded"])  # serialised once: _roll_forward writes these bytes
        self.planned_manifest = (sha(data), manifest)  # for `recorded_statuses`
        self.staged_manifest = None
        if current == data:
            new_manifest = None  # a no-op build leaves the directory byte- and mtime-stable
        else:
            self.staged_manifest = data
        return new_manifest

    def _stage_files(self, txn: int, todo: List[_Todo], written: Dict[str, list],
                     meanwhile: Callable[[], None]) -> None:
        """Write each (path, file, mode, exact, staged directory) of `todo` into the staging
        directory as `{index}.new` (or under its own name into its staged directory, made
        here), fsync it and the staged directories and note its status in `written`, and
        call `meanwhile`. From
        PARALLEL_MIN files on, with `jobs` above 1, a forked child writes the larger share
        (`CHILD_SHARE`) at the same time (`agentrc.output.forked`), its statuses coming back
        through shared memory, while this process writes the rest and calls `meanwhile`."""
        # Imported here: a build with nothing to write never forks (docs/architecture.md).
        from agentrc.output import forked

        def mine(start: int, end: int) -> None:
            noted = _noter(written)
            self._stage_share(txn, todo, start, end, lambda i, st: noted(todo[i][0], st))
            meanwhile()

        def theirs(start: int, end: int, records: memoryview) -> None:
            pack = _STATUS.pack_into

            def note(i: int, st: os.stat_result) -> None:
                pack(records, (i - start) * _STATUS.size, st.st_size, st.st_mtime_ns, st.st_mode & 0o7777)
            self._stage_share(txn, todo, start, end, note)

        count = len(todo)
        cut = count - int(count * CHILD_SHARE) if self.jobs > 1 and count >= PARALLEL_MIN else count
        try:
            records = forked.run(count, cut, _STATUS.size, mine, theirs)
        except forked.Failed as exc:  # where: the file it failed on, else the staging directory
            self.where = todo[exc.index][0] if exc.index >= 0 else TXN
            raise exc.original from None
        if records is not None:
            unpack = _STATUS.unpack_from
            for k in range(count - cut):
                written[todo[cut + k][0]] = list(unpack(records, k * _STATUS.size))

    def _stage_share(self, txn: int, todo: List[_Todo], start: int, end: int,
                     note: Callable[[int, os.stat_result], None]) -> None:
        """Stage `todo[start:end]` (one process's share), fsync'd in batches, then the staged
        directories it wrote into; a failure is `forked.Failed` with the index it failed at."""
        from agentrc.output import forked  # (imported by `_stage_files` already)

        tree = self.tree
        assert tree is not None
        create = tree.create
        pending: List[Tuple[int, int]] = []  # staged files written, not yet fsync'd: (descriptor, index)
        # The staged directories this share wrote into or made: fsync'd before it ends (a
        # descriptor evicted meanwhile, when it is evicted: `_Tree.unsynced`).
        unsynced: Set[str] = set()
        tree.unsynced = unsynced
        last: Optional[str] = None
        dfd = txn
        try:
            for i in range(start, end):
                path, f, mode, exact, sdir = todo[i]
                self.where = path
                try:
                    if sdir is None:
                        dfd, name = txn, f"{i}.new"
                    else:
                        if sdir != last:
                            made = tree.dir(sdir, create=True)
                            assert made is not None
                            dfd, last = made, sdir
                            unsynced.add(sdir)
                        name = path.rpartition("/")[2]
                    # `content` asked once; a spilled file's bytes go from the spill to the
                    # staged file in the kernel, never held here.
                    copy = getattr(f, "copy_to", None)  # `spill.Spilled`
                    data = copy if copy is not None else f.content
                    pending.append((create(dfd, name, data, mode, exact), i))
                    if len(pending) >= SYNC_BATCH:
                        self._sync_staged(pending, note)
                except (OSError, _Unsafe) as exc:
                    raise forked.Failed(exc, i if self.where == path else -1) from None
            try:
                self._sync_staged(pending, note)
                tree.flush()
                self._fsync_dirs(sorted(unsynced))
            except OSError as exc:
                raise forked.Failed(exc, -1) from None  # `where`: the staging directory
        finally:
            tree.unsynced = None
            for fd, _ in pending:  # a failure: the staging area is discarded
                with contextlib.suppress(OSError):
                    os.close(fd)
