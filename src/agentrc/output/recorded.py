"""The manifest as the last build left it, kept in memory so a rebuild need not read it again.

A build that changes nothing should cost a stat per file: `recorded_statuses` hands the
incremental build what the writer recorded, `untouched` says whether the output is still
exactly that, and `_patch`/`_replay_manifest` derive the next manifest's bytes from the last
ones when only a few entries changed.
"""

from __future__ import annotations

import os
import stat
from array import array
from json.encoder import encode_basestring_ascii as _encode_str

from agentrc.fdio import read_regular
from agentrc.files import STATE_DIR, OutputFile
from agentrc.output.manifest import _ENCODE, _load_json, _Manifest, _stat
from agentrc.output.tree import MANIFEST, MAX_MANIFEST, TXN, sha

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

    from agentrc.fdio import StrPath
    from agentrc.output.directory import _Directory


def _as_recorded(st: os.stat_result, recorded: Any, f: OutputFile, owned: Dict[str, str]) -> bool:
    """`f` needs neither reading nor writing: the output has the status (size, mtime, mode)
    recorded after agentrc last wrote it, the executable bit `f` wants, and the recorded
    sha256 is the one `f` would write."""
    return (recorded is not None and _stat(st) == recorded and bool(st.st_mode & stat.S_IXUSR) == f.executable
            and owned.get(f.path) == f.sha256())


# What the last build's manifest holds, kept with its digest outside the output (the build's
# stamp): the paths of its files then of its merged files, joined by NUL; their size,
# mtime_ns and mode in a row, packed as signed 64-bit numbers (`_numbers`: a tuple of 45,000
# numbers at 5,000 items took 4 ms to read back, every build); the files' sha256 in a row
# (32 bytes each); how many files; the merged files' records; the directories agentrc created.
if TYPE_CHECKING:
    Recorded = Tuple[str, bytes, bytes, int, Dict[str, dict], Tuple[str, ...]]


def recorded_statuses(out: _Directory, digest: str) -> Optional[Recorded]:
    """The manifest the last `apply` of `out` wrote, if the manifest on disk is that one
    (`digest`, its sha256): kept beside the digest, it spares the next no-change build
    (`untouched`) and the next edit (`Output.expect`) decoding and checking the manifest."""
    planned = out.planned_manifest
    if planned is None or planned[0] != digest:
        return None  # not written as planned (a file that appeared while writing): decoded next time
    manifest = planned[1]
    stats, files, merged = manifest.get("stat", {}), manifest.get("files", {}), manifest.get("merged", {})
    paths = list(files) + list(merged)
    records = [stats.get(path) for path in paths]
    if not all([record is not None and len(record) == 3 for record in records]):
        return None
    try:
        numbers = array("q", [n for record in records for n in record]).tobytes()
    except (OverflowError, TypeError):  # not numbers a record keeps: decoded next time
        return None
    return ("\0".join(paths), numbers, bytes.fromhex("".join(files.values())), len(files), dict(merged),
            tuple(manifest.get("dirs", ())))


def replayed_statuses(out: _Directory) -> Optional[Tuple[str, Recorded]]:
    """The manifest digest and `recorded_statuses` after `Output.replay` (None before it)."""
    return out.replayed


def _updated(recorded: Recorded, files: Mapping[str, Tuple[str, list]], paths: Sequence[str]) -> Recorded:
    """`recorded` with the sha256 and status of each of `files` (path -> (sha256, status),
    paths it already records as files written whole) replaced. `paths`: the record's paths
    as `_replay_manifest` split them (15,000 at 5,000 items), not split again."""
    joined, numbers, digests, count, merged, dirs = recorded
    at = {p: paths.index(p, 0, count) for p in files}  # a few paths, each found in C
    nums, shas = _numbers(numbers), bytearray(digests)
    for path, (digest, status) in files.items():
        i = at[path]
        nums[3 * i:3 * i + 3] = array("q", status)
        shas[32 * i:32 * i + 32] = bytes.fromhex(digest)
    return joined, nums.tobytes(), bytes(shas), count, merged, dirs


