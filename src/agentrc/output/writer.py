"""Writing a planned tree into an output directory it shares with other files.

The directory may be a consumer repository: agentrc records what it wrote in
`DIR/.agentrc/manifest.json`, so a rebuild deletes its own stale outputs and never
overwrites or deletes a file it did not write. All decisions are made before anything is
written; new contents are staged next to their targets and renamed into place, and the
manifest is written last.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Sequence, Tuple, Union

from agentrc import __version__
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.files import OutputFile
from agentrc.output import merge as managed

MANIFEST = ".agentrc/manifest.json"


@dataclass(frozen=True)
class Changes:
    create: Tuple[str, ...]
    update: Tuple[str, ...]
    delete: Tuple[str, ...]
    unchanged: int
    # [size, mtime_ns, mode] of unchanged files as diff() saw them, so apply() need not stat them again.
    seen: Dict[str, list] = field(default_factory=dict, compare=False, hash=False)
    # Files merged into what the user has (agentrc.output.merge): their merged bytes, and the
    # ownership record the manifest keeps for each (the keys agentrc added).
    merged_files: Dict[str, OutputFile] = field(default_factory=dict, compare=False, hash=False)
    merged: Dict[str, dict] = field(default_factory=dict, compare=False, hash=False)

    @property
    def empty(self) -> bool:
        return not (self.create or self.update or self.delete)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_manifest(root: Path, diags: Diagnostics) -> Tuple[Dict[str, str], Dict[str, list]]:
    """The files agentrc owns in `root` (path -> sha256) and their last seen [size, mtime_ns]."""
    owned, stats, _ = _read_manifest(root, diags)
    return owned, stats


def _read_manifest(root: Path, diags: Diagnostics) -> Tuple[Dict[str, str], Dict[str, list], Dict[str, dict]]:
    path = root / MANIFEST
    if not path.exists():
        return {}, {}, {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if not isinstance(files, dict):
            raise TypeError("files is not an object")
        stats = data.get("stat", {})
        merged = data.get("merged", {})
        if not isinstance(merged, dict):
            raise TypeError("merged is not an object")
        return ({str(k): str(v) for k, v in files.items()}, stats if isinstance(stats, dict) else {},
                {str(k): v for k, v in merged.items()})
    except (ValueError, KeyError, TypeError) as exc:
        diags.error(str(path), (1, 1), "AR093", f"cannot read the ownership manifest: {exc}")
        return {}, {}, {}


def _keys(record: dict) -> Tuple[managed.Key, ...]:
    return tuple((tuple(k), v, bool(a)) for k, v, a in record.get("keys", ()))


def _merge(root: Path, files: Sequence[OutputFile], owned: Dict[str, str], previous: Dict[str, dict],
           diags: Diagnostics) -> Tuple[List[OutputFile], Dict[str, OutputFile], Dict[str, dict]]:
    """Resolve files agentrc merges into users' files: read what is there, take out the keys
    agentrc added last time, put in this build's keys. Paths merged last time and not now
    lose agentrc's keys (and go away when agentrc created them and nothing else is left)."""
    base = str(root)
    out: List[OutputFile] = []
    resolved: Dict[str, OutputFile] = {}
    records: Dict[str, dict] = {}
    wanted = {f.path: f for f in files if f.merge}
    stale = [OutputFile(p, b"", False, "agentrc", str(r.get("format", "json")), ()) for p, r in sorted(previous.items())
             if p not in wanted]
    for f in list(files) + stale:
        if not f.merge:
            out.append(f)
            continue
        target = os.path.join(base, f.path)
        record = previous.get(f.path, {})
        old = _keys(record)
        created = bool(record.get("created", False))
        try:
            with open(target, "rb") as fh:
                current = fh.read().decode("utf-8")
        except FileNotFoundError:
            current, created = "", True
        except (UnicodeDecodeError, IsADirectoryError) as exc:
            diags.error(target, (0, 0), "AR097", f"cannot merge agentrc's keys into it: {exc}")
            continue
        if f.path in owned:
            if owned[f.path] != sha(current.encode()):
                diags.error(target, (0, 0), "AR094", "edited since an earlier agentrc wrote it whole; merge the edit "
                            "into the sources or delete the file, then rebuild")
                continue
            current, created = "", True  # written whole by an earlier agentrc: all of it is ours
        try:
            changed, missing = managed.edited(f.merge, current, old)
            for key in changed:
                diags.error(target, (0, 0), "AR094", f"{key} was edited since agentrc wrote it; rebuilding would "
                            "lose the edit")
            for key in missing:
                diags.warning(target, (0, 0), "AR094", f"an entry agentrc added under {key} was changed or removed; "
                              "agentrc adds it again")
            if changed:
                continue
            clashes = managed.conflicts(f.merge, current, old, f.keys)
            text = managed.render(f.merge, current, old, f.keys)
        except ValueError as exc:
            diags.error(target, (0, 0), "AR097", f"cannot merge agentrc's keys into it: {exc}")
            continue
        for key in clashes:
            diags.error(target, (0, 0), "AR096", f"defines {key!r} itself; agentrc would overwrite it ({f.owner})")
        if clashes:
            continue
        if f.merge == "json" and f.path in managed.STRICT_JSON and managed.has_comments(current):
            diags.warning(target, (0, 0), "AR098", "has comments, which agentrc keeps, but "
                          f"{managed.STRICT_JSON[f.path]} reads this file as strict JSON and would ignore it")
        if not f.keys and created and managed.is_empty(f.merge, text):
            continue  # stale, agentrc made it, nothing of the user's in it: delete (below)
        merged = OutputFile(f.path, text.encode("utf-8"), False, f.owner, f.merge, f.keys)
        resolved[f.path] = merged
        out.append(merged)
        if f.keys:
            records[f.path] = {"format": f.merge, "created": created, "keys": [[list(k), v, a] for k, v, a in f.keys]}
    return out, resolved, records


