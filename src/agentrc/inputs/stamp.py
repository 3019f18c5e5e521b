"""The source stamp: what a build with nothing to do reads.

A successful build records, per source file, its status (size, mtime and ctime in ns, inode,
device, mode) and the sha256 of the bytes it read. The next build walks the same paths with
the same rules and trusts a record only when every field still matches and the file's mtime and
ctime are older than the record's walk start by more than `inputs.tree.RACY_NS`: a file changed
within the timestamp granularity of the recording (the "racy" case) could have kept its times,
so it is read again. Everything else that is not plain (a symlink, a file of another type, one
too large, a directory that cannot be listed) gives no answer, and the build reads every file.

The record keeps its files in three columns, not a mapping of path to fields: the paths
joined by NUL, the statuses packed (`STATUS`, 48 bytes each), the sha256 digests as bytes
(32 each), in the walk's order (`RecordedFiles` reads them). A dict of 7,600 lists of seven
values (5,000 items) took 4.8 ms to read back and more to write, every build; three strings
take a tenth of a millisecond, a build whose every file still stands keeps the old ones as
they are, and two records compare as three strings do. A status outside what a signed
64-bit number holds (an inode number of some network file systems) keeps no record: the
next build reads every file.

Here: the record, the files and tree it vouches for (read only when asked), and the digests;
`inputs.tree` walks the disk against a record (`stamped_digest`) and re-exports these names.
"""

from __future__ import annotations

import hashlib
import os
import struct
from array import array

from agentrc.classcode import dataclass
from agentrc.model import SourceFile, SourceTree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Tuple


STATUS = struct.Struct("=6q")  # a file's size, mtime and ctime (ns), inode, device and mode, packed
_MODE = 5  # the mode's place among them


def status(st: os.stat_result) -> bytes:
    """`st` as a record keeps it (`STATUS`); struct.error when a value does not fit."""
    return STATUS.pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode)


class RecordedFiles:
    """The files a sources record keeps, read back (`recorded_files`): `paths` in the record's
    order, `statuses` and `shas` as kept (`STATUS.size` and 32 bytes a file), `joined` the
    paths as kept. Where a path is (`find`) is looked up by a mapping made at the first ask."""

    __slots__ = ("joined", "paths", "statuses", "shas", "_index")

    def __init__(self, joined: str, paths: List[str], statuses: bytes, shas: bytes):
        self.joined, self.paths, self.statuses, self.shas = joined, paths, statuses, shas
        self._index: Optional[Dict[str, int]] = None

    def find(self, path: str) -> Optional[int]:
        return self.index().get(path)

    def index(self) -> Dict[str, int]:
        """Each path's place (the last, for a path kept twice), made at the first ask."""
        if self._index is None:
            self._index = {p: i for i, p in enumerate(self.paths)}
        return self._index

    def sha(self, i: int) -> bytes:
        return self.shas[32 * i:32 * i + 32]

    def mode(self, i: int) -> int:
        return STATUS.unpack_from(self.statuses, STATUS.size * i)[_MODE]

    def modes(self) -> "array[int]":
        """Every file's mode, in order."""
        numbers = array("q")
        numbers.frombytes(self.statuses)
        return numbers[_MODE::6]


def recorded_files(record: object) -> Optional[RecordedFiles]:
    """The files of a sources record (`signature`, `stamped_digest`'s); None when `record`
    is not one, or its columns do not agree."""
    if not isinstance(record, dict):
        return None
    joined, statuses, shas = record.get("paths"), record.get("statuses"), record.get("shas")
    if type(joined) is not str or type(statuses) is not bytes or type(shas) is not bytes:
        return None
    paths = joined.split("\0") if joined else []
    if len(statuses) != STATUS.size * len(paths) or len(shas) != 32 * len(paths):
        return None
    return RecordedFiles(joined, paths, statuses, shas)


def record(at_ns: int, statuses: Dict[str, bytes], shas: Dict[str, bytes], dirs: object, digest: str) -> dict:
    """A sources record of the files `statuses` and `shas` hold (by display path, in the same
    order), walked from `at_ns` (ns)."""
    return {"at": at_ns, "paths": "\0".join(statuses), "statuses": b"".join(statuses.values()),
            "shas": b"".join(shas.values()), "dirs": dirs, "digest": digest}


def digests(tree: SourceTree) -> Dict[str, str]:
    """Each file's sha256 (hex), by display path."""
    return {f.path: hashlib.sha256(f.content).hexdigest() for f in tree.files}


def tree_digest(shas: Dict[str, str]) -> str:
    """`SourceTree.digest()` of the files whose sha256 (hex) by path `shas` holds."""
    h = hashlib.sha256()
    for path in sorted(shas):
        h.update(path.encode() + b"\0" + bytes.fromhex(shas[path]))
    return h.hexdigest()


