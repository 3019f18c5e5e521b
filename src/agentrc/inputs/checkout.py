"""git checkouts into the source cache: what `inputs.fetch.Fetcher` runs when a source is
not cached at the commit it wants (module docstring of `inputs.fetch`: shallow, sparse,
bounded before checkout, recorded, moved into place whole, nothing left on failure).

`Checkouts` runs git (hardened: no prompt, no hooks, https/ssh/file only, a time limit)
and counts the processes it starts; the functions below it are the cache's layout (entry
names, temporary checkouts and their locks, the sweep of killed runs' leftovers) and the
bounds of a checkout. `inputs.fetch` re-exports the names callers import from it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import posixpath
import shlex
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import replace

from agentrc.diagnostics import Diagnostics
from agentrc.inputs import fetchcache
from agentrc.sources.dsl import GIT, Source

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Optional, Tuple

GIT_TIMEOUT = 600.0
_GIT_CONFIG = ("-c", "protocol.allow=never", "-c", "protocol.https.allow=always", "-c", "protocol.ssh.allow=always",
               "-c", "protocol.file.allow=always", "-c", "core.symlinks=true", "-c", "core.hooksPath=/dev/null",
               "-c", "core.fsmonitor=false", "-c", "advice.detachedHead=false", "-c", "submodule.recurse=false",
               "-c", "fetch.recurseSubmodules=false")


class Checkouts:
    """The git side of one `Fetcher`: fresh checkouts into the cache `cache`, and `runs`,
    the git processes started (what the cache saves)."""

    def __init__(self, cache: str):
        self.cache = cache
        self.runs = 0
        # The entries this process made, by path: their record and the bytes it was made of
        # (below the source's subpath), which reading the entry takes instead of reading the
        # files again (`Fetcher._read`; 1,000 items: each file read and hashed once, not twice).
        self.made: Dict[str, Tuple[fetchcache.Record, Dict[str, Tuple[bytes, bool]]]] = {}

    def fetch(self, source: Source, want: Optional[str], repo_dir: str,
              diags: Diagnostics) -> Optional[Tuple[str, str]]:
        """A fresh checkout of `want` (else the ref) in the cache: (commit, entry) or None with a
        diagnostic. A failure leaves nothing: the temporary checkout, and the directories made
        for it when they stay empty, are removed."""
        made = _missing_dirs(repo_dir)
        work = None
        lock = -1
        problem: Optional[OSError] = None
        for _ in range(3):  # another run may remove an empty repo_dir between the two calls
            try:
                os.makedirs(repo_dir, exist_ok=True)
                sweep_killed(repo_dir)
                work, lock = _claim(repo_dir)
                break
            except FileNotFoundError as exc:
                problem = exc
            except OSError as exc:
                problem = exc
                break
        if work is None:
            diags.error(source.label, (0, 0), "AR201", "cannot create its directory in the source cache "
                        f"($AGENTRC_CACHE_DIR, else ~/.cache/agentrc): {getattr(problem, 'strerror', None) or problem}")
        got = None
        if work is not None:
            try:
                got = self._checkout(source, want, work, repo_dir, diags)
            finally:
                shutil.rmtree(work, ignore_errors=True)
                _release(work, lock)
        if got is None:
            for directory in made:  # deepest first; one still holding something stays
                try:
                    os.rmdir(directory)
                except OSError:
                    break
        return got

    def _checkout(self, source: Source, want: Optional[str], work: str, repo_dir: str,
                  diags: Diagnostics) -> Optional[Tuple[str, str]]:
        """Fetch `want` (a commit, else the ref, else HEAD) into `work`, bound it, check it
        out, record its files and move it into the cache; (commit, cache entry) or None with
        a diagnostic. The commit a ref names may be cached already: that entry is returned
        (verified when it is read, like every entry)."""
        objects = _local_objects(source)
        resolved = self._fetched(source, want or source.ref or "HEAD", work, objects, diags)
        if resolved is None:
            return None
        cached = _entry(repo_dir, resolved, source.subpath)
        if cached is not None:
            return resolved, cached
        if not self._bounded(source, work, resolved, diags, bool(objects)):
            return None
        tail: List[Tuple[str, ...]] = []
        if source.subpath:
            tail.append(("-C", work, "sparse-checkout", "set", "--cone", source.subpath))
        # Files written by a worker per core (git 2.32+; older ones ignore it): 1,000 items,
        # 125 -> 105 ms.
        tail.append(("-C", work, "-c", "checkout.workers=0", "checkout", "-q", "--detach", resolved))
        for step in tail:
            if self.run(source, step, diags) is None:
                return None
        shutil.rmtree(os.path.join(work, ".git"), ignore_errors=True)
        return self._keep(source, work, repo_dir, resolved, diags)

    def _fetched(self, source: Source, ref: str, work: str, objects: Optional[str],
                 diags: Diagnostics) -> Optional[str]:
        """The commit `ref` names, fetched into a new repository at `work` (shallow and
        blobless; or, given a local repository's `objects`, borrowing them: then git finds
        the commit present and fetches nothing, where a shallow fetch would ask for its
        objects again, packed); None with a diagnostic."""
        setup: List[Tuple[str, ...]] = [("init", "-q", "--template=", work),
                                        ("-C", work, "remote", "add", "origin", "--", source.location)]
        for args in setup:
            if self.run(source, args, diags) is None:
                return None
        if objects and not _borrow(work, objects):
            diags.error(source.label, (0, 0), "AR201", "cannot set up the checkout in the source cache")
            return None
        fetch = ("-C", work, "fetch", "-q") + (() if objects else ("--depth", "1", "--filter=blob:none")) \
            + ("--no-tags",) + _local_pack(source) + ("origin", ref)
        if self.run(source, fetch, diags) is None:
            return None
        out = self.run(source, ("-C", work, "rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}"), diags)
        return None if out is None else out.decode("ascii", "replace").strip()

    def _keep(self, source: Source, work: str, repo_dir: str, resolved: str,
              diags: Diagnostics) -> Optional[Tuple[str, str]]:
        """Record the checkout's files beside its entry, then move it into place (a crash in
        between leaves a record without an entry: a miss). Another run may have put the same
        commit there first: theirs is used, verified against the record when it is read."""
        final = os.path.join(repo_dir, _entry_name(resolved, source.subpath))
        kept: Dict[str, Tuple[bytes, bool]] = {}
        try:
            record = fetchcache.make(work, kept, source.subpath)
            fetchcache.save(final, record, self.cache)
        except (OSError, fetchcache.Changed) as exc:
            diags.error(source.label, (0, 0), "AR201", f"cannot record the checkout in the source cache: {exc}")
            return None
        try:
            os.rename(work, final)
        except OSError:
            if not os.path.isdir(final):
                diags.error(source.label, (0, 0), "AR201", "cannot move the checkout into the source cache")
                return None
        else:  # ours, not another run's: its record is the one just made
            self.made[final] = (record, kept)
        return resolved, final

    def _bounded(self, source: Source, work: str, commit: str, diags: Diagnostics, borrowed: bool = False) -> bool:
        """Whether what the checkout would write stays within `bounds()`, judged from git's
        listing of the commit before anything is checked out (AR227 otherwise). Sizes need
        the blobs, which a filtered fetch left on the server: those the checkout needs are
        fetched in one request first (compressed, as git stores them), then measured from
        their headers; a 600 KB pack that expands to 100 MB is refused here, unexpanded.
        A checkout that `borrowed` a local repository's objects has every blob: the listing
        gives their sizes itself (`ls-tree -l`, from the same headers), one process for three."""
        listing = self.run(source, ("-C", work, "ls-tree", "-r", "-z", "--full-tree")
                           + (("-l",) if borrowed else ()) + (commit,), diags)
        if listing is None:
            return False
        entries = [(path, oid, size) for mode, kind, oid, path, size in _tree_entries(listing)
                   if kind == "blob" and _in_cone(path, source.subpath)]
        files = [(path, oid) for path, oid, _ in entries]
        max_file, max_files, max_total = bounds()
        shown = display_root(replace(source, subpath=""), commit)
        if len(files) > max_files:
            diags.error(source.label, (0, 0), "AR227", f"the checkout would hold {len(files)} files, over the bound "
                        f"of {max_files} (AGENTRC_MAX_FILES)")
            return False
        sizes = {oid: size for _, oid, size in entries if size is not None} if borrowed \
            else self._sizes(source, work, commit, sorted({oid for _, oid in files}), diags)
        if sizes is None:
            return False
        total = 0
        for path, oid in files:
            size = sizes.get(oid, max_file + 1)  # a blob git cannot size is refused
            total += size
            if size > max_file:
                diags.error(f"{shown}/{_text(path)}", (0, 0), "AR227", f"a file of {size} bytes, over the bound of "
                            f"{max_file} bytes per file (AGENTRC_MAX_FILE_BYTES): nothing is checked out")
                return False
        if total > max_total:
            diags.error(source.label, (0, 0), "AR227", f"the checkout would hold {total} bytes, over the bound of "
                        f"{max_total} bytes (AGENTRC_MAX_CHECKOUT_BYTES): nothing is checked out")
            return False
        return True

    def _sizes(self, source: Source, work: str, commit: str, oids: List[str],
               diags: Diagnostics) -> Optional[Dict[str, int]]:
        """The size of each blob in `oids`: those the filtered fetch left on the server are
        fetched in one request (what a partial clone's checkout would fetch anyway; asking
        for sizes one by one would fetch them one by one), then `cat-file` reads each
        object's header, never its expanded content."""
        missing = self.run(source, ("-C", work, "rev-list", "--objects", "--missing=print", commit), diags)
        if missing is None:
            return None
        absent = {line[1:].decode("ascii", "replace") for line in missing.splitlines() if line.startswith(b"?")}
        wanted = [oid for oid in oids if oid in absent]
        if wanted and self.run(source, ("-C", work, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "-q",
                                         "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
                                         "--filter=blob:none", "--stdin", "origin"), diags,
                                data="".join(f"{oid}\n" for oid in wanted).encode()) is None:
            return None
        sized = self.run(source, ("-C", work, "cat-file", "--batch-check=%(objectname) %(objectsize)"), diags,
                          data="".join(f"{oid}\n" for oid in oids).encode())
        if sized is None:
            return None
        sizes: Dict[str, int] = {}
        for line in sized.decode("ascii", "replace").splitlines():
            oid, _, size = line.partition(" ")
            if size.isdigit():
                sizes[oid] = int(size)
        return sizes

    def run(self, source: Source, args: Tuple[str, ...], diags: Diagnostics,
            data: Optional[bytes] = None) -> Optional[bytes]:
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        self.runs += 1
        verb = next((a for a in args[2:] if not a.startswith("-") and "=" not in a), args[0]) \
            if args[0] == "-C" else args[0]
        try:
            proc = subprocess.run((os.environ.get("AGENTRC_GIT") or "git",) + _GIT_CONFIG + args,
                                  input=data, stdin=None if data is not None else subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=_timeout())
        except FileNotFoundError:
            diags.error(source.label, (0, 0), "AR202", "git is not on PATH")
            return None
        except subprocess.TimeoutExpired:
            diags.error(source.label, (0, 0), "AR201", f"git {verb} took longer than {_timeout():g} s "
                        "(AGENTRC_GIT_TIMEOUT)")
            return None
        except OSError as exc:
            diags.error(source.label, (0, 0), "AR201", f"cannot run git: {exc.strerror or exc}")
            return None
        if proc.returncode != 0:
            said = [line for line in proc.stderr.decode("utf-8", "replace").splitlines()
                    if line.strip() and not line.startswith("warning: filtering not recognized")]
            text = " / ".join(said[-3:]).replace(self.cache.rstrip(os.sep), "$AGENTRC_CACHE_DIR/sources")
            diags.error(source.label, (0, 0), "AR201", f"git {verb} failed: " + (text or f"exit {proc.returncode}"))
            return None
        return proc.stdout


