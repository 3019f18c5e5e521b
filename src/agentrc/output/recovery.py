"""Recovery and replay: finishing or undoing an interrupted write, and replaying a known one.

A run starts by finishing a committed write an earlier run was interrupted in (roll forward)
or throwing away an uncommitted staging area (roll back), before it reads anything; `replay`
writes a change the incremental build already knows without a full diff.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
import time

from agentrc import __version__
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.files import OutputFile
from agentrc.output import parents, steps, writesteps
from agentrc.output.commit import _Committing
from agentrc.output.directory import PARTIAL, Changes, _nothing_written
from agentrc.output.fsync import SYNC_BATCH, _noter
from agentrc.output.manifest import _ENCODE, _journal_chunks, _Manifest, _stat, _value, _write_chunks
from agentrc.output.recorded import _patch, _recent_dirs, _replay_manifest, _updated
from agentrc.output.tree import (
    _FS_ERRORS,
    _LEFTOVER,
    JOURNAL,
    MANIFEST,
    MAX_MANIFEST,
    STATE,
    TXN,
    OutputError,
    _Unsafe,
    sha,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

    from agentrc.output.recorded import Recorded


# `_sweep` lists a directory changed up to the clock's slack before the manifest (`parents.slack`):
# two seconds everywhere made the first edit after a build list every directory the build had
# created (13,600 at 5,000 items).


def _sweep_since(base: str) -> Optional[int]:
    """The time from which a directory may hold a leftover of another run: the manifest's
    mtime less the file system's clock slack (None without a manifest: every directory may).
    A manifest time of whole seconds says the clock is coarse (`SWEEP_SLACK_NS`); a finer
    one that it ticks in milliseconds (`SWEEP_SLACK_FINE_NS`; on such a file system a time
    falls on a whole second about once in a billion, and then the wider slack only lists
    more). `_sweep` and `replay`'s directory pass pick the directories to list by it alike."""
    try:
        mtime = os.lstat(base + MANIFEST).st_mtime_ns
    except OSError:
        return None
    return mtime - parents.slack(mtime)


