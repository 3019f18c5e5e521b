"""A capability scope's store (`.agents/capabilities/installed/`) as every verb reaches it: its
paths, its lock (`ScopeLock`: one agentrc cap run at a time per scope, waited for), a run's
staging directory inside the store (same file system, so a commit is a rename), what killed
runs left finished or undone before anything reads the scope (`recover_leftovers`), the
ignore file, and writes through no symbolic link (AR224). Kept apart from the verbs so that
each of them, `cap use`, `cap spawn` and `cap migrate` take the scope the same way.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
import time

from agentrc.capabilities import lock as locks
from agentrc.capabilities.model import CAPABILITIES_DIR, INSTALLED, LOCK_FILE, Lock
from agentrc.capops import safe as capsafe
from agentrc.capops import txn as captxn
from agentrc.capops.failure import Failure, fail, failure_of
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import captree
from agentrc.output import atomic
from agentrc.output.writer import LOCK_TIMEOUT

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

STAGING_PREFIX = capsafe.STAGING_PREFIX
GITIGNORE_LINE = "installed/"
GITIGNORE_TEXT = ("# OAS: materialized capabilities are reprojected from oas-lock.json by `oas install`.\n"
                  f"{GITIGNORE_LINE}\n")


def store_dir(scope: str) -> str:
    return os.path.join(scope, CAPABILITIES_DIR, INSTALLED)


def installed_dir(scope: str, cid: str) -> str:
    return os.path.join(store_dir(scope), cid)


def check_scope(scope: str) -> None:
    """The directories installs write below must be real directories, never links."""
    rel = ""
    for part in (".agents", "capabilities", INSTALLED):
        rel = f"{rel}/{part}" if rel else part
        full = os.path.join(scope, rel)
        if os.path.islink(full) or (os.path.lexists(full) and not os.path.isdir(full)):
            raise fail(full, "AR167", "is a symbolic link or not a directory; installed capabilities are written "
                        "only below real directories of the scope")


def read_lock(scope: str) -> Optional[Lock]:
    """The scope's lock, None when there is none. Raises Failure when it is invalid."""
    path = os.path.join(scope, LOCK_FILE)
    if not os.path.lexists(path):
        return None
    raw = captree.read_manifest(scope, LOCK_FILE)
    if raw is None:
        raise fail(path, "AR159", "is not a regular file inside the scope")
    d = Diagnostics()
    lock = locks.parse(path, raw, d)
    if lock is None:
        raise Failure(d.items)
    return lock


def locked_at(scope: str, package_id: str) -> Tuple[str, Lock]:
    """The innermost scope level whose v2 lock holds `package_id`, and that lock; AR166 when
    none from `scope` outwards does."""
    for candidate in reversed(lock_levels(scope)):
        found = read_lock(candidate)
        if found is not None and found.version == 2 and found.package(package_id) is not None:
            return candidate, found
    raise fail(package_id, "AR166", f"package {package_id!r} is not locked in this scope or above it")


def lock_levels(scope: str) -> List[str]:
    """The scope and every ancestor holding an oas-lock.json, outermost first."""
    levels = []
    d = os.path.abspath(scope)
    while True:
        if os.path.lexists(os.path.join(d, LOCK_FILE)):
            levels.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return list(reversed(levels))