def _local_pack(source: Source) -> Tuple[str, ...]:
    """For a repository on this machine (`file://`), the packing side told not to compress:
    the pack goes through a pipe into a checkout removed once read, and deltas and zlib were
    most of the fetch (a repository of 1,000 items with loose objects: 410 -> 180 ms, the
    checkout's unpacking faster too). Through `--upload-pack`: options given to the fetching
    git do not reach the packing one, which git starts without them for a local repository.
    The command is agentrc's own; nothing of the source is in it."""
    if not source.location.startswith("file://"):
        return ()  # ssh runs it on the server, where only `git-upload-pack` may be allowed
    git = shlex.quote(os.environ.get("AGENTRC_GIT") or "git")
    return (f"--upload-pack={git} -c pack.window=0 -c pack.compression=0 upload-pack",)


def _local_objects(source: Source) -> Optional[str]:
    """For a repository on this machine (`file://`, a work tree's `.git` or a bare repository,
    each a directory and not a link, holding `objects` and `HEAD`), its object directory, which
    the checkout borrows (`_borrow`) instead of having the commit packed and sent through a
    pipe: git's pack of a repository of 1,000 items with loose objects took 190 ms, the fetch
    that finds the objects present 14 ms. None for any other source, or a location that is
    not a plain absolute path (a host, %-escapes): fetched as from a server. The objects read
    are those the repository's own upload-pack would have sent (its alternates included)."""
    if not source.location.startswith("file:///"):
        return None
    path = source.location[len("file://"):]
    if "%" in path or "\n" in path:
        return None
    for git_dir in (os.path.join(path, ".git"), path):
        objects = os.path.join(git_dir, "objects")
        try:
            if (stat.S_ISDIR(os.lstat(git_dir).st_mode) and stat.S_ISDIR(os.lstat(objects).st_mode)
                    and stat.S_ISREG(os.lstat(os.path.join(git_dir, "HEAD")).st_mode)):
                return objects
        except (OSError, ValueError):
            continue
    return None


