"""Writing a planned tree into an output directory it shares with other files.

The directory may be a consumer repository: agentrc records what it wrote in
`DIR/.agentrc/manifest.json`, so a rebuild deletes its own stale outputs and never
overwrites or deletes a file it did not write. All decisions are made before anything is
written. The guarantees (docs/security.md) hold by construction, not by checks of the cases
someone thought of:

- One place reaches the disk: `_Tree`. Every path it is given is relative, normalised and
  below the output directory (`safe_path`), and it walks there one component at a time from
  a descriptor of the output directory, opening each with O_NOFOLLOW relative to its parent.
  No symlink inside the output is ever followed, and none can be swapped in between a check
  and a use. A manifest naming another path is unreadable (AR093): nothing is touched.
- A write is a transaction (`Output.apply`). New bytes are staged and fsync'd in
  `DIR/.agentrc/txn/` (the same file system as the targets), then a journal of intent is
  written and fsync'd: the commit point. The renames, deletions, pruning and the new manifest
  follow from the journal alone, idempotently, so any later run (`Output.__init__`, before it
  reads anything) replays a committed journal (roll forward) or throws away an uncommitted
  staging area (roll back). A kill or an I/O error at any point leaves either the old tree or
  the new one once the next run has started.
- One run at a time: an exclusive `flock` on `DIR/.agentrc/lock`, waited for a bounded time.

Failures are diagnostics (AR140 a symlink in the way, AR141 locked, AR142 an I/O error),
never tracebacks.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import io
import json
import os
import posixpath
import re
import resource
import stat
import struct
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii as _encode_str
from operator import attrgetter
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from agentrc import __version__
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fdio import write_all
from agentrc.files import STATE_DIR, OutputFile, safe_path
from agentrc.output import atomic

if TYPE_CHECKING:
    from agentrc.output import merge as managed

STATE = STATE_DIR
MANIFEST = ".agentrc/manifest.json"
TXN = ".agentrc/txn"
LOCK = "lock"
JOURNAL = "journal.json"
MAX_MANIFEST = 64 << 20  # bytes; a manifest of 100,000 files is about 15 MB
LOCK_TIMEOUT = 60.0  # seconds a run waits for another one (AGENTRC_LOCK_TIMEOUT overrides)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)  # never clobbering
_NO_HARD_LINKS = {errno.EPERM, errno.EMLINK, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", -1)}
_SHA = re.compile(r"[0-9a-f]{64}")
_path_of = attrgetter("path")
SYNC_THREADS = 8  # fsyncs at once (`_fsync_all`)
# Directory descriptors kept open at once (`_Tree`): enough that a hot directory is rarely
# opened twice, few enough for the default limit of 1,024 open files (a build of 10,000
# items has more than 20,000 output directories; keeping each open failed with EMFILE).
MAX_OPEN_DIRS = 256
_PINNED = frozenset({"", STATE, TXN})  # held across whole transactions: never closed early
SYNC_BATCH = 64  # staged files written before they are fsync'd together: bounds the open descriptors
# Files staged from which, with `Output.jobs` above 1, a forked child stages the second half
# (`_stage_files`): 46,000 files took 1.06 s in one process at 10,000 items.
PARALLEL_MIN = 10000
# The child's share of the files staged: the build's process stages the rest and meanwhile
# makes the manifest's digests, directories and encoded `files` section. At 10,000 items
# (46,128 files) staging took 0.51 s in one process, and with a child 0.40 s (its 60%)
# against 0.29 + 0.18 s in the build's: two processes staging at once each go about 40%
# slower per file than one alone on the 2-core machine of docs/benchmarks.md.
CHILD_SHARE = 0.6
_STATUS = struct.Struct("<qqq")  # a staged file's size, mtime_ns and mode, from the child
PARTIAL = "the write was interrupted after it was committed"  # the one failure that leaves work to finish
_STAGED = re.compile(r"[0-9]+\.new")
# A staged tree (`Output._stage`): a directory this write creates, staged whole as
# `{index}.dir` in the staging directory and renamed into place by one rename.
_STAGED_TREE = re.compile(r"[0-9]+\.dir")
MAX_TREE_DEPTH = 64  # directories below a staged tree that a roll forward or a removal walks into
# `_sweep` lists a directory changed up to this long before the manifest: 2 s where the file
# system keeps whole seconds (FAT keeps 2 s), a few kernel clock ticks (1-10 ms each) where it
# keeps finer times. Two seconds everywhere made the first edit after a build list every
# directory the build had created (13,600 at 5,000 items).
SWEEP_SLACK_NS = 2 * 10**9
SWEEP_SLACK_FINE_NS = 20 * 10**6
# Temporary files agentrc itself leaves beside outputs when killed: the writers before the
# journal (`tempfile.mkstemp(prefix=".agentrc-")`: 8 characters of [a-z0-9_]) and
# `atomic.write_atomic` (`.NAME.agentrc-tmp-XXXXXXXX`, a report inside --out; `.NAME.agentrc-tmp`
# before). Nothing else is ever removed.
_LEFTOVER = atomic.LEFTOVER


@dataclass(frozen=True)
class Changes:
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


class OutputError(Exception):
    """The output directory cannot be used at all (locked, unreadable, not a directory)."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = tuple(diagnostics)


class _Unsafe(Exception):
    """A path agentrc must not use as it is; `rel` names the component in the way."""

    def __init__(self, rel: str):
        super().__init__(rel)
        self.rel = rel


class _Symlink(_Unsafe):
    pass


class _NotDir(_Unsafe):
    """Something other than a directory where agentrc needs one."""


class _NotFile(_Unsafe):
    """Something other than a regular file where agentrc reads or writes one."""


class _OtherDevice(_Unsafe):
    """A directory on another file system than `.agentrc/txn`: a rename could not be atomic."""


_FS_ERRORS = (OSError, _Unsafe)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the one way to the disk --------------------------------------------------------------


