"""Content digests salted with the code's own fingerprint.

Everything keyed by these digests (parsed item directories, renderings, the no-change
stamp) is then never reused by other code: a development checkout, a reinstall of the
same version. Used by the loader (each item's digest) and the memo.

The fingerprint hashes every source and schema file of the package, which every command
needs: reading and hashing the 260 files was 5 ms of each, a twentieth of a build with
nothing to do at 1,000 items. So it is kept where the modules' bytecode goes
(`__pycache__/fingerprint.<cache tag>.bin`, agentrc.pycache), written where bytecode is
written, with each file's and directory's status as `open` sees it (through links: size,
modification and change times, inode); a process whose statuses all match takes it without
reading a file (a stat each: 1 ms). The change time cannot be set by a program, so a file
replaced with one of the same size and modification time is still seen. A status changed
less than `RACY_NS` before the kept file was written, by the file system's own clock (the
kept file's modification time, as git judges its index), vouches for nothing: a second
change within the same timestamp could keep it. Like bytecode's own check, this trusts the
file system's statuses: a network file system that caches them (NFS's attribute cache) can
show an edit made on another machine late.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time

from agentrc import __version__
from agentrc.pycache import cache_path, read_kept, write_kept

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Dict, Iterable, List, Optional, Tuple

_CODE: list = []
_KEPT: Optional[str] = cache_path(__file__, "fingerprint")
RACY_NS = 3 * 10 ** 9  # as the source stamp's (agentrc.inputs.tree): a status this recent vouches for nothing
if TYPE_CHECKING:
    Status = Tuple[int, int, int, int]


PACKAGE = os.path.dirname(__file__)  # this module sits at the top of the agentrc package


def code_files() -> List[Path]:
    """Every source and schema file of the agentrc package, sub-packages included."""
    from pathlib import Path  # here: a command hashes the package by `_code_parts`, without it (2 ms)

    return [Path(PACKAGE, *parts) for parts in _code_parts()]


def _code_parts(statuses: Optional[Dict[str, Status]] = None) -> List[Tuple[str, ...]]:
    """`code_files` as path components, in `Path` order, listed with `os.scandir`: every
    command hashes the package, and `Path.rglob` plus a `Path` per file was 5-8 ms of a
    no-change build. `statuses` gets each directory's and listed file's (by its path)."""
    found: List[Tuple[str, ...]] = []
    pending: List[Tuple[str, ...]] = [()]
    while pending:
        parts = pending.pop()
        path = os.path.join(PACKAGE, *parts)
        if statuses is not None:
            statuses[path] = _status(os.stat(path))
        with os.scandir(path) as entries:
            for entry in entries:
                name = entry.name
                if name == "__pycache__":
                    continue
                if entry.is_dir():
                    pending.append(parts + (name,))
                dot = name.rfind(".")
                if 0 < dot < len(name) - 1 and name[dot:] in (".py", ".json"):  # Path.suffix's rule
                    found.append(parts + (name,))
                    if statuses is not None:
                        statuses[entry.path] = _status(entry.stat())  # as `open` reads it: through a link
    return sorted(found)


def _status(st: os.stat_result) -> Status:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def code_fingerprint() -> bytes:
    """The version plus a hash of agentrc's own sources and schemas: a memo written by other
    code (a development checkout, a reinstall of the same version) is never reused."""
    if not _CODE:
        _CODE.append(_kept() or _hashed())
    return _CODE[0]


def _hashed(always: bool = False) -> bytes:
    """The fingerprint, every file read; kept (`_KEPT`) when bytecode is written here (or
    `always`) and no status is more recent than `RACY_NS` before the kept file's own time."""
    statuses: Dict[str, Status] = {}
    h = hashlib.sha256(__version__.encode())
    root = str(PACKAGE)
    for parts in _code_parts(statuses):
        with open(os.path.join(root, *parts), "rb") as fh:
            h.update(os.sep.join(parts).encode() + b"\0" + fh.read())
    digest = h.digest()
    if _KEPT is not None and (always or not sys.dont_write_bytecode):
        # Judged by the written file's own time, before any other process can read it.
        write_kept(_KEPT, (__version__, digest, statuses), keep=lambda st: not _racy(statuses, st.st_mtime_ns))
    return digest


def _racy(statuses: Dict[str, Status], at_ns: int) -> bool:
    """Whether a status changed less than `RACY_NS` before `at_ns` (or after it)."""
    return any(max(s[1], s[2]) >= at_ns - RACY_NS for s in statuses.values())


def precompile() -> bool:
    """Keep the fingerprint now, whatever the interpreter says of bytecode, waiting out
    `RACY_NS` if a file changed just before (a copy of the package just made; never longer,
    nor for a file dated in the future): `python -c "from agentrc import fingerprint;
    fingerprint.precompile()"`, as `compileall` compiles the modules. Whether it is kept."""
    if _KEPT is None:
        return False
    statuses: Dict[str, Status] = {}
    _code_parts(statuses)
    newest = max(max(s[1], s[2]) for s in statuses.values())
    wait = newest + RACY_NS - time.time_ns()
    if wait > RACY_NS:
        return False
    if wait > 0:
        time.sleep(wait / 1e9 + 0.05)
    _hashed(always=True)
    return _kept() is not None


def _kept() -> Optional[bytes]:
    """The fingerprint kept by an earlier process, when every status it recorded is still the
    same and the package lists the same files; None otherwise (then it is computed again)."""
    try:
        version, digest, statuses = read_kept(_KEPT)
        if version != __version__ or not isinstance(digest, bytes) or not isinstance(statuses, dict):
            return None
        now: Dict[str, Status] = {}
        _code_parts(now)
        return digest if now == statuses else None
    except (OSError, ValueError, TypeError):
        return None


def digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256(code_fingerprint())
    for p in parts:
        h.update(len(p).to_bytes(8, "big"))
        h.update(p)
    return h.hexdigest()
