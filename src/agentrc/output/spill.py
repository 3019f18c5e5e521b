"""Rendered bytes kept in an unnamed file while a large plan is built (CLI only).

A cold build holds every rendered byte from its rendering to the write: at 10,000 items
that is about 130 MB of a 320 MB peak, more than anything else. Once a plan holds more
than `LIMIT` bytes of rendered files, each further file's bytes go to an unnamed temporary
file (in the build cache's directory) and the plan keeps a `Spilled` file: its path, mode,
owner and sha256 (which the memo has already taken, and which conflict checks, the
cross-discovery checks and the output manifest compare), and where its bytes lie. The
writer reads them back once, as it stages the file; they are never kept again.

Small builds never spill (the first `LIMIT` bytes stay in memory), merged config files and
files already known by their digest (`OnDemand`) are left as they are, and when the file
cannot be made or written the plan simply keeps the bytes: the spill saves memory, it
never changes an output. The Pants backend does not use it (its results live in the
engine's store).
"""

from __future__ import annotations

import errno
import os

from agentrc.fdio import write_all
from agentrc.files import OnDemand, OutputFile
from agentrc.text.lazy import lazy_module

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    import tempfile
    from typing import List, Optional, Tuple

    from agentrc.clients.base import Rendered
else:  # imported on first use (`unnamed`: no directory given, or no O_TMPFILE): tempfile, with
    # the shutil, bz2, lzma and random it imports, was 6 ms of every cold build's start
    tempfile = lazy_module("tempfile")

# Rendered bytes held in memory before spilling: a build of about 1,000 items for three
# clients never spills. Spilled bytes go from the spill to the staged file in the kernel
# (`Spill.copy_to`), so a spilled file costs about 3 us more than a kept one: cold builds at
# 10,000 items peaked at 287, 250, 242 and 234 MiB with 64, 16, 8 and 0 MiB here, within
# 0.03 s of each other (alternated, medians of 4 to 6, 5.6-5.7 s); at 5,000 items 16 MiB
# took 0.05 s more than 64 and 8 MiB 0.09 s (peaks 140, 133 and 151 MiB with 16, 8 and 64).
# (Read back with `pread` instead, 32 MiB cost 0.08-0.14 s against 64 at 10,000 items.)
LIMIT = 16 * 2**20
FLUSH = 2**20  # bytes gathered before one write to the file


class Spilled(OnDemand):
    """An output file whose bytes lie in a `Spill`: read each time they are asked for,
    never kept (`OnDemand` keeps what it produced). Where they lie is kept in the instance
    itself, not in a closure: 46,000 of these at 10,000 items."""

    def __init__(self, path: str, sha256: str, spill: Spill, at: int, length: int, executable: bool = False,
                 owner: str = ""):
        self.__dict__.update(path=path, executable=executable, owner=owner, merge="", keys=(), _sha256=sha256,
                             _spill=spill, _at=at, _len=length)

    @property  # type: ignore[misc]
    def content(self) -> bytes:  # type: ignore[override]
        d = self.__dict__
        return d["_spill"].read(d["_at"], d["_len"])

    def copy_to(self, fd: int) -> None:
        """The file's bytes written to file `fd` from the spill, without holding them
        (`Spill.copy_to`): what the writer stages."""
        d = self.__dict__
        d["_spill"].copy_to(fd, d["_at"], d["_len"])


class Ref:
    """Where a worker spilled a rendered file's bytes: its spill (as this process sees it),
    offset, length and sha256. A worker's rendering comes to the build with these in place
    of the bytes (agentrc.pipeline.warm), and `plan._unpack` makes the file a `Spilled`."""

    __slots__ = ("spill", "at", "length", "sha256")

    def __init__(self, spill: "Spill", at: int, length: int, sha256: str):
        self.spill, self.at, self.length, self.sha256 = spill, at, length, sha256

    def file(self, path: str, executable: bool, owner: str) -> "Spilled":
        return Spilled(path, self.sha256, self.spill, self.at, self.length, executable, owner)


