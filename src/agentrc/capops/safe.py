"""The boundary rails every `agentrc cap` transaction shares (issue 30): how it writes what a
scope holds, how it reads a file someone else names, how it resolves a path a package
controls, and how it cleans up after a run that was killed.

- **Writes** go through `output.atomic.write_atomic` with the scope (or the instance home, the
  soul's directory) as the root: a random temporary name created without following a link,
  and no link between the root and the file, so a link a package, a clone or another user
  planted at the destination, at a temporary name or at a directory on the way is refused
  (AR224) instead of written through.
- **Reads on someone's behalf** (an injection file a config names, `--task-file`) go through
  the bounded reader of `inputs.tree`: the type is checked before the open, the open does not
  block, at most 16 MiB is read. A FIFO, `/dev/stdin` or a device is AR054, never a hang; a
  path a config names must resolve inside its root (AR050), and is never opened otherwise.
- **Paths a package controls** are resolved with `real`, which turns the RecursionError of a
  long symbolic link chain (Python's `realpath` recurses once per link) into a diagnostic.
- **Leftovers**: a run killed with SIGKILL leaves `installed/.staging-*` (fetches and
  validation) and maybe `installed/.agentrc-txn/` (the transaction's staging and journal,
  `txn`). The next run, once it holds the scope's lock (so no other run is using them),
  finishes or undoes the transaction by its journal and deletes the staging directories
  (`capinstall.recover_leftovers`).
"""

from __future__ import annotations

import contextlib
import os
import shutil

from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree
from agentrc.inputs import tree as trees
from agentrc.output import atomic

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Optional

STAGING_PREFIX = ".staging-"


class Escape(Exception):
    """A path that cannot be resolved safely: `code` (AR156 or AR054) and a message."""

    def __init__(self, code: str, path: str, message: str):
        super().__init__(message)
        self.code = code
        self.path = path
        self.message = message


def real(path: str, code: str = "AR156") -> str:
    """`os.path.realpath(path)`, or `Escape` when its links chain further than Python's
    recursion allows (a 1,000-link chain): reported, never a traceback."""
    try:
        return os.path.realpath(path)
    except RecursionError:
        raise Escape(code, path, f"{path}: a chain of symbolic links too long to follow") from None


def write(root: str, path: str, data: bytes, mode: Optional[int] = None) -> None:
    """Write `path` whole, below `root`, through no symbolic link (atomic.UnsafeWrite, an
    OSError whose code is AR224, when one stands in the way)."""
    atomic.write_atomic(path, data, root=root, mode=mode)


def read_bounded(path: str, root: str, display: str = "") -> bytes:
    """The bytes of `path`, a regular file of at most 16 MiB resolving inside `root` (a
    directory, or the file itself for a path the user named). `Escape` otherwise (AR050
    outside the root, AR054 a FIFO, a device, a loop, a missing file...), without opening
    anything that could block."""
    display = display or path
    try:
        root_obj = trees.Root(root)
        d = Diagnostics()
        got = trees.read_file(path, display, root_obj, d)
    except RecursionError:
        raise Escape("AR054", display, f"{display}: a chain of symbolic links too long to follow") from None
    if got is None:
        first = d.items[0]
        raise Escape(first.code, display, f"{display}: {first.message}")
    return got.content


def remove_leftovers(store: str) -> List[str]:
    """Under the scope's lock: every `.staging-*` a killed run left in `store` (the scope's
    `installed/`) deleted, a link as the link. They hold what fetches and validation made;
    a transaction changes the scope only through its journal (`txn`), so none holds
    anything the scope needs. The names deleted."""
    try:
        names = sorted(n for n in os.listdir(store) if n.startswith(STAGING_PREFIX))
    except OSError:
        return []
    for n in names:
        _remove(os.path.join(store, n))
    return names


def remove_tree(path: str) -> None:
    """Remove `path`: a link as the link, a tree without following links."""
    _remove(path)


def _remove(path: str) -> None:
    """Remove `path` (a link as the link, a tree without following links, read-only
    directories made writable first)."""
    def onerror(func, p, _exc):
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)

    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
        os.unlink(path)
    elif os.path.lexists(path):
        shutil.rmtree(path, onerror=onerror)


def inside(root: str, path: str) -> bool:
    """`path` (resolved) lies inside `root` (resolved)."""
    return captree.inside(real(root), real(path))
