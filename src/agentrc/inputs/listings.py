"""The walk's directory listings, kept in the source record: a directory whose status is the
one recorded is not listed again.

A build with a stamp (`agentrc.inputs.tree.stamped_digest`) must know every source file
below the paths it was given, so it walked every directory: at 5,000 items 6,700 listings,
a fifth of a build with nothing to do, where a directory's own status says whether its
entries can have changed. Creating, removing or renaming an entry changes the directory's
mtime and ctime (POSIX); a file's bytes changing does not, and those are the file's own
status, which the stamp compares for every source anyway. So the record keeps, for each
directory the walk listed, its status taken before the listing (mtime, ctime, inode,
device) and the names the walk took from it (files handed on, subdirectories entered), and
a later walk takes those names from the record when the status is the same and older than
the recording by more than the file system's clock slack (`RACY_NS`, as for files: an
entry made in the same tick as the listing leaves the mtime as it was).

Not recorded, so always listed: a directory the walk said anything about (a link to a
directory, a name that is not UTF-8: the walk's diagnostics are not replayed), one holding a
symbolic link (what the walk does with a link depends on its target, which can change
without the directory changing) and one below the root holding `.agentrc` (an output
tree's manifest can appear inside it without the directory changing). A record not of this
shape is not used; one naming an entry no listing can give (empty, `.`, `..`, a lone
surrogate) is not used for that directory, which is listed. A record said to be the whole
of one walk is taken whole only when it holds one directory for each subdirectory it names.

The record is five values, not one per directory (a dict of 6,700 tuples took 4 ms to read
back at 5,000 items): the directories' paths joined by NUL, their statuses (four integers
each, in the same order), and for each the names of its files and of its subdirectories,
joined by `/` within a directory and by NUL between directories (no name holds either),
and whether it is the whole of one walk of one root.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple, Union

# The directories' paths, statuses, files and subdirectories; and whether it is the whole of
# one walk of one root (`Listings.all_standing`).
if TYPE_CHECKING:
    Record = Tuple[str, Tuple[int, ...], str, str, bool]
if TYPE_CHECKING:
    _Listed = Tuple[str, Tuple[int, int, int, int], str, str]  # one directory listed by this walk

_NOT_NAMES = frozenset(("", ".", ".."))


class Listings:
    """The listings a walk may take from the last record (`known`, trusted for directories
    whose status is older than `trusted_before`), and the record of this walk (`record`)."""

    def __init__(self, known: object = None, trusted_before: int = 0):
        self.trusted_before = trusted_before
        self._index: Optional[Dict[str, int]] = None  # each known directory's place: made when `standing` asks
        self.statuses: Tuple[int, ...] = ()
        self.paths: List[str] = []
        self.files: List[str] = []
        self.subdirs: List[str] = []
        self.known: Optional[Record] = None
        if type(known) is tuple and len(known) == 5 and all(type(v) is str for v in (known[0], known[2], known[3])) \
                and type(known[1]) is tuple and type(known[4]) is bool:
            paths, files, subdirs = known[0].split("\0"), known[2].split("\0"), known[3].split("\0")
            if len(paths) == len(files) == len(subdirs) and len(known[1]) == 4 * len(paths):
                self.known = known  # type: ignore[assignment]
                self.statuses, self.paths, self.files, self.subdirs = known[1], paths, files, subdirs
        self.walked: List[Union[int, _Listed]] = []  # each directory walked: its index in `known`, or its listing
        self.fresh = 0  # directories listed and recorded (their listing is new to the record)
        self.roots = 0  # directories the walks started from
        self.skipped = 0  # directories walked and not recorded
        self._in_order = True  # every directory walked stood, in the order `known` holds them

    def standing(self, directory: str, replay: bool = True
                 ) -> Tuple[Optional[Tuple[List[str], List[str]]], Optional[os.stat_result]]:
        """The names of the files and subdirectories recorded for `directory` when its
        listing stands and the walk can `replay` it, else None; and its status, taken now,
        before the walk lists it (None: it has none)."""
        try:
            st = os.lstat(directory)
        except (OSError, ValueError):
            return None, None
        if self._index is None:  # not made for a walk that `all_standing` took whole
            self._index = {p: i for i, p in enumerate(self.paths)}
        i = self._index.get(directory) if replay else None
        if i is None or not self._stands(i, st):
            return None, st
        files, subdirs = self.files[i], self.subdirs[i]
        names = (files.split("/") if files else [], subdirs.split("/") if subdirs else [])
        if not (_NOT_NAMES.isdisjoint(names[0]) and _NOT_NAMES.isdisjoint(names[1]) and _encodable(files + subdirs)):
            return None, st
        if i != len(self.walked):
            self._in_order = False
        self.walked.append(i)
        return names, st

    def _stands(self, i: int, st: os.stat_result) -> bool:
        """Whether the known directory `i`, of status `st` now, is as recorded (mtime, ctime,
        inode, device) and older than the recording less the clock's slack: a directory."""
        s, j, before = self.statuses, 4 * i, self.trusted_before
        return (s[j] == st.st_mtime_ns and s[j + 1] == st.st_ctime_ns and s[j + 2] == st.st_ino
                and s[j + 3] == st.st_dev and st.st_mtime_ns < before and st.st_ctime_ns < before
                and stat.S_ISDIR(st.st_mode))

    def keep(self, directory: str, st: Optional[os.stat_result], files: List[str], subdirs: List[str]) -> None:
        """Record what the walk took from `directory`, listed after its status `st` was taken
        (None: not to be recorded)."""
        if st is None or not stat.S_ISDIR(st.st_mode):
            self.skipped += 1
            return
        self.fresh += 1
        self._in_order = False
        self.walked.append((directory, (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev),
                            "/".join(files), "/".join(subdirs)))

    def record(self) -> Record:
        """The listings of this walk, for the next: the known record itself when every
        directory stood, in its order, and there were no others (a build with nothing to
        do makes none)."""
        if self._in_order and self.known is not None and len(self.walked) == len(self.paths):
            return self.known
        paths: List[str] = []
        statuses: List[int] = []
        files: List[str] = []
        subdirs: List[str] = []
        s = self.statuses
        for w in self.walked:
            if isinstance(w, int):
                paths.append(self.paths[w])
                statuses.extend(s[4 * w:4 * w + 4])
                files.append(self.files[w])
                subdirs.append(self.subdirs[w])
            else:
                paths.append(w[0])
                statuses.extend(w[1])
                files.append(w[2])
                subdirs.append(w[3])
        return ("\0".join(paths), tuple(statuses), "\0".join(files), "\0".join(subdirs),
                self.roots == 1 and not self.skipped)

    def all_standing(self, top: str) -> Optional[List[Tuple[str, str, List[str]]]]:
        """Each directory of the record (its path, its path below `top`, its files' names),
        in the walk's order, when the record is the whole of one walk from `top` (every
        directory it walked recorded) and every listing stands: the walk is then the record,
        with neither a listing nor the stack of directories to enter. None: walk."""
        known, paths = self.known, self.paths
        # Every directory but the first is one subdirectory name of another's: as many names as directories less one.
        if known is None or not known[4] or not paths or paths[0] != top \
                or known[3].count("/") + len(paths) - self.subdirs.count("") != len(paths) - 1:
            return None
        head = top if top.endswith("/") else top + "/"
        cut = len(head)
        lstat, stands = os.lstat, self._stands
        found: List[Tuple[str, str, List[str]]] = []
        for i, d in enumerate(paths):
            try:
                st = lstat(d)
            except (OSError, ValueError):
                return None
            if not stands(i, st):
                return None
            rel = d[cut:] if i else ""
            # Below `top`, by plain names: the walk enters no hidden directory, so no `.` or `..`.
            if i and (not d.startswith(head) or "//" in d or "/." in d[cut - 1:]):
                return None
            files = self.files[i]
            names = files.split("/") if files else []
            if not (_NOT_NAMES.isdisjoint(names) and _encodable(files)):
                return None
            found.append((d, rel, names))
        self.walked = list(range(len(paths)))
        self.roots = 1
        return found


def _encodable(names: str) -> bool:
    """Whether `names` can name files (a lone surrogate, which no listing gives, cannot)."""
    if names.isascii():
        return True
    try:
        os.fsencode(names)
    except UnicodeError:
        return False
    return True


def replayed(root: Any, directory: str, rel: str, real: str, names: Tuple[List[str], List[str]],
             visit: Callable[[str, str], None]) -> List[Tuple[str, str, str]]:
    """The walk's work in a directory whose recorded listing stands (`names`: its files', its
    subdirectories'; `root`: the walk's `Root`): its files visited, and the subdirectories to
    enter (path, root-relative path, real path), last first, as the walk would from listing it."""
    path = directory if directory.endswith("/") else directory + "/"  # as `os.scandir` joins
    shown = root.prefix(rel)
    for name in names[0]:
        visit(path + name, shown + name)
    below = real if real.endswith(os.sep) else real + os.sep
    head = rel + "/" if rel else ""
    return [(path + name, head + name, below + name) for name in reversed(names[1])]