class Ignore:
    """`.agents/capabilities/.gitignore` holding `installed/` at a git scope: the bytes a
    transaction puts there (`stage`), read once the run holds the scope's lock, so
    concurrent installs never race on it. A link there is AR167, never read or replaced."""

    def __init__(self, scope: str):
        self.scope = scope
        self.file = os.path.join(scope, CAPABILITIES_DIR, ".gitignore")

    def wanted(self) -> Optional[bytes]:
        """The file's new bytes, or None when it already ignores `installed/` (or the scope
        is not in git)."""
        if not _in_git(self.scope):
            return None
        existed = os.path.isfile(self.file) and not os.path.islink(self.file)
        if os.path.lexists(self.file) and not existed:
            raise fail(self.file, "AR167", "is not a regular file; agentrc keeps `installed/` ignored here")
        try:
            current = capsafe.read_bounded(self.file, self.scope) if existed else b""
        except capsafe.Escape as exc:
            raise fail(self.file, exc.code, exc.message) from None
        if any(line.strip() == GITIGNORE_LINE.encode() for line in current.split(b"\n")):
            return None
        sep = b"\n" if current and not current.endswith(b"\n") else b""
        return current + sep + GITIGNORE_TEXT.encode()

    def stage(self, txn: captxn.Txn) -> None:
        data = self.wanted()
        if data is not None:
            txn.put(self.file, data)


def write_in(root: str, path: str, data: bytes, mode: Optional[int] = None) -> None:
    """Write `path` (a file the scope `root` holds) whole, through no symbolic link: a link
    at the file, at a directory between `root` and it, is AR224 (a Failure), nothing written."""
    try:
        capsafe.write(root, path, data, mode)
    except atomic.UnsafeWrite as exc:
        raise fail(exc.filename or path, "AR224", f"{exc.what}: agentrc never writes through a symbolic link "
                   "(remove it and run again)") from None


