"""The one way the writer reaches the disk: `_Tree`, a directory walked without links.

Every path it is given is relative, normalised and below the output directory (`safe_path`),
and it walks there one component at a time from a descriptor of the output directory,
opening each with O_NOFOLLOW relative to its parent, so no symlink inside the output is ever
followed and none can be swapped in between a check and a use (docs/security.md). Also here:
the names of agentrc's state (`.agentrc/`, its manifest, lock and staging directory) and the
exceptions a path that cannot be used raises, which `Output._problem` turns into diagnostics.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import resource
import stat
import sys
from collections import OrderedDict

from agentrc.diagnostics import Diagnostic
from agentrc.fdio import NotRegular, read_regular, write_all
from agentrc.files import STATE_DIR
from agentrc.output import atomic
from agentrc.output.fsync import _fsync_all
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Sequence, Set, Tuple, Union

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


_SHA = pattern(r"[0-9a-f]{64}")


# Directory descriptors kept open at once (`_Tree`): enough that a hot directory is rarely
# opened twice, few enough for the default limit of 1,024 open files (a build of 10,000
# items has more than 20,000 output directories; keeping each open failed with EMFILE).
MAX_OPEN_DIRS = 256


_PINNED = frozenset({"", STATE, TXN})  # held across whole transactions: never closed early


_STAGED = pattern(r"[0-9]+\.new")


# A staged tree (`Output._stage`): a directory this write creates, staged whole as
# `{index}.dir` in the staging directory and renamed into place by one rename.
_STAGED_TREE = pattern(r"[0-9]+\.dir")


MAX_TREE_DEPTH = 64  # directories below a staged tree that a roll forward or a removal walks into


# Temporary files agentrc itself leaves beside outputs when killed: the writers before the
# journal (`tempfile.mkstemp(prefix=".agentrc-")`: 8 characters of [a-z0-9_]) and
# `atomic.write_atomic` (`.NAME.agentrc-tmp-XXXXXXXX`, a report inside --out; `.NAME.agentrc-tmp`
# before). Nothing else is ever removed.
_LEFTOVER = atomic.LEFTOVER


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
        """The bytes of regular file `rel`, or None when it is missing. Read by
        `fdio.read_regular` from its directory's descriptor (no link, no blocking: a FIFO
        planted in the output is `_NotFile`, not a hang); whole, as the plan's comparisons
        need (an owned file over any bound is still the user's edit, AR094, not a read error)."""
        pfd, name = self.parent(rel)
        if pfd is None:
            return None
        try:
            return read_regular(name, sys.maxsize, dir_fd=pfd)[0]
        except FileNotFoundError:
            return None
        except NotRegular:
            raise _NotFile(rel) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _Symlink(rel) from None
            raise

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
