"""Reading input paths from disk into a SourceTree: the only disk reads of the core.

Display paths are the paths as the user typed them joined with each file's path below
them, so diagnostics point where the user looks. Hidden directories, node_modules,
agentrc output trees (those holding .agentrc/manifest.json) and BUILD files are not sources.

Every file agentrc reads goes through `read_file`, which makes reading safe by
construction (docs/security.md, "What agentrc reads"): the file must resolve inside its
`Root` (a registry or file named on the command line, a project, a preset's directory),
else AR050 and its bytes are never opened; it must be a regular file of at most
`MAX_FILE_BYTES`, else AR054 (dangling or looping symlinks, FIFOs, sockets, devices and
directories are reported, and a FIFO is never opened, so reading cannot hang). The root
itself may be reached through symlinks: it is compared by its real path.

The system calls of one read and their limits are `inputs.fileread`'s, the source stamp's
record and deferred files `inputs.stamp`'s: both re-exported here, where callers import them.
"""

from __future__ import annotations

import hashlib
import operator
import os
import stat
import struct
import time

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs.fileread import (  # noqa: F401 - re-exported: read where they were always read
    ESCAPE_HINT,
    MAX_FILE_BYTES,
    MAX_LINK_HOPS,
    _kind,
    _not_a_file,
    _not_a_file_status,
    _open_and_read,
    _posix,
    _reason,
    known_file,
    leaves,
    real_path,
)
from agentrc.inputs.listings import Listings, replayed
from agentrc.inputs.stamp import (  # noqa: F401 - re-exported: read where they were always read
    STATUS,
    DeferredFile,
    DeferredTree,
    SourcesChanged,
    Stamped,
    _digest_of,
    digests,
    is_digest,
    record,
    recorded_files,
    signature,
    stamped_tree_digest,
    status,
    tree_digest,
)
from agentrc.model import SourceFile, SourceTree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, Dict, Iterable, List, Optional, Tuple

    from agentrc.inputs.stamp import RecordedFiles

SKIP_DIRS = {"node_modules", "__pycache__", "dist"}
# Hidden directories a fetched source is read with: where published layouts keep their
# manifests and Copilot files (`importers.published`); a source without such a layout is
# read without them (`importers.published.plain`).
PUBLISHED_DIRS = (".claude-plugin", ".github")
_NAME = operator.attrgetter("name")  # a directory entry's name: the walk's sort key


@dataclass(frozen=True)
class Read:
    """What reading command-line paths gave: the files, the files named directly by the user,
    and the problems (AR050, AR054) with what could not be read."""

    tree: SourceTree
    explicit: Tuple[str, ...]
    diagnostics: Tuple[Diagnostic, ...]


class Root:
    """A directory (or a file) every read below it must stay inside, by real path.

    Display paths below it are `path/rel` as typed; `bare_dot` drops the `./` of a root `.`
    (`agentrc import` shows project-relative paths)."""

    def __init__(self, path: str, label: str = "", bare_dot: bool = False, within: Optional[Root] = None):
        self.path = os.path.normpath(path)
        self.display = _posix(self.path)
        try:
            self.real = real_path(path)
        except OSError:  # a chain of links too long to be a root: reading it says so (AR054)
            self.real = os.path.abspath(path)
        self.label = label or self.display
        self.bare_dot = bare_dot
        self.within = within  # the boundary, when wider than this directory (`.ai/` in its project)
        # Files below it read already (`read_tree`'s `known`): (bytes, executable) by real path.
        self.known: Optional[Dict[str, Tuple[bytes, bool]]] = None

    def child(self, rel: str) -> str:
        """The display path of `rel` (posix, relative to the root)."""
        if rel in ("", "."):
            return self.display
        return rel if self.bare_dot and self.display == "." else f"{self.display}/{rel}"

    def prefix(self, rel: str) -> str:
        """`child(rel + "/" + name)` less the name: the display path of an entry of `rel`."""
        if rel in ("", "."):
            return "" if self.bare_dot and self.display == "." else self.display + "/"
        return self.child(rel) + "/"

    def inside(self, real: str) -> bool:
        return (self.within or self).rel(real) is not None

    def rel(self, real: str) -> Optional[str]:
        """`real` relative to this directory, or None when it lies outside."""
        if real == self.real:
            return "."
        prefix = self.real.rstrip(os.sep) + os.sep
        return _posix(real[len(prefix):]) if real.startswith(prefix) else None

    def display_of(self, real: str) -> str:
        """The display path of a real path inside the boundary (what `SourceFile.link` holds)."""
        rel = self.rel(real)
        if rel is None and self.within is not None:
            return self.within.display_of(real)
        assert rel is not None
        return self.child(rel)


