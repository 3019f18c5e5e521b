"""An output directory held for one run: opened, locked, its manifest read (`Output`'s base).

The state every step of a write shares lives here (the `_Tree`, the lock, the manifest read,
the path being worked on for a diagnostic), with what reading and locking need; planning
(`diffing`), committing (`commit`), recovery (`recovery`) and staging (`staging`) build on it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.files import OutputFile, safe_path
from agentrc.output.fsync import _fsync_all
from agentrc.output.manifest import _load_json, _Manifest, _parse_manifest
from agentrc.output.recorded import _recorded_manifest, _well_formed
from agentrc.output.tree import (
    _FS_ERRORS,
    _NOFOLLOW,
    JOURNAL,
    LOCK,
    LOCK_TIMEOUT,
    MANIFEST,
    STATE,
    TXN,
    OutputError,
    _NotDir,
    _NotFile,
    _OtherDevice,
    _remove_staged,
    _Symlink,
    _Tree,
    sha,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

    from agentrc.output.recorded import Recorded


# Files staged from which, with `Output.jobs` above 1, a forked child stages the second half
# (`_stage_files`): 46,000 files took 1.06 s in one process at 10,000 items.
PARALLEL_MIN = 10000


PARTIAL = "the write was interrupted after it was committed"  # the one failure that leaves work to finish


@dataclass(frozen=True)
class Changes:
    """How the output directory changes: files created, updated and deleted, and how many stay."""
    create: Tuple[str, ...]
    update: Tuple[str, ...]
    delete: Tuple[str, ...]
    unchanged: int
    # [size, mtime_ns, mode] of unchanged files as diff() saw them, so apply() need not stat them again.
    seen: Dict[str, list] = field(default_factory=dict, compare=False, hash=False)
    # Files merged into what the user has (agentrc.output.merge): their merged bytes, and the
    # ownership record the manifest keeps for each (the keys agentrc added).
    merged_files: Dict[str, OutputFile] = field(default_factory=dict, compare=False, hash=False)
    merged: Dict[str, dict] = field(default_factory=dict, compare=False, hash=False)
    # What apply() checks again before it deletes (the sha256 each deleted file had when
    # diff() read it), the mode of each updated file, and the directories agentrc created.
    delete_sha: Dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    modes: Dict[str, int] = field(default_factory=dict, compare=False, hash=False)
    dirs: Tuple[str, ...] = field(default=(), compare=False, hash=False)
    # Files this write leaves as they are though nothing planned them (`diff`'s `keep`: another
    # client's, in a build narrowed by --client): path -> the digest the manifest keeps for them.
    kept: Dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def empty(self) -> bool:
        return not (self.create or self.update or self.delete)


def _directories(paths: Iterable[str]) -> Set[str]:
    """The directories holding `paths`, and theirs, up to the root (excluded), each directory
    walked once however many files it holds."""
    found: Set[str] = set()
    for p in paths:
        d = p.rpartition("/")[0]
        while d and d not in found:  # a directory found has all its ancestors found too
            found.add(d)
            d = d.rpartition("/")[0]
    return found


def _note(d: str, unsynced: Set[str], touched: Set[str]) -> None:
    """Directory `d`'s entries changed: it and each ancestor not noted before are to be
    fsync'd before the new manifest records the change (`Output._roll_forward`)."""
    unsynced.add(d)
    while d not in touched:
        touched.add(d)
        unsynced.add(d)
        if not d:
            break
        d = d.rpartition("/")[0]


def _nothing_written(where: str) -> Diagnostic:
    d = Diagnostics()
    d.error(where, (0, 0), "AR142", "the write failed before it was committed; nothing in the directory changed")
    return d.items[0]