class _Recovering(_Committing):
    """Finishing or undoing an interrupted write, and replaying a known change."""

    def _recover(self) -> None:
        """Finish or undo the write an earlier run was interrupted in, before reading anything:
        `steps.recover` of the executor's journal with the writer's kinds (a journal of the
        writer's earlier shape converted by `writesteps.legacy`); a staging directory without
        a journal (a run killed before it began its plan) is thrown away."""
        tree = self.tree
        txn = tree.dir(TXN) if tree is not None else None
        if tree is None or txn is None:
            return
        ctx = writesteps.Context(self)
        self.staged_manifest = None  # the plan's own manifest, not one this run serialised
        try:
            outcome = steps.recover(os.path.join(self.root, TXN, JOURNAL), self.root, writesteps.kinds(ctx),
                                    writesteps.check, legacy=writesteps.legacy, limit=MAX_MANIFEST)
        except steps.JournalError as exc:
            d = Diagnostics()
            d.error(self._show(f"{TXN}/{JOURNAL}"), (1, 1), "AR093", f"cannot read the journal of an "
                    f"interrupted write: {exc}", hint=f"Delete {self._show(TXN)} to abandon that write, then "
                    "rebuild; agentrc then compares the directory with its manifest again.")
            raise OutputError(d.items) from None
        if outcome != "completed":
            txn = tree.dir(TXN)
            assert txn is not None
            self._discard(txn, os.listdir(txn))
            return
        self._finish()
        d = Diagnostics()
        d.warning(self._show(STATE), (0, 0), "AR142", "completed a write an earlier agentrc run was "
                  "interrupted in", hint="Nothing to do: the directory now holds what that run wrote.")
        for rel in ctx.conflicts:
            d.warning(self._show(rel), (0, 0), "AR091", "appeared while agentrc was writing; kept, and not "
                      "owned by agentrc")
        self.notes.extend(d.items)

    def _abandon(self, exc: BaseException) -> Tuple[Diagnostic, Diagnostic]:
        """A failure before the journal was committed: what was staged is discarded (nothing
        visible changed), and the failure is reported with the fact that nothing was written."""
        problem = self._problem(exc, self.where)
        tree = self.tree
        with contextlib.suppress(*_FS_ERRORS):
            txn = tree.dir(TXN) if tree is not None else None
            if txn is not None:
                self._discard(txn, os.listdir(txn))
        return (problem, _nothing_written(self._show("")))

    def replay(self, files: Sequence[OutputFile], old: Mapping[str, str], total: int
               ) -> Optional[Tuple[Changes, Tuple[Diagnostic, ...]]]:
        """Write `files` (new bytes of outputs agentrc owns whole, at paths the manifest
        already records) over the bytes whose sha256 `old` gives, the rest of the tree as the
        last build left it: an incremental build (agentrc.building.incremental) that knows
        nothing else changed. `total`: how many files the build plans (for `unchanged`).

        None, with nothing written, unless the manifest is the one `expect` was given and
        each path still holds, as recorded, the bytes `old` names (then the caller builds the
        whole tree instead); OutputError when they cannot be read. The write is `apply`'s
        transaction: staged, journaled (the journal holds the whole new manifest, so a killed
        run is completed by the next one exactly as `apply`'s would be), rolled forward; the
        new manifest differs from the recorded one only in these files' entries and is
        written by patching those lines."""
        if not self.write:
            raise ValueError("replay() on an output opened for checking")
        tree = self.tree
        if tree is None or self.expected is None or self.notes:
            return None
        digest, recorded = self.expected
        try:
            self.where = MANIFEST
            raw = tree.read(MANIFEST)
            if raw is None or not self._is_expected(raw):
                return None
            m, paths = _replay_manifest(recorded, {f.path for f in files})
            recent = self._as_left(m, files, old, paths)
            if recent is None:
                return None
        except _FS_ERRORS as exc:
            raise OutputError([self._problem(exc, self.where)]) from None
        update = tuple(sorted(f.path for f in files if f.sha256() != m.owned[f.path]))
        changes = Changes((), update, (), total - len(update))
        if not update:
            self.replayed = (digest, recorded)
            return changes, ()
        by_path = {f.path: f for f in files}
        try:
            self._sweep_listed(sorted({"", STATE} | {posixpath.dirname(p) for p in update} | set(recent)))
            committed = self._replay_stage([by_path[p] for p in update], raw, recorded, paths)
        except _FS_ERRORS as exc:
            return changes, self._abandon(exc)
        if committed is None:
            return None
        return changes, self._replay_commit(committed)

    def _replay_commit(self, committed: dict) -> Tuple[Diagnostic, ...]:
        """`replay`'s staged write carried out (`_roll_forward`); what went wrong, if anything."""
        try:
            self._roll_forward(committed, fresh=True)  # only updates: no file can appear in the way
            self._finish()
        except writesteps.NotCommitted as exc:
            return self._abandon(exc.cause)
        except _FS_ERRORS as exc:
            d = Diagnostics()
            d.items.append(self._problem(exc, self.where))
            d.error(self._show(STATE), (0, 0), "AR142", f"{PARTIAL}; the next agentrc run in this directory "
                    "completes it before doing anything else")
            return d.sorted()
        return ()

    def _as_left(self, m: _Manifest, files: Sequence[OutputFile], old: Mapping[str, str], paths: Sequence[str]
                 ) -> Optional[List[str]]:
        """Whether the output is as the last build left it where `replay` writes: every
        output's directories are directories, not links (as `diff`'s cheap check: `untouched`
        compares statuses through them, and the whole build refuses a link, AR140), and each
        of `files` is a file agentrc wrote whole, with the status recorded and the bytes
        `old` names. `paths`: every output. The directories holding outputs that `_sweep`
        would list (`_recent_dirs`), or None."""
        tree = self.tree
        assert tree is not None
        self.checked_at = time.time_ns()  # what the next edit's `parents` record is as of
        base = os.path.join(self.root, "")
        # No directory was replaced since the last build (their parents stand): only those
        # written are listed for leftovers (`parents`). Else every directory is looked at.
        loose = parents.unsettled(self.root, self.expected_parents) if self.expected_parents is not None else None
        self.parents_stood = loose is not None
        if loose is None:
            recent = _recent_dirs(base, paths, _sweep_since(base))
        else:  # those written within the slack of the record: the directories in them looked at
            recent = parents.leaves(self.root, self.expected_parents, loose, paths, _sweep_since(base)) if loose \
                else []
        if recent is None:
            return None
        for f in files:
            self.where = f.path
            now = tree.lstat(f.path)
            if (f.merge or now is None or not stat.S_ISREG(now.st_mode) or f.path in m.merged
                    or m.owned.get(f.path) is None or m.owned.get(f.path) != old.get(f.path)
                    or _stat(now) != m.stats.get(f.path) or bool(now.st_mode & stat.S_IXUSR) != f.executable):
                return None
        return recent

    def _replay_stage(self, files: Sequence[OutputFile], raw: bytes, recorded: Recorded,
                      paths: Sequence[str]) -> Optional[dict]:
        """`_stage` for `replay`: stage `files`, patch the manifest `raw` with their digests
        and statuses, commit the journal. None (nothing committed) when the manifest is not
        laid out as `_manifest_bytes` writes it."""
        tree = self.tree
        assert tree is not None
        tree.absent.clear()
        tree.dir(STATE, create=True)
        txn = tree.dir(TXN, create=True)
        assert txn is not None
        txn_dev = os.fstat(txn).st_dev
        written: Dict[str, list] = {}
        pending: List[Tuple[int, str]] = []
        puts: List[dict] = []
        checked: Set[str] = set()
        note = _noter(written)
        try:
            for i, f in enumerate(files):
                self.where = f.path
                self._check_parents(f.path, set(), txn_dev, checked)
                pending.append((tree.create(txn, f"{i}.new", f.content, 0o755 if f.executable else 0o644, True),
                                f.path))
                puts.append({"path": f.path, "tmp": f"{i}.new", "create": False})
                if len(pending) >= SYNC_BATCH:
                    self._sync_staged(pending, note)
            self._sync_staged(pending, note)
        finally:
            for fd, _ in pending:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.where = TXN
        os.fsync(txn)
        data = _patch(raw, [("files", f.path, _value(f.sha256())) for f in files]
                      + [("stat", f.path, _value(written[f.path])) for f in files])
        if data is None or f' "generator": {_ENCODE(f"agentrc {__version__}")},'.encode() not in data:
            self._discard(txn, os.listdir(txn))
            return None
        self.replayed = (sha(data), _updated(recorded, {f.path: (f.sha256(), written[f.path]) for f in files},
                                                   paths))
        self.staged_manifest = data
        # `_roll_forward` writes `staged_manifest`; the plan's data on disk holds the manifest
        # whole (spliced in by `_journal_chunks`), which is what a run completing it writes.
        journal = {"version": 1, "put": puts, "delete": [], "prune": [], "manifest": {}}
        self.where = f"{TXN}/{writesteps.CHUNK}"
        _write_chunks(txn, "journal.tmp", _journal_chunks(journal, data), 0o644)  # the manifest not copied again
        os.replace("journal.tmp", writesteps.CHUNK, src_dir_fd=txn, dst_dir_fd=txn)
        os.fsync(txn)  # durable before a journal names it; `_roll_forward` commits
        return journal

    def _sweep(self, paths: Sequence[str], written: Sequence[str] = ()) -> None:
        """Remove agentrc's own temporary files (`_LEFTOVER`) that a killed run of an earlier
        version left in the directories this run writes: regular files whose names match
        exactly, reached through no link, so temporary files never outlive a run.

        A directory of `paths` is listed only when something may have been put in it since
        the last build: its mtime is not older than the manifest's (written after every other
        change of a build, so a file created later, by anyone, makes the directory newer)
        minus the clock's slack (`_sweep_since`), or there is no manifest. The
        directories of `written` (the files this run creates, updates or deletes), the root
        and `.agentrc` are always listed. A one-edit build at 5,000 items had listed 6,700
        directories; now it lists the few it writes. (`replay` picks the same directories
        with `_recent_dirs`, in the pass that checks them.)"""
        tree = self.tree
        assert tree is not None
        base = os.path.join(self.root, "")
        since = _sweep_since(base)
        always = {"", STATE} | {p.rpartition("/")[0] for p in written}  # posixpath.dirname, without its calls
        absent = tree.absent  # found missing by this run (under the lock): nothing to list
        listed: List[str] = []
        for d in sorted(always | {p.rpartition("/")[0] for p in paths}):
            if d in absent:
                continue
            if since is not None and d not in always:
                try:
                    st = os.lstat(base + d)
                    if stat.S_ISDIR(st.st_mode) and st.st_mtime_ns < since:
                        continue  # nothing was put in it since the last build wrote its manifest
                except OSError:
                    pass  # missing or in the way: as before, tree.dir says so
            listed.append(d)
        self._sweep_listed(listed)

    def _sweep_listed(self, dirs: Sequence[str]) -> None:
        """`_sweep`'s removal, in each of `dirs` (chosen by `_sweep`, or by `_recent_dirs`)."""
        tree = self.tree
        assert tree is not None
        for d in dirs:
            self.where = d
            try:
                fd = tree.dir(d)
            except _Unsafe:
                continue  # a link or a file in the way: refused where it matters, never entered
            if fd is None:
                continue
            for name in os.listdir(fd):
                if _LEFTOVER.fullmatch(name):
                    with contextlib.suppress(FileNotFoundError):
                        if stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                            os.unlink(name, dir_fd=fd)