# A canonical project (spec 000) is a directory holding one of these or `.ai/`. Here, not in
# agentrc.inputs.config, so that a build with nothing to do can tell without importing the
# canonical front door.
CONFIG_NAMES = ("ai.config.js", "ai.config.mjs", "ai.config.cjs", "ai.config.json", "ai.config.yaml",
                "ai.config.yml", "ai.config.toml")


def is_project(path: str) -> bool:
    """A directory holding a config or `.ai/` (whatever they turn out to be: reading them
    reports a config that is a directory or a dangling link)."""
    return os.path.isdir(path) and any(os.path.lexists(os.path.join(path, n)) for n in CONFIG_NAMES + (".ai",))


def is_build_file(name: str) -> bool:
    """Pants/Bazel BUILD files sit in item directories to declare targets; they are not content."""
    return name == "BUILD" or name.startswith("BUILD.")


def read_tree(paths: Iterable[str], seen: Optional[Dict[str, os.stat_result]] = None,
              published: bool = False, listings: Optional[Listings] = None,
              known: Optional[Dict[str, Tuple[bytes, bool]]] = None) -> Read:
    """Every source below `paths`; a path naming a file is read as given (it is its own root).
    `seen` collects the status of each regular file read (not a symlink), as `read_file` saw it;
    `listings` each directory's, and what was taken from it; `known` files read already (`Root.known`)."""
    files: List[SourceFile] = []
    explicit: List[str] = []
    diags = Diagnostics()
    for arg in paths:
        root = Root(arg)
        root.known = known
        kind = _kind(arg)
        if kind == "directory":
            walk(root, files, diags, _published_name if published else _source_name,
                 lambda rel, name: not is_build_file(name), seen=seen, outputs=True,
                 listings=None if published else listings)
            continue
        f = read_file(arg, root.display, root, diags, seen=seen)
        if f is not None:
            files.append(SourceFile(f.path, f.content, f.executable, None))  # named by the user: not a link
            explicit.append(f.path)
    unique = {f.path: f for f in files}
    return Read(SourceTree(tuple(unique[k] for k in sorted(unique))), tuple(explicit), diags.sorted())


def _source_dir(entry: os.DirEntry) -> bool:
    return not (entry.name.startswith(".") or entry.name in SKIP_DIRS
                or os.path.exists(os.path.join(entry.path, ".agentrc", "manifest.json")))


def _source_name(entry: os.DirEntry) -> bool:
    """`_source_dir` without the output-tree check for a directory (not a link to one):
    `walk(..., outputs=True)` makes that check when it lists the directory, and only when
    the directory holds `.agentrc`. A stat of a missing manifest in every directory was a
    tenth of a no-change build at 5,000 items."""
    if entry.is_symlink():
        return _source_dir(entry)
    return not (entry.name.startswith(".") or entry.name in SKIP_DIRS)


def _published_name(entry: os.DirEntry) -> bool:
    """`_source_name`, and the hidden directories of layouts people publish (a fetched
    source's plugin manifests, its Copilot files: `importers.published` reads them)."""
    if entry.name in PUBLISHED_DIRS and not entry.is_symlink():
        return True
    return _source_name(entry)


def _output_tree(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, ".agentrc", "manifest.json"))