class _Tree:
    """The output directory, reached component by component from one descriptor.

    Each directory is opened with O_NOFOLLOW relative to its parent's descriptor, and files
    are opened, renamed, linked and removed relative to their directory's descriptor: a
    symlink anywhere below the root is refused (`_Symlink`), whatever it points at and
    whenever it appeared. The root itself is the user's choice and may be reached through links.
    """

    def __init__(self, root: str, most: Optional[int] = None):
        # Least recently used first: past `most`, the oldest descriptors are closed (and
        # opened again from their parent when needed), except the pinned ones and `held`.
        self.fds: "OrderedDict[str, int]" = OrderedDict({"": os.open(root, _DIR_FLAGS)})
        self.most = most if most is not None else _open_dirs_allowed()
        self.held: Set[str] = set()
        self.opened = 0  # directory descriptors opened in all (tests count them)
        # Directories this run made: a name below one is made before it is looked for (one
        # mkdir, not an open that fails first). Only an order of calls: mkdir never follows
        # a link, and what is there already (EEXIST) is opened as before, with O_NOFOLLOW.
        self.made: Set[str] = set()
        # Directories found missing while only reading (the diff, the sweep): what is below
        # one is missing too, without asking the disk again. Emptied when the write starts
        # (`Output._stage`) and after a roll forward, so what is written is checked anew.
        self.absent: Set[str] = set()
        # While a journal is carried out (`Output._roll_forward`, else None): the directories
        # whose entries changed and that are not fsync'd yet. The descriptor of one of them is
        # fsync'd when it is evicted (a batch at a time, `syncing`), then closed, instead of
        # being opened again for its fsync at the end: a cold build at 5,000 items opened each
        # of its 13,600 directories twice.
        self.unsynced: Optional[Set[str]] = None
        self.syncing: List[int] = []

    def _evict(self) -> None:
        fds, held, unsynced = self.fds, self.held, self.unsynced
        while len(fds) > self.most:
            victim = next(iter(fds))  # least recently used first
            if victim in _PINNED or victim in held:
                for victim in fds:
                    if victim not in _PINNED and victim not in held:
                        break
                else:
                    return
            fd = fds.pop(victim)
            if unsynced is not None and victim in unsynced:
                unsynced.discard(victim)
                self.syncing.append(fd)
                if len(self.syncing) >= max(1, self.most // 4):
                    self.flush()
                continue
            try:
                os.close(fd)
            except OSError:
                pass

    def flush(self) -> None:
        """fsync the evicted descriptors of `syncing` (together, `_fsync_all`), then close them."""
        fds, self.syncing = self.syncing, []
        try:
            _fsync_all(fds)
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def close(self) -> None:
        for fd in [*self.fds.values(), *self.syncing]:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()
        self.syncing = []

    def dir(self, rel: str, create: bool = False) -> Optional[int]:
        """The descriptor of directory `rel` (made when `create`), or None when it is missing.
        From the nearest ancestor already open, down one component at a time (a loop, not a
        recursion per component: a cold build asks this about 40,000 times at 1,000 items)."""
        fds = self.fds
        fd = fds.get(rel)
        if fd is not None:
            fds.move_to_end(rel)
            return fd
        absent = self.absent
        if not create and rel in absent:
            return None
        below = [rel]  # the directories to open, deepest first
        parent = rel.rpartition("/")[0]
        while parent not in fds:  # the root ("") is always open
            if not create and parent in absent:
                absent.update(below)  # below a missing one: each asked again is answered at once
                return None
            below.append(parent)
            parent = parent.rpartition("/")[0]
        fds.move_to_end(parent)
        pfd = fds[parent]
        made = self.made
        for k in range(len(below) - 1, -1, -1):  # shallowest first
            d = below[k]
            parent, _, name = d.rpartition("/")
            if create and (parent in made or d in absent):  # new, or missing a moment ago
                fd = self._make(pfd, name, d)
            else:
                try:
                    fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=pfd)
                except FileNotFoundError:
                    if not create:
                        absent.update(below[:k + 1])  # `d` and what was to be opened below it
                        return None
                    fd = self._make(pfd, name, d)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        self._refuse(pfd, name, d)
                    raise
            fds[d] = fd
            self.opened += 1
            if len(fds) > self.most:
                self._evict()
            pfd = fd
        return pfd

    def _make(self, pfd: int, name: str, rel: str) -> int:
        """Make directory `name` in `pfd` (unless there already) and open it."""
        self.absent.discard(rel)
        try:
            os.mkdir(name, 0o777, dir_fd=pfd)
            self.made.add(rel)
            if self.unsynced is not None:
                self.unsynced.add(rel.rpartition("/")[0])  # a new entry in the parent
        except FileExistsError:  # another run made it first, or it was there
            pass
        return self._open_dir(pfd, name, rel)

    def _open_dir(self, pfd: int, name: str, rel: str) -> int:
        try:
            return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=pfd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                self._refuse(pfd, name, rel)
            raise

    @staticmethod
    def _refuse(pfd: int, name: str, rel: str) -> None:
        st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        raise (_Symlink(rel) if stat.S_ISLNK(st.st_mode) else _NotDir(rel))

    def forget(self, rel: str) -> None:
        """Drop the descriptors of `rel` and below (before removing it)."""
        for key in [k for k in self.fds if k == rel or k.startswith(rel + "/")]:
            with contextlib.suppress(OSError):
                os.close(self.fds.pop(key))

    def parent(self, rel: str, create: bool = False) -> Tuple[Optional[int], str]:
        parent, _, name = rel.rpartition("/")  # posixpath.split of a normalised relative path
        return self.dir(parent, create), name

    def lstat(self, rel: str) -> Optional[os.stat_result]:
        parent, _, name = rel.rpartition("/")  # posixpath.split of a normalised relative path
        fd = self.fds.get(parent)
        if fd is not None:  # dir()'s fast path, inline: this runs once per planned file
            self.fds.move_to_end(parent)
            pfd: Optional[int] = fd
        else:
            pfd = self.dir(parent)
        if pfd is None:
            return None
        try:
            return os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def read(self, rel: str) -> Optional[bytes]:
        """The bytes of regular file `rel`, or None when it is missing."""
        pfd, name = self.parent(rel)
        if pfd is None:
            return None
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=pfd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _Symlink(rel) from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _NotFile(rel)
            chunks: List[bytes] = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
        finally:
            os.close(fd)

    def write_new(self, dfd: int, name: str, data: bytes, mode: int, exact: bool) -> os.stat_result:
        """Create `name` in `dfd` (never clobbering), write and fsync it; its stat."""
        fd = self.create(dfd, name, data, mode, exact)
        try:
            os.fsync(fd)
            return os.fstat(fd)
        finally:
            os.close(fd)

    @staticmethod
    def create(dfd: int, name: str, data: Union[bytes, Callable[[int], None]], mode: int, exact: bool) -> int:
        """Create `name` in `dfd` (never clobbering) and write it; its descriptor, open and not
        yet fsync'd, so that a batch of files can be fsync'd together (`_fsync_all`).
        `data`: the bytes, or what writes them to the descriptor it is given (a spilled
        file's `copy_to`)."""
        fd = os.open(name, _NEW_FILE, mode, dir_fd=dfd)
        try:
            if not isinstance(data, bytes):
                data(fd)
            else:
                write_all(fd, data)
            if exact:
                os.fchmod(fd, mode)
            elif mode & stat.S_IXUSR and not os.fstat(fd).st_mode & stat.S_IXUSR:  # a umask took the bit
                os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
        return fd


def _open_dirs_allowed() -> int:
    """MAX_OPEN_DIRS, or a quarter of the process's limit of open files when that is lower
    (staged files, source files and the interpreter's own need the rest)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return MAX_OPEN_DIRS
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return MAX_OPEN_DIRS
    return max(16, min(MAX_OPEN_DIRS, soft // 4))


_pool: Any = None  # the fsync threads (`_sync_pool`)
_pool_pid = 0  # the process that started them: a forked child starts its own
# An fsync that returns sooner than this waited for no device (a file system in memory, or
# nothing left to write): while they do, a batch is fsync'd in the calling thread. SLOW_RUN
# slower ones in a row switch the process to the threads (one alone may be a preemption).
FAST_FSYNC = 0.0001  # seconds
SLOW_RUN = 3
_slow_fsyncs = False  # set for the process once SLOW_RUN fsyncs in a row took longer
_slow_run = 0


def _sync_pool() -> Any:
    """SYNC_THREADS threads, started once per process and reused by every batch: a pool
    per batch started 900 threads in a cold build of 1,000 items, and waiting for their
    start and end was a third of the writer's time."""
    global _pool, _pool_pid
    if _pool is None or _pool_pid != _getpid():
        # Imported here: concurrent.futures (and logging with it) is a tenth of the start-up of a
        # build with nothing to write (docs/architecture.md).
        from concurrent.futures import ThreadPoolExecutor
        _pool, _pool_pid = ThreadPoolExecutor(SYNC_THREADS, thread_name_prefix="agentrc-fsync"), _getpid()
    return _pool


_getpid = os.getpid  # bound once: tests replace the module's `os` to count the calls that touch the disk


def _noter(written: Dict[str, list]) -> Callable[[str, os.stat_result], None]:
    """What `_sync_staged` calls with each staged file's path and status: notes the status
    in `written` as the manifest records it (`_stat`)."""
    def note(path: str, st: os.stat_result) -> None:
        written[path] = [st.st_size, st.st_mtime_ns, st.st_mode & 0o7777]
    return note


def _fsync_each(fds: Sequence[Tuple[int, int]]) -> List[Tuple[int, BaseException]]:
    """fsync each (index, descriptor); the failures by index (every one is still tried)."""
    failed = []
    for i, fd in fds:
        try:
            os.fsync(fd)
        except BaseException as exc:  # noqa: B036 - handed back to the caller, which raises it
            failed.append((i, exc))
    return failed


def _fsync_all(fds: Sequence[int]) -> None:
    """fsync every descriptor, returning when all have returned; the first error (in order)
    is raised. In parallel: fsync releases the GIL, and a journaling file system commits
    concurrent fsyncs together (on ext4 one journal commit serves the lot, where one fsync
    after another waits for a commit each: 74 small files took 0.26 s, 8 threads 0.01 s).
    Each file is still fsync'd itself, so an I/O error is reported for the file it hit.
    Each thread of the pool gets a share of the batch (one task per thread, not per file).
    Until one fsync is slow (`FAST_FSYNC`), they are called here, one after the other: on a
    file system that never waits (tmpfs) the threads' hand-offs were all of the cost."""
    global _slow_fsyncs, _slow_run
    if len(fds) < 2:
        for fd in fds:
            os.fsync(fd)
        return
    start = 0
    failed: List[Tuple[int, BaseException]] = []
    clock = time.perf_counter
    while not _slow_fsyncs and start < len(fds):
        began = clock()
        try:
            os.fsync(fds[start])
        except BaseException as exc:  # noqa: B036 - raised below, after the others are tried
            failed.append((start, exc))
        start += 1
        if clock() - began <= FAST_FSYNC:
            _slow_run = 0
        else:
            _slow_run += 1
            _slow_fsyncs = _slow_run >= SLOW_RUN
    rest = fds[start:]
    if len(rest) < 2:
        failed.extend(_fsync_each([(start + i, fd) for i, fd in enumerate(rest)]))
    else:
        failed.extend(_fsync_pool(list(enumerate(rest, start))))
    if failed:
        raise min(failed, key=lambda f: f[0])[1]


def _fsync_pool(indexed: List[Tuple[int, int]]) -> List[Tuple[int, BaseException]]:
    """fsync each (index, descriptor) on the pool's threads; the failures."""
    n = min(SYNC_THREADS, len(indexed))
    pool = _sync_pool()
    futures = [pool.submit(_fsync_each, indexed[k::n]) for k in range(n)]
    return [f for future in futures for f in future.result()]


# --- the manifest ------------------------------------------------------------------------------


@dataclass
class _Manifest:
    owned: Dict[str, str] = field(default_factory=dict)  # path -> sha256 of files written whole
    stats: Dict[str, list] = field(default_factory=dict)  # path -> [size, mtime_ns, mode] after writing
    merged: Dict[str, dict] = field(default_factory=dict)  # path -> keys agentrc merged into it
    dirs: Tuple[str, ...] = ()  # directories agentrc created (and may remove when empty)