def _numbers(packed: bytes) -> "array[int]":
    """A record's statuses as numbers (`Recorded`)."""
    numbers = array("q")
    numbers.frombytes(packed)
    return numbers


def _patch(data: bytes, edits: Sequence[Tuple[str, str, str]]) -> Optional[bytes]:
    """The manifest `data` (as `_manifest_bytes` lays it out: one entry a line) with the
    value of each (section, path, value as JSON) of `edits` replaced; None when an entry is
    not there. One copy of the bytes, however many entries change."""
    sections: Dict[str, Tuple[int, int]] = {}
    spans: List[Tuple[int, int, bytes]] = []
    for section, path, value in edits:
        where = sections.get(section)
        if where is None:
            head = f"\n {_ENCODE(section)}: {{\n".encode()
            start = data.find(head)
            if start < 0:
                return None
            where = sections[section] = (start + len(head) - 1, data.find(b"\n }", start + len(head) - 1))
        key = f"\n  {_encode_str(path)}: ".encode()
        at = data.find(key, where[0], where[1])
        if at < 0:
            return None
        begin = at + len(key)
        stop = data.find(b"\n", begin)
        comma = b"," if data[stop - 1:stop] == b"," else b""
        spans.append((begin, stop, value.encode() + comma))
    spans.sort()
    out: List[bytes] = []
    last = 0
    for begin, stop, new in spans:
        if begin < last:
            return None  # one entry twice
        out += [data[last:begin], new]
        last = stop
    out.append(data[last:])
    return b"".join(out)


def _well_formed(recorded: Any) -> bool:
    if not (isinstance(recorded, tuple) and len(recorded) == 6 and isinstance(recorded[0], str)
            and isinstance(recorded[1], bytes) and isinstance(recorded[2], bytes) and type(recorded[3]) is int
            and isinstance(recorded[4], dict) and isinstance(recorded[5], tuple)):
        return False
    count = recorded[0].count("\0") + 1 if recorded[0] else 0
    return len(recorded[1]) == 24 * count and len(recorded[2]) == 32 * recorded[3] and recorded[3] <= count


def _recent_dirs(base: str, paths: Iterable[str], since: Optional[int]) -> Optional[List[str]]:
    """One pass over `paths` (outputs, relative to `base`) that lstats each of their
    directories once, up to the root (excluded): None when one is missing or not a
    directory (a link: `_as_left`), else the directories holding outputs that `_sweep` lists,
    those whose mtime is not older than `since` (all when it is None), the root excluded
    (`replay` always lists it). It replaces three passes of 27,000 directories at 10,000
    items: one for the directories, one to lstat them, one to pick the sweep's."""
    lstat, isdir = os.lstat, stat.S_ISDIR
    mtimes: Dict[str, int] = {"": 0}  # each directory looked at, with its mtime
    parents: Set[str] = {""}
    recent: List[str] = []
    for p in paths:
        d = p.rpartition("/")[0]
        if d in parents:
            continue
        parents.add(d)
        a = d
        while a not in mtimes:  # a directory looked at has had all its ancestors looked at
            try:
                st = lstat(base + a)
            except (OSError, ValueError):
                return None
            if not isdir(st.st_mode):
                return None
            mtimes[a] = st.st_mtime_ns
            a = a.rpartition("/")[0]
        if since is None or mtimes[d] >= since:
            recent.append(d)
    return recent


def _replay_manifest(recorded: Recorded, wanted: Set[str]) -> Tuple[_Manifest, List[str]]:
    """What `replay` reads of the recorded manifest: the entries of the `wanted` paths (those
    it writes) and the merged files, and every path (for their directories). Decoding every
    entry, as `_recorded_manifest` does, was a tenth of a replayed write at 5,000 items."""
    joined, packed, digests, files, merged, dirs = recorded
    numbers = _numbers(packed)
    paths = joined.split("\0") if joined else []
    at = _places(paths, wanted) if len(wanted) < len(paths) else range(len(paths))
    stats = {paths[i]: numbers[3 * i:3 * i + 3].tolist() for i in at}
    owned = {paths[i]: digests[32 * i:32 * i + 32].hex() for i in at if i < files}
    return _Manifest(owned, stats, dict(merged), dirs), paths