def _utf8(name: str) -> bool:
    """Whether a name listed from the disk is UTF-8 (os.scandir keeps other bytes as lone
    surrogates, which no output, lock or digest can encode)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def walk(root: Root, out: List[SourceFile], diags: Diagnostics, enter: Callable[[os.DirEntry], bool],
         wanted: Callable[[str, str], bool], max_size: int = MAX_FILE_BYTES, skip_large: bool = False,
         seen: Optional[Dict[str, os.stat_result]] = None,
         visit: Optional[Callable[[str, str], None]] = None, outputs: bool = False,
         listings: Optional[Listings] = None) -> None:
    """The files below `root` whose (root-relative posix path, name) `wanted` accepts, in
    directories `enter` accepts. Symlinked directories are not entered (AR054 warning);
    everything else that is not a directory is read by `read_file`, or handed to `visit`
    (its path and display path) unread. Iterative, so a deep tree cannot exhaust the stack;
    `skip_large` leaves files over `max_size` out silently. `outputs`: a directory below
    the root that holds `.agentrc/manifest.json` (an agentrc output tree) is skipped, as
    if `enter` had refused it.

    The walk enters no symlink, so below the real path of `root.path` (resolved once) a
    directory's real path is its parent's joined with its name, and so is a file's that is
    not a symlink: `read_file` is given it instead of resolving every component again
    (`os.path.realpath` is one `lstat` per component, most of the CPU of reading a file).

    `listings` (agentrc.inputs.listings): each directory's status is taken before it is
    listed and what the walk took from it recorded; a directory whose recorded listing
    still stands is not listed, its names come from the record (with `visit` only)."""
    try:
        top = real_path(root.path)
    except OSError as exc:
        diags.error(root.display, (0, 0), "AR054", f"cannot list the directory: {_reason(exc)}")
        return
    pending = [(root.path, "", top)]
    if listings is not None:
        listings.roots += 1
    while pending:
        directory, rel, real = pending.pop()
        st = None
        if listings is not None:
            standing, st = listings.standing(directory, visit is not None)
            if standing is not None and visit is not None:
                pending.extend(replayed(root, directory, rel, real, standing, visit))
                continue
        entries = _listing(root, directory, rel, diags, outputs)
        if entries is None:
            if listings is not None:
                listings.skipped += 1
            continue
        below = real if real.endswith(os.sep) else real + os.sep  # os.path.join(real, name), without its checks
        if listings is None:
            subdirs = _directory(root, rel, below, entries, out, diags, enter, wanted, max_size, skip_large, seen,
                                 visit)
        else:
            subdirs = _kept_directory(listings, directory, st, (root, rel, below, entries, out, diags, enter, wanted,
                                                                max_size, skip_large, seen, visit))
        pending.extend(reversed(subdirs))


def _kept_directory(listings: Listings, directory: str, st: Optional[os.stat_result], args: tuple
                    ) -> List[Tuple[str, str, str]]:
    """`_directory(*args)`, with what it took from the directory (status `st`, taken before
    it was listed) kept in `listings`: not when the walk said something of it (its
    diagnostics are not replayed), it holds a symbolic link or, below the root, `.agentrc`."""
    root, rel, below, entries, out, diags, enter, wanted, max_size, skip_large, seen, visit = args
    said, taken = len(diags.items), len(out)
    names: List[str] = []
    visit_named = None
    if visit is not None:
        def visit_named(path: str, display: str, visit: Callable[[str, str], None] = visit) -> None:
            names.append(path.rpartition("/")[2])
            visit(path, display)
    subdirs = _directory(root, rel, below, entries, out, diags, enter, wanted, max_size, skip_large, seen,
                         visit_named)
    if visit is None:  # the files read: their names
        names = [f.path.rpartition("/")[2] for f in out[taken:]]
    # What the walk does with a link depends on its target, which can change while the directory does not.
    plain = len(diags.items) == said and not any(e.is_symlink() or (rel and e.name == ".agentrc") for e in entries)
    listings.keep(directory, st if plain else None, names, [sub.rpartition("/")[2] for _, sub, _ in subdirs])
    return subdirs


def _listing(root: Root, directory: str, rel: str, diags: Diagnostics, outputs: bool
             ) -> Optional[List[os.DirEntry]]:
    """The entries of one directory of a walk, by name; None when it is not walked (it cannot
    be listed: AR054; or, with `outputs`, it is an agentrc output tree below the root)."""
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=_NAME)
    except OSError as exc:
        if not (outputs and rel and _output_tree(directory)):
            diags.error(root.child(rel), (0, 0), "AR054", f"cannot list the directory: {_reason(exc)}")
        return None
    if outputs and rel and ".agentrc" in map(_NAME, entries) and _output_tree(directory):
        return None
    return entries


def _directory(root: Root, rel: str, below: str, entries: List[os.DirEntry], out: List[SourceFile],
               diags: Diagnostics, enter: Callable[[os.DirEntry], bool], wanted: Callable[[str, str], bool],
               max_size: int, skip_large: bool, seen: Optional[Dict[str, os.stat_result]],
               visit: Optional[Callable[[str, str], None]]) -> List[Tuple[str, str, str]]:
    """`walk`'s work in one listed directory: its files read (or visited), and the
    subdirectories to enter (path, root-relative path, real path), in name order."""
    subdirs = []
    for entry in entries:
        name = entry.name
        if not name.isascii() and not _utf8(name):
            shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            diags.error(root.child(f"{rel}/{shown}" if rel else shown), (0, 0), "AR008",
                        "a file or directory name that is not UTF-8: not read (rename it)")
            continue
        sub = f"{rel}/{name}" if rel else name
        if entry.is_dir(follow_symlinks=False):
            if enter(entry):
                subdirs.append((entry.path, sub, below + name))
            continue
        display = root.child(sub)  # a file's: a directory's is never shown (one call per directory less)
        if entry.is_symlink() and _kind(entry.path) == "directory":
            # Nothing below it is read, so nothing can leak; said once, not silently dropped.
            if enter(entry):
                diags.warning(display, (0, 0), "AR054", "a symlink to a directory: not followed, its files "
                              "are not read")
            continue
        if not wanted(sub, name) or (skip_large and _size(entry) > max_size):
            continue
        if visit is not None:
            visit(entry.path, display)
            continue
        real = None if entry.is_symlink() else below + name
        f = known_file(root, real, display, max_size, seen) or read_file(entry.path, display, root, diags,
                                                                          max_size, seen, real=real)
        if f is not None:
            out.append(f)
    return subdirs


def read_file(path: str, display: str, root: Root, diags: Diagnostics,
              max_size: int = MAX_FILE_BYTES, seen: Optional[Dict[str, os.stat_result]] = None,
              real: Optional[str] = None) -> Optional[SourceFile]:
    """The file at `path` if it is a regular file inside `root` of at most `max_size` bytes;
    otherwise None and a diagnostic (AR050 outside the root, AR054 anything else).

    The type and size are checked with stat before opening, the open is non-blocking and
    the opened descriptor is checked again, so a FIFO or a file swapped in between can
    neither hang the read nor slip through; at most `max_size + 1` bytes are ever read.
    `real`: the path's real path when the caller knows it (`walk`); used only if `path` is
    not a symlink, else resolved here as always.

    Five system calls for a plain file (its `lstat` stands for the check before opening:
    a path that is no symlink has the status its target has), and the bytes come back in
    an allocation of their size: read through a file object, eight, and 0.08 s of the 0.3
    s reading 15,000 sources took at 10,000 items."""
    try:
        lst = os.lstat(path)
    except OSError as exc:
        diags.error(display, (0, 0), "AR054", f"cannot be read: {_reason(exc)}")
        return None
    is_link = stat.S_ISLNK(lst.st_mode)
    if real is None or is_link:
        try:
            real = real_path(path)
        except OSError as exc:  # a loop, or a chain longer than MAX_LINK_HOPS links
            diags.error(display, (0, 0), "AR054", _reason(exc))
            return None
    if not root.inside(real):
        diags.error(display, (0, 0), "AR050", leaves(path, root), ESCAPE_HINT)
        return None
    problem = _not_a_file(real, max_size) if is_link else _not_a_file_status(lst, max_size)
    if problem is None:
        content, st, problem = _open_and_read(real, max_size)
    if problem is not None:
        if is_link and problem.startswith(("does not exist", "is a symlink loop")):
            problem = f"is a dangling symlink ({problem})" if problem.startswith("does") else problem
        diags.error(display, (0, 0), "AR054", problem)
        return None
    assert st is not None  # read: no problem
    link = root.display_of(real) if is_link else None
    if seen is not None and not is_link:
        seen[display] = st
    return SourceFile(display, content, bool(st.st_mode & 0o100), link)


def read_text(path: str, display: str, root: Root, diags: Diagnostics) -> Optional[str]:
    """A canonical input as text: `read_file`, then UTF-8 (AR008 otherwise), with newlines
    translated as Python's text mode does (these files were once read with `open`)."""
    f = read_file(path, display, root, diags)
    if f is None:
        return None
    try:
        return f.content.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        diags.error(display, (1, 1), "AR008", f"not UTF-8 (byte {exc.start})")
        return None