def _borrow(work: str, objects: str) -> bool:
    """The checkout's repository `work` given `objects` as its alternate object directory
    (git reads objects there it does not have; removed with the checkout's `.git`)."""
    try:
        info = os.path.join(work, ".git", "objects", "info")
        os.makedirs(info, exist_ok=True)
        with open(os.path.join(info, "alternates"), "w", encoding="utf-8") as fh:
            fh.write(objects + "\n")
    except (OSError, UnicodeError):
        return False
    return True


LEFTOVER_AGE = 3600.0  # seconds: a temporary checkout without its lock file is an old version's leftover


def _claim(repo_dir: str) -> Tuple[str, int]:
    """A fresh temporary checkout directory `tmp-XXXXXXXX` in `repo_dir`, with its lock file
    `tmp-XXXXXXXX.lock` beside it made first and held (flock) for as long as the fetch runs:
    a run killed with SIGKILL releases the lock with its process, so the next run can tell
    its leftovers from another run's work in progress (`sweep_killed`)."""
    fd, lock_path = tempfile.mkstemp(prefix="tmp-", suffix=".lock", dir=repo_dir)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        work = lock_path[:-len(".lock")]
        os.mkdir(work, 0o700)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(lock_path)
        raise
    return work, fd


def _release(work: str, fd: int) -> None:
    with contextlib.suppress(OSError):
        os.unlink(work + ".lock")
    if fd >= 0:
        os.close(fd)


