"""The memo's packs: the immutable files of pickled entries `memo.cache` keeps on disk,
read entry by entry (`Store`, through the index), and the one a build writes its new
entries to as they are made (`Spool`). Each entry is checked against the crc32 the index
keeps; one that cannot be read, or does not match, is a miss, never an error.

`memo.cache` (the memo, its index and its saving) re-exports these names.
"""

from __future__ import annotations

import os
import weakref
import zlib

from agentrc import pickling
from agentrc.fdio import READ_FLAGS, write_all

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Hashable, Iterable, Optional, Tuple
    Location = Tuple[str, int, int, int]  # pack file name, offset, length, crc32 of the entry


class Store:
    """The memo's entries on disk: the index in memory, each entry read on demand."""

    def __init__(self, root: str, index: Dict[Hashable, Location]):
        self.root = root
        self.index = index
        self.reads = 0  # entries read: what a build reached
        self.bytes_read = 0
        self.added: Dict[Hashable, Location] = {}  # the entries `index` holds from index additions
        self._packs: Dict[str, int] = {}  # pack name -> descriptor
        # Closed with the store at the latest: a process that builds again and again (--watch,
        # a host program) must not keep a descriptor per build (issue 36's suite found one).
        weakref.finalize(self, _close_all, self._packs)

    def raw(self, key: Hashable) -> Optional[bytes]:
        where = self.index.get(key)
        if where is None:
            return None
        name, offset, length, crc = where
        try:
            fd = self._packs.get(name)
            if fd is None:
                # A FIFO in a pack's place: pread fails, a miss.
                fd = self._packs[name] = os.open(os.path.join(self.root, name), READ_FLAGS)
            data = os.pread(fd, length, offset)  # one system call an entry, no buffer copied
        except OSError:
            return None
        if len(data) != length or zlib.crc32(data) != crc:  # a pack cut short or damaged: a miss
            return None
        self.reads += 1
        self.bytes_read += length
        return data

    def read(self, key: Hashable) -> Any:
        return _loads(self.raw(key))

    def close(self) -> None:
        """The packs' descriptors closed (an entry read after this opens its pack again)."""
        _close_all(self._packs)


def _close_all(packs: Dict[str, int]) -> None:
    for fd in packs.values():
        try:
            os.close(fd)
        except OSError:
            pass
    packs.clear()


class Spool:
    """The pack a build's new entries are written to as they are made, given a name of its
    own once the memo is saved (`finish`: 128 random bits, not a digest of the pack, whose
    37 MB at 5,000 items were hashed for nothing but a name), deleted if it never is.

    An entry is pickled when it is put and its bytes go to a buffer flushed to the file a
    megabyte at a time; the entry is read back (by a second plan of the same build, after
    a source changed under it) from the buffer or the file. So the memo holds offsets, not
    values: at 5,000 items a build kept every parsed item and rendering until its save,
    then a pickled copy of all of them (36 MB) beside those."""

    FLUSH = 1 << 20

    def __init__(self, root: str):
        self.root = root
        self.index: Dict[Hashable, Tuple[int, int, int]] = {}  # key -> offset, length, crc32
        self.size = 0  # bytes put so far, flushed or not
        self._buffer = bytearray()
        self._flushed = 0
        self._fd: Optional[int] = None
        self._tmp: Optional[str] = None
        self._cleanup: Optional[weakref.finalize] = None
        self.failed = False

    def add(self, key: Hashable, data: bytes) -> None:
        if self.failed:
            return
        self.index[key] = (self.size, len(data), zlib.crc32(data))
        self._buffer += data
        self.size += len(data)
        if len(self._buffer) >= self.FLUSH:
            try:
                self._flush()
            except OSError:
                self._fail()

    def _fail(self) -> None:
        """The cache cannot be written (a full disk, a read-only directory): as when a save
        fails, the build goes on, and the next one computes this one's entries again."""
        self.discard()
        self.failed = True
        self.index = {}
        self._buffer = bytearray()

    def raw(self, key: Hashable) -> Optional[bytes]:
        where = self.index.get(key)
        if where is None:
            return None
        offset, length, crc = where
        if offset >= self._flushed:
            data = bytes(self._buffer[offset - self._flushed:offset - self._flushed + length])
        else:
            if self._fd is None:  # finished or discarded: the entry is in a pack now, or gone
                return None
            try:
                data = os.pread(self._fd, length, offset)
            except OSError:
                return None
        return data if len(data) == length and zlib.crc32(data) == crc else None

    def _flush(self) -> None:
        """The buffer to the file; the file is made on the first flush."""
        if not self._buffer:
            return
        if self._fd is None:
            os.makedirs(self.root, exist_ok=True)
            self._tmp = os.path.join(self.root, f"spool.{os.getpid()}.{id(self)}.tmp")
            self._fd = os.open(self._tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
            # Deleted with the memo or at exit, unless `finish` names it: a build that fails
            # saves nothing, and leaves nothing.
            self._cleanup = weakref.finalize(self, _discard, self._fd, self._tmp)
        write_all(self._fd, self._buffer)
        self._flushed += len(self._buffer)
        self._buffer = bytearray()

    def finish(self) -> str:
        """The pack's name, once its file is complete under that name in `root`."""
        self._flush()
        name = os.urandom(16).hex() + ".pack"
        if self._fd is not None and self._tmp is not None and self._cleanup is not None:
            self._cleanup.detach()
            fd, self._fd = self._fd, None
            os.close(fd)
            os.replace(self._tmp, os.path.join(self.root, name))  # a failure: `discard` removes the file
            self._tmp = None
        return name

    def disown(self) -> None:
        """Another process (`save_aside`'s child) finishes the file: this one closes its
        descriptor and neither names nor removes it."""
        if self._cleanup is not None:
            self._cleanup.detach()
            self._cleanup = None
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = self._tmp = None
        self.failed = True  # nothing more is added here
        self.index = {}
        self._buffer = bytearray()

    def discard(self) -> None:
        """The file gone (a memo not saved, or a save that failed), closed once."""
        if self._cleanup is not None and self._cleanup.alive:
            self._cleanup()  # closes the descriptor and removes the file
        elif self._fd is not None or self._tmp is not None:
            _discard(self._fd, self._tmp)
        self._fd = self._tmp = None


def _discard(fd: Optional[int], tmp: Optional[str]) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
    if tmp is not None:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _copy(raw: Callable[[Hashable], Optional[bytes]], keys: Iterable[Hashable], target: Spool) -> None:
    """Entries, as their pickled bytes, from a pack (or another spool) into `target`, one at
    a time; one that cannot be read is left out (a miss next time)."""
    for key in keys:
        data = raw(key)
        if data is not None:
            target.add(key, data)


def _loads(data: Optional[bytes]) -> Any:
    if data is None:
        return None
    try:
        return pickling.loads(data)
    except Exception:  # a damaged pack is a miss
        return None
