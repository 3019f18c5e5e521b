"""`agentrc cap install | list | remove | trust`: acquiring capability packages into a scope (spec 003),
as transactions that leave the scope as it was on any failure.

Install stages the package (and its dependencies) in
`.agents/capabilities/installed/.staging-<random>/` (same file system as the store, so the
commit is a rename; dot-prefixed, so nothing takes it for a capability), validates the whole
payload, materialises each capability in staging (its files, plus `.oas-installation.json`)
and hashes it. Only then does the scope change, by one journaled transaction (`txn`, the
output writer's model): the new artifacts, the lock's and the ignore file's new bytes staged
in `installed/.agentrc-txn/`, a journal of intent written and fsync'd (the commit point), its
steps carried out (artifacts renamed into `installed/<id>/`, replaced or retired ones set
aside, `oas-lock.json` and `.agents/capabilities/.gitignore` renamed over), the staging
deleted. All of it under the scope's lock (`ScopeLock`), through no symbolic link (AR224).
A failure before the commit changes nothing; a run killed at any point is finished (after the
commit) or undone (before it) by the next run that takes the lock, before anything else
(`recover_leftovers`), with a warning. Bare install restores what the locks in the scope's
chain record, each artifact re-verified against its integrity; nothing ever advances.
Restore, update and remove are journaled the same way.

The bytes written are those the OAS kernel writes for the same package (lock, provenance
file, ignore file), so both tools can work on one scope. Reads go through
`agentrc.inputs.captree`; git runs as `git` with no shell, hardened as `agentrc add` runs it
(`_git`), on URLs and refs `capabilities.source` checked.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from agentrc.capabilities import catalog as catalogs
from agentrc.capabilities import lock as locks
from agentrc.capabilities import source as sources
from agentrc.capabilities.manifest import compatible, parse_capability, parse_package
from agentrc.capabilities.model import (
    CAPABILITIES_DIR,
    CAPABILITY_FILE,
    DEFAULT_PACKAGE_PATH,
    INSTALLATION_FILE,
    INSTALLED,
    LOCK_FILE,
    OAS_CONTRACT,
    PACKAGE_FILE,
    Capability,
    Installation,
    Lock,
    LockedCapability,
    LockedPackage,
    Package,
)
from agentrc.capops import closure as capclosure
from agentrc.capops import safe as capsafe
from agentrc.capops import txn as captxn
from agentrc.codes import CODES
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import captree
from agentrc.inputs import fetch as gitfetch
from agentrc.output import atomic
from agentrc.output.writer import LOCK_TIMEOUT
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

STAGING_PREFIX = capsafe.STAGING_PREFIX
GITIGNORE_LINE = "installed/"
GITIGNORE_TEXT = ("# OAS: materialized capabilities are reprojected from oas-lock.json by `oas install`.\n"
                  f"{GITIGNORE_LINE}\n")
GIT_TIMEOUT = 600
# The stable error codes of the OAS kernel's --json envelope, for agentrc's codes.
KERNEL_CODES = {
    "AR004": "invalid-package-manifest", "AR008": "invalid-package-manifest", "AR150": "invalid-package-manifest",
    "AR151": "invalid-package-manifest", "AR152": "duplicate-capability-id", "AR154": "invalid-package-manifest",
    "AR155": "invalid-package-manifest", "AR156": "path-escape", "AR157": "capability-not-self-contained",
    "AR158": "invalid-package-manifest", "AR159": "invalid-lock", "AR160": "invalid-source",
    "AR161": "integrity-drift", "AR162": "remove-blocked", "AR163": "incompatible-oas",
    "AR164": "duplicate-package-identity", "AR165": "legacy-lock", "AR166": "unknown-capability",
    "AR167": "path-escape", "AR255": "invalid-package-manifest", "AR256": "invalid-package-manifest",
    "AR257": "path-escape", "AR224": "path-escape", "AR225": "invalid-source", "AR242": "invalid-package-manifest",
    "AR054": "invalid-source", "AR241": "invalid-source",
}


class Failure(Exception):
    """The operation stopped; nothing was changed. `kernel_code` overrides the envelope code."""

    def __init__(self, diagnostics: Sequence[Diagnostic], kernel_code: str = ""):
        self.diagnostics = tuple(sorted(set(shown(d) for d in diagnostics)))
        super().__init__("\n".join(d.format() for d in self.diagnostics))
        first = next((d for d in self.diagnostics if d.is_error), None)
        self.kernel_code = kernel_code or (KERNEL_CODES.get(first.code, "invalid-source") if first else "")


def shown(d: Diagnostic) -> Diagnostic:
    """`d` with its path relative to the working directory when it lies below it."""
    if os.path.isabs(d.path):
        rel = os.path.relpath(d.path)
        if not rel.startswith(".."):
            return dataclasses.replace(d, path=rel)
    return d


def fail(path: str, code: str, message: str, kernel_code: str = "") -> Failure:
    d = Diagnostics()
    d.error(path, (0, 0), code, message)
    return Failure(d.items, kernel_code)


@dataclass
class Outcome:
    """What a command did: `result` is the --json envelope's result, `lines` the text report,
    `failed` whether anything failed (bare install reports failures per artifact)."""

    result: Dict[str, Any]
    lines: List[str] = field(default_factory=list)
    warnings: Tuple[Diagnostic, ...] = ()
    failed: bool = False


# --- the scope ------------------------------------------------------------------------


def _store(scope: str) -> str:
    return os.path.join(scope, CAPABILITIES_DIR, INSTALLED)


def _installed_dir(scope: str, cid: str) -> str:
    return os.path.join(_store(scope), cid)


def _check_scope(scope: str) -> None:
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


def _locked_at(scope: str, package_id: str) -> Tuple[str, Lock]:
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


class _Ignore:
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
        self.path = os.path.join(directory or _store(scope), self.NAME)
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


class _Staging:
    """A staging directory inside the store, under the scope's lock, and the anchors
    (.agents, capabilities, installed) this run had to create, removed again (deepest
    first, only while empty) once the lock is released."""

    def __init__(self, scope: str, anchors: Optional[List[str]] = None):
        store = _store(scope)
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
        _rmtree(self.dir)
        self.lock.release()
        self.prune()

    def prune(self) -> None:
        for d in self.anchors:
            try:
                os.rmdir(d)
            except OSError:
                break


def recover_leftovers(scope: str) -> Tuple[Diagnostic, ...]:
    """Under the scope's lock, before anything reads the scope: a capability transaction a
    killed run committed is carried out, one it did not commit is undone (`captxn.recover`),
    a killed `cap migrate` is rolled back (`capmigrate.recover`), and every `.staging-*`
    (what fetches and validation left; never anything the scope needs) is deleted. The
    warnings (AR142) say what was done. Raises Failure when a journal cannot be trusted."""
    from agentrc.capops import migrate as capmigrate  # capmigrate builds on this module

    store = _store(scope)
    d = Diagnostics()
    try:
        done = captxn.recover(scope)
    except captxn.JournalError as exc:
        raise fail(os.path.join(store, captxn.TXN, captxn.JOURNAL), "AR142", f"cannot carry out the journal of an "
                   f"interrupted capability transaction: {exc}; delete {os.path.join(store, captxn.TXN)} to abandon "
                   "it, then run `agentrc cap install` to restore what the lock records") from None
    except OSError as exc:
        raise _failure(exc, store, scope) from None
    try:
        migrations = capmigrate.recover(scope)
        capsafe.remove_leftovers(store)
    except (ValueError, capsafe.Escape) as exc:
        raise fail(store, "AR142", f"cannot roll back an interrupted `cap migrate` by its journal ({exc}); delete its "
                   f"{capmigrate.MIGRATE_PREFIX}* directory after putting back the version 1 lock and artifacts it "
                   "holds") from None
    except OSError as exc:
        raise _failure(exc, store, scope) from None
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
    store = _store(scope)
    return [d for d in (store, os.path.dirname(store), os.path.dirname(os.path.dirname(store)))
            if not os.path.lexists(d)]


def _rmtree(path: str) -> None:
    def onerror(func, p, _exc):
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)

    if os.path.islink(path):
        os.unlink(path)
    elif os.path.lexists(path):
        shutil.rmtree(path, onerror=onerror)


# --- fetching ----------------------------------------------------------------------------


def copy_tree(src: str, dest: str) -> None:
    """Copy `src` to `dest` as it is: links recreated verbatim (never followed), files with
    their permission bits, directories' modes set after their contents; FIFOs, sockets and
    devices refused (captree.TreeError)."""
    count = [0]

    def copy(s: str, d: str, depth: int) -> None:
        st = os.lstat(s)
        count[0] += 1
        if count[0] > captree.MAX_ENTRIES or depth > captree.MAX_DEPTH:
            raise captree.TreeError("AR157", s, f"{src}: more than {captree.MAX_ENTRIES} entries or "
                                    f"{captree.MAX_DEPTH} levels")
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(s), d)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(s, d, follow_symlinks=False)
            os.chmod(d, stat.S_IMODE(st.st_mode) & 0o777)
        elif stat.S_ISDIR(st.st_mode):
            os.mkdir(d, 0o700)
            for name in sorted(os.listdir(s)):
                copy(os.path.join(s, name), os.path.join(d, name), depth + 1)
            os.chmod(d, (stat.S_IMODE(st.st_mode) & 0o777) | 0o700)
        else:
            raise captree.TreeError("AR157", s, f"{s}: is a FIFO, socket or device; packages carry files, "
                                    "directories and symbolic links only")

    copy(src, dest, 0)


def _git(args: Sequence[str], cwd: Optional[str] = None) -> str:
    """Run git hardened as `agentrc add` runs it (`inputs.fetch`): only the https, ssh and
    file transports, no hooks, no templates, no submodules, no system config, no prompt, no
    input, a time limit (AGENTRC_GIT_TIMEOUT)."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="", GIT_CONFIG_NOSYSTEM="1",
               LC_ALL="C")
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    timeout = gitfetch._timeout()
    try:
        proc = subprocess.run([os.environ.get("AGENTRC_GIT") or "git", *gitfetch._GIT_CONFIG, *args], cwd=cwd,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, env=env)
    except FileNotFoundError:
        raise _GitError("git is not on PATH") from None
    except subprocess.TimeoutExpired:
        raise _GitError(f"git {args[0]} took longer than {timeout:g} s (AGENTRC_GIT_TIMEOUT)") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _GitError(f"git {args[0]} failed: {err[-1] if err else 'exit ' + str(proc.returncode)}")
    return proc.stdout.decode("utf-8", "replace").strip()


