"""The source stamp: what a build with nothing to do reads.

A successful build records, per source file, its status (size, mtime and ctime in ns, inode,
device, mode) and the sha256 of the bytes it read. The next build walks the same paths with
the same rules and trusts a record only when every field still matches and the file's mtime and
ctime are older than the record's walk start by more than `inputs.tree.RACY_NS`: a file changed
within the timestamp granularity of the recording (the "racy" case) could have kept its times,
so it is read again. Everything else that is not plain (a symlink, a file of another type, one
too large, a directory that cannot be listed) gives no answer, and the build reads every file.

Here: the record, the files and tree it vouches for (read only when asked), and the digests;
`inputs.tree` walks the disk against a record (`stamped_digest`) and re-exports these names.
"""

from __future__ import annotations

import hashlib
import os

from agentrc.classcode import dataclass
from agentrc.model import SourceFile, SourceTree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Tuple


def status(st: os.stat_result) -> List[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode]


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
    files = {}
    for f in tree.files:
        st = seen.get(f.path)
        if st is None or f.link is not None:
            return None
        files[f.path] = status(st) + [shas[f.path]]
    return {"at": at_ns, "files": files, "dirs": dirs, "digest": digest or tree_digest(shas)}


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


def stamped_tree_digest(record: dict, known: dict, files: Dict[str, list], vouched: Dict[str, tuple],
                        shas: Dict[str, bytes]) -> Optional[str]:
    """The digest of the tree `stamped_digest` found: the record's when it vouched for every
    file it holds and there are no others; else that of every file's sha256 (`shas` holds
    those read; `vouched`: the others, their recorded sha256 in hex last), None when a
    recorded one is not hex."""
    digest = record.get("digest")
    if not shas and len(files) == len(known) and type(digest) is str and len(digest) == 64:
        return digest
    try:
        shas.update((display, bytes.fromhex(v[-1])) for display, v in vouched.items())
    except ValueError:  # a recorded digest that is not hex
        return None
    return _digest_of(shas)


def recorded_sha(recorded: str, display: str) -> bytes:
    """A vouched-for file's recorded sha256 as bytes; SourcesChanged (the build reads every
    source again) when it is not hex: the record vouched for the tree's digest alone."""
    try:
        return bytes.fromhex(recorded)
    except ValueError:
        raise SourcesChanged(display) from None