def _in_git(scope: str) -> bool:
    try:
        proc = subprocess.run(["git", "-C", scope, "rev-parse", "--is-inside-work-tree"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


class ScopeLock:
    """One agentrc cap run at a time per scope: an exclusive `flock` on
    `installed/.agentrc-lock` (inside the ignored store, dot-prefixed so no tool takes it
    for a capability), waited for up to AGENTRC_LOCK_TIMEOUT seconds (60). The file is
    removed on release; a waiter that got the lock on a file removed meanwhile tries again,
    so two runs never both hold it."""

    NAME = ".agentrc-lock"
    # Locks this process holds and lends, by path: a run that holds a scope (cap migrate)
    # lends its lock to the transactions it runs on it (install), which then do not wait
    # for it. Only a lent lock is entered again.
    _held: Dict[str, List[Any]] = {}

    def __init__(self, scope: str, directory: str = "",
                 recover: Optional[Callable[[], Tuple[Diagnostic, ...]]] = None):
        """The lock of `scope`'s store; or, with `directory` (below `scope`) and `recover`
        (what to finish or undo there once held), of another directory agentrc stages in
        (an agent's instances/, `spawn`)."""
        self.path = os.path.join(directory or store_dir(scope), self.NAME)
        self.fd: Optional[int] = None
        self.notes: Tuple[Diagnostic, ...] = ()  # what the recovery of a killed run did (warnings)
        self.recover = recover or (lambda: recover_leftovers(scope))
        held = ScopeLock._held.get(self.path)
        if held is not None:
            held[1] += 1
            self.nested = True
            return
        self.nested = False
        try:
            timeout = float(os.environ.get("AGENTRC_LOCK_TIMEOUT", LOCK_TIMEOUT))
        except ValueError:
            timeout = LOCK_TIMEOUT
        deadline = time.monotonic() + timeout
        while True:
            try:
                fd = self._open(scope)
            except OSError as exc:
                raise fail(self.path, atomic.code_of(exc, "AR142"), f"cannot take the scope's lock: "
                           f"{exc.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() > deadline:
                    raise fail(scope, "AR141", f"another agentrc cap run held this scope for more than {timeout:g} s",
                               "E_SCOPE_LOCKED") from None
                time.sleep(0.05)
                continue
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self.fd = fd
                self._recover()
                return
            os.close(fd)  # removed by the run that held it: lock the new file instead

    def _recover(self) -> None:
        """Before anything else under the lock: what a killed run left, finished or undone
        (`recover_leftovers`); the warnings saying so in `notes`. Releases and raises on failure."""
        try:
            self.notes = self.recover()
        except BaseException:
            self.release()
            raise

    def _open(self, scope: str) -> int:
        """The lock file, created when missing, with its directories reached from the scope
        without following a link (atomic.UnsafeWrite otherwise)."""
        dfd = atomic.open_directory(scope, os.path.dirname(self.path), create=True)
        try:
            return os.open(self.NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                           | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=dfd)
        finally:
            os.close(dfd)

    def lend(self) -> "ScopeLock":
        """Let later ScopeLocks of this scope in this process enter without waiting."""
        if self.fd is not None:
            ScopeLock._held[self.path] = [self.fd, 1]
        return self

    def release(self) -> None:
        if self.nested:
            self.nested = False
            ScopeLock._held[self.path][1] -= 1
            return
        if self.fd is None:
            return
        ScopeLock._held.pop(self.path, None)
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self.fd)
        self.fd = None


class Staging:
    """A staging directory inside the store, under the scope's lock, and the anchors
    (.agents, capabilities, installed) this run had to create, removed again (deepest
    first, only while empty) once the lock is released."""

    def __init__(self, scope: str, anchors: Optional[List[str]] = None):
        store = store_dir(scope)
        self.anchors = absent_anchors(scope) if anchors is None else anchors
        try:
            self.lock = ScopeLock(scope)
        except OSError as exc:
            self.prune()
            raise fail(store, atomic.code_of(exc, "AR142"), f"cannot take the scope's lock: {exc.strerror}") from None
        except BaseException:
            self.prune()
            raise
        self.notes = self.lock.notes
        try:
            self.dir = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=store)
        except OSError as exc:
            self.lock.release()
            self.prune()
            raise fail(store, "AR142", f"cannot create the staging directory: {exc.strerror}") from None
        except BaseException:
            self.lock.release()
            self.prune()
            raise

    def close(self) -> None:
        rmtree(self.dir)
        self.lock.release()
        self.prune()

    def prune(self) -> None:
        for d in self.anchors:
            try:
                os.rmdir(d)
            except OSError:
                break


# How a killed `cap migrate` is rolled back (`capmigrate.recover`: the `.migrate-*` directories
# it undid). `cap migrate` builds on the verbs of this package, so this module cannot import it
# without a cycle: the package's entry (`capops.install`, which every caller imports) sets it.
_MIGRATIONS: List[Callable[[str], List[str]]] = []
MIGRATE_PREFIX = ".migrate-"  # the directories a `cap migrate` keeps its undo journal in


def undo_migrations_with(recover: Callable[[str], List[str]]) -> None:
    """Set how `recover_leftovers` rolls back a killed `cap migrate`."""
    _MIGRATIONS[:] = [recover]


def recover_leftovers(scope: str) -> Tuple[Diagnostic, ...]:
    """Under the scope's lock, before anything reads the scope: a capability transaction a
    killed run committed is carried out, one it did not commit is undone (`captxn.recover`),
    a killed `cap migrate` is rolled back (`capmigrate.recover`, through `_MIGRATIONS`), and
    every `.staging-*` (what fetches and validation left; never anything the scope needs) is
    deleted. The warnings (AR142) say what was done. Raises Failure when a journal cannot be
    trusted."""
    if not _MIGRATIONS:
        raise RuntimeError("agentrc.capops.install sets how a killed cap migrate is rolled back; import it first")
    store = store_dir(scope)
    d = Diagnostics()
    try:
        done = captxn.recover(scope)
    except captxn.JournalError as exc:
        raise fail(os.path.join(store, captxn.TXN, captxn.JOURNAL), "AR142", f"cannot carry out the journal of an "
                   f"interrupted capability transaction: {exc}; delete {os.path.join(store, captxn.TXN)} to abandon "
                   "it, then run `agentrc cap install` to restore what the lock records") from None
    except OSError as exc:
        raise failure_of(exc, store, scope) from None
    try:
        migrations = _MIGRATIONS[0](scope)
        capsafe.remove_leftovers(store)
    except (ValueError, capsafe.Escape) as exc:
        raise fail(store, "AR142", f"cannot roll back an interrupted `cap migrate` by its journal ({exc}); delete its "
                   f"{MIGRATE_PREFIX}* directory after putting back the version 1 lock and artifacts it "
                   "holds") from None
    except OSError as exc:
        raise failure_of(exc, store, scope) from None
    if done == "completed":
        d.warning(os.path.relpath(store), (0, 0), "AR142", "completed a capability transaction an earlier agentrc run "
                  "was interrupted in (its journal was committed)",
                  hint="Nothing to do: the scope now holds what that run wrote.")
    elif done:
        d.warning(os.path.relpath(store), (0, 0), "AR142", "rolled back a capability transaction an earlier agentrc "
                  "run was interrupted in before its commit point", hint="Nothing to do: the scope is as it was "
                  "before that run; run its command again if you still want the change.")
    for where in migrations:
        d.warning(os.path.relpath(where), (0, 0), "AR142", "rolled back a `cap migrate` an earlier agentrc run was "
                  "interrupted in: the version 1 lock and its artifacts are back", hint="Run `agentrc cap migrate` "
                  "again to convert the scope.")
    return tuple(d.items)


def recover_here(scope: str) -> Tuple[Diagnostic, ...]:
    """What killed runs left in `scope`'s own store recovered under its lock (the warnings),
    when there is anything (a lock file left behind goes when the lock is released): a
    scope whose first install was killed has no oas-lock.json yet, so no level of the lock
    chain would take it."""
    store = store_dir(scope)
    try:
        names = os.listdir(store)
    except OSError:
        return ()
    if not any(n in (captxn.TXN, ScopeLock.NAME) or n.startswith((STAGING_PREFIX, MIGRATE_PREFIX)) for n in names):
        return ()
    held = ScopeLock(scope)
    held.release()
    return held.notes


@contextlib.contextmanager
def held(scope: str) -> Iterator[None]:
    """The scope's lock for a run that writes a file of the scope outside the store (`cap
    use`'s oas-config.yaml); the store's directories it had to create are removed again."""
    anchors = absent_anchors(scope)
    lock = ScopeLock(scope)
    try:
        yield
    finally:
        lock.release()
        for d in anchors:
            try:
                os.rmdir(d)
            except OSError:
                break


def absent_anchors(scope: str) -> List[str]:
    """The store's directories that do not exist yet, deepest first."""
    store = store_dir(scope)
    return [d for d in (store, os.path.dirname(store), os.path.dirname(os.path.dirname(store)))
            if not os.path.lexists(d)]


def rmtree(path: str) -> None:
    def onerror(func, p, _exc):
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)

    if os.path.islink(path):
        os.unlink(path)
    elif os.path.lexists(path):
        shutil.rmtree(path, onerror=onerror)


def carry_out(txn: captxn.Txn, where: str) -> None:
    """Carry out a committed transaction; a failure now is AR142 saying the next run under
    the scope's lock completes it (the journal stays)."""
    try:
        txn.carry_out()
    except (OSError, captxn.JournalError) as exc:
        txn.close()
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise fail(where, "AR142", f"the change was committed but not completed ({why}); the next agentrc cap run "
                   "in this scope completes it before anything else") from None


def hash_or_empty(path: str) -> str:
    """The integrity of an installed artifact; "" when it is missing, unreadable or a link
    (an artifact is a real directory; a link planted there is never followed)."""
    if os.path.islink(path) or not os.path.isdir(path):
        return ""
    try:
        return captree.tree_hash(path)
    except (captree.TreeError, OSError):
        return ""


def misplaced_diags(scope: str, warning: bool) -> Tuple[Diagnostic, ...]:
    d = Diagnostics()
    for rel in captree.misplaced(scope):
        report = d.warning if warning else d.error
        report(os.path.relpath(os.path.join(scope, rel)), (0, 0), "AR158", "is a capability directly under "
               ".agents/capabilities/, where only installed/ and owned/ may hold capabilities")
    return tuple(d.items)