def _size(entry: os.DirEntry) -> int:
    try:
        return entry.stat().st_size
    except OSError:
        return 0  # read_file reports it


# --- the source stamp: what a build with nothing to do reads -------------------------------------
#
# Its record and its deferred files are `inputs.stamp`'s (re-exported here); the walk that
# checks a record against the disk is here, reading through `read_file` as every walk does.
# A file's record is trusted only when its mtime and ctime are older than the record's walk
# start by more than RACY_NS: a file changed within the timestamp granularity of the
# recording (the "racy" case) could have kept its times, so it is read again.

RACY_NS = 3 * 10 ** 9  # above the coarsest common timestamp granularity (2 s) and clock ticks


def _loader(root: Root, path: str, display: str) -> Callable[[], bytes]:
    def load() -> bytes:
        f = read_file(path, display, root, Diagnostics())
        if f is None or f.link is not None:
            raise SourcesChanged(display)
        return f.content
    return load


# A file the record vouches for, until the tree is asked for: its root, path, whether it is
# executable and its sha256.
if TYPE_CHECKING:
    _Vouched = Tuple[Root, str, bool, bytes]


def stamped_digest(paths: Iterable[str], record: object) -> Optional[Stamped]:
    """What `read_tree(paths)` would give, and the new record, reading only the files
    `record` (a `signature`) cannot vouch for; None when any file is not plain or the record
    is malformed (then read everything)."""
    at, known = record.get("at") if isinstance(record, dict) else None, recorded_files(record)
    if type(at) is not int or known is None:
        return None
    assert isinstance(record, dict)
    start = time.time_ns()
    listings = Listings(record.get("dirs"), at - RACY_NS)
    listed = _listed(paths, listings)
    if listed is None:
        return None
    found, explicit = listed
    walked = _Walked(known, at - RACY_NS)
    if not walked.walk(found):
        return None
    digest, new = walked.stamped(record, start, listings.record())
    vouched, fresh = walked.vouched, walked.fresh
    return Stamped(digest, explicit, new, DeferredTree(lambda: _tree_files(vouched, fresh),
                                                       lambda display: _one_file(vouched, fresh, display)),
                   len(fresh), listings.fresh)