def diff(root: Union[str, Path], files: Sequence[OutputFile]) -> Tuple[Changes, Dict[str, str], Tuple[Diagnostic, ...]]:
    """What writing `files` into `root` would change; errors for files agentrc does not own."""
    diags = Diagnostics()
    owned, stats, previous = _read_manifest(Path(root), diags)
    files, merged_files, merged = _merge(Path(root), files, owned, previous, diags)
    base = str(root)
    create, update, unchanged = [], [], 0
    seen: Dict[str, list] = {}
    planned = {f.path for f in files}
    stale_merged = [p for p in previous if p not in planned and os.path.isfile(os.path.join(base, p))]
    for f in files:
        target = os.path.join(base, f.path)
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            create.append(f.path)
            continue
        if not stat.S_ISREG(st.st_mode):
            diags.error(target, (0, 0), "AR091", "a directory or symlink stands where agentrc writes a file")
            continue
        is_exec = bool(st.st_mode & stat.S_IXUSR)
        if (stats.get(f.path) == _stat(st) and is_exec == f.executable
                and owned.get(f.path) == sha(f.content)):
            unchanged += 1  # size and mtime as recorded after our last write: not read again
            seen[f.path] = _stat(st)
            continue
        with open(target, "rb") as fh:
            current = fh.read()
        if current == f.content and is_exec == f.executable:
            unchanged += 1
            seen[f.path] = _stat(st)
        elif f.path in merged_files:
            update.append(f.path)  # the user's file: only agentrc's keys changed
        elif f.path not in owned:
            diags.error(target, (0, 0), "AR091", f"not written by agentrc; it would be overwritten by {f.owner}")
        elif sha(current) != owned[f.path]:
            diags.error(target, (0, 0), "AR094", "edited since agentrc wrote it; rebuilding would lose the edit")
        else:
            update.append(f.path)
    delete = sorted(stale_merged)
    for p in sorted(p for p in owned if p not in planned and p not in previous
                    and os.path.isfile(os.path.join(base, p))):
        with open(os.path.join(base, p), "rb") as fh:
            if sha(fh.read()) != owned[p]:
                diags.error(os.path.join(base, p), (0, 0), "AR094",
                            "stale output edited since agentrc wrote it; not deleting it")
                continue
        delete.append(p)
    return (Changes(tuple(create), tuple(update), tuple(delete), unchanged, seen, merged_files, merged), owned,
            diags.sorted())


