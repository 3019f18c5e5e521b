"""The source cache's records: what each cached checkout held when git made it.

A checkout in the cache (`sources/<repo>/<entry>`) is someone else's content sitting on
the user's disk, read again by every later `add`, `update` and `install` without git. A
file changed there after the fetch (appended to, replaced, made executable, swapped for a
link) would be installed and locked as if the source had it. So when an entry is made,
every file's SHA-256, size and executable bit and every symlink's target are recorded in
`<entry>.files.json` beside it (outside the entry's tree, so nothing in the tree can
forge it), and every use walks the entry again and compares: no git runs, one read of
each file, linear in the entry's size. A difference, or a missing record, means the
entry is not what git gave: the caller discards it and fetches again (AR228).

The walk follows no link (a link is recorded by its target, never entered), reads only
regular files (non-blocking, so a FIFO planted in the entry cannot hang it) and bounds
each read by the size recorded, so a file grown huge costs one read past its size. The
files the fetcher has read already (the registry's) are checked from the bytes it read:
what is verified is what is used, and nothing is read twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat

from agentrc.fdio import NotRegular, read_regular
from agentrc.output.atomic import write_atomic

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Tuple

RECORD_SUFFIX = ".files.json"
_VERSION = 1

# One file's record: ("file", size, executable, sha256 hex) or ("link", target).
if TYPE_CHECKING:
    Entry = Tuple[Any, ...]
if TYPE_CHECKING:
    Record = Dict[str, Entry]


class Changed(Exception):
    """The entry differs from its record: `path` (relative to the entry, posix) and how."""

    def __init__(self, path: str, how: str):
        super().__init__(f"{path}: {how}")
        self.path = path
        self.how = how


def record_path(entry: str) -> str:
    return entry + RECORD_SUFFIX


def file_entry(content: bytes, executable: bool) -> Entry:
    return ("file", len(content), bool(executable), hashlib.sha256(content).hexdigest())


def dumps(record: Record) -> bytes:
    """The record's bytes: deterministic, so two runs caching one commit write the same."""
    files = {path: list(value) for path, value in record.items()}
    return json.dumps({"version": _VERSION, "files": files}, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def loads(data: bytes) -> Optional[Record]:
    """The record in `data`, or None when it is not one (then the entry is not trusted)."""
    try:
        doc = json.loads(data)
        if doc.get("version") != _VERSION or not isinstance(doc.get("files"), dict):
            return None
        record = {str(path): tuple(value) for path, value in doc["files"].items()}
    except (ValueError, TypeError, AttributeError):
        return None
    return record if all(map(_well_formed, record.values())) else None


def _well_formed(value: Entry) -> bool:
    if len(value) == 2 and value[0] == "link":
        return isinstance(value[1], str)
    return (len(value) == 4 and value[0] == "file" and isinstance(value[1], int) and isinstance(value[2], bool)
            and isinstance(value[3], str))


def record_of(files: Iterable[Tuple[str, bytes, bool]]) -> Record:
    """The record of regular files given as (path in the entry, content, executable):
    what a sandbox that lays out a locked commit itself writes beside it."""
    return {path: file_entry(content, executable) for path, content, executable in files}


def make(entry: str, keep: Optional[Dict[str, Tuple[bytes, bool]]] = None, below: str = "") -> Record:
    """The record of the checkout at `entry` (git has just written it). `keep`: filled with
    the bytes and executable bit the record was made from, of the files below `below` (a
    posix path in the entry; "" for all): what reading the entry next can take instead of
    reading the files again (`verify`'s `made`)."""
    record: Record = {}
    prefix = below.rstrip("/") + "/" if below else ""
    for rel, item in _walk(entry):
        if item.is_symlink():
            record[rel] = ("link", os.readlink(item.path))
        elif item.is_file(follow_symlinks=False):
            content, executable = _read(item.path)
            record[rel] = file_entry(content, executable)
            if keep is not None and rel.startswith(prefix):
                keep[rel] = (content, executable)
        else:
            raise Changed(rel, f"is {_kind(item)}, which git does not check out")
    return record


def save(entry: str, record: Record, cache: str) -> None:
    """Write the record beside `entry`, whole or not at all, never through a link below `cache`."""
    write_atomic(record_path(entry), dumps(record), root=cache)


def verify(entry: str, record: Optional[Record] = None, read: Optional[Dict[str, Tuple[bytes, bool]]] = None,
           made: Optional[Dict[str, Tuple[bytes, bool]]] = None) -> None:
    """Raise `Changed` unless the files at `entry` are exactly those its record (read from
    beside it when not given) describes: same paths, kinds, sizes, modes and bytes.

    `read`: files the caller has already read from the entry (path in the entry -> bytes,
    executable), as a regular file through a descriptor that followed no link. Their bytes
    are checked as they are, so what is verified is what is used, and they are not read
    twice (a cached install at 1,000 items would otherwise read every file twice).
    `made`: what `make` kept of the files `record` was made from (this process made the
    entry): a file of `read` whose bytes are that very object is not hashed again (the
    record was made of them); the entry is walked and compared all the same."""
    if record is None:
        try:  # as the entry's files are read: no link followed, no FIFO blocked on
            record = loads(read_regular(record_path(entry), 64 << 20)[0])
        except OSError:
            record = None
        if record is None:
            raise Changed(".", "has no record of its files (made by an older agentrc, or the record was removed)")
    left = dict(record)
    known = read or {}
    kept = made or {}
    rel = "."
    try:
        for rel, item in _walk(entry):
            got = known.get(rel)
            mine = kept.get(rel)
            _compare(rel, item, left.pop(rel, None), got, got is not None and mine is not None and got[0] is mine[0])
    except OSError as exc:
        raise Changed(rel, f"cannot be read ({exc.strerror or exc})") from None
    if left:
        raise Changed(sorted(left)[0], "was removed")


def _compare(rel: str, item: os.DirEntry, want: Optional[Entry], known: Optional[Tuple[bytes, bool]],
             recorded: bool = False) -> None:
    """Raise `Changed` unless the file `rel` is as recorded (`known`: its bytes as read;
    `recorded`: the very bytes its record was made of, so not hashed again)."""
    if want is None:
        raise Changed(rel, "was added")
    if item.is_symlink():
        if want[0] != "link":
            raise Changed(rel, "is a symbolic link it was not")
        if os.readlink(item.path) != want[1]:
            raise Changed(rel, "points elsewhere")
        return
    if not item.is_file(follow_symlinks=False) or want[0] != "file":
        raise Changed(rel, f"is {_kind(item)}, not what was fetched")
    content, executable = known if known is not None else _read(item.path, want[1])
    if len(content) != want[1]:
        raise Changed(rel, f"is {len(content)} bytes, not {want[1]}")
    if executable != want[2]:
        raise Changed(rel, "its executable bit changed")
    if not recorded and hashlib.sha256(content).hexdigest() != want[3]:
        raise Changed(rel, "its content changed")


def discard(entry: str) -> bool:
    """Remove an entry and its record: renamed aside first (one step, so no reader sees
    half of it under its name), then deleted. False when it could not be moved."""
    aside = os.path.join(os.path.dirname(entry), f"tmp-discard-{os.urandom(4).hex()}")
    try:
        os.rename(entry, aside)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    else:
        shutil.rmtree(aside, ignore_errors=True)
    try:
        os.unlink(record_path(entry))
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def _walk(top: str) -> Iterable[Tuple[str, os.DirEntry]]:
    """(posix path relative to `top`, directory entry) of everything below `top` but
    directories, which are entered (never through a link). The type comes from the
    directory listing, so a file costs no status call here. Iterative: depth is no limit."""
    pending: List[Tuple[str, str]] = [(top, "")]
    while pending:
        directory, rel = pending.pop()
        with os.scandir(directory) as it:
            for item in it:
                sub = f"{rel}/{item.name}" if rel else item.name
                if item.is_dir(follow_symlinks=False):
                    pending.append((item.path, sub))
                else:
                    yield sub, item


def _read(path: str, size: Optional[int] = None) -> Tuple[bytes, bool]:
    """The bytes of the regular file at `path` and its executable bit (`fdio.read_regular`:
    no link followed, no blocking); at most one byte past `size` (the recorded size), so a
    file that grew shows as a different size, not a long read. Without `size`, the size its
    status gives (a checkout git has just written)."""
    try:
        content, st = read_regular(path, size)
    except NotRegular:
        raise OSError(0, "replaced while it was read (not a regular file)", path) from None
    return content, bool(st.st_mode & 0o100)


def _kind(item: os.DirEntry) -> str:
    try:
        mode = item.stat(follow_symlinks=False).st_mode
    except OSError:
        return "gone"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
