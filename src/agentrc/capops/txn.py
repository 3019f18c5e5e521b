"""The transaction of a capability scope (issue 30): how `cap install`, its bare restore,
`update` and `remove` change a scope all or nothing, and how the next run finishes or undoes
one that was killed.

It is a plan of `output.steps` steps, run by that one executor with its one journal and
recovered by its one recovery (docs/architecture.md, Transactions):

- **Stage** (before the plan runs). Every new byte goes into `installed/.agentrc-txn/` first
  (the same file system as the store, so each later step is one rename): a new artifact tree
  as `N.dir`, the lock's and the ignore file's new bytes as `N.new`, each fsync'd. Nothing
  visible changes; a failure here deletes the staging directory (`discard`).
- **The plan.** `Commit` (the commit point: the staged names fsync'd, then recorded done in
  the executor's journal, `installed/.agentrc-txn/journal.json`), then `Retire` (an artifact
  set aside as `N.old`), `Place` (a staged tree put in place, what was there set aside) and
  `Replace` (a staged file renamed over the ignore file, then over the lock, its bytes
  checked against the sha256 the journal names). Each step checks whether it was done (a
  staged name still present is a step still to do), so doing it twice is doing it once; the
  steps after the point are never undone, only completed. Then the staging directory goes
  with what was set aside.
- **Recover.** The next run that takes the scope's lock (`scope.ScopeLock`), before it reads
  anything, hands the journal to `steps.recover`: a committed plan is completed, one whose
  point was not done is rolled back (nothing visible had changed: the staging directory is
  deleted), and says which it did (AR142, a warning). A journal of the shape agentrc wrote
  before (the output writer's version 2 with `kind: agentrc-cap`, always committed) is
  converted into the same plan and recovered the same way (`_legacy`).

A journal is data a cloned or planted scope could hold: every record is checked before any
step runs (targets limited to the scope's `oas-lock.json`, its `.agents/capabilities/
.gitignore` and the entries of its `installed/`, each once; staged names of the shape this
module writes; the point first, nothing after it begun unless it was done) and a journal
that fails is refused (AR142), nothing done. Every step goes through descriptors of
directories opened without following a link (`atomic.open_directory`); a rename over a
planted link replaces the link, never what it points to.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat

from agentrc.capabilities.model import CAPABILITIES_DIR, INSTALLED, LOCK_FILE
from agentrc.fdio import NotRegular, read_regular
from agentrc.output import atomic, steps, writer
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

TXN = ".agentrc-txn"
JOURNAL = writer.JOURNAL
KIND = "agentrc-cap"  # the `kind` of the journals agentrc wrote before the executor ran this plan
LABEL = "cap transaction"
IGNORE = f"{CAPABILITIES_DIR}/.gitignore"
STORE = f"{CAPABILITIES_DIR}/{INSTALLED}"
_SHA = pattern(r"[0-9a-f]{64}")
_ENTRY = pattern(r"[^./\x00][^/\x00]*")  # one entry of the store: no dot file, no path
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_SYNC_BATCH = 256  # descriptors open at once while a staged tree is fsync'd

JournalError = steps.JournalError  # a journal that cannot be carried out: its message, for AR142


# --- the steps -----------------------------------------------------------------------------


@contextlib.contextmanager
def _dirs(scope: str) -> Iterator[tuple]:
    """(the store's descriptor, the staging directory's), both opened without following a link."""
    sfd = atomic.open_directory(scope, os.path.join(scope, STORE))
    try:
        tfd = os.open(TXN, _DIR, dir_fd=sfd)
        try:
            yield sfd, tfd
        finally:
            os.close(tfd)
    finally:
        os.close(sfd)


class Commit(steps.Step):
    """The commit point: the staged names made durable before the journal records it done.
    Never undone by itself: before it is done nothing visible changed, and the staging
    directory goes with the transaction (`discard`)."""

    kind = "cap-commit"
    point = True

    def __init__(self, scope: str):
        self.scope = scope

    def do(self) -> None:
        with _dirs(self.scope) as (_sfd, tfd):
            os.fsync(tfd)


class _Staged(steps.Step):
    """A step on one target `path` (relative to the scope) through the staged entry `tmp` of
    the staging directory. Built from a journal's record, it checks the record first."""

    suffix = ""

    def __init__(self, scope: str, path: str, tmp: str):
        self.scope, self.path, self.tmp = scope, path, tmp
        if not (isinstance(tmp, str) and re.fullmatch(r"[0-9]+\." + self.suffix, tmp)):
            raise JournalError(f"a bad staged name in a {self.kind!r} step: {tmp!r:.80}")
        self.check_path()

    def check_path(self) -> None:
        parent, _sep, name = self.path.rpartition("/") if isinstance(self.path, str) else ("", "", "")
        if parent != STORE or not _ENTRY.fullmatch(name) or name == "..":
            raise JournalError(f"not an artifact of the scope's store: {self.path!r:.200}")

    @classmethod
    def load(cls, scope: str, record: Dict[str, Any]) -> "_Staged":
        return cls(scope, record.get("path"), record.get("tmp"))  # type: ignore[arg-type]

    def record(self) -> Dict[str, Any]:
        return {"path": self.path, "tmp": self.tmp}

    def describe(self) -> str:
        return f"{self.kind} {self.path}"

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]


