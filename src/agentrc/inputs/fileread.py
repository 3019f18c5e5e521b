"""Reading one file, and its limits: what `inputs.tree.read_file` checks, how it reads
(`fdio.read_regular`: non-blocking, checked again on the descriptor, bounded), and the
words of its diagnostics. `inputs.tree` re-exports the public names.

Kept apart from `read_file` itself, and from the walks, which resolve real paths through
`inputs.tree.real_path` (one resolver, counted by the tests of reading's cost).
"""

from __future__ import annotations

import errno
import os
import stat

from agentrc.fdio import NotRegular, read_regular
from agentrc.model import SourceFile

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Tuple

    from agentrc.inputs.tree import Root

# The largest file agentrc reads (16 MiB): far above any instruction file or skill resource
# meant for an assistant's context, and small enough that reading stays bounded.
MAX_FILE_BYTES = 16 << 20

# The symbolic links one resolution follows, as Linux's own path lookup (MAXSYMLINKS): a
# longer chain is a loop to the kernel too, so nothing past it could be opened anyway.
MAX_LINK_HOPS = 40


def _open_and_read(real: str, max_size: int) -> Tuple[bytes, Optional[os.stat_result], Optional[str]]:
    """The bytes and status of the file at `real` (no link), through `fdio.read_regular`;
    or the problem (then the bytes and status are not used)."""
    try:
        content, st = read_regular(real, max_size)
    except NotRegular as exc:  # pragma: no cover - swapped after the check
        return b"", exc.status, f"is {_type_name(exc.status.st_mode)}, not a file"
    except OSError as exc:
        return b"", None, _reason(exc)
    return content, st, f"is larger than {max_size} bytes" if len(content) > max_size else None


ESCAPE_HINT = "Copy the file into the registry, project or preset it is read from, or link to a file inside it."


def known_file(root: Root, real: Optional[str], display: str, max_size: int, seen: Optional[dict]
               ) -> Optional[SourceFile]:
    """The file `root` knows (`Root.known`) by the real path a walk gives it (no link), as it
    was read; None to read it (`read_file`), and always when `seen` wants its status."""
    got = root.known.get(real) if root.known is not None and real is not None and seen is None else None
    return SourceFile(display, got[0], got[1], None) if got is not None and len(got[0]) <= max_size else None


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


def real_path(path: str, max_hops: int = MAX_LINK_HOPS) -> str:
    """`os.path.realpath(path)`, iteratively, following at most `max_hops` symbolic links in
    all; past that (a chain too long, a loop) OSError(ELOOP). `os.path.realpath` recurses
    once per link: a chain of 1,000 links in a registry or a fetched source was a
    RecursionError, and a loop resolved to a path that only failed later. As with it, a
    component that does not exist is kept as written and resolution goes on lexically."""
    if os.name != "posix":  # pragma: no cover - agentrc reads on POSIX systems
        return os.path.realpath(path)
    path = os.fspath(path)
    pending = list(reversed(os.path.join(os.getcwd(), path).split("/")))  # the next component last
    resolved = "/"
    hops = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = resolved + name if resolved == "/" else resolved + "/" + name
        try:
            link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except OSError:  # missing, not a directory, unreadable: kept as written, as realpath does
            link = False
        if not link:
            resolved = candidate
            continue
        hops += 1
        if hops > max_hops:
            raise OSError(errno.ELOOP, f"more than {max_hops} symbolic links to follow", path)
        target = os.readlink(candidate)
        if target.startswith("/"):
            resolved = "/"
        pending.extend(reversed(target.split("/")))
    return resolved
