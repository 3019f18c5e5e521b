"""Planning a write: what writing the planned files would change, and whose they are.

`diff` decides everything before anything is written: which files are created, updated,
deleted, left alone or merged into a user's file (`_merge`, through `agentrc.output.merge`),
and which planned paths agentrc may not write because it does not own them.
"""

from __future__ import annotations

import os
import stat
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.files import OutputFile, safe_path
from agentrc.output.directory import Changes, _directories, _Directory
from agentrc.output.manifest import _keys, _stat
from agentrc.output.recorded import _as_recorded
from agentrc.output.tree import _FS_ERRORS, _NotFile, _Symlink, sha

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import AbstractSet, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple


def _adopted_dirs(adopted: Iterable[str]) -> Set[str]:
    """The directories holding files adopted from a lock (a fresh clone, no `.agentrc/`),
    counted as agentrc's (issue 31: `remove` there left every item's directory behind). Git
    tracks no directory, so in a clone each exists for the files under it: one whose files
    were all agentrc's is removed once they are deleted, one holding anything else stays
    (a directory is removed only when empty)."""
    return _directories(adopted)


def _merge(out: _Directory, files: Sequence[OutputFile], owned: Dict[str, str], previous: Dict[str, dict],
           diags: Diagnostics, take_over: bool = False
           ) -> Tuple[List[OutputFile], Dict[str, OutputFile], Dict[str, dict], Dict[str, str]]:
    """Resolve files agentrc merges into users' files: read what is there, take out the keys
    agentrc added last time, put in this build's keys. Paths merged last time and not now
    lose agentrc's keys (and go away when agentrc created them and nothing else is left:
    those are returned with the sha256 they have now, to delete)."""
    result: List[OutputFile] = []
    resolved: Dict[str, OutputFile] = {}
    records: Dict[str, dict] = {}
    stale_delete: Dict[str, str] = {}
    planned = {f.path for f in files}
    stale = [OutputFile(p, b"", False, "agentrc", str(r.get("format", "json")), ()) for p, r in sorted(previous.items())
             if p not in planned]
    for f in list(files) + stale:
        if not f.merge:
            result.append(f)
            continue
        record = previous.get(f.path, {})
        old = _keys(record)
        start = _merge_start(out, f, record, old, owned, take_over, diags)
        if start is None:
            continue
        raw, current, created, blank = start
        done = _merged_text(out._show(f.path), f, current, old, diags)
        if done is None:
            continue
        text, empty = done
        if empty and created:  # (`empty`: of a file without keys alone)
            if raw is not None:
                stale_delete[f.path] = sha(raw)  # stale, agentrc made it, nothing of the user's in it: delete
            continue
        if empty and isinstance(blank, str):
            text = blank
        merged = OutputFile(f.path, text.encode("utf-8"), False, f.owner, f.merge, f.keys)
        resolved[f.path] = merged
        result.append(merged)
        if f.keys:
            rec: Dict[str, Any] = {"format": f.merge, "created": created,
                                   "keys": [[list(k), v, a] for k, v, a in f.keys]}
            if isinstance(blank, str):
                rec["blank"] = blank
            records[f.path] = rec
    return result, resolved, records, stale_delete


def _merge_start(out: _Directory, f: OutputFile, record: dict, old: Tuple[Any, ...], owned: Dict[str, str],
                 take_over: bool, diags: Diagnostics) -> Optional[Tuple[Optional[bytes], str, bool, Any]]:
    """What `_merge` merges into for `f`: the bytes there (None: no file), the text agentrc's
    keys go into, whether agentrc created the file, and the user's blank text if it was
    empty; None when it cannot be merged (an error said why)."""
    # Imported here: a no-change build (`untouched`) reads the manifest and never merges.
    from agentrc.output import merge as managed  # noqa: F811

    target = out._show(f.path)
    created = bool(record.get("created", False))
    blank = record.get("blank")
    try:
        raw = out._read(f.path)
        if raw is None:
            current, created = "", True
        else:
            current = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.error(target, (0, 0), "AR097", f"cannot merge agentrc's keys into it: {exc}")
        return None
    except _NotFile:
        diags.error(target, (0, 0), "AR097", "cannot merge agentrc's keys into it: it is not a file")
        return None
    except _FS_ERRORS as exc:
        diags.items.append(out._problem(exc, f.path))
        return None
    if f.path in owned:
        if owned[f.path] != sha(current.encode()):
            diags.error(target, (0, 0), "AR094", "edited since an earlier agentrc wrote it whole; merge the edit "
                        "into the sources or delete the file, then rebuild")
            return None
        current, created = "", True  # written whole by an earlier agentrc: all of it is ours
    elif take_over and f.merge == "block" and not record:
        current, created = "", True  # --adopt: the user's text is in the sources now; the block replaces it
    if raw is not None and not old and not current.strip() and f.path not in owned:
        blank = current  # the user's empty file: it is empty again when agentrc's keys go
    if raw is not None and not record and f.path not in owned and managed.holds_only(f.merge, current, f.keys):
        created = True  # the manifest was lost: the file is all agentrc's, adopted as created
    return raw, current, created, blank


