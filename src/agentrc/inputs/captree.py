"""Reading capability and package trees from disk (spec 003), safely.

Trees come from anyone: a package someone published, a clone. So every walk uses lstat and
never follows a symbolic link (a link is hashed and copied as the link it is), refuses
FIFOs, sockets and devices, stays within `MAX_ENTRIES` entries and `MAX_DEPTH` levels, and
every declared path is resolved with its links and must land inside its root.
"""

from __future__ import annotations

import os
import stat

from agentrc.capabilities import integrity
from agentrc.capabilities.model import CAPABILITIES_DIR, CAPABILITY_FILE, INSTALLED, LOCK_FILE, OWNED, Capability
from agentrc.diagnostics import Diagnostics
from agentrc.fdio import open_regular, read_regular
from agentrc.inputs.tree import real_path

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Set, Tuple

MAX_ENTRIES = 200_000
MAX_DEPTH = 64
MAX_MANIFEST_BYTES = 16 << 20
_CHUNK = 1 << 20


class TreeError(Exception):
    """A tree agentrc will not hash or copy: `code` says why (AR157 an unsupported file or a
    name out of order's reach, AR156 a bound)."""

    def __init__(self, code: str, rel: str, message: str):
        super().__init__(message)
        self.code = code
        self.rel = rel
        self.message = message


def walk(root: str, payload: bool = False) -> Iterator[Tuple[str, str, str]]:
    """(relative path, FILE or SYMLINK, absolute path) of every entry in hash order.
    `payload`: leave out `node_modules` anywhere and a root `oas-lock.json`."""
    count = [0]

    def visit(directory: str, prefix: str, depth: int) -> Iterator[Tuple[str, str, str]]:
        if depth > MAX_DEPTH:
            raise TreeError("AR157", prefix, f"{prefix or '.'}: directories nest more than {MAX_DEPTH} levels")
        try:
            names = os.listdir(directory)
        except OSError as exc:
            raise TreeError("AR157", prefix, f"{prefix or '.'}: cannot be read: {exc.strerror}") from None
        try:
            names.sort(key=integrity.collation_key)
        except integrity.UnorderableName as exc:
            raise TreeError("AR157", prefix, f"{prefix or '.'}: {exc}") from None
        for name in names:
            if payload and (name == "node_modules" or (not prefix and name == LOCK_FILE)):
                continue
            count[0] += 1
            if count[0] > MAX_ENTRIES:
                raise TreeError("AR157", prefix, f"holds more than {MAX_ENTRIES} entries")
            rel = f"{prefix}/{name}" if prefix else name
            full = os.path.join(directory, name)
            try:
                st = os.lstat(full)
            except OSError as exc:
                raise TreeError("AR157", rel, f"{rel}: cannot be read: {exc.strerror}") from None
            if stat.S_ISDIR(st.st_mode):
                yield from visit(full, rel, depth + 1)
            elif stat.S_ISREG(st.st_mode):
                yield rel, integrity.FILE, full
            elif stat.S_ISLNK(st.st_mode):
                yield rel, integrity.SYMLINK, full
            else:
                raise TreeError("AR157", rel, f"{rel}: is a FIFO, socket or device; packages carry files, "
                                "directories and symbolic links only")

    return visit(root, "", 0)


def tree_hash(root: str, payload: bool = False) -> str:
    """The `integrity` of the tree at `root` (a capability artifact, or with `payload` a
    package payload). Raises TreeError."""

    def chunks(kind: str, full: str) -> Iterator[bytes]:
        if kind == integrity.SYMLINK:
            yield os.fsencode(os.readlink(full))
            return
        with open_regular(full) as fh:  # as walked: a file swapped for a link or a FIFO is not read
            while True:
                block = fh.read(_CHUNK)
                if not block:
                    return
                yield block

    try:
        return integrity.digest((rel, kind, chunks(kind, full)) for rel, kind, full in walk(root, payload))
    except OSError as exc:
        raise TreeError("AR157", "", f"cannot be read: {exc.strerror}") from None


def inside(root_real: str, path: str) -> bool:
    return path == root_real or path.startswith(root_real.rstrip("/") + "/")


def read_manifest(root: str, name: str) -> Optional[bytes]:
    """The bytes of `root/name` when it is a regular file inside `root` (links resolved),
    else None; larger than the bound: the first bytes past it (the parser reports it)."""
    full = os.path.join(root, name)
    try:
        real = real_path(full)
        if not inside(real_path(root), real):
            return None
        return read_regular(real, MAX_MANIFEST_BYTES)[0]  # a FIFO or a link swapped in: OSError
    except OSError:
        return None


def check_contained(cap_dir: str, cap: Capability, label: str, diags: Diagnostics) -> None:
    """Every path `cap` declares exists inside `cap_dir` once symlinks are resolved, and the
    skill and agent trees hold no link that leads out (AR156) or nowhere (AR157)."""
    root = os.path.realpath(cap_dir)
    for what, rel in cap.declared_paths():
        full = os.path.join(cap_dir, rel)
        if not os.path.lexists(full) or not os.path.exists(full):
            diags.error(label, (0, 0), "AR157", f"{cap.id}: {rel!r} ({what}) is not in the capability directory")
            continue
        real = os.path.realpath(full)
        if not inside(root, real):
            diags.error(label, (0, 0), "AR156", f"{cap.id}: {rel!r} ({what}) leads outside the capability "
                        "directory once symlinks are resolved")
            continue
        if what in ("skill", "agent"):
            if what == "agent" and not os.path.isdir(real):
                diags.error(label, (0, 0), "AR157", f"{cap.id}: the agent {rel!r} is not a directory")
                continue
            if os.path.isdir(real):
                _check_subtree(full, rel, root, cap.id, what, label, diags)


def _check_subtree(top: str, declared: str, root: str, cid: str, what: str, label: str, diags: Diagnostics) -> None:
    seen: Set[str] = set()
    stack = [top]
    while stack:
        directory = stack.pop()
        real_dir = os.path.realpath(directory)
        if real_dir in seen or len(seen) > MAX_ENTRIES:
            continue
        seen.add(real_dir)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            shown = os.path.relpath(e.path, top)
            if e.is_symlink() and not os.path.exists(e.path):  # dangling, a loop or a chain past the bound
                diags.error(label, (0, 0), "AR157", f"{cid}: the {what} {declared!r} holds a broken link {shown!r}")
            elif not inside(root, real := real_path(e.path)):
                diags.error(label, (0, 0), "AR156", f"{cid}: the {what} {declared!r} holds {shown!r}, which leads "
                            "outside the capability directory")
            elif os.path.isdir(real):
                stack.append(e.path if not e.is_symlink() else real)


def misplaced(scope: str) -> List[str]:
    """Capabilities (directories with an oas.json) directly under `.agents/capabilities/`,
    where spec 003 allows only installed/ and owned/."""
    base = os.path.join(scope, CAPABILITIES_DIR)
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    out = []
    for name in names:
        full = os.path.join(base, name)
        if name in (INSTALLED, OWNED) or not os.path.isdir(full) or os.path.islink(full):
            continue
        if os.path.isfile(os.path.join(full, CAPABILITY_FILE)):
            out.append(f"{CAPABILITIES_DIR}/{name}")
    return out
