"""The system calls of reading one file, and their limits: what `inputs.tree.read_file`
checks and how it reads (non-blocking, checked again on the descriptor, bounded), and the
words of its diagnostics. `inputs.tree` re-exports the public names.

Kept apart from `read_file` itself, and from the walks, which resolve real paths through
`inputs.tree.real_path` (one resolver, counted by the tests of reading's cost).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING, Optional, Tuple

if TYPE_CHECKING:
    from agentrc.inputs.tree import Root

# The largest file agentrc reads (16 MiB): far above any instruction file or skill resource
# meant for an assistant's context, and small enough that reading stays bounded.
MAX_FILE_BYTES = 16 << 20

# The symbolic links one resolution follows, as Linux's own path lookup (MAXSYMLINKS): a
# longer chain is a loop to the kernel too, so nothing past it could be opened anyway.
MAX_LINK_HOPS = 40


def _open_and_read(real: str, max_size: int) -> Tuple[bytes, Optional[os.stat_result], Optional[str]]:
    """The bytes and status of the file at `real` (no link), opened without blocking and
    checked again on its descriptor; or the problem (then the bytes and status are not used)."""
    content = b""
    st: Optional[os.stat_result] = None
    try:
        fd = os.open(real, _READ_FLAGS)
    except OSError as exc:
        return content, st, _reason(exc)
    problem = None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # pragma: no cover - swapped after the check
            problem = f"is {_type_name(st.st_mode)}, not a file"
        else:
            content = _read_bounded(fd, st.st_size, max_size)
            if len(content) > max_size:
                problem = f"is larger than {max_size} bytes"
    except OSError as exc:
        problem = _reason(exc)
    finally:
        os.close(fd)
    return content, st, problem


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _read_bounded(fd: int, size: int, max_size: int) -> bytes:
    """At most `max_size + 1` bytes of the open file `fd`, whose status said `size`: one
    read when it still holds that many (the common case), else on until its end (it was
    cut, or a file system returned less) or past the bound (it has grown)."""
    want = min(size, max_size) + 1
    content = os.read(fd, want)
    if len(content) == size:
        return content
    parts = [content]
    got = len(content)
    while got <= max_size:
        part = os.read(fd, max_size + 1 - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


ESCAPE_HINT = "Copy the file into the registry, project or preset it is read from, or link to a file inside it."


def leaves(path: str, root: Root) -> str:
    """The AR050 message: the link as written (not where it lands, which may be anywhere)."""
    if os.path.islink(path):
        return f"symlink leads outside {root.label} (-> {os.readlink(path)})"
    return f"resolves outside {root.label}"  # pragma: no cover - a parent is a symlink; walks do not enter those


def _not_a_file(path: str, max_size: int) -> Optional[str]:
    try:
        st = os.stat(path)
    except OSError as exc:
        return _reason(exc)
    return _not_a_file_status(st, max_size)


def _not_a_file_status(st: os.stat_result, max_size: int) -> Optional[str]:
    if not stat.S_ISREG(st.st_mode):
        return f"is {_type_name(st.st_mode)}, not a file"
    if st.st_size > max_size:
        return f"is larger than {max_size} bytes"
    return None


def _kind(path: str) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "missing"
    return "directory" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _type_name(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "does not exist"
    if exc.errno == errno.ELOOP:
        return f"is a symlink loop, or a chain of more than {MAX_LINK_HOPS} symlinks"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or str(exc)


def _posix(p: str) -> str:
    return p.replace(os.sep, "/")
