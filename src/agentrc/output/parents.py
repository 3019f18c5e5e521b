"""The output's directories that hold directories, and their statuses: what tells a replayed
edit that no directory of the output was replaced, without looking at each one.

A directory replaced (by a link, a copy, anything), created, removed or renamed changes the
mtime and ctime of the directory that holds it. So when every directory that holds another
(`holding`: the root, `.claude`, `.claude/skills` and the like, a few dozen of the 7,000
directories of an output at 5,000 items) still has the status recorded (`statuses`, kept
in the stamp), and that status was older than the recording by more than the clock's slack,
every directory below them is the one the last build left (`stand`), and a replayed edit
need not lstat the others (18 ms of an edit at 5,000 items): it looks for leftovers only in
the directories it writes, the root and `.agentrc` (agentrc stages its own temporary files
in `.agentrc`; what a killed run of an earlier version left elsewhere goes with the next
full build's sweep). When one does not stand, the edit lstats every directory, as before
(`recorded._recent_dirs`).

The recording's time is when the directories were last verified, not when their statuses
were read: a full build verifies every directory of its output again before it records
(`verified`), a replayed edit records as of when it began checking them (`again`). So a
directory swapped between the check and the recording makes its parent newer than the
recording, and the next edit looks at everything.

The slack is the sweep's (`recovery._sweep_since`): a status within it of the recording may
have been kept by a change made just after it, in the same tick of the file system's clock.
"""

from __future__ import annotations

import os
import stat
import struct
import time

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Optional, Sequence, Set, Tuple

    Parents = Tuple[int, str, bytes]  # when taken (ns), the directories joined by NUL, their statuses packed

# A directory changed up to this long before a time may not show it: 2 s where the file
# system keeps whole seconds (FAT keeps 2 s), a few kernel clock ticks (1-10 ms each) where
# it keeps finer times.
SWEEP_SLACK_NS = 2 * 10**9
SWEEP_SLACK_FINE_NS = 20 * 10**6
_STATUS = struct.Struct("=4q")  # mtime, ctime (ns), inode, device


def slack(mtime_ns: int) -> int:
    """The clock's slack on a file system that gave `mtime_ns`: a time of whole seconds says
    its clock is coarse (on one that keeps finer times a time falls on a whole second about
    once in a billion, and then the wider slack only trusts less)."""
    return SWEEP_SLACK_NS if mtime_ns % 10**9 == 0 else SWEEP_SLACK_FINE_NS


def holding(joined: str) -> List[str]:
    """The directories (relative to the output, "" the root) that hold a directory of the
    outputs `joined` (their paths, joined by NUL), sorted."""
    seen: Set[str] = set()
    holders: Set[str] = set()
    for path in joined.split("\0") if joined else ():
        d = path.rpartition("/")[0]
        if d in seen:
            continue
        seen.add(d)
        while d:  # every directory above `d` holds one; those already held have had theirs added
            d = d.rpartition("/")[0]
            if d in holders:
                break
            holders.add(d)
    return sorted(holders)


def verified(root: str, joined: str) -> Optional[Parents]:
    """Every directory of the outputs `joined` (their paths, joined by NUL) checked to be a
    directory (one lstat each), then `statuses` of those `holding` others, as of the time
    the check began. None when one is not a directory (the next full build says AR140)."""
    from agentrc.output.recorded import _recent_dirs

    at = time.time_ns()
    if _recent_dirs(os.path.join(root, ""), joined.split("\0") if joined else [], None) is None:
        return None
    return statuses(root, holding(joined), at)


def statuses(root: str, dirs: Sequence[str], at: int) -> Optional[Parents]:
    """The statuses of `dirs` (below `root`) now, recorded as of `at`, when they were last
    verified (`verified`, `again`); None when one is not a directory (then a replay lstats
    every directory)."""
    base = os.path.join(root, "")
    packed: List[bytes] = []
    for d in dirs:
        try:
            st = os.lstat(base + d)
            if not stat.S_ISDIR(st.st_mode):
                return None
            packed.append(_STATUS.pack(st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev))
        except (OSError, ValueError, struct.error):
            return None
    return at, "\0".join(dirs), b"".join(packed)


