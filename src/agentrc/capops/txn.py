"""The journal of a capability transaction (issue 30): how `cap install`, its bare restore,
`update` and `remove` change a scope all or nothing, and how the next run finishes or undoes
one that was killed.

It is the output writer's model (`output.writer`, docs/architecture.md), on the scope:

- **Stage.** Every new byte goes into `installed/.agentrc-txn/` first (the same file system as
  the store, so each later step is one rename): a new artifact tree as `N.dir`, the lock's and
  the ignore file's new bytes as `N.new`, each fsync'd.
- **Commit.** The journal of intent, `journal.json`, names every step: the trees to put in
  place (an artifact that is there goes aside as `N.old`), the artifacts to retire, the files
  to replace (with their bytes' sha256). It is written as `journal.tmp`, fsync'd and renamed;
  the rename, fsync'd with its directory, is the commit point. Nothing visible changed before.
- **Carry out.** The steps follow from the journal alone and each checks whether it was done
  (a staged name still present is a step still to do), so doing them twice is doing them once.
  Then the journal goes, then the staging directory with what was set aside.
- **Recover.** The next run that takes the scope's lock (`capinstall.ScopeLock`), before it
  reads anything, carries out a committed journal (roll forward) or deletes an uncommitted
  staging directory (roll back), and says which it did (AR142, a warning).

The journal has the writer's shape (version 2: `put`, `trees`, `delete`, `prune`,
`manifest`) and is checked by the writer's own validation (`writer._parse_journal`), plus
what only a scope may hold: `retire`, and targets limited to the scope's `oas-lock.json`, its
`.agents/capabilities/.gitignore` and the entries of its `installed/`. Every step goes through
descriptors of directories opened without following a link (`atomic.open_directory`); a
rename over a planted link replaces the link, never what it points to.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
from typing import Any, Dict, Iterator, List, Optional

from agentrc.capabilities.model import CAPABILITIES_DIR, INSTALLED, LOCK_FILE
from agentrc.output import atomic, writer

TXN = ".agentrc-txn"
JOURNAL = writer.JOURNAL
KIND = "agentrc-cap"
IGNORE = f"{CAPABILITIES_DIR}/.gitignore"
STORE = f"{CAPABILITIES_DIR}/{INSTALLED}"
_OLD = re.compile(r"[0-9]+\.old")
_SHA = re.compile(r"[0-9a-f]{64}")
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_SYNC_BATCH = 256  # descriptors open at once while a staged tree is fsync'd


class JournalError(Exception):
    """A journal that cannot be carried out (unreadable, or naming what a scope's
    transaction never writes): the message, for an AR142 diagnostic."""


class Txn:
    """One transaction on `scope`, under its lock: `put`, `tree` and `retire` stage and
    record, `commit` writes the journal, `carry_out` does it; `discard` undoes the staging
    of a transaction that was not committed."""

    def __init__(self, scope: str):
        self.scope = scope
        self.store = os.path.join(scope, CAPABILITIES_DIR, INSTALLED)
        self.journal: Dict[str, Any] = {"version": 2, "kind": KIND, "put": [], "trees": [], "retire": [],
                                        "delete": [], "prune": [], "manifest": None}
        self.fd: Optional[int] = None
        self.committed = False

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
        j = self.journal
        return f"{len(j['put']) + len(j['trees']) + len(j['retire'])}.{suffix}"

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
        self.journal["put"].append({"path": self._rel(path), "tmp": name, "create": mode is None,
                                    "sha": writer.sha(data)})

    def tree(self, path: str, staged: str) -> None:
        """Put the directory `staged` (a staging tree of this run) at `path`, setting aside
        what is there, at the commit. `staged` is moved into the staging directory now."""
        fd, name = self._dir(), self._name("dir")
        os.rename(staged, name, dst_dir_fd=fd)
        _sync_tree(fd, name)
        self.journal["trees"].append({"path": self._rel(path), "tmp": name})

    def retire(self, path: str) -> None:
        """Set aside the artifact at `path` (deleted with the staging) at the commit."""
        self._dir()
        self.journal["retire"].append({"path": self._rel(path), "tmp": self._name("old")})

    def _rel(self, path: str) -> str:
        return os.path.relpath(path, self.scope).replace(os.sep, "/")

    def commit(self) -> None:
        """Write the journal: from here on the transaction is carried out, never undone."""
        check(self.journal)
        fd = self._dir()
        os.fsync(fd)  # the staged names, durable before the journal can name them
        data = (json.dumps(self.journal, sort_keys=True) + "\n").encode("utf-8")
        atomic.fill(os.open("journal.tmp", _NEW, 0o644, dir_fd=fd), data)
        os.replace("journal.tmp", JOURNAL, src_dir_fd=fd, dst_dir_fd=fd)
        os.fsync(fd)  # the commit point
        self.committed = True

    @contextlib.contextmanager
    def committing(self) -> Iterator["Txn"]:
        """Stage inside the block; committed when it ends, discarded when it raises (before the
        commit point nothing visible changed)."""
        try:
            yield self
            self.commit()
        except BaseException:
            with contextlib.suppress(OSError):
                self.discard()
            raise

    def carry_out(self) -> None:
        roll_forward(self.scope, self.journal, self._dir())
        self.close()
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


# --- the journal checked, carried out, finished ------------------------------------------


def check(journal: Any) -> Dict[str, Any]:
    """`journal` as the writer checks its own (`writer._parse_journal`: shape, safe paths,
    staged names), then as a scope's: its kind, `retire`, every target one a capability
    transaction writes, each once. Raises JournalError."""
    try:
        writer._parse_journal(journal)
    except ValueError as exc:
        raise JournalError(str(exc)) from None
    if journal.get("kind") != KIND or journal["delete"] or journal["prune"] or journal["manifest"] is not None:
        raise JournalError("not the journal of a capability transaction")
    retire = journal.get("retire")
    if not isinstance(retire, list) or not all(
            isinstance(r, dict) and writer.safe_path(r.get("path")) and isinstance(r.get("tmp"), str)
            and _OLD.fullmatch(r["tmp"]) for r in retire):
        raise JournalError("a bad 'retire' entry")
    if not all(isinstance(p.get("sha"), str) and _SHA.fullmatch(p["sha"]) for p in journal["put"]):
        raise JournalError("a 'put' entry without the sha256 of its bytes")
    paths = [e["path"] for e in journal["put"]] + [e["path"] for e in journal["trees"]] + [e["path"] for e in retire]
    if len(set(paths)) != len(paths):
        raise JournalError("a path named twice")
    for e in journal["put"]:
        if e["path"] not in (LOCK_FILE, IGNORE):
            raise JournalError(f"a file a capability transaction never writes: {e['path']!r:.200}")
    for e in journal["trees"] + retire:
        parent, _sep, name = e["path"].rpartition("/")
        if parent != STORE or name.startswith("."):
            raise JournalError(f"not an artifact of the scope's store: {e['path']!r:.200}")
    return journal


def roll_forward(scope: str, journal: Dict[str, Any], txn: int) -> None:
    """Carry out a checked journal, each step only when it was not done yet: artifacts
    retired and put in place, then the files (the ignore file, the lock last)."""
    sfd = atomic.open_directory(scope, os.path.join(scope, STORE))
    try:
        for entry in journal["retire"]:
            name = entry["path"].rpartition("/")[2]
            if not _exists(txn, entry["tmp"]):
                with contextlib.suppress(FileNotFoundError):
                    os.rename(name, entry["tmp"], src_dir_fd=sfd, dst_dir_fd=txn)
        for entry in journal["trees"]:
            _place(sfd, txn, entry)
        os.fsync(sfd)
    finally:
        os.close(sfd)
    for entry in sorted(journal["put"], key=lambda e: e["path"] == LOCK_FILE):
        if not _exists(txn, entry["tmp"]):
            continue
        if writer.sha(_read(txn, entry["tmp"])) != entry["sha"]:
            raise JournalError(f"the staged bytes of {entry['path']} are not those the journal names")
        parent, _sep, name = entry["path"].rpartition("/")
        pfd = atomic.open_directory(scope, os.path.join(scope, parent) if parent else scope)
        try:
            os.replace(entry["tmp"], name, src_dir_fd=txn, dst_dir_fd=pfd)
            os.fsync(pfd)
        finally:
            os.close(pfd)


def _place(sfd: int, txn: int, entry: Dict[str, Any]) -> None:
    """One staged tree put in place: what is at its path first set aside (`N.old`)."""
    if not _exists(txn, entry["tmp"]):
        return  # done
    name = entry["path"].rpartition("/")[2]
    old = entry["tmp"][:-len("dir")] + "old"
    if _exists(sfd, name):
        if _exists(txn, old):
            writer._remove_staged(txn, old)
        os.rename(name, old, src_dir_fd=sfd, dst_dir_fd=txn)
    os.rename(entry["tmp"], name, src_dir_fd=txn, dst_dir_fd=sfd)


def _exists(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _read(dfd: int, name: str, limit: int = 1 << 26) -> bytes:
    """The bytes of the staged regular file `name` (at most `limit`), never through a link."""
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK, dir_fd=dfd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise JournalError(f"the staged {name} is not a regular file")
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(1 << 20, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def finish(scope: str) -> None:
    """The journal deleted (the transaction is done), then the staging directory with
    what was set aside."""
    sfd = atomic.open_directory(scope, os.path.join(scope, STORE))
    try:
        txn = os.open(TXN, _DIR, dir_fd=sfd)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(JOURNAL, dir_fd=txn)
            os.fsync(txn)
        finally:
            os.close(txn)
        writer._remove_staged(sfd, TXN)
    finally:
        os.close(sfd)


def discard(scope: str) -> None:
    """The staging directory of a transaction that did not commit, deleted."""
    sfd = atomic.open_directory(scope, os.path.join(scope, STORE))
    try:
        writer._remove_staged(sfd, TXN)
    finally:
        os.close(sfd)


def recover(scope: str) -> str:
    """Under the scope's lock, before anything reads it: a committed journal carried out
    ("completed"), an uncommitted staging directory deleted ("rolled back"), or nothing to
    do (""). Raises JournalError for a journal that cannot be trusted (nothing done)."""
    txn = _open_txn(scope)
    if txn is None:
        return ""
    if txn < 0:
        return "rolled back"
    try:
        committed = _exists(txn, JOURNAL)
        if committed:
            try:
                journal = check(writer._load_json(_read(txn, JOURNAL, writer.MAX_MANIFEST + 1), "the journal"))
            except ValueError as exc:
                raise JournalError(str(exc)) from None
            roll_forward(scope, journal, txn)
    finally:
        os.close(txn)
    if committed:
        finish(scope)
        return "completed"
    discard(scope)
    return "rolled back"


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