def _merged_text(target: str, f: OutputFile, current: str, old: Tuple[Any, ...],
                 diags: Diagnostics) -> Optional[Tuple[str, bool]]:
    """`current` with agentrc's keys of last time (`old`) taken out and `f`'s put in, and
    whether nothing is left; None when an edit or a clash forbids it (errors say which)."""
    from agentrc.output import merge as managed  # noqa: F811 (as in `_merge_start`)

    try:
        changed, missing = managed.edited(f.merge, current, old)
        for key in changed:
            diags.error(target, (0, 0), "AR094", f"{key} was edited since agentrc wrote it; rebuilding would "
                        "lose the edit")
        for key in missing:
            diags.warning(target, (0, 0), "AR094", f"an entry agentrc added under {key} was changed or removed; "
                          "agentrc adds it again")
        if changed:
            return None
        clashes = managed.conflicts(f.merge, current, old, f.keys)
        text = managed.render(f.merge, current, old, f.keys)
        # Whether nothing is left in it: asked only of a file this build puts no key in (a
        # parse of the whole file, which for opencode.json at 10,000 items took 0.015 s).
        empty = not f.keys and managed.is_empty(f.merge, text)
    except ValueError as exc:
        diags.error(target, (0, 0), "AR097", f"cannot merge agentrc's keys into it: {exc}")
        return None
    if f.merge == "block" and f.keys:
        repeated = managed.repeated(text)
        if repeated:
            diags.warning(target, (0, 0), "AR245", f"{len(repeated)} paragraph(s) of agentrc's block are also "
                          f"in the file's own text (first: {repeated[0][:60]!r}): the client reads them twice")
    for key in clashes:
        diags.error(target, (0, 0), "AR096", f"defines {key!r} itself; agentrc would overwrite it ({f.owner})")
    if clashes:
        return None
    if f.merge == "json" and f.path in managed.STRICT_JSON and managed.has_comments(current):
        diags.warning(target, (0, 0), "AR098", "has comments, which agentrc keeps, but "
                      f"{managed.STRICT_JSON[f.path]} reads this file as strict JSON and would ignore it")
    return text, empty


@dataclass
class _Tally:
    """What `diff` found of the planned files, and what it decides by."""

    owned: Dict[str, str]
    stats: Dict[str, Any]
    merged_files: Dict[str, OutputFile]
    force: bool
    take_over: bool
    create: List[str] = field(default_factory=list)
    update: List[str] = field(default_factory=list)
    unchanged: int = 0
    seen: Dict[str, list] = field(default_factory=dict)
    modes: Dict[str, int] = field(default_factory=dict)