class Retire(_Staged):
    """An artifact set aside as `N.old` (deleted with the staging directory)."""

    kind, suffix = "cap-retire", "old"

    def do(self) -> None:
        with _dirs(self.scope) as (sfd, tfd):
            if not _exists(tfd, self.tmp):
                with contextlib.suppress(FileNotFoundError):
                    os.rename(self.name, self.tmp, src_dir_fd=sfd, dst_dir_fd=tfd)
            os.fsync(sfd)


class Place(_Staged):
    """A staged tree `N.dir` put in place; what was at its path first set aside as `N.old`."""

    kind, suffix = "cap-place", "dir"

    def do(self) -> None:
        with _dirs(self.scope) as (sfd, tfd):
            if not _exists(tfd, self.tmp):
                return  # done
            old = self.tmp[:-len("dir")] + "old"
            if _exists(sfd, self.name):
                if _exists(tfd, old):
                    writer._remove_staged(tfd, old)
                os.rename(self.name, old, src_dir_fd=sfd, dst_dir_fd=tfd)
            os.rename(self.tmp, self.name, src_dir_fd=tfd, dst_dir_fd=sfd)
            os.fsync(sfd)


class Replace(_Staged):
    """A staged file `N.new` renamed over the lock or the ignore file, its bytes first checked
    against the sha256 the journal names (a staged file swapped since is refused)."""

    kind, suffix = "cap-replace", "new"

    def __init__(self, scope: str, path: str, tmp: str, sha: str):
        super().__init__(scope, path, tmp)
        if not (isinstance(sha, str) and _SHA.fullmatch(sha)):
            raise JournalError(f"a {self.kind!r} step without the sha256 of its bytes")
        self.sha = sha

    def check_path(self) -> None:
        if self.path not in (LOCK_FILE, IGNORE):
            raise JournalError(f"a file a capability transaction never writes: {self.path!r:.200}")

    @classmethod
    def load(cls, scope: str, record: Dict[str, Any]) -> "Replace":
        return cls(scope, record.get("path"), record.get("tmp"), record.get("sha"))  # type: ignore[arg-type]

    def record(self) -> Dict[str, Any]:
        return {"path": self.path, "tmp": self.tmp, "sha": self.sha}

    def do(self) -> None:
        with _dirs(self.scope) as (_sfd, tfd):
            if not _exists(tfd, self.tmp):
                return  # done
            if writer.sha(_read(tfd, self.tmp)) != self.sha:
                raise JournalError(f"the staged bytes of {self.path} are not those the journal names")
            parent = self.path.rpartition("/")[0]
            pfd = atomic.open_directory(self.scope, os.path.join(self.scope, parent) if parent else self.scope)
            try:
                os.replace(self.tmp, self.name, src_dir_fd=tfd, dst_dir_fd=pfd)
                os.fsync(pfd)
            finally:
                os.close(pfd)


def kinds(scope: str) -> Dict[str, Callable[[Dict[str, Any]], steps.Step]]:
    """The step kinds of a scope's journal, each built from its record (and checking it)."""
    return {Commit.kind: lambda _r: Commit(scope),
            Retire.kind: lambda r: Retire.load(scope, r),
            Place.kind: lambda r: Place.load(scope, r),
            Replace.kind: lambda r: Replace.load(scope, r)}


def check_plan(entries: Sequence[Dict[str, Any]], plan: Sequence[steps.Step]) -> None:
    """The plan as a whole, as only `Txn` writes it: the point first and once, every target
    and every staged name once, and no step begun after a point that was not done (there
    is then nothing visible to undo). Raises JournalError."""
    if not plan or not isinstance(plan[0], Commit) or any(isinstance(s, Commit) for s in plan[1:]):
        raise JournalError("not the plan of a capability transaction")
    staged = [s for s in plan[1:] if isinstance(s, _Staged)]
    paths, tmps = [s.path for s in staged], [s.tmp.partition(".")[0] for s in staged]
    if len(set(paths)) != len(paths) or len(set(tmps)) != len(tmps):
        raise JournalError("a path named twice")
    if entries[0]["state"] != steps.DONE and any(e["state"] != steps.TODO for e in entries[1:]):
        raise JournalError("a step begun before the commit point was done")