def _parse_manifest(data: Any) -> _Manifest:
    """The manifest's content, checked whole: any entry agentrc would act on that is not a
    safe path, or of the wrong shape, makes it unreadable (ValueError), so a crafted manifest
    can never direct a write or a deletion outside the output directory."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("version", 1) != 1:
        raise ValueError(f"unknown version {data.get('version')!r}")
    files = data.get("files")
    if not isinstance(files, dict):
        raise ValueError("'files' is not an object")
    for path, digest in files.items():
        if not safe_path(path):
            raise ValueError(f"unsafe path {path!r} (relative paths inside the output directory only)")
        if not isinstance(digest, str) or not _SHA.fullmatch(digest):
            raise ValueError(f"{path}: not a sha256 digest")
    merged = data.get("merged", {})
    if not isinstance(merged, dict):
        raise ValueError("'merged' is not an object")
    for path, record in merged.items():
        if not safe_path(path):
            raise ValueError(f"unsafe path {path!r} (relative paths inside the output directory only)")
        _check_record(path, record)
    dirs = data.get("dirs", [])
    if not isinstance(dirs, list) or not all(safe_path(d) for d in dirs):
        raise ValueError("'dirs' is not a list of relative paths inside the output directory")
    raw_stats = data.get("stat", {})
    stats = {}
    if isinstance(raw_stats, dict):  # a cache only: entries of another shape are not used
        stats = {k: v for k, v in raw_stats.items() if isinstance(v, list) and len(v) == 3
                 and all(type(x) is int for x in v)}
    return _Manifest(dict(files), stats, dict(merged), tuple(dirs))


def _check_record(path: str, record: Any) -> None:
    if not isinstance(record, dict):
        raise ValueError(f"merged {path}: not an object")
    if record.get("format", "json") not in ("json", "toml", "block"):
        raise ValueError(f"merged {path}: unknown format {record.get('format')!r}")
    if not isinstance(record.get("created", False), bool) or not isinstance(record.get("blank", ""), str):
        raise ValueError(f"merged {path}: 'created' or 'blank' of the wrong type")
    keys = record.get("keys", [])
    ok = isinstance(keys, list) and all(
        isinstance(k, list) and len(k) == 3 and isinstance(k[0], list) and all(isinstance(p, str) for p in k[0])
        and isinstance(k[1], str) and isinstance(k[2], bool) for k in keys)
    if not ok:
        raise ValueError(f"merged {path}: 'keys' is not a list of [key path, JSON value, appended]")
    for k in keys if record.get("format", "json") != "block" else ():  # a block's value is its markdown
        try:
            json.loads(k[1])
        except ValueError:
            raise ValueError(f"merged {path}: a key's value is not JSON") from None


def _load_json(raw: bytes, what: str) -> Any:
    if len(raw) > MAX_MANIFEST:
        raise ValueError(f"{what} is larger than {MAX_MANIFEST >> 20} MiB")
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _keys(record: dict) -> Tuple[managed.Key, ...]:
    return tuple((tuple(k), v, bool(a)) for k, v, a in record.get("keys", ()))


def _stat(st) -> list:
    return [st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode)]


_ENCODE = json.JSONEncoder(sort_keys=True).encode  # no indent: the C encoder


def _value(v: Any) -> str:
    """A manifest entry's value as JSON: a digest, a stat record, or (merged keys) anything."""
    if isinstance(v, str):
        return _encode_str(v)
    if isinstance(v, list) and all(type(x) is int for x in v):
        return "[" + ", ".join(map(str, v)) + "]"
    return _ENCODE(v)


_CHUNK = 1024  # entries encoded at a time (`_manifest_bytes`, `_journal_bytes`)


def _entry_lines(value: dict, keys: List[Any]) -> List[str]:
    """The lines of `value`'s entries `keys`, as `_value` encodes them. The manifest's two
    large sections hold only digests (`files`) or only [size, mtime_ns, mode] (`stat`): a
    chunk of those is encoded by one comprehension without `_value`'s tests and calls per
    entry (each checked first, so the bytes are the same), which were most of the
    manifest's cost at 5,000 items."""
    enc = _encode_str
    values = [value[k] for k in keys]
    if all([type(k) is str for k in keys]):
        if all([type(v) is str for v in values]):
            return [f"  {enc(k)}: {enc(v)}" for k, v in zip(keys, values)]
        if all([type(v) is list and len(v) == 3 and type(v[0]) is int and type(v[1]) is int and type(v[2]) is int
                for v in values]):
            return [f"  {enc(k)}: [{v[0]}, {v[1]}, {v[2]}]" for k, v in zip(keys, values)]
    return [f"  {enc(k) if isinstance(k, str) else _ENCODE(k)}: {_value(v)}" for k, v in zip(keys, values)]


def _manifest_bytes(manifest: dict, encoded: Optional[Dict[str, bytes]] = None) -> bytes:
    """Sorted keys, one file's entry a line (readable, and diffable). Each line is encoded by
    the C encoder: `json.dumps(indent=...)` runs the pure-Python one, which was a third of
    the writer's work in a one-edit build at 5,000 items. Written into one buffer a chunk
    of entries at a time, which becomes the bytes returned: the lines, their joined text and
    its encoded copy were all held at once before, 3.4 times the manifest's size.
    `encoded`: sections already encoded by `_section` (of the same values), used as they are."""
    buf = io.BytesIO()
    buf.write(b"{\n")
    for n, key in enumerate(sorted(manifest)):
        if n:
            buf.write(b",\n")
        ready = encoded.get(key) if encoded else None
        buf.write(ready if ready is not None else _section(key, manifest[key]))
    buf.write(b"\n}\n")
    return buf.getvalue()  # the buffer itself, not a copy (CPython shares it)


def _section(key: str, value: Any) -> bytes:
    """One top-level entry of the manifest as `_manifest_bytes` writes it."""
    if isinstance(value, dict) and value:
        buf = io.BytesIO()
        buf.write(f" {_ENCODE(key)}: {{\n".encode())
        keys = sorted(value)
        for start in range(0, len(keys), _CHUNK):
            if start:
                buf.write(b",\n")
            buf.write(",\n".join(_entry_lines(value, keys[start:start + _CHUNK])).encode())
        buf.write(b"\n }")
        return buf.getvalue()
    return f" {_ENCODE(key)}: {_ENCODE(value)}".encode()


_PUTS_CHUNK = 256  # a long list's entries encoded at a time (`_journal_chunks`): the encoder's pieces are ~10 a dict


def _journal_bytes(journal: dict, manifest: Optional[bytes]) -> bytes:
    """The journal's bytes whole (`_journal_chunks` joined), for the replay's small journal."""
    return b"".join(_journal_chunks(journal, manifest))


def _journal_chunks(journal: dict, manifest: Optional[bytes]) -> Iterator[Union[bytes, memoryview]]:
    """`json.dumps(journal, sort_keys=True)` and a newline, in pieces, with the new manifest
    spliced in as `_manifest_bytes` already serialised it (`manifest`, None when the journal
    has none): the same JSON value, without encoding the largest part of it a second time.
    The manifest comes as a view of its bytes and long lists (`put`) a chunk of entries at a
    time, so that `_write_chunks` writes the journal to its file without ever holding it
    whole: at 10,000 items the journal's bytes were the writer's peak, beside the manifest
    and the entries they were encoded from."""
    assert manifest is not None or journal["manifest"] is None
    yield b"{"
    for n, key in enumerate(sorted(journal)):
        value = journal[key]
        yield f"{', ' if n else ''}{_ENCODE(key)}: ".encode()
        if key == "manifest" and manifest is not None:
            end = len(manifest)
            while end and manifest[end - 1] == 0x0A:  # the manifest's own final newline
                end -= 1
            yield memoryview(manifest)[:end]
        elif isinstance(value, list) and len(value) > _PUTS_CHUNK:
            yield b"["
            for start in range(0, len(value), _PUTS_CHUNK):
                yield ((", " if start else "") + _ENCODE(value[start:start + _PUTS_CHUNK])[1:-1]).encode()
            yield b"]"
        else:
            yield _ENCODE(value).encode()
    yield b"}\n"