def again(root: str, record: object, at: int, written: Optional[Set[str]] = None) -> Optional[Parents]:
    """`statuses` of the directories `record` names, taken again after a replayed edit
    (which adds and removes no directory) that began checking them at `at`. `written`: when
    the edit found every one of them as recorded (`unsettled` gave a list), the directories
    it wrote files into, the only ones taken again (1,600 `lstat`s at 5,000 items, 4 ms);
    the others keep the status found, recorded as of `at` as well. A directory changed by
    anyone else meanwhile no longer has that status: the next edit looks at every one."""
    dirs = _dirs(record)
    if dirs is None:
        return None
    if written is None:
        return statuses(root, dirs, at)
    assert isinstance(record, tuple)
    packed = bytearray(record[2])
    base = os.path.join(root, "")
    for i, d in enumerate(dirs):
        if d not in written:
            continue
        try:
            st = os.lstat(base + d)
            if not stat.S_ISDIR(st.st_mode):
                return None
            packed[32 * i:32 * i + 32] = _STATUS.pack(st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
        except (OSError, ValueError, struct.error):
            return None
    return at, record[1], bytes(packed)


def stand(root: str, record: object) -> bool:
    """Whether every directory `record` (`statuses`') names is as it recorded (a directory,
    the same mtime, ctime, inode and device) and was older than the recording less the
    clock's slack."""
    return unsettled(root, record) == []


def unsettled(root: str, record: object) -> Optional[List[str]]:
    """The directories `record` names that are as it recorded but were changed within the
    clock's slack before the recording (a change made just after it could have kept their
    status): [] when every one stands; None when one is not as recorded, or `record` is not
    a record. A full build records its directories right after writing them, so the first
    edit after it finds the root and the directories written last unsettled (`leaves`)."""
    dirs = _dirs(record)
    if dirs is None:
        return None
    assert isinstance(record, tuple)
    at, packed = record[0], record[2]
    base = os.path.join(root, "")
    recent: List[str] = []
    for i, d in enumerate(dirs):
        try:
            st = os.lstat(base + d)
        except (OSError, ValueError):
            return None
        mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
        if not stat.S_ISDIR(st.st_mode) or packed[32 * i:32 * i + 32] != _STATUS.pack(mtime, ctime, st.st_ino,
                                                                                     st.st_dev):
            return None
        if max(mtime, ctime) >= at - slack(mtime):
            recent.append(d)
    return recent


def leaves(root: str, record: object, unsettled: Sequence[str], paths: Sequence[str],
           since: Optional[int]) -> Optional[List[str]]:
    """What vouches for the directories of the outputs `paths` when the directories of
    `record` stand but for `unsettled` ones: every directory directly inside one of those
    that holds no directory (the others are in the record, their own statuses checked),
    lstat'ed itself, as the full pass (`recorded._recent_dirs`) would. None when one is not
    a directory; else the unsettled directories and those leaves whose mtime is not older
    than `since` (the sweep's to list; all when it is None)."""
    dirs = _dirs(record)
    if dirs is None:
        return None
    held, loose = set(dirs), set(unsettled)
    base = os.path.join(root, "")
    seen: Set[str] = set()
    recent: List[str] = []
    for p in paths:
        d = p.rpartition("/")[0]
        if d in seen or d in held or d.rpartition("/")[0] not in loose:
            continue
        seen.add(d)
        try:
            st = os.lstat(base + d)
        except (OSError, ValueError):
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        if since is None or st.st_mtime_ns >= since:
            recent.append(d)
    return [d for d in unsettled if d] + recent


def _dirs(record: object) -> Optional[List[str]]:
    """The directories a `statuses` record names; None when it is not one."""
    if not (isinstance(record, tuple) and len(record) == 3 and type(record[0]) is int and type(record[1]) is str
            and type(record[2]) is bytes):
        return None
    dirs = record[1].split("\0") if record[1] else []
    return dirs if len(record[2]) == _STATUS.size * len(dirs) else None