def signature(tree: SourceTree, shas: Dict[str, str], seen: Dict[str, os.stat_result], at_ns: int,
              dirs: object = None, digest: Optional[str] = None) -> Optional[dict]:
    """The record of `tree` as read (statuses from `read_tree`'s `seen`, taken before the
    reading started at `at_ns`), or None when a file was not a plain one (then none is kept).
    `dirs`: the walk's listings (agentrc.inputs.listings), kept with it; `digest`: the
    tree's (`tree_digest(shas)`), which a later build whose every file the record vouches
    for takes as it is."""
    statuses: Dict[str, bytes] = {}
    sums: Dict[str, bytes] = {}
    for f in tree.files:
        st = seen.get(f.path)
        if st is None or f.link is not None:
            return None
        try:
            statuses[f.path] = status(st)
        except struct.error:  # a number a record cannot keep
            return None
        sums[f.path] = bytes.fromhex(shas[f.path])
    return record(at_ns, statuses, sums, dirs, digest or tree_digest(shas))


class SourcesChanged(Exception):
    """A source the stamp vouched for could not be read as recorded (it changed during the
    build): the build starts again, reading everything."""


class DeferredFile(SourceFile):
    """A source the stamp vouches for: its path, mode and sha256 are known, its bytes are
    read (by `read_file`, inside its root) only when something asks for `content`. Pickled,
    it is an ordinary `SourceFile`."""

    def __init__(self, path: str, executable: bool, digest: bytes, load: Callable[[], bytes]):
        # One update of the instance's dict (the class is a frozen dataclass): one of these
        # is made per source of every build that has a stamp, the no-change one included.
        self.__dict__.update(path=path, executable=executable, link=None, _digest=digest, _load=load)

    def __getattr__(self, name: str):  # only for attributes not set: `content` before its first use
        if name != "content":
            raise AttributeError(name)
        content = self._load()
        if hashlib.sha256(content).digest() != self._digest:
            raise SourcesChanged(self.path)
        object.__setattr__(self, "content", content)
        return content

    def sha256(self) -> bytes:
        return self._digest

    def __reduce__(self):
        return (SourceFile, (self.path, self.content, self.executable, None))


class DeferredTree(SourceTree):
    """The tree `stamped_digest` found, its files made (each a `DeferredFile` or a file it
    read) and sorted only when something asks for `files`: a build with nothing to do needs
    the digest alone, and building 5,000 deferred files it never looks at was a sixth of its
    time in the source stamp. Pickled, it is an ordinary `SourceTree`."""

    def __init__(self, make: Callable[[], Tuple[SourceFile, ...]],
                 pick: Optional[Callable[[str], Optional[SourceFile]]] = None):
        self.__dict__["_make"] = make
        self.__dict__["_pick"] = pick

    def file(self, path: str) -> Optional[SourceFile]:
        """The file at `path` (None: not in the tree), without making the others: a replayed
        edit parses one directory of 15,000 files."""
        pick = self.__dict__.get("_pick")
        if pick is not None and "files" not in self.__dict__:
            return pick(path)
        return next((f for f in self.files if f.path == path), None)

    def __getattr__(self, name: str):  # only for attributes not set: `files` before its first use
        if name != "files":
            raise AttributeError(name)
        files = self._make()
        object.__setattr__(self, "files", files)
        return files

    def __reduce__(self):
        return (SourceTree, (self.files,))


@dataclass(frozen=True)
class Stamped:
    """What `stamped_digest` found: the digest `read_tree(paths).tree.digest()` would give,
    the files named directly, the new record, and the tree itself with the files the record
    vouched for unread (`DeferredFile`)."""

    digest: str
    explicit: Tuple[str, ...]
    record: dict
    tree: SourceTree
    read: int  # files whose bytes were read
    listed: int = 0  # directories listed and recorded again (agentrc.inputs.listings)


def _digest_of(shas: Dict[str, bytes]) -> str:
    """`tree_digest` of sha256 digests already in bytes."""
    h = hashlib.sha256()
    for path in sorted(shas):
        h.update(path.encode() + b"\0" + shas[path])
    return h.hexdigest()


def stamped_tree_digest(record: dict, recorded: int, sums: Dict[str, bytes], read: int) -> str:
    """The digest of the tree `stamped_digest` found (`sums`: each file's sha256, by display
    path): the record's when it vouched for every file it holds (`recorded` of them), none
    was `read` and there are no others; else that of every file's."""
    digest = record.get("digest")
    if not read and len(sums) == recorded and is_digest(digest):
        return str(digest)
    return _digest_of(sums)


def is_digest(value: object) -> bool:
    """Whether `value` is a sha256 as a record keeps it: 64 hex digits (a record is the user's
    cache's: one naming anything else vouches for nothing)."""
    if type(value) is not str or len(value) != 64 or not value.isascii():
        return False
    try:
        bytes.fromhex(value)
    except ValueError:
        return False
    return True
