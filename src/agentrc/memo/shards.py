"""The memo's index kept a second time, in shards, for a build that asks for a few entries.

A replayed edit (agentrc.building.incremental) reads about four entries of the memo, and
loading the whole index for them was the largest part of what only an edit does: at 5,000
items 20,000 keys unpickled, 12 ms of a 230 ms build. So each save that writes the index
also writes it split in `SHARDS` files by a digest of each key (`shard_of`), in a directory
of its own (`shards-<random>`), and then names that directory in `POINTER`; a replay reads
the pointer and, for each key it asks for, that key's shard alone (`Shards`).

The shards are a copy, never the only record: a full build reads `index` as before. A
pointer or a shard that cannot be read, or is of another version, is no shard (the key
is looked for in the index after all, or is a miss). A pointer left naming an older
directory (a save killed between writing the index and the pointer) names entries that
were true when written: the memo's keys are digests of their inputs, and each location
holds the crc32 of the bytes it names, so a stale location reads the right entry or
nothing (a pack since removed). Directories the pointer does not name are removed with
the packs no index names.
"""

from __future__ import annotations

import os
import pickle
import zlib
from pathlib import Path
from typing import Dict, Hashable, Optional

from agentrc import __version__
from agentrc.fdio import open_regular

SHARDS = 64
POINTER = "shards"  # the file naming the shards' directory, beside `index`
PREFIX = "shards-"  # the shards' directories: this and 16 random hex digits

Location = tuple


def shard_of(key: Hashable) -> int:
    """The shard holding `key`: a crc32 of its repr (keys are tuples of strings, whose repr
    is the same in every process, where `hash` is not)."""
    return zlib.crc32(repr(key).encode("utf-8", "surrogatepass")) % SHARDS


def write(root: Path, index: Dict[Hashable, Location]) -> None:
    """`index` in shards, in a new directory of `root`, then named by the pointer (replaced
    atomically). Nothing on a file system error: the shards are an optimisation."""
    buckets: list = [{} for _ in range(SHARDS)]
    for key, where in index.items():
        buckets[shard_of(key)][key] = where
    name = PREFIX + os.urandom(8).hex()
    try:
        (root / name).mkdir()
        for i, bucket in enumerate(buckets):
            with open(root / name / f"{i:02x}", "wb") as f:
                pickle.dump((__version__, bucket), f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp = root / f"{POINTER}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump((__version__, name), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, root / POINTER)
    except OSError:
        _remove(root / name)


def current(root: Path) -> Optional[str]:
    """The shards' directory the pointer names, or None (no pointer, another version's, damaged)."""
    try:
        with open_regular(str(root / POINTER)) as f:
            version, name = pickle.load(f)
    except Exception:  # missing, damaged or foreign: no shards
        return None
    if version != __version__ or not isinstance(name, str) or not name.startswith(PREFIX) \
            or len(name) != len(PREFIX) + 16 or not all(c in "0123456789abcdef" for c in name[len(PREFIX):]):
        return None
    return name


def remove_others(root: Path, keep: Optional[str]) -> None:
    """Every shards' directory of `root` but `keep`'s (None: the pointer's)."""
    if keep is None:
        keep = current(root)
    for name in os.listdir(root):
        if name.startswith(PREFIX) and name != keep and len(name) == len(PREFIX) + 16:
            _remove(root / name)


def _remove(directory: Path) -> None:
    """A shards' directory and what it holds (imported here: a build that only reads shards
    never imports `shutil`)."""
    import shutil

    shutil.rmtree(directory, ignore_errors=True)


class Shards:
    """The index, read a shard at a time as keys are asked for."""

    def __init__(self, root: Path, name: str):
        self.directory = root / name
        self.read: Dict[int, Dict[Hashable, Location]] = {}

    def get(self, key: Hashable) -> Optional[Location]:
        i = shard_of(key)
        bucket = self.read.get(i)
        if bucket is None:
            bucket = self.read[i] = _bucket(self.directory / f"{i:02x}")
        where = bucket.get(key)
        return where if type(where) is tuple and len(where) == 4 else None


def _bucket(path: Path) -> Dict[Hashable, Location]:
    try:
        with open_regular(str(path)) as f:
            version, bucket = pickle.load(f)
    except Exception:  # missing (removed by a later save), damaged or foreign: misses
        return {}
    return bucket if version == __version__ and isinstance(bucket, dict) else {}
