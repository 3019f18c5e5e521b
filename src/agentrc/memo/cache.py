"""A content-addressed memo of parsed item directories and rendered items.

Keys are digests of the inputs (an item directory's files, the client, the agentrc
version), so a stale entry can never be returned: an edit changes the key. The core only
sees a dict-like object; the CLI persists it between runs (outside the output tree, as
it is a pickle), and the Pants plugin relies on its own caching instead.

On disk (`<location>.memo/`) the memo is an index (each key's pack, offset and length)
and immutable pack files of pickled entries. A build loads the index alone and reads an
entry when it asks for it; renderings are kept as digests of their files, not their bytes
(`plan.digests_only`), so an unchanged item costs a small read, and a file that must be
written again is rendered again. A build appends its new entries as one new pack; the
packs are compacted into one when dead entries (or packs) pile up. Packs are written
before the index that names them and replaced atomically, so a killed build leaves at
worst a pack no index names (removed by the next save); an entry that cannot be read, or
whose bytes do not match the checksum the index keeps, is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import zlib
from pathlib import Path
from typing import Any, Dict, Hashable, Iterable, Optional, Set, Tuple

from agentrc import __version__
from agentrc.fingerprint import digest

Location = Tuple[str, int, int, int]  # pack file name, offset, length, crc32 of the entry
MAX_PACKS = 8  # more packs than this (many small builds) are compacted into one


class Store:
    """The memo's entries on disk: the index in memory, each entry read on demand."""

    def __init__(self, root: Path, index: Dict[Hashable, Location]):
        self.root = root
        self.index = index
        self.reads = 0  # entries read: what a build reached
        self.bytes_read = 0
        self._packs: Dict[str, int] = {}  # pack name -> descriptor

    def raw(self, key: Hashable) -> Optional[bytes]:
        where = self.index.get(key)
        if where is None:
            return None
        name, offset, length, crc = where
        try:
            fd = self._packs.get(name)
            if fd is None:
                fd = self._packs[name] = os.open(self.root / name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            data = os.pread(fd, length, offset)  # one system call an entry, no buffer copied
        except OSError:
            return None
        if len(data) != length or zlib.crc32(data) != crc:  # a pack cut short or damaged: a miss
            return None
        self.reads += 1
        self.bytes_read += length
        return data

    def read(self, key: Hashable) -> Any:
        data = self.raw(key)
        if data is None:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # a damaged pack is a miss
            return None

    def close(self) -> None:
        for fd in self._packs.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._packs.clear()


class Memo:
    def __init__(self, data: Optional[Dict[Hashable, Any]] = None, store: Optional[Store] = None):
        self.data: Dict[Hashable, Any] = data or {}  # entries computed (or handed in) by this process
        self.store = store  # entries of earlier builds, on disk
        self.used: Set[Hashable] = set()
        self.hits = 0
        self.misses = 0

    @property
    def empty(self) -> bool:
        return not self.data and (self.store is None or not self.store.index)

    def get(self, key: Hashable) -> Any:
        value = self.data.get(key)
        if value is None and self.store is not None:
            value = self.store.read(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
            self.used.add(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        self.data[key] = value
        self.used.add(key)

    def live(self) -> Dict[Hashable, Any]:
        """Entries used by this run: what the next run can reuse (old ones are dropped)."""
        return {k: self.get(k) for k in self.used}


def location(out: str, sources: Iterable[str]) -> Path:
    base = os.environ.get("AGENTRC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "agentrc")
    key = digest([os.path.abspath(out).encode()] + sorted(os.path.abspath(s).encode() for s in sources))
    return Path(base) / f"build-{key[:24]}.pickle"


def _dir(path: Path) -> Path:
    return path.with_suffix(".memo")


def load(path: Path) -> Memo:
    """The memo's index; entries are read when a build asks for them."""
    root = _dir(path)
    try:
        with open(root / "index", "rb") as f:
            version, index = pickle.load(f)
        if version == __version__ and isinstance(index, dict):
            return Memo(store=Store(root, index))
    except Exception:  # a missing, corrupt or foreign memo is simply a cold start
        pass
    return Memo()


def save(path: Path, memo: Memo) -> None:
    """This build's new entries go to a new pack and the index names every entry it used;
    the packs are rewritten as one when a quarter of what they hold is dead, or when there
    are more than MAX_PACKS of them."""
    store = memo.store
    old = store.index if store is not None else {}
    new = {k: memo.data[k] for k in memo.used if k in memo.data and k not in old}
    kept = {k: old[k] for k in memo.used if k in old and k not in new}
    dead = len(old) - len(kept)
    root = _dir(path)
    if not new and not dead and (root / "index").exists():
        return  # nothing new and nothing to forget: the files on disk are already this memo
    used = max(len(memo.used), 1)
    packs = {loc[0] for loc in kept.values()}
    try:
        root.mkdir(parents=True, exist_ok=True)
        if dead * 4 > used or len(packs) >= MAX_PACKS:  # compact: everything used, in one pack
            entries = {k: store.raw(k) for k in kept} if store is not None else {}
            entries.update((k, _dumps(k, v)) for k, v in new.items())
            index = _write_pack(root, {k: v for k, v in entries.items() if v is not None})
        else:
            index = dict(kept)
            if new:
                index.update(_write_pack(root, {k: _dumps(k, v) for k, v in new.items()}))
        tmp = root / f"index.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump((__version__, index), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, root / "index")
        if store is not None:
            store.close()
        referenced = {loc[0] for loc in index.values()}
        for name in os.listdir(root):  # packs no index names, and what a killed save left
            if name != "index" and name not in referenced:
                try:
                    (root / name).unlink()
                except OSError:
                    pass
        for legacy in (path, path.with_suffix(".delta")):  # the single-pickle memo of earlier versions
            if legacy.exists():
                legacy.unlink()
    except OSError:  # the cache is an optimisation; failing to save it is not an error
        pass


def _dumps(key: Hashable, value: Any) -> bytes:
    if isinstance(key, tuple) and key and key[0] == "render":
        from agentrc.output.plan import digests_only  # saving follows a plan: already imported

        value = digests_only(value)
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _write_pack(root: Path, entries: Dict[Hashable, bytes]) -> Dict[Hashable, Location]:
    """One immutable pack holding `entries`, named by its content; their locations in it."""
    index: Dict[Hashable, Location] = {}
    h = hashlib.sha256()
    offset = 0
    for key, data in entries.items():
        h.update(data)
        index[key] = ("", offset, len(data), zlib.crc32(data))
        offset += len(data)
    name = h.hexdigest()[:32] + ".pack"
    if not (root / name).exists():
        tmp = root / f"{name}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            for data in entries.values():
                f.write(data)
        os.replace(tmp, root / name)
    return {k: (name, o, n, c) for k, (_, o, n, c) in index.items()}


def load_stamp(memo_path: Path) -> Optional[dict]:
    """The record of the last successful build into the same output.

    A pickle, like the memo beside it (both live in the user's cache, outside any output):
    a no-change build at 5,000 items spent more time decoding this record as JSON than on
    anything else but the statuses it compares."""
    try:
        with open(memo_path.with_suffix(".stamp"), "rb") as fh:
            stamp = pickle.load(fh)
    except Exception:  # missing, damaged or foreign: no stamp, the build reads its sources
        return None
    return stamp if isinstance(stamp, dict) else None


def save_stamp(memo_path: Path, stamp: dict) -> None:
    try:
        memo_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo_path.with_suffix(".stamp.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(stamp, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, memo_path.with_suffix(".stamp"))
        legacy = memo_path.with_suffix(".stamp.json")  # the JSON record of earlier versions
        if legacy.exists():
            legacy.unlink()
    except OSError:
        pass