def _legacy(data: Any) -> List[Dict[str, Any]]:
    """The entries of the plan a journal of the earlier shape stands for: the output writer's
    version 2 (`put`, `trees`, `retire`) with `kind: agentrc-cap`, written only at its commit
    point, so the point done and every other step still to do (each checks whether it was
    done). Its records are then checked like any (`kinds`, `check_plan`)."""
    if not (isinstance(data, dict) and data.get("version") == 2 and data.get("kind") == KIND):
        raise JournalError("not a journal of agentrc's steps")
    lists: List[List[Dict[str, Any]]] = []
    for key in ("retire", "trees", "put"):
        value = data.get(key)
        if not (isinstance(value, list) and all(isinstance(e, dict) for e in value)):
            raise JournalError("not the journal of a capability transaction")
        lists.append(value)
    if data.get("delete") or data.get("prune") or data.get("manifest") is not None:
        raise JournalError("not the journal of a capability transaction")
    retire, trees, put = lists
    entries = [{"kind": Commit.kind, "record": {}, "state": steps.DONE, "point": True}]
    for kind, items in ((Retire.kind, retire), (Place.kind, trees),
                        (Replace.kind, sorted(put, key=lambda e: e.get("path") == LOCK_FILE))):
        entries += [{"kind": kind, "record": e, "state": steps.TODO, "point": False} for e in items]
    return entries


# --- the transaction ----------------------------------------------------------------------


class Txn:
    """One transaction on `scope`, under its lock: `put`, `tree` and `retire` stage and plan,
    `commit` runs the plan (the executor: the commit point, then the rest), `carry_out`
    reports a failure after the point and removes the staging; `discard` undoes the staging
    of a transaction that was not committed."""

    def __init__(self, scope: str):
        self.scope = scope
        self.store = os.path.join(scope, CAPABILITIES_DIR, INSTALLED)
        self.retired: List[Retire] = []
        self.trees: List[Place] = []
        self.puts: List[Replace] = []
        self.fd: Optional[int] = None
        self.committed = False
        self.failure: Optional[BaseException] = None

    def _dir(self) -> int:
        """The staging directory's descriptor, made on first use."""
        if self.fd is None:
            sfd = atomic.open_directory(self.scope, self.store, create=True)
            try:
                os.mkdir(TXN, 0o700, dir_fd=sfd)
                self.fd = os.open(TXN, _DIR, dir_fd=sfd)
            finally:
                os.close(sfd)
        return self.fd

    def _name(self, suffix: str) -> str:
        return f"{len(self.retired) + len(self.trees) + len(self.puts)}.{suffix}"

    def put(self, path: str, data: bytes) -> None:
        """Replace the file `path` (inside the scope) with `data` at the commit; it keeps its
        mode. A link at `path` or on the way is refused now (atomic.UnsafeWrite, AR224)."""
        atomic.check(path, self.scope)
        try:
            mode: Optional[int] = stat.S_IMODE(os.lstat(path).st_mode)
        except FileNotFoundError:
            mode = None
        fd, name = self._dir(), self._name("new")
        atomic.fill(os.open(name, _NEW, 0o644, dir_fd=fd), data, mode)
        self.puts.append(Replace(self.scope, self._rel(path), name, writer.sha(data)))

    def tree(self, path: str, staged: str) -> None:
        """Put the directory `staged` (a staging tree of this run) at `path`, setting aside
        what is there, at the commit. `staged` is moved into the staging directory now."""
        fd, name = self._dir(), self._name("dir")
        os.rename(staged, name, dst_dir_fd=fd)
        _sync_tree(fd, name)
        self.trees.append(Place(self.scope, self._rel(path), name))

    def retire(self, path: str) -> None:
        """Set aside the artifact at `path` (deleted with the staging) at the commit."""
        self._dir()
        self.retired.append(Retire(self.scope, self._rel(path), self._name("old")))

    def _rel(self, path: str) -> str:
        return os.path.relpath(path, self.scope).replace(os.sep, "/")

    def plan(self) -> List[steps.Step]:
        """The point, the artifacts retired and placed, then the files (the lock last)."""
        files = sorted(self.puts, key=lambda s: s.path == LOCK_FILE)
        return [Commit(self.scope), *self.retired, *self.trees, *files]

    def commit(self) -> None:
        """Run the plan through the executor. A failure before the commit point is raised
        (nothing visible changed; `committing` discards the staging); one after it is kept
        for `carry_out` (the journal stays: the next run completes it)."""
        plan = self.plan()
        check_plan([{"state": steps.TODO}] * len(plan), plan)
        self._dir()
        journal = steps.Journal(os.path.join(self.store, TXN, JOURNAL), self.scope, LABEL)
        try:
            steps.run(plan, journal)
        except steps.Failed as exc:
            if exc.undone:
                raise exc.cause from None
            self.failure = exc.cause
        except BaseException as exc:  # the journal itself could not be written: ask the disk
            if not self._committed_on_disk():
                raise
            self.failure = exc
        self.committed = True

    def _committed_on_disk(self) -> bool:
        """Whether the journal left on disk records the commit point done; when it cannot be
        read, assumed so (nothing is then discarded: the next run decides from the disk)."""
        try:
            entries = steps.load(os.path.join(self.store, TXN, JOURNAL), kinds(self.scope))
        except (OSError, JournalError):
            return True
        return entries is not None and bool(entries) and entries[0]["state"] == steps.DONE

    @contextlib.contextmanager
    def committing(self) -> Iterator["Txn"]:
        """Stage inside the block; committed when it ends, discarded when it raises before the
        commit point (nothing visible changed then)."""
        try:
            yield self
            self.commit()
        except BaseException:
            with contextlib.suppress(OSError):
                self.discard()
            raise

    def carry_out(self) -> None:
        """After `commit`: the failure of a step after the point raised (an OSError or a
        JournalError: the journal stays for the next run), else the staging removed."""
        self.close()
        if self.failure is not None:
            if isinstance(self.failure, (OSError, JournalError)):
                raise self.failure
            raise JournalError(str(self.failure) or type(self.failure).__name__) from self.failure
        finish(self.scope)

    def discard(self) -> None:
        """Roll back a transaction that was not committed (nothing visible changed)."""
        if self.fd is None or self.committed:
            return
        self.close()
        discard(self.scope)

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def _sync_tree(parent: int, name: str, depth: int = 0) -> None:
    """fsync every file and directory of the staged tree `name` (each directory's files in
    batches, in parallel by the writer's `_fsync_all`), so the journal never names a tree a
    crash could empty. Links are left as they are; below MAX_TREE_DEPTH nothing is walked."""
    fd = os.open(name, _DIR, dir_fd=parent)
    try:
        files: List[str] = []
        for child in sorted(os.listdir(fd)):
            st = os.stat(child, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode) and depth < writer.MAX_TREE_DEPTH:
                _sync_tree(fd, child, depth + 1)
            elif stat.S_ISREG(st.st_mode):
                files.append(child)
        for start in range(0, len(files), _SYNC_BATCH):
            fds: List[int] = []
            try:
                for child in files[start:start + _SYNC_BATCH]:
                    fds.append(os.open(child, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd))
                writer._fsync_all(fds)
            finally:
                for f in fds:
                    os.close(f)
        os.fsync(fd)
    finally:
        os.close(fd)