class _GitError(Exception):
    pass


def _clone(url: str, ref: str, checkout: str) -> str:
    """`ref` (a branch, a tag or a full commit; "" the default branch) of `url`, fetched
    shallow into a new repository at `checkout` and checked out; its commit."""
    _git(["init", "-q", "--template=", checkout])
    _git(["-C", checkout, "remote", "add", "origin", "--", url])
    try:
        _git(["-C", checkout, "fetch", "-q", "--depth", "1", "--no-tags", "--no-recurse-submodules",
              "--end-of-options", "origin", ref or "HEAD"])
        sha = _git(["-C", checkout, "rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"])
    except _GitError as exc:
        if ref:
            raise fail(url, "AR160", f"the git ref {ref!r} is not a commit of {url} ({exc})") from None
        raise
    if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
        raise fail(url, "AR160", f"the git ref {ref!r} is not a commit of {url}")
    _git(["-C", checkout, "checkout", "-q", "--detach", sha])
    return sha


def _select_payload(checkout: str, package_path: str, url: str) -> str:
    """The package root inside a checkout, walked one component at a time: a link on the way
    may lead elsewhere inside the checkout, never out of it (AR156)."""
    base = capsafe.real(checkout)
    current = checkout
    parts = [] if package_path == "." else package_path.split("/")
    for i, part in enumerate(parts):
        current = os.path.join(current, part)
        if not os.path.lexists(current):
            break
        if os.path.islink(current):
            real = capsafe.real(current)
            if not os.path.exists(current) or not captree.inside(base, real):
                raise fail(url, "AR156", f"the package path {package_path!r} leads outside the repository at "
                            f"{'/'.join(parts[:i + 1])!r}")
    real = capsafe.real(current)
    if not captree.inside(base, real):
        raise fail(url, "AR156", f"the package path {package_path!r} leads outside the repository")
    if not os.path.isdir(real):
        hint = " (the default; select another with #path, or #. for the repository root)" \
            if package_path == "oas-package" else ""
        raise fail(url, "AR160", f"the package path {package_path!r} is not a directory of the repository{hint}")
    if not os.path.isfile(os.path.join(real, PACKAGE_FILE)):
        raise fail(url, "AR151", f"has no {PACKAGE_FILE} at the package path {package_path!r}")
    return real


CATALOG_ENV = "OAS_PACKAGE_CATALOG"
BUNDLED_CATALOG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                               "oas-package-catalog.json")