class _Walked:
    """`stamped_digest`'s files against the record `known` (`walk`): vouched for (`vouched`),
    or read (`fresh`); each one's status and sha256 for the new record (`record`), kept
    only from the first file out of its place in the record (before it, the record's own)."""

    def __init__(self, known: RecordedFiles, trusted_before: int):
        self.known, self.trusted_before = known, trusted_before
        self.vouched: Dict[str, _Vouched] = {}
        self.fresh: Dict[str, SourceFile] = {}
        self.statuses: Dict[str, bytes] = {}
        self.sums: Dict[str, bytes] = {}
        self.in_order = 0  # how many files stood as recorded, each at its place in the record (-1: not all)

    def walk(self, found: List[Tuple[Root, str, str]]) -> bool:
        """Each file of `found`; False when one is not plain (read everything). One loop, its
        names local: it runs once per source of every build that has a stamp."""
        known, trusted = self.known, self.trusted_before
        names, statuses, shas, count, size = known.paths, known.statuses, known.shas, len(known.paths), STATUS.size
        lstat, regular, pack, vouched, fresh = os.lstat, stat.S_ISREG, STATUS.pack, self.vouched, self.fresh
        in_order = True
        for k, (root, path, display) in enumerate(found):
            try:
                st = lstat(path)
                mode, mtime, ctime = st.st_mode, st.st_mtime_ns, st.st_ctime_ns
                now = pack(st.st_size, mtime, ctime, st.st_ino, st.st_dev, mode)
            except (OSError, ValueError, struct.error):  # a name no file has (lone surrogate), a number too large
                return False
            if not regular(mode) or st.st_size > MAX_FILE_BYTES:
                return False
            i = k if k < count and names[k] == display else known.find(display)
            if i is not None and statuses[size * i:size * i + size] == now and mtime < trusted and ctime < trusted:
                sha = shas[32 * i:32 * i + 32]
                vouched[display] = (root, path, bool(mode & 0o100), sha)
                if fresh:
                    fresh.pop(display, None)
                if in_order and i == k:
                    continue
            else:
                got = self._read(root, path, display)
                if got is None:
                    return False
                now, sha = got
            if in_order:  # the first out of place: those before it as the record has them
                in_order = False
                self._take(k)
            self.statuses[display] = now
            self.sums[display] = sha
        self.in_order = len(found) if in_order else -1
        return True

    def _read(self, root: Root, path: str, display: str) -> Optional[Tuple[bytes, bytes]]:
        """A file the record does not vouch for, read: its status and sha256 (None: not plain)."""
        seen: Dict[str, os.stat_result] = {}
        f = read_file(path, display, root, Diagnostics(), seen=seen)
        if f is None or f.link is not None or display not in seen:
            return None
        try:
            now = status(seen[display])
        except struct.error:
            return None
        self.fresh[display] = f
        self.vouched.pop(display, None)
        return now, hashlib.sha256(f.content).digest()

    def _take(self, count: int) -> None:
        """The record's first `count` files, in the new record's columns."""
        known, size = self.known, STATUS.size
        for i, name in enumerate(known.paths[:count]):
            self.statuses[name] = known.statuses[size * i:size * i + size]
            self.sums[name] = known.shas[32 * i:32 * i + 32]

    def stamped(self, old: dict, at_ns: int, dirs: object) -> Tuple[str, dict]:
        """The tree's digest and the new record: the old record's own when every file stood in
        its place (`stamp.stamped_tree_digest` otherwise)."""
        known, digest = self.known, old.get("digest")
        if self.in_order == len(known.paths) and is_digest(digest):
            digest = str(digest)
            return digest, {"at": at_ns, "paths": known.joined, "statuses": known.statuses, "shas": known.shas,
                            "dirs": dirs, "digest": digest}
        if self.in_order >= 0:  # all in place, fewer than the record holds
            self._take(self.in_order)
        digest = stamped_tree_digest(old, len(known.paths), self.sums, len(self.fresh))
        return digest, record(at_ns, self.statuses, self.sums, dirs, digest)