class Spill:
    """The unnamed file of one build's spilled bytes, appended to, read back by offset."""

    def __init__(self, directory: str, limit: Optional[int] = None):
        self.directory = directory
        self.limit = LIMIT if limit is None else limit
        self.held = 0  # rendered bytes seen, spilled or not
        self.spilled = 0  # files spilled (tests count them)
        self._fd: Optional[int] = None
        self._size = 0  # bytes written to the file
        self._pending: List[bytes] = []
        self._pending_size = 0
        self._broken = False
        self._attached: List[Spill] = []  # closed with this one (`attach`)

    def attach(self, other: "Spill") -> None:
        """Close `other` when this one is closed: a worker's spill, whose files the plan
        holds until the write (agentrc.pipeline.warm)."""
        self._attached.append(other)

    def open_now(self) -> bool:
        """Make the file now, if it is not made yet (also before a fork: a worker appends to
        it, the build reads it); whether there is one."""
        if self._fd is None and not self._broken:
            try:
                os.makedirs(self.directory, exist_ok=True)
                self._fd = unnamed(self.directory)
            except OSError:
                self._broken = True
        return self._fd is not None

    def append(self, data: bytes) -> Optional[int]:
        """`data` appended (gathered, written a megabyte at a time); its offset, None when
        the spill cannot take it (the caller keeps the bytes)."""
        return None if self._broken else self._append(data)

    def flush(self) -> bool:
        """What was appended, written to the file: True when all of it is there."""
        return self._flush()

    def keep(self, rendered: Rendered) -> Rendered:
        """`rendered` (a `clients.base.Rendered`) as the plan should hold it: its plain files
        spilled once the plan holds more than `limit` rendered bytes, else unchanged."""
        files: Tuple[OutputFile, ...] = rendered.files
        if not files or self._broken:
            return rendered
        before = self.held
        self.held += sum(len(f.content) for f in files if type(f) is OutputFile)
        if before < self.limit:
            return rendered
        kept: List[OutputFile] = []
        for f in files:
            if type(f) is not OutputFile or f.merge:
                kept.append(f)  # known by its digest already, or a config file the writer merges
                continue
            at = self._append(f.content)
            if at is None:
                return rendered
            kept.append(Spilled(f.path, f.sha256(), self, at, len(f.content), f.executable, f.owner))
            self.spilled += 1
        return type(rendered)(tuple(kept), rendered.report, rendered.fragments)  # `replace`, without its checks

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._broken = True  # a closed spill keeps nothing more
        attached, self._attached = self._attached, []
        for other in attached:
            other.close()

    def _append(self, data: bytes) -> Optional[int]:
        if self._fd is None and not self.open_now():
            return None
        at = self._size + self._pending_size
        self._pending.append(data)
        self._pending_size += len(data)
        if self._pending_size >= FLUSH and not self._flush():
            return None
        return at

    def _flush(self) -> bool:
        if not self._pending or self._fd is None:
            return not self._broken
        data = b"".join(self._pending)
        try:
            write_all(self._fd, data)
        except OSError:  # a full disk: what was spilled stays readable, the rest stays in memory
            self._broken = True
            return False
        self._size += len(data)
        self._pending, self._pending_size = [], 0
        return True

    def read(self, at: int, length: int) -> bytes:
        """The `length` bytes spilled at offset `at`."""
        if at + length > self._size and self._pending:  # still gathered: written out first
            if not self._flush():
                end = self._size
                pending = b"".join(self._pending)
                return pending[at - end:at - end + length]
        if self._fd is None:
            raise OSError("the spilled bytes are gone: the build's spill file was closed")
        data = os.pread(self._fd, length, at)
        if len(data) != length:
            raise OSError(f"the build's spill file gave {len(data)} of {length} bytes")
        return data

    def copy_to(self, fd: int, at: int, length: int) -> None:
        """The `length` bytes spilled at offset `at`, written to file `fd` (at its position)
        by the kernel (`os.sendfile`: no bytes object, one system call instead of a read
        and a write), else as `read` gives them. The spill's own position never moves, so
        two processes can copy from it at once (the write's child)."""
        # Still gathered: written out first (when that fails, `read` takes them from the
        # buffer). A worker's spill, as the build sees it, has nothing gathered and no size.
        gathered = at + length > self._size and bool(self._pending) and not self._flush()
        if self._fd is not None and _SENDFILE is not None and not gathered:
            done = 0
            try:
                while done < length:
                    n = _SENDFILE(fd, self._fd, at + done, length - done)
                    if n <= 0:
                        raise OSError(f"the build's spill file gave {done} of {length} bytes")
                    done += n
                return
            except OSError as exc:
                if done or exc.errno not in _NO_SENDFILE:
                    raise
        write_all(fd, self.read(at, length))


# `os.sendfile` where the platform has it; the errors that say it cannot copy between these
# two files (then the bytes are read and written as before).
_SENDFILE = getattr(os, "sendfile", None)
_NO_SENDFILE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP),
                errno.EXDEV}


def unnamed(directory: Optional[str]) -> int:
    """A file nobody else can open, gone when closed (or when the process dies), in
    `directory` (None: the system's temporary directory)."""
    where = directory if directory is not None else tempfile.gettempdir()
    flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if tmpfile:
        try:
            return os.open(where, flags | tmpfile, 0o600)
        except OSError:
            pass  # a file system without O_TMPFILE
    fd, name = tempfile.mkstemp(prefix=".agentrc-spill-", dir=where)
    try:
        os.unlink(name)
    except OSError:
        os.close(fd)
        raise
    return fd