class _Planning(_Directory):
    """Planning: `diff`, what a write would change."""

    def diff(self, files: Sequence[OutputFile], force: bool = False, adopt: Optional[Dict[str, str]] = None,
             adopt_keys: Optional[Mapping[str, Sequence[Tuple[str, ...]]]] = None, keep: AbstractSet[str] = frozenset(),
             take_over: bool = False) -> Tuple[Changes, Dict[str, str], Tuple[Diagnostic, ...]]:
        """What writing `files` would change; errors for files agentrc does not own. A
        manifest that cannot be read, or a planned path that is not safe, stops it here:
        no change is proposed at all. `force` overwrites (and deletes) owned files edited
        since agentrc wrote them instead of refusing (AR094). `adopt` (path -> sha256, what a
        lockfile records) counts those files as agentrc's where the manifest does not say
        otherwise: a fresh clone holds the installed files without `.agentrc/`. `adopt_keys`
        (path -> key paths, what a lockfile records of the entries agentrc merged into a
        shared file) does the same for merged keys: those the file holds are agentrc's, with
        the values it holds, so they are replaced or taken out like recorded ones. `keep`:
        paths no file of `files` plans that stay as they are, still agentrc's (the files of
        clients a narrowed build leaves alone): neither deleted nor stripped of agentrc's keys.
        `take_over` (`agentrc build --adopt`): a planned file agentrc did not write is
        replaced (never AR091), and a file it shares with the user (CLAUDE.md's block) becomes
        agentrc's block alone: the first build of an adopted repository hands it the files
        the import read."""
        diags = Diagnostics(list(self.notes))
        m = self._read_manifest(diags)
        for f in files:
            if not safe_path(f.path):
                diags.error(self._show(f.path), (0, 0), "AR140", "is not a relative path inside the output "
                            "directory; agentrc writes nothing outside it")
        if diags.has_errors:
            return Changes((), (), (), 0), {}, diags.sorted()
        owned, previous = m.owned, m.merged
        if adopt:
            owned = {**{p: h for p, h in adopt.items() if safe_path(p) and p not in previous}, **owned}
        previous = self._adopted_keys(previous, adopt_keys)
        keep = set(keep) - {f.path for f in files} if keep else set()
        kept_keys = {p: r for p, r in previous.items() if p in keep}
        files, merged_files, merged, stale = _merge(self, files, owned,
                                                    {p: r for p, r in previous.items() if p not in keep}, diags,
                                                    take_over)
        merged.update(kept_keys)  # recorded as they were: their keys stay agentrc's
        tally = _Tally(owned, m.stats, merged_files, force, take_over)
        self._compare(files, tally, diags)
        planned = {f.path for f in files}
        delete_sha = dict(stale)
        stale_paths = sorted(p for p in owned if p not in planned and p not in previous and p not in keep)
        delete_sha.update(self._stale(stale_paths, owned, force, diags))
        dirs = m.dirs
        if adopt:
            dirs = tuple(sorted(set(dirs) | _adopted_dirs(p for p in adopt if p in owned and p not in m.owned)))
        changes = Changes(tuple(tally.create), tuple(tally.update), tuple(sorted(delete_sha)), tally.unchanged,
                          tally.seen, merged_files, merged, delete_sha, tally.modes, dirs,
                          {p: owned[p] for p in sorted(keep) if p in owned and p not in previous})
        return changes, owned, diags.sorted()

    def _adopted_keys(self, previous: Dict[str, dict],
                      adopt_keys: Optional[Mapping[str, Sequence[Tuple[str, ...]]]]) -> Dict[str, dict]:
        """`previous` (the manifest's merged files) with the keys a lock records of files the
        manifest does not know (`diff`'s `adopt_keys`), as far as the files hold them."""
        for path, paths in sorted((adopt_keys or {}).items()):
            if path in previous or not safe_path(path):
                continue
            try:
                raw = self._read(path)
                text = raw.decode("utf-8") if raw is not None else None
            except (UnicodeDecodeError, _NotFile, *_FS_ERRORS):
                continue  # reported when the file is merged, if it is
            fmt = "toml" if path.endswith(".toml") else "json"
            from agentrc.output import merge as managed  # noqa: F811 (imported where a file is merged)

            keys, alone = managed.adopt(fmt, text, paths) if text is not None else ((), False)
            if keys:
                previous = {**previous, path: {"format": fmt, "created": alone,
                                               "keys": [[list(k), v, a] for k, v, a in keys]}}
        return previous

    def _plain_dirs(self) -> Callable[[str], bool]:
        """Whether each component of a directory is a directory, not a link: each directory
        looked at once however many planned files it holds."""
        base = os.path.join(self.root, "")
        plain: Dict[str, bool] = {"": True}

        def plain_dir(d: str) -> bool:
            known = plain.get(d)
            if known is None:
                try:
                    known = plain_dir(d.rpartition("/")[0]) and stat.S_ISDIR(os.lstat(base + d).st_mode)
                except (OSError, ValueError):
                    known = False
                plain[d] = known
            return known
        return plain_dir

    def _compare(self, files: Sequence[OutputFile], tally: _Tally, diags: Diagnostics) -> None:
        """Each planned file against the disk, into `tally`: new, to update, or unchanged."""
        base = os.path.join(self.root, "")
        plain_dir = self._plain_dirs()
        # Directories found missing (`_Tree.absent`): a file in one is new, without asking the
        # disk (in a cold build, all but the first file of each directory).
        absent = self.tree.absent if self.tree is not None else set()
        owned, stats = tally.owned, tally.stats
        for f in files:
            if f.path.rpartition("/")[0] in absent:
                tally.create.append(f.path)
                continue
            recorded = stats.get(f.path)
            if recorded is not None and f.path in owned and plain_dir(f.path.rpartition("/")[0]):
                # The cheap check first, by path: a file with the size, mtime and mode recorded
                # after agentrc wrote it, and the digest agentrc would write now, in directories
                # that are directories (each looked at once), is neither read nor written (nor
                # its directory opened). Anything else, a link included, takes the careful way
                # below, which refuses a link anywhere (AR140) as before.
                try:
                    st = os.lstat(base + f.path)
                except (OSError, ValueError):
                    st = None
                if st is not None and stat.S_ISREG(st.st_mode) and _as_recorded(st, recorded, f, owned):
                    tally.unchanged += 1
                    tally.seen[f.path] = recorded
                    continue
            self._compare_carefully(f, tally, diags)

    def _compare_carefully(self, f: OutputFile, tally: _Tally, diags: Diagnostics) -> None:
        """One planned file against the disk through `_Tree` (never through a link), read
        unless its status is the one recorded; what may not be overwritten is an error."""
        owned, stats = tally.owned, tally.stats
        try:
            st = self._lstat(f.path)
            if st is None:
                tally.create.append(f.path)
                return
            if stat.S_ISLNK(st.st_mode):
                raise _Symlink(f.path)
            if not stat.S_ISREG(st.st_mode):
                raise _NotFile(f.path)
            is_exec = bool(st.st_mode & stat.S_IXUSR)
            if _as_recorded(st, stats.get(f.path), f, owned):
                tally.unchanged += 1  # size and mtime as recorded after our last write: not read again
                tally.seen[f.path] = stats[f.path]
                return
            current = self._read(f.path)
        except _FS_ERRORS as exc:
            diags.items.append(self._problem(exc, f.path))
            return
        if current == f.content and is_exec == f.executable:
            tally.unchanged += 1
            tally.seen[f.path] = _stat(st)
            return
        tally.modes[f.path] = stat.S_IMODE(st.st_mode)
        if f.path in tally.merged_files:
            tally.update.append(f.path)  # the user's file: only agentrc's keys changed
        elif f.path not in owned and tally.take_over:
            tally.update.append(f.path)  # --adopt: the hand-written file the sources now hold
        elif f.path not in owned:
            diags.error(self._show(f.path), (0, 0), "AR091", f"not written by agentrc; it would be "
                        f"overwritten by {f.owner} (the first build of an adopted repository: --adopt)")
        elif (current is None or sha(current) != owned[f.path]) and not tally.force:
            diags.error(self._show(f.path), (0, 0), "AR094", "edited since agentrc wrote it; rebuilding "
                        "would lose the edit")
        else:
            tally.update.append(f.path)

    def _stale(self, paths: Sequence[str], owned: Dict[str, str], force: bool,
               diags: Diagnostics) -> Dict[str, str]:
        """The owned files no longer planned that go (path -> the sha256 they have now),
        unless edited since agentrc wrote them (AR094, unless `force`)."""
        delete_sha: Dict[str, str] = {}
        for p in paths:
            try:
                st = self._lstat(p)
                if st is None or not stat.S_ISREG(st.st_mode):
                    continue  # gone, or replaced by something agentrc did not write: left alone
                current = self._read(p)
            except _FS_ERRORS as exc:
                diags.items.append(self._problem(exc, p))
                continue
            if current is None:
                continue
            if sha(current) != owned[p] and not force:
                diags.error(self._show(p), (0, 0), "AR094", "stale output edited since agentrc wrote it; not "
                            "deleting it")
                continue
            delete_sha[p] = sha(current)
        return delete_sha