def read_catalog() -> catalogs.Catalog:
    """The official package catalog, found as the OAS kernel finds it: the file
    $OAS_PACKAGE_CATALOG names, else the one agentrc ships (the kernel 0.20.0 catalog's
    entries). A missing file is an empty catalog; an invalid one is AR253. Raises Failure."""
    path = os.environ.get(CATALOG_ENV) or BUNDLED_CATALOG
    if not os.path.isfile(path):
        return catalogs.Catalog(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(captree.MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise fail(path, "AR253", f"cannot read the package catalog: {exc}", "invalid-source") from None
    d = Diagnostics()
    cat = catalogs.parse_catalog(path, raw, d)
    if cat is None:
        raise Failure(d.items, "invalid-source")
    return cat


def _fetch(src: sources.Source, dest: str, label: str, commit: str = "", package_path: str = "") -> Tuple[str, str]:
    """Put the package root of `src` at `dest`; (commit, package path) it was taken at.
    `commit` and `package_path` pin a restore to what the lock records."""
    if src.kind == "catalog":
        resolved = read_catalog().resolve(src.catalog_id, src.selector)
        if resolved is None:
            raise fail(label, "AR160", f"the official package catalog ({read_catalog().path}) cannot resolve "
                       f"{src.catalog_id!r}" + (f" at {src.selector!r}" if src.selector else ""))
        url, ref, entry_path = resolved
        try:
            entry_root = sources.normalize_path(entry_path, f"the package path of catalog entry {src.catalog_id!r}") \
                if entry_path is not None else DEFAULT_PACKAGE_PATH
        except sources.SourceError as exc:
            raise fail(label, "AR156" if exc.escape else "AR160", str(exc)) from None
        try:
            entry = sources.git_source(url, ref, None)
        except sources.SourceError as exc:
            raise fail(label, exc.code, f"catalog entry {src.catalog_id!r}: {exc}") from None
        return _fetch(entry, dest, label, commit, package_path or entry_root)
    if src.kind == "path":
        root = src.path
        if not os.path.isdir(root):
            raise fail(label, "AR160", f"the directory {root} does not exist")
        if not os.path.isfile(os.path.join(root, PACKAGE_FILE)):
            raise fail(os.path.join(label, PACKAGE_FILE), "AR151", "is missing: a package is a directory holding "
                        "oas-package.json")
        real_root = capsafe.real(root)
        if captree.inside(real_root, capsafe.real(os.path.dirname(dest))):
            raise fail(label, "AR160", f"the directory {root} holds this scope's installed/ store, so copying it "
                       "would copy the copy into itself; install the package from another directory (or keep its "
                       "capabilities under .agents/capabilities/owned/)")
        copy_tree(real_root, dest)
        _rmtree(os.path.join(dest, ".git"))
        return "local", "."
    path = package_path or src.root
    checkout = dest + ".checkout"
    try:
        try:
            head = _clone(src.url, commit or src.ref, checkout)
        except _GitError as exc:
            raise fail(label, "AR160", f"cannot fetch {src.url}: {exc}") from None
        payload = _select_payload(checkout, path, src.url)
        os.rename(payload, dest)
        _rmtree(os.path.join(dest, ".git"))
        return head, path
    finally:
        _rmtree(checkout)


# --- validating a staged package ---------------------------------------------------------


@dataclass
class _Staged:
    id: str
    dir: str
    package: Package
    source: str
    path: str
    commit: str
    integrity: str
    deps: List[str]
    caps: List[Tuple[str, str, Capability]]  # (root, staged dir, capability)


def _load(dest: str, label: str) -> Tuple[Package, List[Tuple[str, str, Capability]]]:
    """The staged package's manifest and capabilities, every problem reported at once."""
    d = Diagnostics()
    shown = f"{label}/{PACKAGE_FILE}"
    raw = captree.read_manifest(dest, PACKAGE_FILE)
    if raw is None:
        raise fail(shown, "AR151", "is missing or not a regular file inside the package")
    pkg = parse_package(shown, raw, d)
    if pkg is None:
        raise Failure(d.items)
    root = capsafe.real(dest)
    caps: List[Tuple[str, str, Capability]] = []
    seen: Dict[str, str] = {}
    for rel in pkg.capabilities:
        cdir = os.path.join(dest, rel)
        real = capsafe.real(cdir)
        if not os.path.lexists(cdir):
            d.error(shown, (0, 0), "AR151", f"lists the capability root {rel!r}, which does not exist")
            continue
        if not captree.inside(root, real):
            d.error(shown, (0, 0), "AR156", f"the capability root {rel!r} leads outside the package once symlinks "
                    "are resolved")
            continue
        cshown = f"{label}/{rel}/{CAPABILITY_FILE}" if rel != "." else f"{label}/{CAPABILITY_FILE}"
        craw = captree.read_manifest(cdir, CAPABILITY_FILE)
        if craw is None:
            d.error(shown, (0, 0), "AR151", f"the capability root {rel!r} has no {CAPABILITY_FILE}")
            continue
        cap = parse_capability(cshown, craw, d, exported=True)
        if cap is None:
            continue
        if cap.id in seen:
            d.error(shown, (0, 0), "AR152", f"exports capability {cap.id!r} from both {seen[cap.id]!r} and {rel!r}")
            continue
        seen[cap.id] = rel
        caps.append((rel, cdir, cap))
    # As the kernel: every closure is checked platform-invariant before any npm ci; then each
    # capability's closure is materialized in staging, and only then are its declared paths
    # checked (one may name something under node_modules).
    def label_of(rel: str) -> str:
        return f"{label}/{rel}/{CAPABILITY_FILE}" if rel != "." else f"{label}/{CAPABILITY_FILE}"

    if not d.has_errors:
        closure = Diagnostics()
        capclosure.preflight(caps, label_of, closure, dest)
        for rel, cdir, cap in caps:
            if closure.has_errors:
                break
            capclosure.materialize(cdir, cap.id, label_of(rel), closure)
            before = len(d.items)
            captree.check_contained(cdir, cap, label_of(rel), d)
            if len(d.items) == before:
                capclosure.check_deps(cdir, cap.id, label_of(rel), closure)
        if closure.has_errors:
            first = next(x for x in closure.items if x.is_error)
            raise Failure(closure.items, KERNEL_CODES[first.code])
    else:
        for rel, cdir, cap in caps:
            captree.check_contained(cdir, cap, label_of(rel), d)
    for t in pkg.templates:
        full = os.path.join(dest, t.path)
        if not os.path.isfile(full) or not captree.inside(root, capsafe.real(full)):
            d.error(shown, (0, 0), "AR151", f"config template {t.name!r}: {t.path!r} is not a file inside the package")
    if d.has_errors:
        errors = [x for x in d.items if x.is_error]
        # A declared path that leads out through a symlink: AR156, as the spec names it, but
        # the kernel's code for it is capability-not-self-contained (path-escape is '..').
        resolved_out = all(x.code == "AR157" or (x.code == "AR156" and not x.line and x.path.endswith(CAPABILITY_FILE))
                           for x in errors)
        raise Failure(d.items, "capability-not-self-contained" if resolved_out else "")
    return pkg, caps


def _materialize(cap: Capability, rel: str, cdir: str, staged: _Staged, artifacts: str) -> Tuple[str, str]:
    """Move (or for '.', copy) one capability into `artifacts/<id>`, add its provenance
    file, and hash it: (artifact dir, integrity)."""
    dest = os.path.join(artifacts, cap.id)
    os.makedirs(artifacts, exist_ok=True)
    if rel == ".":
        copy_tree(cdir, dest)
    else:
        os.rename(cdir, dest)
    rec = Installation(cap.id, cap.version, staged.id, staged.package.version, staged.source, staged.commit,
                       staged.path, rel)
    target = os.path.join(dest, INSTALLATION_FILE)
    if os.path.lexists(target):
        _rmtree(target)  # a package's own file (or link) of that name is replaced, never written through
    capsafe.write(dest, target, locks.installation_bytes(rec), 0o644)
    os.chmod(target, 0o644)
    return dest, captree.tree_hash(dest)


# --- install --------------------------------------------------------------------------


def install(scope: str, spec: str, notify: Callable[[str], None] = lambda _m: None, replace: bool = False,
            expect: str = "", gate: Optional[Callable[[Dict[str, "_Staged"]], None]] = None) -> Outcome:
    """Acquire the package `spec` names (and its dependencies) into `scope`. Raises Failure.
    `replace` (update): locked packages of the closure may change; `expect`: the package id
    the source must still provide; `gate`: called with the validated closure before
    anything in the scope changes, may raise Failure."""
    scope = os.path.abspath(scope)
    lock_path = os.path.join(scope, LOCK_FILE)
    try:
        root_src = sources.parse(spec)
    except sources.SourceError as exc:
        raise fail(sources.redact(spec), exc.code, str(exc)) from None
    existing = read_lock(scope)
    if existing is not None and existing.version != 2:
        raise fail(lock_path, "AR165", "is lockfileVersion 1; convert the scope with `oas migrate` before "
                    "installing packages")
    existing = existing or Lock()
    _check_scope(scope)
    anchors = absent_anchors(scope)
    staging = _Staging(scope, anchors)
    label = sources.redact(spec)
    try:
        existing = read_lock(scope) or Lock()  # again, now that this run holds the scope
        if existing.version != 2:
            raise fail(lock_path, "AR165", "is lockfileVersion 1; convert the scope with `oas migrate` before "
                       "installing packages")
        resolved: Dict[str, _Staged] = {}
        counter = [0]

        def resolve(src: sources.Source, label: str, chain: List[str]) -> str:
            dest = os.path.join(staging.dir, f"pkg-{counter[0]}")
            counter[0] += 1
            notify(f"fetching {label}")
            commit, path = _fetch(src, dest, label)
            pkg, caps = _load(dest, label)
            if pkg.id in chain:
                raise fail(label, "AR164", "packages depend on each other in a cycle: "
                            + " -> ".join(chain + [pkg.id]), "dependency-cycle")
            locked_source = src.locked(commit)
            key = f"{locked_source}#{path}"
            if pkg.id in resolved:
                prev = resolved[pkg.id]
                if f"{prev.source}#{prev.path}" != key:
                    raise fail(label, "AR164", f"two sources claim package {pkg.id!r}: {prev.source}#{prev.path} "
                                f"and {key}")
                _rmtree(dest)
                return pkg.id
            if not compatible(pkg.compatibility, OAS_CONTRACT):
                raise fail(f"{label}/{PACKAGE_FILE}", "AR163", f"package {pkg.id} needs OAS {pkg.compatibility}; "
                            f"agentrc implements the OAS {OAS_CONTRACT} contract")
            deps = []
            for raw_dep in pkg.dependencies:
                dep_spec = sources.redact(raw_dep)
                try:
                    dep = sources.parse(raw_dep, base=src.path if src.kind == "path" else None)
                except sources.SourceError as exc:
                    raise fail(f"{label}/{PACKAGE_FILE}", exc.code, f"dependency {dep_spec!r}: {exc}") from None
                if dep.kind == "git" and not dep.ref:
                    raise fail(f"{label}/{PACKAGE_FILE}", "AR160", f"dependency {dep_spec!r} must be pinned "
                                "with @ref")
                if dep.kind == "path" and dep.relative and src.kind != "path":
                    raise fail(f"{label}/{PACKAGE_FILE}", "AR160", f"dependency {dep_spec!r} is a relative "
                                "directory, which only a package installed from a directory may name")
                deps.append(resolve(dep, dep_spec, chain + [pkg.id]))
            try:
                payload = captree.tree_hash(dest, payload=True)
            except captree.TreeError as exc:
                raise fail(label, exc.code, exc.message) from None
            resolved[pkg.id] = _Staged(pkg.id, dest, pkg, locked_source, path, commit, payload,
                                       sorted(set(deps)), caps)
            return pkg.id

        root_id = resolve(root_src, label, [])
        if expect and root_id != expect:
            raise fail(label, "AR164", f"the source now provides package {root_id!r}, not {expect!r}")
        if gate is not None:
            gate(resolved)
        return noted(_commit(scope, existing, resolved, root_id, staging, replace), staging.notes)
    except BaseException as exc:
        raise noted(_failure(exc, label, scope), staging.notes) from None
    finally:
        staging.close()


def noted(what: Any, notes: Tuple[Diagnostic, ...]) -> Any:
    """An Outcome or a Failure with the warnings of the recovery its run began with."""
    if not notes:
        return what
    if isinstance(what, Outcome):
        what.warnings = tuple(notes) + tuple(what.warnings)
        return what
    if isinstance(what, Failure):
        return Failure(what.diagnostics + tuple(notes), what.kernel_code)
    return what


def _failure(exc: BaseException, label: str, scope: str) -> BaseException:
    """The Failure to report for what stopped a transaction (anything else than a refusal
    or an I/O error goes on as it is)."""
    if isinstance(exc, Failure):
        return exc
    if isinstance(exc, captree.TreeError):
        return fail(exc.rel or label, exc.code, exc.message)
    if isinstance(exc, capsafe.Escape):
        return fail(exc.path, exc.code, exc.message)
    if isinstance(exc, RecursionError):
        return fail(label, "AR156", "a chain of symbolic links too long to follow")
    if isinstance(exc, atomic.UnsafeWrite):
        return fail(exc.filename or scope, "AR224", f"{exc.what}: agentrc never writes through a symbolic link")
    if isinstance(exc, OSError):
        return fail(exc.filename or scope, "AR142", f"cannot read or write: {exc.strerror}")
    return exc


def _commit(scope: str, existing: Lock, resolved: Dict[str, _Staged], root_id: str, staging: _Staging,
            replace: bool = False) -> Outcome:
    """The validated closure made the scope's, as one journaled transaction (`txn`)."""
    lock_path = os.path.join(scope, LOCK_FILE)
    _check_owners(lock_path, existing, resolved, replace)
    projected = _project(scope, existing, resolved, os.path.join(staging.dir, "artifacts"))
    new_lock = _new_lock(lock_path, existing, resolved, projected)
    staying = {p["cap"].id for p in projected}
    retired = [_installed_dir(scope, cid) for cid, c in existing.capabilities
               if c.package in resolved and cid not in staying]
    with captxn.Txn(scope).committing() as txn:
        for p in projected:
            if p["status"] != "kept":
                txn.tree(p["dest"], p["dir"])
        for dest in retired:
            if os.path.lexists(dest):
                txn.retire(dest)
        _Ignore(scope).stage(txn)
        txn.put(lock_path, locks.dump(new_lock))
    carry_out(txn, lock_path)
    return _install_report(scope, resolved, projected, root_id)


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


def _check_owners(lock_path: str, existing: Lock, resolved: Dict[str, _Staged], replace: bool) -> None:
    """AR152 for a capability two packages export, AR161 for a locked package that would
    move or change on a plain install."""
    owner = {cid: c.package for cid, c in existing.capabilities if c.package not in resolved}
    d = Diagnostics()
    for pid, st in resolved.items():
        for _rel, _dir, cap in st.caps:
            if cap.id in owner and owner[cap.id] != pid:
                d.error(lock_path, (0, 0), "AR152", f"capability {cap.id!r} is exported by both package "
                        f"{owner[cap.id]!r} and package {pid!r}")
            owner[cap.id] = pid
        prior = None if replace else existing.package(pid)
        if prior is not None and prior.path != st.path:
            d.error(lock_path, (0, 0), "AR161", f"package {pid!r} resolves to the package path {st.path!r}, but the "
                    f"lock records {prior.path!r}; a locked package never moves on install (remove it, then "
                    "install again)")
        elif prior is not None and prior.integrity != st.integrity:
            d.error(lock_path, (0, 0), "AR161", f"package {pid!r} resolves to {st.integrity}, but the lock records "
                    f"{prior.integrity}; a locked package never changes on install (remove it, then install again)")
    if d.has_errors:
        raise Failure(d.items)


def _project(scope: str, existing: Lock, resolved: Dict[str, _Staged], artifacts: str) -> List[Dict[str, Any]]:
    """Each capability materialised in staging, hashed, and compared with what the scope
    holds: installed (new), kept (the same artifact is there) or replaced."""
    projected: List[Dict[str, Any]] = []
    for pid, st in resolved.items():
        for rel, cdir, cap in st.caps:
            adir, integrity = _materialize(cap, rel, cdir, st, artifacts)
            prior_cap = existing.capability(cap.id)
            same = prior_cap is not None and prior_cap.integrity == integrity and prior_cap.package == pid
            dest = _installed_dir(scope, cap.id)
            if not os.path.lexists(dest):
                status = "installed"
            elif same and hash_or_empty(dest) == integrity:
                status = "kept"
            else:
                status = "replaced"
            projected.append({"cap": cap, "rel": rel, "pid": pid, "dir": adir, "dest": dest, "integrity": integrity,
                              "trusted": bool(same and prior_cap is not None and prior_cap.trusted),
                              "status": status})
    return projected


def _new_lock(lock_path: str, existing: Lock, resolved: Dict[str, _Staged], projected: List[Dict[str, Any]]) -> Lock:
    """The lock after the install: the resolved packages' rows replace theirs (AR159 when
    the result would be an invalid lock)."""
    packages = {pid: p for pid, p in existing.packages}
    capabilities = {cid: c for cid, c in existing.capabilities if c.package not in resolved}
    for pid, st in resolved.items():
        packages[pid] = LockedPackage(st.source, st.path, st.package.version, st.commit, st.integrity,
                                      tuple(st.deps))
    for p in projected:
        capabilities[p["cap"].id] = LockedCapability(p["cap"].version, p["pid"], p["rel"], p["integrity"],
                                                     p["trusted"])
    problems = locks.check(packages, capabilities)
    if problems:
        raise fail(lock_path, "AR159", f"the lock this install would write is invalid: {problems[0][0]}")
    return Lock(2, tuple(packages.items()), tuple(capabilities.items()))


def _install_report(scope: str, resolved: Dict[str, _Staged], projected: List[Dict[str, Any]],
                    root_id: str) -> Outcome:
    """The --json result and the text report of an install."""
    lock_path = os.path.join(scope, LOCK_FILE)
    installed = []
    for pid, st in resolved.items():
        ids = [cap.id for _r, _d, cap in st.caps]
        installed.append({"package": pid, "version": st.package.version, "source": st.source, "path": st.path,
                          "commit": st.commit, "integrity": st.integrity, "dependencies": st.deps,
                          "capabilities": ids,
                          "kept": all(p["status"] == "kept" for p in projected if p["pid"] == pid)})
    caps_json: List[Dict[str, Any]] = [{
                  "capability": p["cap"].id, "version": p["cap"].version, "package": p["pid"], "path": p["rel"],
                  "integrity": p["integrity"], "dir": p["dest"], "trusted": p["trusted"], "status": p["status"],
                  "layer": p["cap"].layer or None,
                  "executableSurface": {"commands": [n for n, _c in p["cap"].commands],
                                        "hooks": [h.event for h in p["cap"].hooks]}} for p in projected]
    lines = []
    for item in installed:
        lines.append(f"{'ok' if item['kept'] else 'installed'} {item['package']}@{item['version']} "
                     f"({item['source']}, path {item['path']}, {item['integrity']})")
        for cj in caps_json:
            if cj["package"] == item["package"]:
                layer = f" layer {cj['layer']}" if cj["layer"] else ""
                lines.append(f"  capability {cj['capability']}@{cj['version']}{layer} -> "
                             f"{os.path.relpath(cj['dir'])} ({cj['integrity']}, {cj['status']})")
    lines.append(f"locked in {os.path.relpath(lock_path)}; nothing activated")
    untrusted = [cj["capability"] for cj in caps_json
                 if (cj["executableSurface"]["commands"] or cj["executableSurface"]["hooks"]) and not cj["trusted"]]
    if untrusted:
        lines.append("commands and hooks stay blocked until trusted: " + ", ".join(untrusted))
    warnings = misplaced_diags(scope, warning=True)
    return Outcome({"root": root_id, "installed": installed, "capabilities": caps_json, "lockFile": lock_path,
                    "depWarnings": []}, lines, warnings)


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


# --- restore ---------------------------------------------------------------------------


def restore(scope: str, notify: Callable[[str], None] = lambda _m: None) -> Outcome:
    """Bare install: every lock in the scope's chain, exactly as recorded. Raises Failure
    when a lock is invalid (before anything changes); per-artifact failures are reported."""
    scope = os.path.abspath(scope)
    notes = recover_here(scope)  # a first install killed after its commit left no lock yet
    levels = lock_levels(scope)
    parsed = [(level, read_lock(level)) for level in levels]  # every lock validated first
    report = _Restored()
    for level, lock in parsed:
        if lock is None:
            continue
        if lock.version != 2:
            report.artifacts.append({"id": None, "kind": "package", "level": level, "status": "legacy",
                                     "reason": "lockfileVersion 1: convert it with `oas migrate`"})
            report.lines.append(f"legacy {os.path.join(level, LOCK_FILE)}: lockfileVersion 1, not restored by agentrc")
            continue
        _check_scope(level)
        staging = _Staging(level, absent_anchors(level))
        notes += staging.notes
        try:
            _restore_level(level, staging, report, notify)
        except BaseException as exc:
            raise noted(_failure(exc, level, level), notes) from None
        finally:
            staging.close()
    if not any(lock for _l, lock in parsed):
        report.lines.append("nothing to restore: no oas-lock.json in this scope or above it")
    result = {"boundary": scope, "boundaryKind": "chain", "scopes": [{"scope": scope, "artifacts": report.artifacts}],
              "requirements": [], "failures": report.failures}
    return Outcome(result, report.lines, notes + misplaced_diags(scope, warning=True), failed=bool(report.failures))


def recover_here(scope: str) -> Tuple[Diagnostic, ...]:
    """What killed runs left in `scope`'s own store recovered under its lock (the warnings),
    when there is anything (a lock file left behind goes when the lock is released): a
    scope whose first install was killed has no oas-lock.json yet, so no level of the lock
    chain would take it."""
    store = _store(scope)
    try:
        names = os.listdir(store)
    except OSError:
        return ()
    if not any(n in (captxn.TXN, ScopeLock.NAME) or n.startswith((STAGING_PREFIX, ".migrate-")) for n in names):
        return ()
    held = ScopeLock(scope)
    held.release()
    return held.notes


@dataclass
class _Restored:
    """What a restore did, artifact by artifact (the --json result's lists, the text lines)."""

    artifacts: List[Dict[str, Any]] = field(default_factory=list)
    lines: List[str] = field(default_factory=list)
    failures: List[Dict[str, Any]] = field(default_factory=list)

    def failed(self, entry: Dict[str, Any], level: str, what: str, exc: Failure) -> None:
        reason = exc.diagnostics[0].message if exc.diagnostics else str(exc)
        self.artifacts.append({**entry, "status": "failed", "reason": reason, "code": exc.kernel_code})
        failure: Dict[str, Any] = {"scope": level, "id": f"package {entry['id']}"}
        if entry.get("capability"):
            failure["capability"] = entry["capability"]
        self.failures.append({**failure, "reason": reason, "code": exc.kernel_code})
        self.lines.append(f"FAILED    {what}: {reason}")


def _restore_level(level: str, staging: _Staging, report: _Restored, notify: Callable[[str], None]) -> None:
    """One scope level, under its lock: each artifact that is missing or differs, fetched,
    verified and staged, then all of them put in place by one journaled transaction."""
    lock = read_lock(level) or Lock()  # again, now that this run holds the scope
    if lock.version != 2:
        return
    fetched: Dict[str, Any] = {}
    txn = captxn.Txn(level)
    try:
        for cid, row in lock.capabilities:
            dest = _installed_dir(level, cid)
            entry: Dict[str, Any] = {"id": row.package, "capability": cid, "kind": "package", "level": level}
            if os.path.lexists(dest) and hash_or_empty(dest) == row.integrity:
                report.artifacts.append({**entry, "status": "present", "dir": dest})
                report.lines.append(f"ok        {cid} ({os.path.relpath(dest)})")
                continue
            try:
                adir = _restore_one(level, lock, cid, row, staging, fetched, notify)
            except Failure as exc:
                report.failed(entry, level, cid, exc)
                continue
            note = " (replaced a changed copy)" if os.path.lexists(dest) else ""
            txn.tree(dest, adir)
            report.artifacts.append({**entry, "status": "restored", "dir": dest})
            report.lines.append(f"restored  {cid} -> {os.path.relpath(dest)}{note}")
        for pid, _p in lock.packages:
            if not lock.exports(pid):
                entry = {"id": pid, "kind": "package", "level": level}
                report.failed(entry, level, pid, fail(os.path.join(level, LOCK_FILE), "AR161", f"package {pid!r} is "
                                                      "locked but supplies no capability", "capability-list-mismatch"))
        _Ignore(level).stage(txn)
        if txn.fd is not None:
            txn.commit()
    except BaseException:
        with contextlib.suppress(OSError):
            txn.discard()
        raise
    if txn.fd is not None:
        carry_out(txn, os.path.join(level, LOCK_FILE))


def _restore_one(level: str, lock: Lock, cid: str, row: LockedCapability, staging: _Staging,
                 fetched: Dict[str, Any], notify: Callable[[str], None]) -> str:
    """The locked artifact of `cid`, materialised in staging from its package (fetched once
    per package) and verified against its integrity: its directory. Raises Failure."""
    got = fetched.get(row.package)
    if got is None:
        got = fetched[row.package] = _fetch_locked(lock, row.package, staging, notify)
    if isinstance(got, Failure):
        raise got
    match = [(rel, cdir, cap) for rel, cdir, cap in got.caps if cap.id == cid]
    if not match:
        raise fail(os.path.join(level, LOCK_FILE), "AR161", f"package {row.package!r} no longer exports capability "
                   f"{cid!r}", "capability-list-mismatch")
    rel, cdir, cap = match[0]
    if rel != row.path:
        raise fail(os.path.join(level, LOCK_FILE), "AR161", f"package {row.package!r} exports {cid!r} from {rel!r}, "
                   f"but the lock records {row.path!r}", "capability-list-mismatch")
    adir, integrity = _materialize(cap, rel, cdir, got, os.path.join(staging.dir, "artifacts"))
    if integrity != row.integrity:
        _rmtree(adir)  # the fetched copy that does not match is never installed
        raise fail(_installed_dir(level, cid), "AR161", f"the restored copy of {cid} hashes to {integrity}, not the "
                   f"locked {row.integrity}; it was removed")
    return adir


def _fetch_locked(lock: Lock, pid: str, staging: _Staging, notify: Callable[[str], None]):
    """The locked package, staged and verified against its payload integrity (a _Staged), or
    the Failure saying why not."""
    row = lock.package(pid)
    assert row is not None  # the lock's rows were checked against each other when it was read
    label = sources.redact(row.source)
    try:
        src = sources.parse_locked(row.source)
        dest = os.path.join(staging.dir, f"pkg-{pid}")
        notify(f"fetching {label}")
        commit, path = _fetch(src, dest, label, commit="" if src.kind == "path" else row.commit,
                              package_path="" if src.kind == "path" else row.path)
        integrity = captree.tree_hash(dest, payload=True)
        if integrity != row.integrity:
            _rmtree(dest)
            return fail(label, "AR161", f"the package payload hashes to {integrity}, not the locked "
                         f"{row.integrity}; the source changed; reinstall it deliberately")
        pkg, caps = _load(dest, label)
        return _Staged(pid, dest, pkg, row.source, row.path, row.commit, integrity, list(row.dependencies), caps)
    except sources.SourceError as exc:
        return fail(label, exc.code, str(exc))
    except (captree.TreeError, capsafe.Escape, RecursionError, Failure) as exc:
        got = _failure(exc, label, label)
        assert isinstance(got, Failure)
        return got


# --- list and remove ----------------------------------------------------------------------


def list_scope(scope: str) -> Outcome:
    scope = os.path.abspath(scope)
    packages_json: List[Dict[str, Any]] = []
    caps_json: List[Dict[str, Any]] = []
    legacy: List[Dict[str, Any]] = []
    lines: List[str] = []
    for level in lock_levels(scope):
        lock = read_lock(level)
        if lock is None:
            continue
        if lock.version != 2:
            legacy.append({"file": os.path.join(level, LOCK_FILE), "level": level, "lockfileVersion": 1,
                           "capabilities": list(lock.legacy)})
            lines.append(f"legacy lock {os.path.join(level, LOCK_FILE)}: {', '.join(lock.legacy) or '(empty)'}")
            continue
        for pid, p in lock.packages:
            exported = sorted(lock.exports(pid))
            packages_json.append({"package": pid, "version": p.version, "level": level, "source": p.source,
                                  "path": p.path, "commit": p.commit, "integrity": p.integrity, "locked": True,
                                  "dependencies": list(p.dependencies), "capabilities": exported})
            lines.append(f"{pid}@{p.version}  ({level})")
            lines.append(f"  source {p.source}  path {p.path}  commit {p.commit}")
            for cid in exported:
                c = lock.capability(cid)
                assert c is not None
                dest = _installed_dir(level, cid)
                installed = os.path.isfile(os.path.join(dest, CAPABILITY_FILE))
                actual = hash_or_empty(dest) if os.path.lexists(dest) else ""
                status = "missing" if not installed else "ok" if actual == c.integrity else "integrity-drift"
                caps_json.append({"capability": cid, "version": c.version, "package": pid, "level": level,
                                  "path": c.path, "dir": dest, "integrity": c.integrity,
                                  "installedIntegrity": actual or None, "trusted": c.trusted,
                                  "installed": installed, "status": status})
                state = "" if status == "ok" else f"  {status.upper()}"
                lines.append(f"  capability {cid}@{c.version}{'  [trusted]' if c.trusted else ''}{state}")
    if not packages_json and not legacy:
        lines.append("no installed packages in this scope or above it")
    problems = misplaced_diags(scope, warning=False) + _unlocked(scope)
    return Outcome({"packages": packages_json, "capabilities": caps_json, "legacy": legacy}, lines, problems,
                   failed=any(d.is_error for d in problems))


def _unlocked(scope: str) -> Tuple[Diagnostic, ...]:
    """Artifacts under a scope's installed/ with no row in its lock: spec 003 makes the lock
    the trust boundary, so such a directory is reported (warning), never used as locked."""
    d = Diagnostics()
    store = _store(scope)
    try:
        names = sorted(n for n in os.listdir(store) if not n.startswith("."))
    except OSError:
        return ()
    try:
        lock = read_lock(scope)
    except Failure:
        return ()
    locked = {cid for cid, _c in lock.capabilities} | set(lock.legacy) if lock is not None else set()
    for name in names:
        if name not in locked:
            d.warning(os.path.relpath(os.path.join(store, name)), (0, 0), "AR161", "is under installed/ but has no "
                      "row in oas-lock.json; it is not a locked capability: remove it, or install its package")
    return tuple(d.items)


def config_references(scope: str) -> List[Tuple[str, str, str]]:
    """(config file, capability id, layer or "") for every capability oas-config.yaml files
    in the scope's chain name. Raises Failure for a config that cannot be read."""
    out = []
    d = os.path.abspath(scope)
    while True:
        cfg = os.path.join(d, "oas-config.yaml")
        if os.path.isfile(cfg):
            raw = captree.read_manifest(d, "oas-config.yaml")
            try:
                data = load_yaml(raw.decode("utf-8") if raw is not None else "").data
            except (UnicodeDecodeError, YamlError) as exc:
                raise fail(cfg, "AR001", f"cannot be read: {exc}", "remove-blocked") from None
            caps = data.get("capabilities") if isinstance(data, dict) else None
            if isinstance(caps, dict):
                for layer, entry in (caps.get("layers") or {}).items() if isinstance(caps.get("layers"), dict) else ():
                    if isinstance(entry, dict) and isinstance(entry.get("capability"), str):
                        out.append((cfg, entry["capability"], str(layer)))
                additive = caps.get("additive")
                if isinstance(additive, dict):
                    out.extend((cfg, str(cid), "") for cid in additive)
        parent = os.path.dirname(d)
        if parent == d:
            return out
        d = parent


def remove(scope: str, package_id: str) -> Outcome:
    """Remove a package and every capability it supplied, unless something still uses it:
    the artifacts retired and the lock rewritten by one journaled transaction."""
    scope = os.path.abspath(scope)
    level, _ = _locked_at(scope, package_id)
    lock_path = os.path.join(level, LOCK_FILE)
    _check_scope(level)
    staging = _Staging(level)
    try:
        again = read_lock(level)  # again, now that this run holds the scope
        if again is None or again.version != 2 or again.package(package_id) is None:
            raise fail(package_id, "AR166", f"package {package_id!r} is no longer locked in {lock_path}")
        exported = again.exports(package_id)
        _check_unused(scope, lock_path, again, package_id, exported)
        new_lock = Lock(2, tuple((k, v) for k, v in again.packages if k != package_id),
                        tuple((k, v) for k, v in again.capabilities if k not in exported))
        with captxn.Txn(level).committing() as txn:
            for cid in exported:
                if os.path.lexists(_installed_dir(level, cid)):
                    txn.retire(_installed_dir(level, cid))
            txn.put(lock_path, locks.dump(new_lock))
        carry_out(txn, lock_path)
    except BaseException as exc:
        raise noted(_failure(exc, lock_path, level), staging.notes) from None
    finally:
        staging.close()
    lines = [f"removed package {package_id} from {os.path.relpath(lock_path)}"]
    lines.append(f"  capabilities removed: {', '.join(exported)}" if exported else "  it supplied no capabilities")
    return noted(Outcome({"package": package_id, "level": level, "capabilities": list(exported),
                          "lockFile": lock_path}, lines), staging.notes)


def _check_unused(scope: str, lock_path: str, lock: Lock, package_id: str, exported: Sequence[str]) -> None:
    """AR162 when another package depends on `package_id` or a config names one of its
    capabilities."""
    d = Diagnostics()
    for pid, p in lock.packages:
        if pid != package_id and package_id in p.dependencies:
            d.error(lock_path, (0, 0), "AR162", f"package {pid!r} depends on {package_id!r}")
    for cfg, cid, layer in config_references(scope):
        if cid in exported:
            where = f" (the {layer} layer)" if layer else ""
            d.error(cfg, (0, 0), "AR162", f"references capability {cid!r}{where}, which {package_id!r} supplies")
    if d.has_errors:
        raise Failure(d.items)


def kernel_code(code: str) -> str:
    """The OAS kernel's envelope code for one of agentrc's codes."""
    return KERNEL_CODES.get(code, CODES[code].name if code in CODES else "invalid-source")


# --- trust --------------------------------------------------------------------------------


def trust(scope: str, target: str, all_capabilities: bool = False,
          notify: Callable[[str], None] = lambda _m: None) -> Outcome:
    """Approve the commands and hooks of one capability (or, with `all_capabilities`, of every
    capability package `target` supplies) at exactly its installed integrity. Refused unless
    each artifact hashes to its locked integrity and its `.oas-installation.json` agrees
    with the lock rows; a capability without commands or hooks needs no approval (skipped)."""
    scope = os.path.abspath(scope)
    level, lock = None, None
    for candidate in reversed(lock_levels(scope)):
        found = read_lock(candidate)
        if found is None or found.version != 2:
            continue
        if (found.package(target) if all_capabilities else found.capability(target)) is not None:
            level, lock = candidate, found
            break
    if level is None or lock is None:
        what = "package" if all_capabilities else "capability"
        raise fail(target, "AR166", f"no locked {what} {target!r} in this scope or above it"
                    + ("" if all_capabilities else " (a package takes --all-capabilities)"))
    held = ScopeLock(level)
    try:
        again = read_lock(level)  # again, now that this run holds the scope
        if again is None or again.version != 2 or (
                again.package(target) if all_capabilities else again.capability(target)) is None:
            raise fail(target, "AR166", f"{target!r} is no longer locked in {os.path.join(level, LOCK_FILE)}")
        return noted(_trust(level, again, target, all_capabilities, notify), held.notes)
    except Failure as exc:
        raise noted(exc, held.notes) from None
    finally:
        held.release()


def _trust(level: str, lock: Lock, target: str, all_capabilities: bool, notify: Callable[[str], None]) -> Outcome:
    lock_path = os.path.join(level, LOCK_FILE)
    row0 = lock.capability(target)
    package_id = target if all_capabilities else (row0.package if row0 else "")
    targets = list(lock.exports(package_id)) if all_capabilities else [target]
    d = Diagnostics()
    surface: Dict[str, Dict[str, List[str]]] = {}
    approved: List[str] = []
    skipped: List[str] = []
    for cid in targets:
        row = lock.capability(cid)
        pkg_row = lock.package(row.package) if row else None
        assert row is not None and pkg_row is not None  # the lock was checked whole when read
        dest = _installed_dir(level, cid)
        if not os.path.isdir(dest) or os.path.islink(dest):
            d.error(dest, (0, 0), "AR166", f"{cid} is locked but not installed; run `agentrc cap install` first")
            continue
        actual = hash_or_empty(dest)
        if actual != row.integrity:
            d.error(dest, (0, 0), "AR161", f"{cid} hashes to {actual or '(unreadable)'}, not the locked "
                    f"{row.integrity}; restore or reinstall it before trusting")
            continue
        expected = locks.installation_bytes(Installation(cid, row.version, row.package, pkg_row.version,
                                                         pkg_row.source, pkg_row.commit, pkg_row.path, row.path))
        record = captree.read_manifest(dest, INSTALLATION_FILE)
        if record is None or _json_or_none(record) != _json_or_none(expected):
            d.error(os.path.join(dest, INSTALLATION_FILE), (0, 0), "AR159", f"{cid}: the provenance file does not "
                    "agree with the lock rows it claims to come from; refusing to trust it")
            continue
        raw = captree.read_manifest(dest, CAPABILITY_FILE)
        cd = Diagnostics()
        cap = parse_capability(os.path.join(dest, CAPABILITY_FILE), raw or b"", cd, exported=True)
        if cap is None:
            d.extend(cd.items)
            continue
        surface[cid] = {"commands": [n for n, _c in cap.commands], "hooks": [h.event for h in cap.hooks]}
        (approved if cap.executable else skipped).append(cid)
    if d.has_errors:
        kernel = "invalid-lock" if d.items[0].code == "AR159" else ""
        raise Failure(d.items, kernel)
    if all_capabilities:
        pkg_row = lock.package(package_id)
        notify(f"package {package_id}@{pkg_row.version if pkg_row else '?'}: the whole executable surface")
        for cid in targets:
            s = surface.get(cid, {"commands": [], "hooks": []})
            commands, hooks = ", ".join(s["commands"]) or "none", ", ".join(s["hooks"]) or "none"
            notify(f"  {cid}: commands [{commands}], hooks [{hooks}]")
    if approved:
        rows = tuple((cid, dataclasses.replace(c, trusted=True) if cid in approved else c)
                     for cid, c in lock.capabilities)
        write_in(level, lock_path, locks.dump(Lock(2, lock.packages, rows)))
    integrities = {cid: c.integrity for cid, c in lock.capabilities if cid in approved}
    lines = [f"trusted {cid} (package {package_id}, artifact {integrities[cid]})" for cid in approved]
    if skipped:
        lines.append(f"no commands or hooks, nothing to approve: {', '.join(skipped)}")
    return Outcome({"package": package_id, "level": level, "approved": approved, "skipped": skipped,
                    "approvedIntegrity": integrities, "executableSurface": surface, "file": lock_path}, lines)


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


# --- update -------------------------------------------------------------------------------


def update(scope: str, package_id: str, notify: Callable[[str], None] = lambda _m: None) -> Outcome:
    """Re-resolve a locked package from its source (a git ref again, or the default branch
    for a source locked at a commit; a directory as it is now), validate everything in
    staging, and replace all of its capabilities and rows at once. Trust stays only on a
    capability whose integrity did not change; a capability the package no longer exports
    is removed unless oas-config.yaml still names it (then nothing changes, AR162)."""
    scope = os.path.abspath(scope)
    level, lock = _locked_at(scope, package_id)
    row = lock.package(package_id)
    assert row is not None
    src = sources.parse_locked(row.source)
    if src.kind == "catalog":
        # The catalog owns the path: an update adopts a moved root.
        spec = src.catalog_id + (f"@{src.selector}" if src.selector else "")
    elif src.kind == "git":
        pinned = src.ref and not (len(src.ref) == 40 and all(c in "0123456789abcdef" for c in src.ref))
        spec = (f"{src.url}@{src.ref}" if pinned else src.url) + f"#{row.path}"
    else:
        spec = src.path
    before_caps = sorted(lock.exports(package_id))
    trusted_before = sorted(c for c in before_caps if (lock.capability(c) or LockedCapability("", "", "", "")).trusted)

    def gate(resolved: Dict[str, _Staged]) -> None:
        staged = {cap.id for _r, _d, cap in resolved[package_id].caps} if package_id in resolved else set()
        removed = [c for c in before_caps if c not in staged]
        d = Diagnostics()
        for cfg, cid, layer in config_references(scope):
            if cid in removed:
                where = f" (the {layer} layer)" if layer else ""
                d.error(cfg, (0, 0), "AR162", f"references capability {cid!r}{where}, which {package_id!r} no "
                        "longer exports; remove the reference first, then update")
        if d.has_errors:
            raise Failure(d.items)

    outcome = install(level, spec, notify, replace=True, expect=package_id, gate=gate)
    after = next(p for p in outcome.result["installed"] if p["package"] == package_id)
    new_caps = {c["capability"]: c for c in outcome.result["capabilities"]}
    removed = [c for c in before_caps if c not in after["capabilities"]]
    before = {"version": row.version, "commit": row.commit, "integrity": row.integrity, "path": row.path,
              "capabilities": before_caps, "trustedCapabilities": trusted_before}
    result = {"package": package_id, "level": level, "changed": after["integrity"] != row.integrity,
              "pathChanged": after["path"] != row.path, "before": before, "after": after,
              "installed": outcome.result["installed"], "capabilities": outcome.result["capabilities"],
              "addedCapabilities": [c for c in after["capabilities"] if c not in before_caps],
              "removedCapabilities": removed, "retiredArtifacts": removed,
              "invalidatedApprovals": [c for c in trusted_before if not (c in new_caps and new_caps[c]["trusted"])]}
    repaired = _repairs(lock, package_id, outcome.result["capabilities"])
    if not result["changed"] and not repaired:
        lines = [f"{package_id} is up to date ({after['version']}, {after['integrity']})"]
    elif not result["changed"]:
        lines = [f"{package_id} is at its locked version ({after['version']}, {after['integrity']}); what the "
                 "scope held was not:"] + [f"  {r}" for r in repaired]
    else:
        lines = [f"updated {package_id}: {row.version} ({row.commit}) -> {after['version']} ({after['commit']})",
                 f"  integrity {row.integrity} -> {after['integrity']}"]
    if result["addedCapabilities"]:
        lines.append(f"  + capabilities: {', '.join(result['addedCapabilities'])}")
    if removed:
        lines.append(f"  - capabilities: {', '.join(removed)}")
    if result["invalidatedApprovals"]:
        lines.append(f"  approvals reset (integrity changed): {', '.join(result['invalidatedApprovals'])}; review "
                     "and trust again")
    return Outcome(result, lines)


def _repairs(lock: Lock, package_id: str, caps: List[Dict[str, Any]]) -> List[str]:
    """What an update of an unchanged package put right: a capability whose artifact was
    missing or differed from the lock, or whose locked integrity was not its content's."""
    out = []
    for c in caps:
        if c["package"] != package_id:
            continue
        row = lock.capability(c["capability"])
        if row is not None and row.integrity != c["integrity"]:
            out.append(f"capability {c['capability']}: the lock recorded {row.integrity}, its content hashes to "
                       f"{c['integrity']}; locked and installed again")
        elif c["status"] == "installed":
            out.append(f"capability {c['capability']}: its artifact was missing; installed again")
        elif c["status"] == "replaced":
            out.append(f"capability {c['capability']}: its artifact differed from the lock; replaced")
    return out


# --- pack ---------------------------------------------------------------------------------


def pack(directory: str, out: str) -> Outcome:
    """Validate the package at `directory` exactly as an install would (every manifest,
    every capability self-contained) and write what an install would fetch: `out/payload/`
    (the package root without `.git`) and `out/integrity.json` (package id, version and
    payload integrity, and each capability's root). Nothing else is written. Raises Failure."""
    src = os.path.abspath(directory)
    if not os.path.isfile(os.path.join(src, PACKAGE_FILE)):
        raise fail(os.path.join(directory, PACKAGE_FILE), "AR151", "is missing: a package is a directory holding "
                    "oas-package.json")
    with tempfile.TemporaryDirectory(prefix="agentrc-pack-") as tmp:
        staged = os.path.join(tmp, "payload")
        try:
            copy_tree(capsafe.real(src), staged)
            _rmtree(os.path.join(staged, ".git"))
            pkg, caps = _load(staged, directory)
            integrity = captree.tree_hash(staged, payload=True)
            # What validation's npm ci made is not payload (an install runs it again).
            for dirpath, dirnames, _files in os.walk(staged):
                for name in [d for d in dirnames if d == "node_modules"]:
                    _rmtree(os.path.join(dirpath, name))
                dirnames[:] = [d for d in dirnames if d != "node_modules"]
        except captree.TreeError as exc:
            raise fail(exc.rel or directory, exc.code, exc.message) from None
        if not compatible(pkg.compatibility, OAS_CONTRACT):
            raise fail(os.path.join(directory, PACKAGE_FILE), "AR163", f"package {pkg.id} needs OAS "
                        f"{pkg.compatibility}; agentrc implements the OAS {OAS_CONTRACT} contract")
        exported = {cap.id: {"version": cap.version, "path": rel} for rel, _d, cap in caps}
        record: Dict[str, Any] = {"package": pkg.id, "version": pkg.version, "integrity": integrity,
                                  "capabilities": exported}
        dest = os.path.abspath(out)
        if os.path.lexists(dest) and (os.path.islink(dest) or not os.path.isdir(dest) or os.listdir(dest)):
            raise fail(out, "AR091", "exists and is not an empty directory; cap pack writes a new tree")
        os.makedirs(dest, exist_ok=True)
        copy_tree(staged, os.path.join(dest, "payload"))
        write_in(dest, os.path.join(dest, "integrity.json"),
                     (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    lines = [f"{pkg.id}@{pkg.version} {integrity}"] + [f"  capability {cid} ({v['path']})"
                                                        for cid, v in exported.items()]
    return Outcome(record, lines)