def _exists(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _read(dfd: int, name: str, limit: int = 1 << 26) -> bytes:
    """The bytes of the staged regular file `name` (at most `limit`), never through a link."""
    try:
        return read_regular(name, limit, dir_fd=dfd)[0][:limit]
    except NotRegular:
        raise JournalError(f"the staged {name} is not a regular file") from None


# --- finished, discarded, recovered --------------------------------------------------------


def finish(scope: str) -> None:
    """The staging directory of a transaction that is done (its journal already deleted by
    the executor) removed, with what was set aside."""
    discard(scope)


def discard(scope: str) -> None:
    """The staging directory (of a transaction not committed, or done) deleted."""
    sfd = atomic.open_directory(scope, os.path.join(scope, STORE))
    try:
        writer._remove_staged(sfd, TXN)
        os.fsync(sfd)
    finally:
        os.close(sfd)


def recover(scope: str) -> str:
    """Under the scope's lock, before anything reads it: a committed plan completed by the
    executor's recovery ("completed"), an uncommitted one and its staging deleted ("rolled
    back"), or nothing to do (""). Raises JournalError for a journal that cannot be trusted
    (nothing done)."""
    txn = _open_txn(scope)
    if txn is None:
        return ""
    if txn < 0:
        return "rolled back"
    try:
        journaled = _exists(txn, JOURNAL)
    finally:
        os.close(txn)
    done = ""
    if journaled:
        done = steps.recover(os.path.join(scope, STORE, TXN, JOURNAL), scope, kinds(scope),
                             check=check_plan, legacy=_legacy)
    discard(scope)
    return "completed" if done == "completed" else "rolled back"


def _open_txn(scope: str) -> Optional[int]:
    """The staging directory's descriptor; None when there is none; -1 when a link or a
    file stood at its name (removed: never agentrc's)."""
    try:
        sfd = atomic.open_directory(scope, os.path.join(scope, STORE))
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return os.open(TXN, _DIR, dir_fd=sfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        os.unlink(TXN, dir_fd=sfd)
        return -1
    finally:
        os.close(sfd)
