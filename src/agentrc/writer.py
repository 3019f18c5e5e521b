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
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from agentrc import __version__
from agentrc.clients.base import OutputFile
from agentrc.diagnostics import Diagnostic, Diagnostics

MANIFEST = ".agentrc/manifest.json"


@dataclass(frozen=True)
class Changes:
    create: Tuple[str, ...]
    update: Tuple[str, ...]
    delete: Tuple[str, ...]
    unchanged: int

    @property
    def empty(self) -> bool:
        return not (self.create or self.update or self.delete)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_manifest(root: Path, diags: Diagnostics) -> Tuple[Dict[str, str], Dict[str, list]]:
    """The files agentrc owns in `root` (path -> sha256) and their last seen [size, mtime_ns]."""
    path = root / MANIFEST
    if not path.exists():
        return {}, {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if not isinstance(files, dict):
            raise TypeError("files is not an object")
        stats = data.get("stat", {})
        return {str(k): str(v) for k, v in files.items()}, stats if isinstance(stats, dict) else {}
    except (ValueError, KeyError, TypeError) as exc:
        diags.error(str(path), (1, 1), "AR093", f"cannot read the ownership manifest: {exc}")
        return {}, {}


def diff(root: Path, files: Sequence[OutputFile]) -> Tuple[Changes, Dict[str, str], Tuple[Diagnostic, ...]]:
    """What writing `files` into `root` would change; errors for files agentrc does not own."""
    diags = Diagnostics()
    owned, stats = read_manifest(root, diags)
    create, update, unchanged = [], [], 0
    planned = {f.path for f in files}
    for f in files:
        target = root / f.path
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            create.append(f.path)
            continue
        if (owned.get(f.path) == sha(f.content) and stats.get(f.path) == [st.st_size, st.st_mtime_ns]
                and stat.S_ISREG(st.st_mode) and bool(st.st_mode & stat.S_IXUSR) == f.executable):
            unchanged += 1  # size and mtime as recorded after our last write: not read again
            continue
        if not target.exists() and not target.is_symlink():
            create.append(f.path)
            continue
        if target.is_dir() or target.is_symlink():
            diags.error(str(target), (0, 0), "AR091", "a directory or symlink stands where agentrc writes a file")
            continue
        current = target.read_bytes()
        same = current == f.content and _is_exec(target) == f.executable
        if same:
            unchanged += 1
        elif f.path not in owned:
            diags.error(str(target), (0, 0), "AR091", f"not written by agentrc; it would be overwritten by {f.owner}")
        elif sha(current) != owned[f.path]:
            diags.error(str(target), (0, 0), "AR094", "edited since agentrc wrote it; rebuilding would lose the edit")
        else:
            update.append(f.path)
    delete = []
    for p in sorted(p for p in owned if p not in planned and (root / p).is_file()):
        if sha((root / p).read_bytes()) != owned[p]:
            diags.error(str(root / p), (0, 0), "AR094", "stale output edited since agentrc wrote it; not deleting it")
        else:
            delete.append(p)
    return Changes(tuple(create), tuple(update), tuple(delete), unchanged), owned, diags.sorted()


def apply(root: Path, files: Sequence[OutputFile], changes: Changes) -> None:
    """Stage every new file, rename all into place, delete stale outputs, then the manifest."""
    by_path = {f.path: f for f in files}
    staged: List[Tuple[str, Path]] = []
    try:
        for path in changes.create + changes.update:
            staged.append((path, _stage(root / path, by_path[path])))
    except BaseException:
        for _, tmp in staged:
            tmp.unlink(missing_ok=True)
        raise
    for path, tmp in staged:
        os.replace(tmp, root / path)
    for path in changes.delete:
        target = root / path
        target.unlink(missing_ok=True)
        _prune(target.parent, root)
    stats = {}
    for f in files:
        st = os.stat(root / f.path)
        stats[f.path] = [st.st_size, st.st_mtime_ns]
    manifest = {"version": 1, "generator": f"agentrc {__version__}",
                "files": {f.path: sha(f.content) for f in sorted(files, key=lambda f: f.path)}, "stat": stats}
    mf = root / MANIFEST
    data = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    if mf.is_file() and mf.read_bytes() == data:
        return  # a no-op build leaves the directory byte- and mtime-stable
    os.replace(_stage(mf, OutputFile(MANIFEST, data)), mf)


def _stage(target: Path, f: OutputFile) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".agentrc-", dir=target.parent)
    with os.fdopen(fd, "wb") as out:
        out.write(f.content)
    os.chmod(name, 0o755 if f.executable else 0o644)
    return Path(name)


def _is_exec(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IXUSR)


def _prune(d: Path, root: Path) -> None:
    while d != root and d.is_dir() and not any(d.iterdir()):
        d.rmdir()
        d = d.parent
