"""Whole buffers through file descriptors: writing all of one, and reading a file that may be hostile.

`os.write` may write less than it is given (large buffers, pipes, a signal): the writer's
staged files, its journal, the spill, the memo's spool and the workers' channels each
looped over the rest with a copy of the same loop. One write is the common case, so a
memoryview is made only after a short one.

`read_regular` (and `open_regular`, for a reader that streams) is how agentrc reads a file
that input may have planted (a source, a project's own files, its lock, a journal, a fetched
checkout, a capability package, the caches): opened without blocking, so a FIFO or a device
in its place cannot hang the command; never through a link in its last component unless
asked; checked on the descriptor it read, so a file swapped in between cannot slip through;
and bounded. Each reader of such files had its own copy of these few calls, and several of
them opened blocking: a FIFO named `agentrc.yaml` hung `agentrc install`. The output
writer's `OutputTree.read` and a capability transaction's staged files read through it
relative to a directory descriptor (`dir_fd`); the memo's packs open with `READ_FLAGS`.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from os import PathLike
    from typing import BinaryIO, Optional, Tuple, Union

    Buffer = Union[bytes, bytearray, memoryview]
    StrPath = Union[str, PathLike]  # a path: a string, or a `pathlib.Path` (the tests')

# Non-blocking (a FIFO, a tty), not through a link in the last component (ELOOP), not inherited.
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """What `read_regular` opened is not a regular file; `status` is what `fstat` said of it."""

    def __init__(self, path: str, status: os.stat_result):
        super().__init__(errno.EINVAL, "not a regular file", path)
        self.status = status


def open_regular(path: str) -> BinaryIO:
    """The regular file at `path` opened for reading as `read_regular` opens it (no link
    followed, no blocking, `NotRegular` for anything else), for a reader that streams it
    (`pickle.load` of the cache's own files: a damaged cache is a miss, never a hang)."""
    fd = os.open(path, READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(path, st)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str, limit: Optional[int], follow: bool = False, dir_fd: Optional[int] = None
                 ) -> Tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` (relative to `dir_fd` when given), at most
    `limit + 1` of them (more than `limit`: the caller's "too large", read no further; None:
    as many as its status said when it was opened, plus one, so a file growing while it is
    read is not read on without end), and its status as opened. `follow`: a link in the last
    component is followed (else it is ELOOP). Anything but a regular file is `NotRegular`;
    the system calls' errors are raised as they come."""
    flags = READ_FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow else READ_FLAGS
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(path, st)
        return read_upto(fd, st.st_size, st.st_size if limit is None else limit), st
    finally:
        os.close(fd)


CHUNK = 1 << 20  # a read past the size a file's status gave is made in pieces of this many bytes


def read_upto(fd: int, size: int, limit: int) -> bytes:
    """At most `limit + 1` bytes of the open file `fd`, whose status said `size`: one read
    when it still holds that many (the common case), else on, a piece at a time, until its
    end (it was cut, or a file system returned less) or past the bound (it has grown)."""
    content = os.read(fd, min(size, limit) + 1)
    if len(content) == size:
        return content
    parts = [content]
    got = len(content)
    while got <= limit:
        part = os.read(fd, min(limit + 1 - got, CHUNK))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def write_all(fd: int, data: Buffer) -> None:
    """All of `data` written to `fd` at its position; an OSError of a write is raised."""
    done = os.write(fd, data)
    if done < len(data):
        view = memoryview(data)[done:]
        while view:
            view = view[os.write(fd, view):]
