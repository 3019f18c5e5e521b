"""The one writer of every file agentrc writes outside an output tree's manifest.

Locks (`agentrc.lock.json`, `oas-lock.json`), a capability scope's `.gitignore` and
`oas-config.yaml`, reports, `fmt`'s and `import`'s files: each is written whole beside
itself and renamed over, so a reader never sees half of one. These files sit in
directories other people's content reaches (a cloned project, a capability scope), so the
write is made safe by construction rather than by a check before it:

- the directories from `root` down to the file are opened one at a time without following
  a link (`O_NOFOLLOW`), and created the same way when missing: a directory on the way
  that is a symbolic link is refused (`UnsafeWrite`, AR224), never entered. `root` itself
  may be reached through links (a linked `~/.config` under `--global` is the user's own);
- the temporary file has a random name and is created with `O_CREAT | O_EXCL |
  O_NOFOLLOW` in the destination's directory, so a link planted at any name cannot
  redirect the write; it is fsync'd and renamed over the destination;
- a destination that is a symbolic link (or not a regular file) is refused, not replaced.

A run killed between the create and the rename leaves `.NAME.agentrc-tmp-XXXXXXXX`, which
`output.writer` removes as its own leftover (`LEFTOVER`) where it writes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat

from agentrc.fdio import write_all
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Optional

    from agentrc.fdio import StrPath

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
TMP_TAG = ".agentrc-tmp"
# The temporary names agentrc's writers use: `.NAME.agentrc-tmp-<8 hex>` (this module),
# `.agentrc-tmp-<8 hex>` (for a NAME too long to prefix), the fixed `.NAME.agentrc-tmp` of
# earlier versions, and `tempfile.mkstemp(prefix=".agentrc-")`'s `.agentrc-<8 of [a-z0-9_]>`.
LEFTOVER = pattern(r"\.agentrc-[a-z0-9_]{8}|\..+\.agentrc-tmp(?:-[0-9a-f]{8})?|\.agentrc-tmp-[0-9a-f]{8}",
                   re.DOTALL)
CODE = "AR224"


class UnsafeWrite(OSError):
    """A write refused because a symbolic link (or something else than a directory or a
    regular file) stands where agentrc would write: AR224. An `OSError`, so callers that
    report I/O failures report it too; `code` says which diagnostic it is."""

    code = CODE

    def __init__(self, path: str, what: str):
        super().__init__(errno.ELOOP, f"{what}: agentrc never writes through a symbolic link", path)
        self.what = what


def code_of(exc: OSError, default: str) -> str:
    """The diagnostic code for a failed write: AR224 for a refusal, else `default`."""
    return CODE if isinstance(exc, UnsafeWrite) else default


def write_atomic(path: StrPath, data: bytes, root: Optional[StrPath] = None,
                 mode: Optional[int] = None) -> None:
    """Write `data` to `path`, whole or not at all. `root` is the directory whose inside
    may hold no link on the way (the project, the scope, the output directory); by default
    the file's own directory. An existing file keeps its mode; a new one gets `mode` (0o644
    by default, less the umask)."""
    path = os.fspath(path)
    parent, name = os.path.split(os.path.abspath(path))
    base = os.path.abspath(os.fspath(root)) if root is not None else parent
    dfd = open_directory(base, parent, create=True)
    try:
        _replace_in(dfd, name, path, data, mode)
    finally:
        os.close(dfd)


def check(path: StrPath, root: Optional[StrPath] = None) -> None:
    """Raise `UnsafeWrite` when `write_atomic(path, ..., root)` would be refused for a link,
    without writing anything: a command checks its lock's place before it changes the
    files the lock describes. Missing directories are fine (the write makes them)."""
    path = os.fspath(path)
    parent, name = os.path.split(os.path.abspath(path))
    base = os.path.abspath(os.fspath(root)) if root is not None else parent
    try:
        dfd = open_directory(base, parent)
    except FileNotFoundError:
        return
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return
    finally:
        os.close(dfd)
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeWrite(path, f"{path} is a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeWrite(path, f"{path} is not a regular file")


def open_directory(root: str, directory: str, create: bool = False) -> int:
    """A descriptor of `directory`, reached from `root` one component at a time without
    following a link (created when missing and `create`). `directory` outside `root` is a
    programming error (ValueError)."""
    rel = os.path.relpath(directory, root)
    if rel == os.curdir:
        parts: List[str] = []
    elif rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        raise ValueError(f"{directory} is not inside {root}")
    else:
        parts = rel.split(os.sep)
    if create:
        os.makedirs(root, exist_ok=True)
    fd = os.open(root, _DIR & ~_NOFOLLOW)  # the root may be reached through links
    for i, part in enumerate(parts):
        fd = _step(fd, part, os.path.join(root, *parts[:i + 1]), create)  # closes the one it is given
    return fd


def _step(fd: int, part: str, shown: str, create: bool) -> int:
    """The descriptor of `part` inside the directory `fd` (closed here), never through a link."""
    try:
        try:
            return os.open(part, _DIR, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
            return os.open(part, _DIR, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise UnsafeWrite(shown, f"{shown} is a symbolic link") from None
                raise UnsafeWrite(shown, f"{shown} is not a directory") from None
            raise
    finally:
        os.close(fd)


def _replace_in(dfd: int, name: str, shown: str, data: bytes, mode: Optional[int]) -> None:
    try:
        st: Optional[os.stat_result] = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise UnsafeWrite(shown, f"{shown} is a symbolic link")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise UnsafeWrite(shown, f"{shown} is not a regular file")
    want = stat.S_IMODE(st.st_mode) if st is not None else None
    tmp = temp_name(name)
    fd = os.open(tmp, _NEW, 0o644 if mode is None else mode, dir_fd=dfd)
    try:
        fill(fd, data, want)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dfd)  # the rename itself, where the file system allows a directory's fsync


def fill(fd: int, data: bytes, mode: Optional[int] = None) -> None:
    """Write `data` whole into the new file `fd`, give it `mode` (the mode of the file it will
    replace, which the umask must not change), fsync it and close it: what every staged
    file gets before it is renamed into place (this writer's, a capability transaction's)."""
    try:
        write_all(fd, data)
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_name(name: str) -> str:
    """A fresh temporary name beside `name` (matched by `LEFTOVER`)."""
    token = os.urandom(4).hex()  # as `secrets.token_hex(4)`, without importing it (random, hmac: 3 ms)
    if len(name.encode("utf-8", "surrogateescape")) > 200:
        return f"{TMP_TAG}-{token}"
    return f".{name}{TMP_TAG}-{token}"