def _listed(paths: Iterable[str], listings: Listings
            ) -> Optional[Tuple[List[Tuple[Root, str, str]], Tuple[str, ...]]]:
    """The source files below `paths` (root, path, display path) as `read_tree` would read
    them, unread, and the files named directly; None when a path is neither a directory nor
    a file, or a directory cannot be walked cleanly. A directory whose listing `listings`
    holds is not listed again."""
    found: List[Tuple[Root, str, str]] = []
    explicit: List[str] = []
    diags = Diagnostics()
    paths = list(paths)
    for arg in paths:
        root = Root(arg)
        kind = _kind(arg)
        standing = listings.all_standing(root.path) if kind == "directory" and len(paths) == 1 else None
        if standing is not None:  # the record's listings all stand: no directory is listed
            for directory, rel, names in standing:
                path = directory if directory.endswith("/") else directory + "/"  # as `os.scandir` joins
                shown = root.prefix(rel)
                found.extend([(root, path + name, shown + name) for name in names])
        elif kind == "directory":
            def visit(path: str, display: str, root: Root = root) -> None:
                found.append((root, path, display))
            walk(root, [], diags, _source_name, lambda rel, name: not is_build_file(name), visit=visit,
                 outputs=True, listings=listings)
        elif kind == "file":
            found.append((root, arg, root.display))
            explicit.append(root.display)
        else:
            return None
    if diags.items:
        return None
    return found, tuple(explicit)


def _one_file(vouched: Dict[str, _Vouched], fresh: Dict[str, SourceFile], display: str) -> Optional[SourceFile]:
    """The file `_tree_files` makes for `display`, made alone (None: not in the tree)."""
    f = fresh.get(display)
    if f is not None:
        return f
    found = vouched.get(display)
    if found is None:
        return None
    root, path, executable, sha = found
    return DeferredFile(display, executable, sha, _loader(root, path, display))


def _tree_files(vouched: Dict[str, _Vouched], fresh: Dict[str, SourceFile]) -> Tuple[SourceFile, ...]:
    """The files of a `DeferredTree` in path order: those read as they are, the others deferred."""
    files: Dict[str, SourceFile] = dict(fresh)
    for display, (root, path, executable, sha) in vouched.items():
        files[display] = DeferredFile(display, executable, sha, _loader(root, path, display))
    return tuple(files[k] for k in sorted(files))