def _places(paths: List[str], wanted: Set[str]) -> List[int]:
    """Where each of `wanted` is in `paths` (those it holds): a few searches in C, not a set
    lookup of each of 15,000 paths (5,000 items) in Python."""
    places: List[int] = []
    for p in wanted:
        try:
            places.append(paths.index(p))
        except ValueError:
            continue
    return places


def _recorded_manifest(recorded: Recorded) -> _Manifest:
    joined, packed, digests, files, merged, dirs = recorded
    numbers = _numbers(packed)
    paths = joined.split("\0") if joined else []
    stats = {p: numbers[3 * i:3 * i + 3].tolist() for i, p in enumerate(paths)}
    owned = {p: digests[32 * i:32 * i + 32].hex() for i, p in enumerate(paths[:files])}
    return _Manifest(owned, stats, dict(merged), dirs)


def untouched(root: StrPath, digest: str, recorded: Any = None) -> bool:
    """Whether the manifest is the one recorded, no write is pending, and every owned file
    still has the size, mtime and mode recorded when it was written: then nobody changed the
    output tree (and nothing is read or written). `recorded` (from `recorded_statuses`,
    kept with `digest`) holds the statuses the manifest holds; without it it is decoded."""
    return untouched_manifest(root, digest, recorded) is not None


def untouched_manifest(root: StrPath, digest: str, recorded: Any = None) -> Optional[bytes]:
    """`untouched`, with the manifest's bytes it read (None: touched). A replayed edit hands
    them to the writer (`Output.expect`), which compares the manifest it reads under the
    lock with them instead of hashing it again (3.6 MB at 5,000 items)."""
    if not digest or os.path.lexists(os.path.join(str(root), TXN)):
        return None
    try:
        raw = _manifest_bytes(str(root))
        if raw is None or sha(raw) != digest:
            return None
        if _well_formed(recorded):
            paths = recorded[0].split("\0") if recorded[0] else []
            same = _same_statuses(str(root) + os.sep, paths, _numbers(recorded[1]))
            return raw if same else None
        # The manifest this build recorded after writing it (its digest is in the stamp), so
        # the checks of `_parse_manifest` passed when it was written; only looked at here.
        data = _load_json(raw, "the manifest")
    except (OSError, ValueError):
        return None
    files, merged, stats = data.get("files"), data.get("merged", {}), data.get("stat")
    if not (isinstance(files, dict) and isinstance(merged, dict) and isinstance(stats, dict)):
        return None
    return raw if _same_as_listed(str(root) + os.sep, (*files, *merged), stats) else None


def _manifest_bytes(root: str) -> Optional[bytes]:
    """The manifest's bytes; None when `.agentrc` is a link (the full build's to refuse,
    AR140: nothing is read through it). Never blocks on a FIFO planted there (OSError)."""
    if stat.S_ISLNK(os.lstat(os.path.join(root, STATE_DIR)).st_mode):
        return None
    return read_regular(os.path.join(root, MANIFEST), MAX_MANIFEST)[0]


def _same_as_listed(base: str, paths: Iterable[str], stats: Dict[str, Any]) -> bool:
    """`_same_statuses` for a manifest decoded whole: its `stat` entry of each path."""
    lstat, imode = os.lstat, stat.S_IMODE
    for path in paths:
        try:
            st = lstat(base + path)
        except (OSError, TypeError, ValueError):
            return False
        if stats.get(path) != [st.st_size, st.st_mtime_ns, imode(st.st_mode)]:
            return False
    return True


def _same_statuses(base: str, paths: List[str], numbers: Iterable[int]) -> bool:
    """One lstat per output, its numbers taken three at a time (`_well_formed` checked the count)."""
    lstat, imode = os.lstat, stat.S_IMODE
    each = iter(numbers)
    for path, size, mtime, mode in zip(paths, each, each, each):
        try:
            st = lstat(base + path)
        except (OSError, ValueError):
            return False
        if st.st_size != size or st.st_mtime_ns != mtime or imode(st.st_mode) != mode:
            return False
    return True