def sweep_killed(repo_dir: str) -> None:
    """Remove the temporary checkouts of runs that were killed: a `tmp-*` directory whose
    lock file no process holds any more, or (left by a version without lock files) that
    has none and was not changed for an hour. Another run's checkout in progress is left
    alone. Only directories and regular files are removed, never through a link."""
    try:
        names = os.listdir(repo_dir)
    except OSError:
        return
    for name in names:
        if name.startswith("tmp-") and name.endswith(".lock") and name[:-len(".lock")] not in names:
            _sweep_locked(os.path.join(repo_dir, name[:-len(".lock")]))  # killed before its directory was made
        if not name.startswith("tmp-") or name.endswith(".lock"):
            continue
        work = os.path.join(repo_dir, name)
        try:
            st = os.lstat(work)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        if name + ".lock" in names:
            _sweep_locked(work)
        elif time.time() - st.st_mtime > LEFTOVER_AGE:
            shutil.rmtree(work, ignore_errors=True)


def _sweep_locked(work: str) -> None:
    try:
        fd = os.open(work + ".lock", os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # held: a run in progress
        shutil.rmtree(work, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(work + ".lock")
    finally:
        os.close(fd)


def display_root(source: Source, commit: Optional[str]) -> str:
    """Where the files of `source` are shown: `SOURCE@REF[/SUBPATH]` for a git source (the
    commit's first 12 digits when no ref is named); a directory's own path."""
    if source.kind != GIT:
        return posixpath.join(source.location, source.subpath) if source.subpath else source.location
    head = source.written + (f"@{source.ref}" if source.ref else (f"@{commit[:12]}" if commit else ""))
    return head + (f"/{source.subpath}" if source.subpath else "")


MAX_FILE_BYTES = 16 << 20
MAX_FILES = 50_000
MAX_CHECKOUT_BYTES = 512 << 20


def bounds() -> Tuple[int, int, int]:
    """(bytes per file, files, bytes in all) a checkout may hold: 16 MiB, 50,000 and 512 MiB,
    or the consumer's AGENTRC_MAX_FILE_BYTES, AGENTRC_MAX_FILES, AGENTRC_MAX_CHECKOUT_BYTES
    (whole numbers; anything else leaves the default)."""
    return (_bound("AGENTRC_MAX_FILE_BYTES", MAX_FILE_BYTES), _bound("AGENTRC_MAX_FILES", MAX_FILES),
            _bound("AGENTRC_MAX_CHECKOUT_BYTES", MAX_CHECKOUT_BYTES))


def _bound(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip().replace("_", "")
    return int(text) if text.isdigit() else default


def _tree_entries(listing: bytes) -> Iterable[Tuple[str, str, str, str, Optional[int]]]:
    """(mode, type, object id, path, size) of each record of `git ls-tree -z` output; the
    size is a blob's with `-l` (None without it, or for what has none)."""
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        fields = meta.decode("ascii", "replace").split()
        if len(fields) in (3, 4):
            size = int(fields[3]) if len(fields) == 4 and fields[3].isdigit() else None
            yield fields[0], fields[1], fields[2], path.decode("utf-8", "surrogateescape"), size


def _in_cone(path: str, subpath: str) -> bool:
    """Whether a cone-mode sparse checkout of `subpath` writes `path`: everything below the
    subpath, and the files directly in the repository's root and in each directory above
    the subpath (git's cone)."""
    if not subpath or path.startswith(subpath + "/"):
        return True
    parent = posixpath.dirname(path)
    return parent == "" or subpath.startswith(parent + "/")


def _entry(repo_dir: str, commit: str, subpath: str) -> Optional[str]:
    """The cache entry of `commit` that serves `subpath`: its whole checkout, else its subpath's."""
    for name in (commit, _entry_name(commit, subpath)):
        path = os.path.join(repo_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            return path
    return None


def _text(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _missing_dirs(path: str) -> List[str]:
    """The directories `os.makedirs(path)` would create, deepest first."""
    missing: List[str] = []
    while path and not os.path.lexists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


def _repo_name(source: Source) -> str:
    return hashlib.sha256(source.location.encode()).hexdigest()[:24]


def _entry_name(commit: str, subpath: str) -> str:
    return commit + ("-" + hashlib.sha256(subpath.encode()).hexdigest()[:12] if subpath else "")


def _timeout() -> float:
    try:
        value = float(os.environ.get("AGENTRC_GIT_TIMEOUT", GIT_TIMEOUT))
    except ValueError:
        return GIT_TIMEOUT
    return value if value > 0 else GIT_TIMEOUT