def apply(root: Union[str, Path], files: Sequence[OutputFile], changes: Changes) -> None:
    """Write new files in place and stage updates beside their targets; only when every
    write succeeded are updates renamed into place, stale outputs deleted and the manifest
    written. On failure everything this call created is removed again."""
    base = str(root)
    by_path = {f.path: f for f in files}
    by_path.update(changes.merged_files)
    files = [by_path[f.path] for f in files]
    created: List[str] = []
    written: Dict[str, list] = {}
    staged: List[Tuple[str, str]] = []
    made: set = set()
    try:
        for path in changes.create:
            # A new path holds nothing to protect: write it directly (O_EXCL: never clobber).
            target = os.path.join(base, path)
            written[path] = _write_new(target, by_path[path], made)
            created.append(target)
        for path in changes.update:
            staged.append((path, _stage(os.path.join(base, path), by_path[path], made)))
    except BaseException:
        for target in created:
            os.unlink(target)
        for _, tmp in staged:
            os.unlink(tmp)
        raise
    for path, tmp in staged:
        os.replace(tmp, os.path.join(base, path))
    for path in changes.delete:
        target = os.path.join(base, path)
        if os.path.exists(target):
            os.unlink(target)
        _prune(os.path.dirname(target), base)
    stats = {}
    for f in files:
        known = changes.seen.get(f.path) or written.get(f.path)
        stats[f.path] = known if known is not None else _stat(os.lstat(os.path.join(base, f.path)))
    manifest = {"version": 1, "generator": f"agentrc {__version__}",
                "files": {f.path: sha(f.content) for f in sorted(files, key=lambda f: f.path) if not f.merge},
                "stat": stats}
    if changes.merged:
        manifest["merged"] = changes.merged
    mf = os.path.join(base, MANIFEST)
    data = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    if os.path.isfile(mf):
        with open(mf, "rb") as fh:
            if fh.read() == data:
                return  # a no-op build leaves the directory byte- and mtime-stable
    os.replace(_stage(mf, OutputFile(MANIFEST, data), made), mf)


def manifest_digest(root: Path) -> str:
    try:
        with open(os.path.join(str(root), MANIFEST), "rb") as fh:
            return sha(fh.read())
    except OSError:
        return ""


def untouched(root: Path, digest: str) -> bool:
    """Whether the manifest is the one recorded and every owned file still has the size,
    mtime and mode recorded when it was written: then nobody changed the output tree."""
    if not digest or manifest_digest(root) != digest:
        return False
    owned, stats, merged = _read_manifest(Path(root), Diagnostics())
    base = str(root)
    for path in list(owned) + list(merged):
        try:
            st = os.lstat(os.path.join(base, path))
        except OSError:
            return False
        if stats.get(path) != _stat(st):
            return False
    return True


def _stat(st) -> list:
    return [st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode)]


def _write_new(target: str, f: OutputFile, made: set) -> list:
    """Create `target` (never clobbering: O_EXCL) and return its [size, mtime_ns, mode]."""
    parent = os.path.dirname(target)
    if parent not in made:
        os.makedirs(parent, exist_ok=True)
        made.add(parent)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755 if f.executable else 0o644)
    try:
        view = memoryview(f.content)
        while view:
            view = view[os.write(fd, view):]
        st = os.fstat(fd)
        if f.executable and not st.st_mode & stat.S_IXUSR:  # a umask took the bit
            os.fchmod(fd, 0o755)
            st = os.fstat(fd)
    finally:
        os.close(fd)
    return _stat(st)


def _stage(target: str, f: OutputFile, made: set) -> str:
    parent = os.path.dirname(target)
    if parent not in made:
        os.makedirs(parent, exist_ok=True)
        made.add(parent)
    fd, name = tempfile.mkstemp(prefix=".agentrc-", dir=parent)
    with os.fdopen(fd, "wb") as out:
        out.write(f.content)
    os.chmod(name, 0o755 if f.executable else 0o644)
    return name


def _prune(d: str, root: str) -> None:
    root = os.path.normpath(root)
    while os.path.normpath(d) != root and os.path.isdir(d) and not os.listdir(d):
        os.rmdir(d)
        d = os.path.dirname(d)


def write_atomic(path: Path, data: bytes) -> None:
    """One file outside any manifest (a report, a formatted source): written beside itself
    and renamed over, keeping its mode, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.agentrc-tmp")
    tmp.write_bytes(data)
    try:
        os.chmod(tmp, path.stat().st_mode & 0o777)
    except FileNotFoundError:
        pass
    os.replace(tmp, path)