class _Directory:
    """The output directory opened, locked and read: the state the steps of a write share."""

    def __init__(self, root: str, write: bool):
        """The state of one run, nothing opened yet (`Output.__init__` opens and locks)."""
        self.root = root
        self.write = write
        self.tree: Optional[_Tree] = None
        self.lock_fd: Optional[int] = None
        self.made_root = False
        self.made_state = False
        self.notes: List[Diagnostic] = []  # warnings of the recovery, reported with diff()
        self.manifest: Optional[_Manifest] = None
        self.manifest_raw: Optional[bytes] = None
        self.staged_manifest: Optional[bytes] = None  # the new manifest's bytes, from _stage to _roll_forward
        self.planned_manifest: Optional[Tuple[str, dict]] = None  # its sha256 and content, from _stage
        self.expected: Optional[Tuple[str, Recorded]] = None  # the last build's manifest (`expect`)
        self.expected_raw: Optional[bytes] = None  # its bytes, when the caller read them (`expect`)
        self.expected_parents: Any = None  # its directories' parents' statuses (`expect`, `output.parents`)
        self.checked_at: Optional[int] = None  # when a replay began checking the directories (`output.parents`)
        self.parents_stood = False  # the replay found every one of them with the status recorded (`parents.again`)
        self.replayed: Optional[Tuple[str, Recorded]] = None  # the new manifest's digest and record (`replay`)
        self.where = ""  # the path being worked on, for the diagnostic of an I/O error
        # Processes a large write may use (`_stage_files`): 1 unless the caller says (the
        # CLI's build does; Pants' rules, which run inside pantsd, never fork).
        self.jobs = 1

    def _show(self, rel: str) -> str:
        return os.path.join(self.root, rel) if rel else self.root

    def _problem(self, exc: BaseException, rel: str) -> Diagnostic:
        """The diagnostic for a failure at `rel`: a symlink or an I/O error, never a traceback."""
        d = Diagnostics()
        if isinstance(exc, _Symlink):
            d.error(self._show(exc.rel), (0, 0), "AR140", "is a symbolic link; agentrc never writes, merges or "
                    "deletes through links in the output directory, which can lead outside it")
        elif isinstance(exc, _NotDir):
            d.error(self._show(exc.rel), (0, 0), "AR091", "is not a directory, and agentrc writes files below it")
        elif isinstance(exc, _NotFile):
            d.error(self._show(exc.rel), (0, 0), "AR091", "a directory or other non-file stands where agentrc "
                    "writes a file")
        elif isinstance(exc, _OtherDevice):
            d.error(self._show(exc.rel), (0, 0), "AR142", f"is on another file system than {self._show(STATE)}, "
                    "so agentrc cannot rename files into it atomically")
        else:
            assert isinstance(exc, OSError)
            what = exc.strerror or str(exc)
            d.error(self._show(rel), (0, 0), "AR142", f"cannot read or write: {what}")
        return d.items[0]

    def _reopen(self) -> bool:
        """Open the root (made when writing) and note whether agentrc's state directory is
        there; False for a check with nothing to lock."""
        self.tree = None
        if not os.path.lexists(self.root):
            if not self.write:
                return False  # nothing there: every file is new
            with contextlib.suppress(FileExistsError):
                os.makedirs(self.root)
                self.made_root = True
        self.tree = _Tree(self.root)
        if self.tree.dir(STATE) is None:
            if not self.write:
                return False
            self.made_state = True
        return True

    def _lock(self, notify: Optional[Callable[[str], None]]) -> None:
        """flock `.agentrc/lock`; the file is removed again on release, so a waiter checks
        that the file it locked is still the one at the path (else it locks the new one)."""
        try:
            timeout = float(os.environ.get("AGENTRC_LOCK_TIMEOUT", LOCK_TIMEOUT))
        except ValueError:
            timeout = LOCK_TIMEOUT
        deadline = time.monotonic() + timeout
        told = False
        tree = self.tree
        assert tree is not None
        while True:
            state = tree.dir(STATE, create=self.write)
            if state is None:
                return  # a check: the directory was removed by the run it waited for
            try:
                fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644,
                             dir_fd=state)
            except OSError as exc:
                if not self.write and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                    return  # a check of a read-only tree: nobody can write it either
                if exc.errno == errno.ELOOP:
                    raise _Symlink(f"{STATE}/{LOCK}") from None
                if exc.errno == errno.ENOENT:  # the run we waited for removed the empty .agentrc (and --out)
                    tree.close()
                    if not self._reopen():
                        return
                    tree = self.tree
                    assert tree is not None
                    continue
                raise
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() >= deadline:
                    d = Diagnostics()
                    d.error(self._show(f"{STATE}/{LOCK}"), (0, 0), "AR141", f"another agentrc run has held the "
                            f"output directory for {timeout:g} s; giving up")
                    raise OutputError(d.items) from None
                if not told and notify is not None:
                    notify(f"agentrc: waiting for another agentrc run to finish with {self.root} "
                           f"(at most {timeout:g} s)")
                told = True
                time.sleep(0.05)
                continue
            except BaseException:
                os.close(fd)
                raise
            try:
                now = os.stat(LOCK, dir_fd=state, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            mine = os.fstat(fd)
            if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                self.lock_fd = fd
                return
            os.close(fd)  # released and removed by its holder while we waited: lock the new one

    def close(self) -> None:
        tree = self.tree
        if tree is not None:
            state = tree.fds.get(STATE)
            if self.lock_fd is not None and state is not None:
                with contextlib.suppress(OSError):
                    os.unlink(LOCK, dir_fd=state)
            if self.made_state and state is not None:
                with contextlib.suppress(OSError):
                    tree.forget(STATE)
                    os.rmdir(STATE, dir_fd=tree.fds[""])  # only when empty: a run that wrote nothing
            tree.close()
            self.tree = None
        if self.lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.lock_fd)
            self.lock_fd = None
        if self.made_root:
            with contextlib.suppress(OSError):
                os.rmdir(self.root)  # only when empty
            self.made_root = False

    def _discard(self, txn: int, names: Sequence[str]) -> None:
        """Roll back: staged files that were never committed go; nothing visible changed."""
        tree = self.tree
        assert tree is not None
        for name in names:
            _remove_staged(txn, name)
        tree.forget(TXN)
        os.rmdir("txn", dir_fd=tree.dir(STATE))

    def expect(self, digest: str, recorded: Any, raw: Optional[bytes] = None, parents: Any = None) -> None:
        """The manifest the last build wrote is likely still there: `digest` is its sha256,
        `recorded` what it holds (`recorded_statuses`). If the manifest read has that digest,
        its content is taken from `recorded` instead of being decoded and checked again.
        `raw`: bytes of it the caller read and found to have `digest` (`untouched_manifest`):
        the manifest read is compared with them rather than hashed. `parents`: the statuses
        of the directories holding directories after that build (`output.parents`)."""
        self.expected = (digest, recorded) if digest and _well_formed(recorded) else None
        self.expected_raw = raw if self.expected is not None else None
        self.expected_parents = parents if self.expected is not None else None

    def _is_expected(self, raw: bytes) -> bool:
        """Whether the manifest `raw` is the one `expect` named (its bytes, or its digest)."""
        assert self.expected is not None
        if self.expected_raw is not None:
            return raw == self.expected_raw
        return sha(raw) == self.expected[0]

    def _read_manifest(self, diags: Diagnostics) -> _Manifest:
        if self.manifest is not None:
            return self.manifest
        tree = self.tree
        raw = None
        if tree is not None:
            try:
                raw = tree.read(MANIFEST)
            except _FS_ERRORS as exc:
                diags.items.append(self._problem(exc, MANIFEST))
                return _Manifest()
        self.manifest_raw = raw
        if raw is None:
            self.manifest = _Manifest()
            return self.manifest
        if self.expected is not None and self._is_expected(raw):
            self.manifest = _recorded_manifest(self.expected[1])
            return self.manifest
        try:
            self.manifest = _parse_manifest(_load_json(raw, "the manifest"))
        except ValueError as exc:
            diags.error(self._show(MANIFEST), (1, 1), "AR093", f"cannot read the ownership manifest: {exc}")
            return _Manifest()
        return self.manifest

    def _read(self, rel: str) -> Optional[bytes]:
        return self.tree.read(rel) if self.tree is not None else None

    def _lstat(self, rel: str) -> Optional[os.stat_result]:
        return self.tree.lstat(rel) if self.tree is not None else None

    def owned_paths(self) -> Set[str]:
        """The paths of the files agentrc wrote whole here, as its manifest records them (none
        when it cannot be read: `diff` reports that)."""
        return set(self._read_manifest(Diagnostics()).owned)

    def read_owned(self, rel: str) -> Optional[bytes]:
        """The bytes of a file agentrc wrote whole here and that nobody edited since (None
        otherwise), read as the writer reads: never through a link. What an import adds to
        (its bundle, its context) is read this way."""
        m = self._read_manifest(Diagnostics())
        digest = m.owned.get(rel)
        try:
            data = self._read(rel) if digest is not None and safe_path(rel) else None
        except (_NotFile, _Symlink, *_FS_ERRORS):
            return None
        return data if data is not None and sha(data) == digest else None

    def _sync_staged(self, pending: List[Tuple[int, Any]], note: Callable[[Any, os.stat_result], None]) -> None:
        """fsync the staged files of `pending` together, `note` their status, close them. The
        journal is written only after every staged byte is durable: this returns only then."""
        self.where = TXN
        try:
            _fsync_all([fd for fd, _ in pending])
            fstat = os.fstat
            for fd, key in pending:
                note(key, fstat(fd))
        finally:
            close = os.close
            while pending:
                fd, _ = pending.pop()
                try:
                    close(fd)
                except OSError:
                    pass

    def _check_parents(self, path: str, created: Set[str], dev: int, checked: Set[str]) -> None:
        """Walk to `path`'s directory without creating anything: a symlink or a file in the
        way is refused now, before the commit; missing directories are noted as agentrc's.
        `checked` holds the directories found, on `dev`, for earlier paths of this staging:
        each is looked at once, not once per file below it (the walk in `_roll_forward`
        still opens every component with O_NOFOLLOW)."""
        tree = self.tree
        assert tree is not None
        parent = path.rpartition("/")[0]
        if parent in checked or parent in created:  # its ancestors were each checked or noted
            return
        if "" not in checked:
            if os.fstat(tree.fds[""]).st_dev != dev:
                raise _OtherDevice("")
            checked.add("")
        # The directories not looked at yet, deepest first, up to one that was (or the root):
        # below a missing one, each is missing too, without asking the disk.
        todo = []
        d = parent
        while d and d not in checked and d not in created:
            todo.append(d)
            d = d.rpartition("/")[0]
        missing = bool(d) and d in created
        for d in reversed(todo):
            if missing:
                created.add(d)
                continue
            fd = tree.dir(d)
            if fd is None:
                missing = True
                created.add(d)
            elif os.fstat(fd).st_dev != dev:
                raise _OtherDevice(d)
            else:
                checked.add(d)

    def _fsync_dirs(self, dirs: Sequence[str]) -> None:
        """fsync the directories `dirs`, a batch at a time: a batch's descriptors are held
        open together (`_Tree.held`) while the rest of the tree's come and go."""
        tree = self.tree
        assert tree is not None
        batch = max(1, tree.most // 4)
        for start in range(0, len(dirs), batch):
            fds = []
            for d in dirs[start:start + batch]:
                self.where = d
                fd = tree.dir(d)
                if fd is not None:
                    fds.append(fd)
                    tree.held.add(d)
            self.where = ""
            try:
                _fsync_all(fds)
            finally:
                tree.held.clear()

    def _finish(self) -> None:
        """The plan is carried out (its journal deleted by the executor): remove the staging
        directory, the journal first should one be left."""
        tree = self.tree
        assert tree is not None
        txn = tree.dir(TXN)
        assert txn is not None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(JOURNAL, dir_fd=txn)
        for name in os.listdir(txn):  # the plan's data, staged files of creates that lost to another file
            _remove_staged(txn, name)
        tree.forget(TXN)
        state = tree.fds[STATE]
        os.rmdir("txn", dir_fd=state)
        os.fsync(state)