def _write_chunks(dfd: int, name: str, chunks: Iterable[Union[bytes, memoryview]], mode: int) -> None:
    """`_Tree.write_new` (exact `mode`) of the bytes `chunks` joined, without joining them:
    each piece is written as it comes (a few hundred writes for a journal of 10,000 items)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode,
                 dir_fd=dfd)
    try:
        for chunk in chunks:
            write_all(fd, chunk)
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def _as_recorded(st: os.stat_result, recorded: Any, f: OutputFile, owned: Dict[str, str]) -> bool:
    """`f` needs neither reading nor writing: the output has the status (size, mtime, mode)
    recorded after agentrc last wrote it, the executable bit `f` wants, and the recorded
    sha256 is the one `f` would write."""
    return (recorded is not None and _stat(st) == recorded and bool(st.st_mode & stat.S_IXUSR) == f.executable
            and owned.get(f.path) == f.sha256())


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
    return mtime - (SWEEP_SLACK_NS if mtime % 10**9 == 0 else SWEEP_SLACK_FINE_NS)


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


def _adopted_dirs(adopted: Iterable[str]) -> Set[str]:
    """The directories holding files adopted from a lock (a fresh clone, no `.agentrc/`),
    counted as agentrc's (issue 31: `remove` there left every item's directory behind). Git
    tracks no directory, so in a clone each exists for the files under it: one whose files
    were all agentrc's is removed once they are deleted, one holding anything else stays
    (a directory is removed only when empty)."""
    return _directories(adopted)


# --- one run on an output directory --------------------------------------------------------


@contextlib.contextmanager
def session(root: Union[str, Path], write: bool = True,
            notify: Optional[Callable[[str], None]] = None) -> Iterator["Output"]:
    """The output directory, locked and recovered, for one run's diff and apply; raises
    OutputError when it cannot be used. `write=False` (a check) creates nothing, but still
    finishes a write an earlier run was interrupted in."""
    out = Output(str(root), write, notify)
    try:
        yield out
    finally:
        out.close()


class Output:
    """An output directory held for one run: `diff` then `apply`, under the lock."""

    def __init__(self, root: str, write: bool, notify: Optional[Callable[[str], None]] = None):
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
        self.replayed: Optional[Tuple[str, Recorded]] = None  # the new manifest's digest and record (`replay`)
        self.where = ""  # the path being worked on, for the diagnostic of an I/O error
        # Processes a large write may use (`_stage_files`): 1 unless the caller says (the
        # CLI's build does; Pants' rules, which run inside pantsd, never fork).
        self.jobs = 1
        try:
            self._open(notify)
        except OutputError:
            self.close()
            raise
        except _FS_ERRORS as exc:
            self.close()
            raise OutputError([self._problem(exc, "")]) from None
        except BaseException:
            self.close()
            raise

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

    # opening, locking, recovering

    def _open(self, notify: Optional[Callable[[str], None]]) -> None:
        if not self._reopen():
            return  # a check of a directory without agentrc's state: nothing to lock or recover
        self._lock(notify)
        self._recover()

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

    def _recover(self) -> None:
        """Finish or undo the write an earlier run was interrupted in, before reading anything."""
        tree = self.tree
        txn = tree.dir(TXN) if tree is not None else None
        if tree is None or txn is None:
            return
        names = os.listdir(txn)
        if JOURNAL in names:
            raw = tree.read(f"{TXN}/{JOURNAL}") or b""
            try:
                journal = _parse_journal(_load_json(raw, "the journal"))
            except ValueError as exc:
                d = Diagnostics()
                d.error(self._show(f"{TXN}/{JOURNAL}"), (1, 1), "AR093", f"cannot read the journal of an "
                        f"interrupted write: {exc}", hint=f"Delete {self._show(TXN)} to abandon that write, then "
                        "rebuild; agentrc then compares the directory with its manifest again.")
                raise OutputError(d.items) from None
            self.staged_manifest = None  # the journal's own manifest, not one this run serialised
            conflicts = self._roll_forward(journal)
            self._finish()
            d = Diagnostics()
            d.warning(self._show(STATE), (0, 0), "AR142", "completed a write an earlier agentrc run was "
                      "interrupted in", hint="Nothing to do: the directory now holds what that run wrote.")
            for rel in conflicts:
                d.warning(self._show(rel), (0, 0), "AR091", "appeared while agentrc was writing; kept, and not "
                          "owned by agentrc")
            self.notes.extend(d.items)
        else:
            self._discard(txn, names)

    def _discard(self, txn: int, names: Sequence[str]) -> None:
        """Roll back: staged files that were never committed go; nothing visible changed."""
        tree = self.tree
        assert tree is not None
        for name in names:
            _remove_staged(txn, name)
        tree.forget(TXN)
        os.rmdir("txn", dir_fd=tree.dir(STATE))

    # reading

    def expect(self, digest: str, recorded: Any) -> None:
        """The manifest the last build wrote is likely still there: `digest` is its sha256,
        `recorded` what it holds (`recorded_statuses`). If the manifest read has that digest,
        its content is taken from `recorded` instead of being decoded and checked again."""
        self.expected = (digest, recorded) if digest and _well_formed(recorded) else None

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
        if self.expected is not None and sha(raw) == self.expected[0]:
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

    def diff(self, files: Sequence[OutputFile], force: bool = False, adopt: Optional[Dict[str, str]] = None,
             adopt_keys: Optional[Mapping[str, Sequence[Tuple[str, ...]]]] = None, keep: AbstractSet[str] = frozenset(),
             take_over: bool = False) -> Tuple[Changes, Dict[str, str], Tuple[Diagnostic, ...]]:
        """What writing `files` would change; errors for files agentrc does not own. A
        manifest that cannot be read, or a planned path that is not safe, stops it here:
        no change is proposed at all. `force` overwrites (and deletes) owned files edited
        since agentrc wrote them instead of refusing (AR094). `adopt` (path -> sha256, what a
        lockfile records) counts those files as agentrc's where the manifest does not say
        otherwise: a fresh clone holds the installed files without `.agentrc/`. `adopt_keys`
        (path -> key paths, what a lockfile records of the entries agentrc merged into a
        shared file) does the same for merged keys: those the file holds are agentrc's, with
        the values it holds, so they are replaced or taken out like recorded ones. `keep`:
        paths no file of `files` plans that stay as they are, still agentrc's (the files of
        clients a narrowed build leaves alone): neither deleted nor stripped of agentrc's keys.
        `take_over` (`agentrc build --adopt`): a planned file agentrc did not write is
        replaced (never AR091), and a file it shares with the user (CLAUDE.md's block) becomes
        agentrc's block alone: the first build of an adopted repository hands it the files
        the import read."""
        diags = Diagnostics(list(self.notes))
        m = self._read_manifest(diags)
        for f in files:
            if not safe_path(f.path):
                diags.error(self._show(f.path), (0, 0), "AR140", "is not a relative path inside the output "
                            "directory; agentrc writes nothing outside it")
        if diags.has_errors:
            return Changes((), (), (), 0), {}, diags.sorted()
        owned, stats, previous = m.owned, m.stats, m.merged
        if adopt:
            owned = {**{p: h for p, h in adopt.items() if safe_path(p) and p not in previous}, **owned}
        for path, paths in sorted((adopt_keys or {}).items()):
            if path in previous or not safe_path(path):
                continue
            try:
                raw = self._read(path)
                text = raw.decode("utf-8") if raw is not None else None
            except (UnicodeDecodeError, _NotFile, *_FS_ERRORS):
                continue  # reported when the file is merged, if it is
            fmt = "toml" if path.endswith(".toml") else "json"
            from agentrc.output import merge as managed  # noqa: F811 (imported where a file is merged)

            keys, alone = managed.adopt(fmt, text, paths) if text is not None else ((), False)
            if keys:
                previous = {**previous, path: {"format": fmt, "created": alone,
                                               "keys": [[list(k), v, a] for k, v, a in keys]}}
        keep = set(keep) - {f.path for f in files} if keep else set()
        kept_keys = {p: r for p, r in previous.items() if p in keep}
        files, merged_files, merged, stale = _merge(self, files, owned,
                                                    {p: r for p, r in previous.items() if p not in keep}, diags,
                                                    take_over)
        merged.update(kept_keys)  # recorded as they were: their keys stay agentrc's
        create, update, unchanged = [], [], 0
        seen: Dict[str, list] = {}
        modes: Dict[str, int] = {}
        planned = {f.path for f in files}
        base = os.path.join(self.root, "")
        plain: Dict[str, bool] = {"": True}  # directory -> each of its components is a directory, not a link

        def plain_dir(d: str) -> bool:
            known = plain.get(d)
            if known is None:
                try:
                    known = plain_dir(d.rpartition("/")[0]) and stat.S_ISDIR(os.lstat(base + d).st_mode)
                except (OSError, ValueError):
                    known = False
                plain[d] = known
            return known

        # Directories found missing (`_Tree.absent`): a file in one is new, without asking the
        # disk (in a cold build, all but the first file of each directory).
        absent = self.tree.absent if self.tree is not None else set()
        for f in files:
            if f.path.rpartition("/")[0] in absent:
                create.append(f.path)
                continue
            recorded = stats.get(f.path)
            if recorded is not None and f.path in owned and plain_dir(f.path.rpartition("/")[0]):
                # The cheap check first, by path: a file with the size, mtime and mode recorded
                # after agentrc wrote it, and the digest agentrc would write now, in directories
                # that are directories (each looked at once), is neither read nor written (nor
                # its directory opened). Anything else, a link included, takes the careful way
                # below, which refuses a link anywhere (AR140) as before.
                try:
                    st = os.lstat(base + f.path)
                except (OSError, ValueError):
                    st = None
                if st is not None and stat.S_ISREG(st.st_mode) and _as_recorded(st, recorded, f, owned):
                    unchanged += 1
                    seen[f.path] = recorded
                    continue
            try:
                st = self._lstat(f.path)
                if st is None:
                    create.append(f.path)
                    continue
                if stat.S_ISLNK(st.st_mode):
                    raise _Symlink(f.path)
                if not stat.S_ISREG(st.st_mode):
                    raise _NotFile(f.path)
                is_exec = bool(st.st_mode & stat.S_IXUSR)
                if _as_recorded(st, stats.get(f.path), f, owned):
                    unchanged += 1  # size and mtime as recorded after our last write: not read again
                    seen[f.path] = stats[f.path]
                    continue
                current = self._read(f.path)
            except _FS_ERRORS as exc:
                diags.items.append(self._problem(exc, f.path))
                continue
            if current == f.content and is_exec == f.executable:
                unchanged += 1
                seen[f.path] = _stat(st)
                continue
            modes[f.path] = stat.S_IMODE(st.st_mode)
            if f.path in merged_files:
                update.append(f.path)  # the user's file: only agentrc's keys changed
            elif f.path not in owned and take_over:
                update.append(f.path)  # --adopt: the hand-written file the sources now hold
            elif f.path not in owned:
                diags.error(self._show(f.path), (0, 0), "AR091", f"not written by agentrc; it would be "
                            f"overwritten by {f.owner} (the first build of an adopted repository: --adopt)")
            elif (current is None or sha(current) != owned[f.path]) and not force:
                diags.error(self._show(f.path), (0, 0), "AR094", "edited since agentrc wrote it; rebuilding "
                            "would lose the edit")
            else:
                update.append(f.path)
        delete_sha = dict(stale)
        for p in sorted(p for p in owned if p not in planned and p not in previous and p not in keep):
            try:
                st = self._lstat(p)
                if st is None or not stat.S_ISREG(st.st_mode):
                    continue  # gone, or replaced by something agentrc did not write: left alone
                current = self._read(p)
            except _FS_ERRORS as exc:
                diags.items.append(self._problem(exc, p))
                continue
            if current is None:
                continue
            if sha(current) != owned[p] and not force:
                diags.error(self._show(p), (0, 0), "AR094", "stale output edited since agentrc wrote it; not "
                            "deleting it")
                continue
            delete_sha[p] = sha(current)
        dirs = m.dirs
        if adopt:
            dirs = tuple(sorted(set(dirs) | _adopted_dirs(p for p in adopt if p in owned and p not in m.owned)))
        changes = Changes(tuple(create), tuple(update), tuple(sorted(delete_sha)), unchanged, seen, merged_files,
                          merged, delete_sha, modes, dirs,
                          {p: owned[p] for p in sorted(keep) if p in owned and p not in previous})
        return changes, owned, diags.sorted()

    # writing

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
        last build left it: an incremental build (agentrc.pipeline.incremental) that knows
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
            if raw is None or sha(raw) != digest:
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
            committed = self._replay_stage([by_path[p] for p in update], raw, recorded)
        except _FS_ERRORS as exc:
            return changes, self._abandon(exc)
        if committed is None:
            return None
        try:
            self._roll_forward(committed, fresh=True)  # only updates: no file can appear in the way
            self._finish()
        except _FS_ERRORS as exc:
            d = Diagnostics()
            d.items.append(self._problem(exc, self.where))
            d.error(self._show(STATE), (0, 0), "AR142", f"{PARTIAL}; the next agentrc run in this directory "
                    "completes it before doing anything else")
            return changes, d.sorted()
        return changes, ()

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
        base = os.path.join(self.root, "")
        recent = _recent_dirs(base, paths, _sweep_since(base))
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

    def _replay_stage(self, files: Sequence[OutputFile], raw: bytes, recorded: Recorded) -> Optional[dict]:
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
        self.replayed = (sha(data), _updated(recorded, {f.path: (f.sha256(), written[f.path]) for f in files}))
        self.staged_manifest = data
        # `_roll_forward` writes `staged_manifest`; the journal on disk holds the manifest whole
        # (spliced in by `_journal_bytes`), which is what a run completing it writes.
        journal = {"version": 1, "put": puts, "delete": [], "prune": [], "manifest": {}}
        self.where = f"{TXN}/{JOURNAL}"
        tree.write_new(txn, "journal.tmp", _journal_bytes(journal, data), 0o644, True)
        os.replace("journal.tmp", JOURNAL, src_dir_fd=txn, dst_dir_fd=txn)
        os.fsync(txn)  # the commit point
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

    def _stage(self, files: Sequence[OutputFile], by_path: Dict[str, OutputFile], changes: Changes
               ) -> Optional[dict]:
        """Stage every new byte and commit the journal; None when nothing at all changes."""
        tree = self.tree
        assert tree is not None
        written: Dict[str, list] = {}
        puts: List[dict] = []
        created_dirs: Set[str] = set()
        checked: Set[str] = set()
        tree.absent.clear()  # looked at anew from here on: the diff's view may be old
        txn: Optional[int] = None
        new = len(changes.create)  # the first `new` staged are created, the rest updated
        # (path, file, mode, exact, staged directory): staged as f"{i}.new" in the staging
        # directory when the staged directory is None, else under its own name there.
        todo: List[Tuple[str, Any, int, bool, Optional[str]]] = []
        # A new file whose directory is new too is staged in a tree of its own: the topmost
        # directory missing above it (`tops`, its parent there already) is staged whole as
        # `{n}.dir` and renamed into place in one step, instead of every file below it being
        # linked into place and unlinked from the staging directory (two system calls a file,
        # 92,000 for a cold build of 10,000 items) and its name written into the journal.
        tops: Dict[str, str] = {}  # topmost missing directory -> its name in the staging directory
        staged_in: Dict[str, Optional[str]] = {}  # a new file's directory -> where it is staged
        trees: List[dict] = []
        for i, path in enumerate(changes.create + changes.update):
            if txn is None:
                tree.dir(STATE, create=True)
                txn = tree.dir(TXN, create=True)
                assert txn is not None
                txn_dev = os.fstat(txn).st_dev
            f = by_path[path]
            self.where = path
            parent = path.rpartition("/")[0]
            if parent not in checked and parent not in created_dirs:  # else its walk is done
                if parent.rpartition("/")[0] in created_dirs:
                    created_dirs.add(parent)  # below a missing directory: missing too
                else:
                    self._check_parents(path, created_dirs, txn_dev, checked)
            sdir: Optional[str] = None
            if i < new:
                mode, exact = (0o755 if f.executable else 0o644), False
                if parent in created_dirs:
                    if parent not in staged_in:
                        top = parent
                        while top.rpartition("/")[0] in created_dirs:
                            top = top.rpartition("/")[0]
                        tmp = tops.get(top)
                        if tmp is None:
                            tmp = tops[top] = f"{len(tops)}.dir"
                            trees.append({"path": top, "tmp": tmp})
                        staged_in[parent] = f"{TXN}/{tmp}{parent[len(top):]}"
                    sdir = staged_in[parent]
            elif f.merge:
                mode, exact = changes.modes.get(path, 0o644), True  # the user's file keeps its mode
            else:
                mode, exact = (0o755 if f.executable else 0o644), True
            todo.append((path, f, mode, exact, sdir))
            if sdir is None:
                puts.append({"path": path, "tmp": f"{i}.new", "create": i < new})
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
            known.update(ordered=ordered, needed=_directories(final), ours=set(changes.dirs) | created_dirs,
                         digests=digests, encoded={"files": _section("files", digests)})

        if txn is not None:
            self._stage_files(txn, todo, written, prepare)
        if not known:
            prepare()
        if txn is not None:
            self.where = TXN
            os.fsync(txn)  # the staged files' names, durable before the journal can name them
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
        if not puts and not trees and not changes.delete and new_manifest is None:
            return None
        journal = {"version": 2, "put": puts, "trees": trees,
                   "delete": [{"path": p, "sha": changes.delete_sha[p]} for p in changes.delete],
                   "prune": sorted(ours - needed, key=lambda d: (-d.count("/"), d)), "manifest": new_manifest}
        if txn is None:
            tree.dir(STATE, create=True)
            txn = tree.dir(TXN, create=True)
            assert txn is not None
        self.where = f"{TXN}/{JOURNAL}"
        _write_chunks(txn, "journal.tmp", _journal_chunks(journal, self.staged_manifest), 0o644)
        os.replace("journal.tmp", JOURNAL, src_dir_fd=txn, dst_dir_fd=txn)
        os.fsync(txn)  # the commit point: from here on the journal is replayed, never undone
        return journal

    def _stage_files(self, txn: int, todo: List[Tuple[str, Any, int, bool, Optional[str]]],
                     written: Dict[str, list], meanwhile: Callable[[], None]) -> None:
        """Write each (path, file, mode, exact, staged directory) of `todo` into the staging
        directory as `{index}.new` (or under its own name into its staged directory, made
        here), fsync it and the staged directories and note its status in `written`, and
        call `meanwhile`. From
        PARALLEL_MIN files on, with `jobs` above 1, a forked child writes the larger share
        (`CHILD_SHARE`) at the same time (`agentrc.output.forked`), its statuses coming back
        through shared memory, while this process writes the rest and calls `meanwhile`."""
        # Imported here: a build with nothing to write never forks (docs/architecture.md).
        from agentrc.output import forked

        tree = self.tree
        assert tree is not None
        create = tree.create

        def share(start: int, end: int, note: Callable[[int, os.stat_result], None]) -> None:
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

        def mine(start: int, end: int) -> None:
            noted = _noter(written)
            share(start, end, lambda i, st: noted(todo[i][0], st))
            meanwhile()

        def theirs(start: int, end: int, records: memoryview) -> None:
            pack = _STATUS.pack_into

            def note(i: int, st: os.stat_result) -> None:
                pack(records, (i - start) * _STATUS.size, st.st_size, st.st_mtime_ns, st.st_mode & 0o7777)
            share(start, end, note)

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

    def _roll_forward(self, journal: dict, fresh: bool = False) -> List[str]:
        """Carry out a committed journal. Idempotent: each step checks whether it was done,
        so a run interrupted here is completed by the next one. Returns the paths of files
        that appeared where agentrc was creating one (kept, and dropped from the manifest).
        `fresh`: this run staged the files and committed the journal a moment ago, under the
        lock, so every staged file is still there (the staging directory is not listed)."""
        # Imported here: a build with nothing to write never forks (docs/architecture.md).
        from agentrc.output import forked

        tree = self.tree
        assert tree is not None
        txn = tree.dir(TXN)
        assert txn is not None
        manifest = journal["manifest"]
        touched: Set[str] = set()
        conflicts: List[str] = []
        tree.absent.clear()
        # The staged files still there, listed once (not a stat per file): nothing else
        # touches the staging directory while the lock is held. None: all of them (`fresh`).
        self.where = TXN
        staged = None if fresh else set(os.listdir(txn))
        # Every directory whose entries this changes, and each of its ancestors (which may
        # have been made by the interrupted run this completes), is fsync'd before the new
        # manifest records the change: when its descriptor is evicted (`_Tree.unsynced`),
        # else at the end. A directory changed again after its fsync is noted again.
        unsynced: Set[str] = set()
        tree.unsynced = unsynced
        puts = journal["put"]
        count = len(puts)
        cut = count // 2 if fresh and self.jobs > 1 and count >= PARALLEL_MIN else count

        def mine(start: int, end: int) -> None:
            lost = self._put_range(puts, start, end, txn, staged, unsynced, touched)
            conflicts.extend(puts[k]["path"] for k in lost)

        def theirs(start: int, end: int, records: memoryview) -> None:
            # A share of the puts, and the directories it changed made durable before this
            # child leaves (the parent writes the manifest once it has).
            for k in self._put_range(puts, start, end, txn, staged, unsynced, touched):
                records[k - start] = 1
            self.where = ""
            tree.flush()
            self._fsync_dirs(sorted(unsynced))

        try:
            for entry in journal.get("trees", ()):
                self.where = entry["path"]
                if staged is None or entry["tmp"] in staged:  # else moved into place before the interruption
                    self._place(f"{TXN}/{entry['tmp']}", entry["path"], unsynced, touched, conflicts)
            try:
                lost = forked.run(count, cut, 1, mine, theirs)
            except forked.Failed as exc:  # where: the file it failed on, else where it was
                if exc.index >= 0:
                    self.where = puts[exc.index]["path"]
                raise exc.original from None
            if lost is not None:
                conflicts.extend(puts[cut + k]["path"] for k in range(count - cut) if lost[k])
            for path in conflicts:
                if manifest is not None:
                    manifest["files"].pop(path, None)
                    manifest["stat"].pop(path, None)
                    manifest.get("merged", {}).pop(path, None)
            for entry in journal["delete"]:
                path = self.where = entry["path"]
                st = tree.lstat(path)
                if st is None or not stat.S_ISREG(st.st_mode):
                    continue
                current = tree.read(path)
                if current is not None and sha(current) == entry["sha"]:
                    pfd, name = tree.parent(path)
                    os.unlink(name, dir_fd=pfd)
                    _note(path.rpartition("/")[0], unsynced, touched)
            for d in journal["prune"]:
                self.where = d
                try:
                    fd = tree.dir(d)
                except _Unsafe:  # a link (or a file) put there since: never followed, never removed
                    continue
                if fd is None or os.listdir(fd):
                    continue  # gone already, or holds something (of the user's): kept
                tree.forget(d)
                pfd, name = tree.parent(d)
                try:
                    os.rmdir(name, dir_fd=pfd)
                except OSError as exc:
                    if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EEXIST):
                        raise
                _note(d.rpartition("/")[0], unsynced, touched)
        finally:
            tree.unsynced = None
        tree.flush()
        self._fsync_dirs(sorted(unsynced))  # every rename durable before the new manifest records it
        tree.absent.clear()
        if manifest is not None:
            self.where = MANIFEST
            state = tree.dir(STATE)
            with contextlib.suppress(FileNotFoundError):
                os.unlink("manifest.tmp", dir_fd=txn)
            ready, self.staged_manifest = self.staged_manifest, None
            data = ready if ready is not None and not conflicts else _manifest_bytes(manifest)
            tree.write_new(txn, "manifest.tmp", data, 0o644, True)
            os.replace("manifest.tmp", "manifest.json", src_dir_fd=txn, dst_dir_fd=state)
            self.manifest, self.manifest_raw = None, None
        return conflicts

    def _put_range(self, puts: List[dict], start: int, end: int, txn: int, staged: Optional[Set[str]],
                   unsynced: Set[str], touched: Set[str]) -> List[int]:
        """Carry out `puts[start:end]` of a journal: each staged file linked (a new file,
        never replacing one) or renamed (an update) into place; the indices of the new files
        whose names another file took meanwhile (kept, not agentrc's). The directories whose
        entries change are noted in `unsynced` (and with their ancestors in `touched`)."""
        # Imported here: a build with nothing to write never forks (docs/architecture.md).
        from agentrc.output import forked

        tree = self.tree
        assert tree is not None
        lost: List[int] = []
        # The directory of the previous put, and its descriptor: the files of a directory come
        # one after the other, and nothing between two puts opens a directory (which could
        # close that descriptor), so each directory is looked up once per run of its files.
        last: Optional[str] = None
        pfd: Optional[int] = None
        for k in range(start, end):
            put = puts[k]
            path, tmp = put["path"], put["tmp"]
            self.where = path
            try:
                if staged is not None and tmp not in staged:
                    continue  # moved into place before the interruption
                d, _, name = path.rpartition("/")
                if d != last or pfd is None:
                    pfd = tree.dir(d, create=True)
                    assert pfd is not None
                    last = d
                    _note(d, unsynced, touched)
                if put["create"]:
                    if not self._link_new(txn, tmp, pfd, name):
                        lost.append(k)
                else:
                    os.replace(tmp, name, src_dir_fd=txn, dst_dir_fd=pfd)
            except (OSError, _Unsafe) as exc:
                raise forked.Failed(exc, k) from None
        return lost

    def _place(self, src: str, dst: str, unsynced: Set[str], touched: Set[str], lost: List[str],
               depth: int = 0) -> None:
        """Staged directory `src` as directory `dst`: renamed into place when nothing is
        there (the one step a staged tree takes), else merged into what is: each staged
        directory placed in turn, and each staged file linked as a new one (`_link_new`: a
        file whose name another took meanwhile is kept and not agentrc's, `lost`). A
        link or a file where a directory is to be is refused, as for a single file."""
        tree = self.tree
        assert tree is not None
        sparent, _, sname = src.rpartition("/")
        parent, _, name = dst.rpartition("/")
        pfd = tree.dir(parent, create=True)
        assert pfd is not None
        _note(parent, unsynced, touched)
        spfd = tree.dir(sparent)
        staged = os.stat(sname, dir_fd=spfd, follow_symlinks=False) if spfd is not None else None
        if staged is None or not stat.S_ISDIR(staged.st_mode):  # a journal may name anything
            raise (_Symlink(src) if staged is not None and stat.S_ISLNK(staged.st_mode) else _NotDir(src))
        try:
            os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            tree.forget(src)  # its descriptors name it where it was
            pfd = tree.dir(parent)  # opened again if looking up `sparent` let it go
            assert pfd is not None
            os.rename(sname, name, src_dir_fd=tree.dir(sparent), dst_dir_fd=pfd)
            return
        if depth >= MAX_TREE_DEPTH:
            raise OSError(errno.ELOOP, f"more than {MAX_TREE_DEPTH} directories deep", src)
        tree.dir(dst)  # a link or a file in the way is refused here (`_Tree.dir`)
        sfd = tree.dir(src)
        assert sfd is not None
        for entry in sorted(os.listdir(sfd)):
            self.where = f"{dst}/{entry}"
            sfd = tree.dir(src)
            assert sfd is not None
            st = os.stat(entry, dir_fd=sfd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                self._place(f"{src}/{entry}", f"{dst}/{entry}", unsynced, touched, lost, depth + 1)
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # not staged by agentrc: removed with the staging directory
            dfd = tree.dir(dst, create=True)
            sfd = tree.dir(src)
            assert dfd is not None and sfd is not None
            _note(dst, unsynced, touched)
            if not self._link_new(sfd, entry, dfd, entry):
                lost.append(f"{dst}/{entry}")

    def _link_new(self, sfd: int, tmp: str, dfd: int, name: str) -> bool:
        """Staged file `tmp` (in directory `sfd`) put in place as the new file `name` (in
        `dfd`): hard-linked, never replacing a file, then its staged name removed. Whether
        it is in place; False when another file took the name (kept, and not agentrc's)."""
        try:
            os.link(tmp, name, src_dir_fd=sfd, dst_dir_fd=dfd, follow_symlinks=False)
            linked = True
        except OSError as exc:
            linked = self._not_linked(exc, sfd, tmp, dfd, name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=sfd)
        return linked

    @staticmethod
    def _not_linked(exc: OSError, txn: int, tmp: str, pfd: int, name: str) -> bool:
        """After the hard link of a new file failed with `exc` (`_link_new`: a link never
        replaces a file): whether the file is in place all the same (linked before a crash,
        or renamed where there are no hard links); raises `exc` when it is neither a name
        taken nor a file system without links. False when another file took the name."""
        if isinstance(exc, FileExistsError):
            staged = os.stat(tmp, dir_fd=txn, follow_symlinks=False)
            there = os.stat(name, dir_fd=pfd, follow_symlinks=False)
            return (there.st_dev, there.st_ino) == (staged.st_dev, staged.st_ino)  # linked before a crash
        if exc.errno not in _NO_HARD_LINKS:
            raise exc
        # A file system without hard links: rename, after checking the name is free.
        try:
            os.stat(name, dir_fd=pfd, follow_symlinks=False)
            return False
        except FileNotFoundError:
            os.rename(tmp, name, src_dir_fd=txn, dst_dir_fd=pfd)
            return True

    def _finish(self) -> None:
        """The journal is carried out: remove it, then the staging directory."""
        tree = self.tree
        assert tree is not None
        txn = tree.dir(TXN)
        assert txn is not None
        os.unlink(JOURNAL, dir_fd=txn)
        for name in os.listdir(txn):  # staged files of creates that lost to another file
            _remove_staged(txn, name)
        tree.forget(TXN)
        state = tree.fds[STATE]
        os.rmdir("txn", dir_fd=state)
        os.fsync(state)


def _remove_staged(txn: int, name: str, depth: int = 0) -> None:
    """Entry `name` of the staging directory (`txn`, or a directory below it) removed,
    and all that is below it when it is a directory (a staged tree), without following a
    link; gone already is as good."""
    try:
        os.unlink(name, dir_fd=txn)
        return
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno not in (errno.EISDIR, errno.EPERM):  # a directory (EPERM: POSIX's word for it)
            raise
    if depth >= MAX_TREE_DEPTH:
        raise OSError(errno.ELOOP, f"more than {MAX_TREE_DEPTH} directories deep", name)
    fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=txn)
    try:
        for entry in os.listdir(fd):
            _remove_staged(fd, entry, depth + 1)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=txn)


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


def _parse_journal(data: Any) -> dict:
    """A journal, checked like the manifest: it directs renames and deletions, so every path
    in it must be safe."""
    if not isinstance(data, dict) or data.get("version") not in (1, 2):
        raise ValueError("not a version 1 or 2 journal")
    trees = data.get("trees", [])  # version 2: staged trees, each renamed into place whole
    if not isinstance(trees, list) or (trees and data["version"] < 2):
        raise ValueError("'trees' is not a list")
    for t in trees:
        if not (isinstance(t, dict) and safe_path(t.get("path")) and isinstance(t.get("tmp"), str)
                and _STAGED_TREE.fullmatch(t["tmp"])):
            raise ValueError(f"a bad 'trees' entry: {t!r:.200}")
    puts, deletes, prune = data.get("put"), data.get("delete"), data.get("prune")
    if not (isinstance(puts, list) and isinstance(deletes, list) and isinstance(prune, list)):
        raise ValueError("'put', 'delete' or 'prune' is not a list")
    for p in puts:
        if not (isinstance(p, dict) and safe_path(p.get("path")) and isinstance(p.get("tmp"), str)
                and _STAGED.fullmatch(p["tmp"]) and isinstance(p.get("create"), bool)):
            raise ValueError(f"a bad 'put' entry: {p!r:.200}")
    for d in deletes:
        if not (isinstance(d, dict) and safe_path(d.get("path")) and isinstance(d.get("sha"), str)
                and _SHA.fullmatch(d["sha"])):
            raise ValueError(f"a bad 'delete' entry: {d!r:.200}")
    if not all(safe_path(d) for d in prune):
        raise ValueError("a bad 'prune' entry")
    if data.get("manifest") is not None:
        _parse_manifest(data["manifest"])
        if not isinstance(data["manifest"].get("stat"), dict):
            raise ValueError("the manifest has no 'stat'")
    return data


def _merge(out: Output, files: Sequence[OutputFile], owned: Dict[str, str], previous: Dict[str, dict],
           diags: Diagnostics, take_over: bool = False
           ) -> Tuple[List[OutputFile], Dict[str, OutputFile], Dict[str, dict], Dict[str, str]]:
    """Resolve files agentrc merges into users' files: read what is there, take out the keys
    agentrc added last time, put in this build's keys. Paths merged last time and not now
    lose agentrc's keys (and go away when agentrc created them and nothing else is left:
    those are returned with the sha256 they have now, to delete)."""
    # Imported here: a no-change build (`untouched`) reads the manifest and never merges.
    from agentrc.output import merge as managed  # noqa: F811

    result: List[OutputFile] = []
    resolved: Dict[str, OutputFile] = {}
    records: Dict[str, dict] = {}
    stale_delete: Dict[str, str] = {}
    planned = {f.path for f in files}
    stale = [OutputFile(p, b"", False, "agentrc", str(r.get("format", "json")), ()) for p, r in sorted(previous.items())
             if p not in planned]
    for f in list(files) + stale:
        if not f.merge:
            result.append(f)
            continue
        target = out._show(f.path)
        record = previous.get(f.path, {})
        old = _keys(record)
        created = bool(record.get("created", False))
        blank = record.get("blank")
        try:
            raw = out._read(f.path)
            if raw is None:
                current, created = "", True
            else:
                current = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            diags.error(target, (0, 0), "AR097", f"cannot merge agentrc's keys into it: {exc}")
            continue
        except _NotFile:
            diags.error(target, (0, 0), "AR097", "cannot merge agentrc's keys into it: it is not a file")
            continue
        except _FS_ERRORS as exc:
            diags.items.append(out._problem(exc, f.path))
            continue
        if f.path in owned:
            if owned[f.path] != sha(current.encode()):
                diags.error(target, (0, 0), "AR094", "edited since an earlier agentrc wrote it whole; merge the edit "
                            "into the sources or delete the file, then rebuild")
                continue
            current, created = "", True  # written whole by an earlier agentrc: all of it is ours
        elif take_over and f.merge == "block" and not record:
            current, created = "", True  # --adopt: the user's text is in the sources now; the block replaces it
        if raw is not None and not old and not current.strip() and f.path not in owned:
            blank = current  # the user's empty file: it is empty again when agentrc's keys go
        if raw is not None and not record and f.path not in owned and managed.holds_only(f.merge, current, f.keys):
            created = True  # the manifest was lost: the file is all agentrc's, adopted as created
        try:
            changed, missing = managed.edited(f.merge, current, old)
            for key in changed:
                diags.error(target, (0, 0), "AR094", f"{key} was edited since agentrc wrote it; rebuilding would "
                            "lose the edit")
            for key in missing:
                diags.warning(target, (0, 0), "AR094", f"an entry agentrc added under {key} was changed or removed; "
                              "agentrc adds it again")
            if changed:
                continue
            clashes = managed.conflicts(f.merge, current, old, f.keys)
            text = managed.render(f.merge, current, old, f.keys)
            # Whether nothing is left in it: asked only of a file this build puts no key in (a
            # parse of the whole file, which for opencode.json at 10,000 items took 0.015 s).
            empty = not f.keys and managed.is_empty(f.merge, text)
        except ValueError as exc:
            diags.error(target, (0, 0), "AR097", f"cannot merge agentrc's keys into it: {exc}")
            continue
        if f.merge == "block" and f.keys:
            repeated = managed.repeated(text)
            if repeated:
                diags.warning(target, (0, 0), "AR245", f"{len(repeated)} paragraph(s) of agentrc's block are also "
                              f"in the file's own text (first: {repeated[0][:60]!r}): the client reads them twice")
        for key in clashes:
            diags.error(target, (0, 0), "AR096", f"defines {key!r} itself; agentrc would overwrite it ({f.owner})")
        if clashes:
            continue
        if f.merge == "json" and f.path in managed.STRICT_JSON and managed.has_comments(current):
            diags.warning(target, (0, 0), "AR098", "has comments, which agentrc keeps, but "
                          f"{managed.STRICT_JSON[f.path]} reads this file as strict JSON and would ignore it")
        if empty and created:  # (`empty`: of a file without keys alone)
            if raw is not None:
                stale_delete[f.path] = sha(raw)  # stale, agentrc made it, nothing of the user's in it: delete
            continue
        if empty and isinstance(blank, str):
            text = blank
        merged = OutputFile(f.path, text.encode("utf-8"), False, f.owner, f.merge, f.keys)
        resolved[f.path] = merged
        result.append(merged)
        if f.keys:
            rec: Dict[str, Any] = {"format": f.merge, "created": created,
                                   "keys": [[list(k), v, a] for k, v, a in f.keys]}
            if isinstance(blank, str):
                rec["blank"] = blank
            records[f.path] = rec
    return result, resolved, records, stale_delete


# --- without a session ---------------------------------------------------------------------


def manifest_digest(root: Path) -> str:
    try:
        with open(os.path.join(str(root), MANIFEST), "rb") as fh:
            return sha(fh.read())
    except OSError:
        return ""


# What the last build's manifest holds, kept with its digest outside the output (the build's
# stamp): the paths of its files then of its merged files, joined by NUL; their [size,
# mtime_ns, mode] in a row; the files' sha256 in a row (32 bytes each); how many files;
# the merged files' records; the directories agentrc created.
Recorded = Tuple[str, Tuple[int, ...], bytes, int, Dict[str, dict], Tuple[str, ...]]


def recorded_statuses(out: Output, digest: str) -> Optional[Recorded]:
    """The manifest the last `apply` of `out` wrote, if the manifest on disk is that one
    (`digest`, its sha256): kept beside the digest, it spares the next no-change build
    (`untouched`) and the next edit (`Output.expect`) decoding and checking the manifest."""
    planned = out.planned_manifest
    if planned is None or planned[0] != digest:
        return None  # not written as planned (a file that appeared while writing): decoded next time
    manifest = planned[1]
    stats, files, merged = manifest.get("stat", {}), manifest.get("files", {}), manifest.get("merged", {})
    paths = list(files) + list(merged)
    records = [stats.get(path) for path in paths]
    if not all([record is not None and len(record) == 3 for record in records]):
        return None
    numbers = tuple([n for record in records for n in record])
    return ("\0".join(paths), numbers, bytes.fromhex("".join(files.values())), len(files), dict(merged),
            tuple(manifest.get("dirs", ())))


def replayed_statuses(out: Output) -> Optional[Tuple[str, Recorded]]:
    """The manifest digest and `recorded_statuses` after `Output.replay` (None before it)."""
    return out.replayed


def _updated(recorded: Recorded, files: Mapping[str, Tuple[str, list]]) -> Recorded:
    """`recorded` with the sha256 and status of each of `files` (path -> (sha256, status),
    paths it already records as files written whole) replaced."""
    joined, numbers, digests, count, merged, dirs = recorded
    at = {p: i for i, p in enumerate(joined.split("\0")[:count]) if p in files}
    nums, shas = list(numbers), bytearray(digests)
    for path, (digest, status) in files.items():
        i = at[path]
        nums[3 * i:3 * i + 3] = status
        shas[32 * i:32 * i + 32] = bytes.fromhex(digest)
    return joined, tuple(nums), bytes(shas), count, merged, dirs


def _patch(data: bytes, edits: Sequence[Tuple[str, str, str]]) -> Optional[bytes]:
    """The manifest `data` (as `_manifest_bytes` lays it out: one entry a line) with the
    value of each (section, path, value as JSON) of `edits` replaced; None when an entry is
    not there. One copy of the bytes, however many entries change."""
    sections: Dict[str, Tuple[int, int]] = {}
    spans: List[Tuple[int, int, bytes]] = []
    for section, path, value in edits:
        where = sections.get(section)
        if where is None:
            head = f"\n {_ENCODE(section)}: {{\n".encode()
            start = data.find(head)
            if start < 0:
                return None
            where = sections[section] = (start + len(head) - 1, data.find(b"\n }", start + len(head) - 1))
        key = f"\n  {_encode_str(path)}: ".encode()
        at = data.find(key, where[0], where[1])
        if at < 0:
            return None
        begin = at + len(key)
        stop = data.find(b"\n", begin)
        comma = b"," if data[stop - 1:stop] == b"," else b""
        spans.append((begin, stop, value.encode() + comma))
    spans.sort()
    out: List[bytes] = []
    last = 0
    for begin, stop, new in spans:
        if begin < last:
            return None  # one entry twice
        out += [data[last:begin], new]
        last = stop
    out.append(data[last:])
    return b"".join(out)


def _well_formed(recorded: Any) -> bool:
    if not (isinstance(recorded, tuple) and len(recorded) == 6 and isinstance(recorded[0], str)
            and isinstance(recorded[1], tuple) and isinstance(recorded[2], bytes) and type(recorded[3]) is int
            and isinstance(recorded[4], dict) and isinstance(recorded[5], tuple)):
        return False
    count = recorded[0].count("\0") + 1 if recorded[0] else 0
    return len(recorded[1]) == 3 * count and len(recorded[2]) == 32 * recorded[3] and recorded[3] <= count


def _recent_dirs(base: str, paths: Iterable[str], since: Optional[int]) -> Optional[List[str]]:
    """One pass over `paths` (outputs, relative to `base`) that lstats each of their
    directories once, up to the root (excluded): None when one is missing or not a
    directory (a link: `_as_left`), else the directories holding outputs that `_sweep` lists,
    those whose mtime is not older than `since` (all when it is None), the root excluded
    (`replay` always lists it). It replaces three passes of 27,000 directories at 10,000
    items: one for the directories, one to lstat them, one to pick the sweep's."""
    lstat, isdir = os.lstat, stat.S_ISDIR
    mtimes: Dict[str, int] = {"": 0}  # each directory looked at, with its mtime
    parents: Set[str] = {""}
    recent: List[str] = []
    for p in paths:
        d = p.rpartition("/")[0]
        if d in parents:
            continue
        parents.add(d)
        a = d
        while a not in mtimes:  # a directory looked at has had all its ancestors looked at
            try:
                st = lstat(base + a)
            except (OSError, ValueError):
                return None
            if not isdir(st.st_mode):
                return None
            mtimes[a] = st.st_mtime_ns
            a = a.rpartition("/")[0]
        if since is None or mtimes[d] >= since:
            recent.append(d)
    return recent


def _replay_manifest(recorded: Recorded, wanted: Set[str]) -> Tuple[_Manifest, List[str]]:
    """What `replay` reads of the recorded manifest: the entries of the `wanted` paths (those
    it writes) and the merged files, and every path (for their directories). Decoding every
    entry, as `_recorded_manifest` does, was a tenth of a replayed write at 5,000 items."""
    joined, numbers, digests, files, merged, dirs = recorded
    paths = joined.split("\0") if joined else []
    at = [i for i, p in enumerate(paths) if p in wanted] if len(wanted) < len(paths) else range(len(paths))
    stats = {paths[i]: list(numbers[3 * i:3 * i + 3]) for i in at}
    owned = {paths[i]: digests[32 * i:32 * i + 32].hex() for i in at if i < files}
    return _Manifest(owned, stats, dict(merged), dirs), paths


def _recorded_manifest(recorded: Recorded) -> _Manifest:
    joined, numbers, digests, files, merged, dirs = recorded
    paths = joined.split("\0") if joined else []
    stats = {p: list(numbers[3 * i:3 * i + 3]) for i, p in enumerate(paths)}
    owned = {p: digests[32 * i:32 * i + 32].hex() for i, p in enumerate(paths[:files])}
    return _Manifest(owned, stats, dict(merged), dirs)


def untouched(root: Path, digest: str, recorded: Any = None) -> bool:
    """Whether the manifest is the one recorded, no write is pending, and every owned file
    still has the size, mtime and mode recorded when it was written: then nobody changed the
    output tree (and nothing is read or written). `recorded` (from `recorded_statuses`,
    kept with `digest`) holds the statuses the manifest holds; without it it is decoded."""
    if not digest or os.path.lexists(os.path.join(str(root), TXN)):
        return False
    try:
        with open(os.path.join(str(root), MANIFEST), "rb") as fh:
            raw = fh.read(MAX_MANIFEST + 1)
        if sha(raw) != digest:
            return False
        if _well_formed(recorded):
            return _same_statuses(str(root) + os.sep, recorded[0].split("\0") if recorded[0] else [], recorded[1])
        # The manifest this build recorded after writing it (its digest is in the stamp), so
        # the checks of `_parse_manifest` passed when it was written; only looked at here.
        data = _load_json(raw, "the manifest")
    except (OSError, ValueError):
        return False
    files, merged, stats = data.get("files"), data.get("merged", {}), data.get("stat")
    if not (isinstance(files, dict) and isinstance(merged, dict) and isinstance(stats, dict)):
        return False
    base = str(root) + os.sep
    lstat, imode = os.lstat, stat.S_IMODE
    for paths in (files, merged):
        for path in paths:
            try:
                st = lstat(base + path)
            except (OSError, TypeError, ValueError):
                return False
            if stats.get(path) != [st.st_size, st.st_mtime_ns, imode(st.st_mode)]:
                return False
    return True


def _same_statuses(base: str, paths: List[str], numbers: Tuple[int, ...]) -> bool:
    """One lstat per output, its numbers taken three at a time (`_well_formed` checked the count)."""
    lstat, imode = os.lstat, stat.S_IMODE
    each = iter(numbers)
    for path, size, mtime, mode in zip(paths, each, each, each):
        try:
            st = lstat(base + path)
        except (OSError, ValueError):
            return False
        if st.st_size != size or st.st_mtime_ns != mtime or imode(st.st_mode) != mode:
            return False
    return True


def write_atomic(path: Path, data: bytes, root: Optional[Path] = None) -> None:
    """One file outside any manifest (a report, a formatted source, a lock): `atomic.write_atomic`,
    which never writes through a link between `root` and the file (AR224)."""
    atomic.write_atomic(path, data, root)
