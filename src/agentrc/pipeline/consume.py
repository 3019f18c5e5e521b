"""The consumer workflow (spec 001 §3.7): `agentrc add`, `install`, `remove`, `list`.

One transaction shape for all of them: a lock (read from the project, then changed by the
command) is made real. Every locked source is fetched at its locked commit (from the cache
when it is there, `agentrc.inputs.fetch`), each entry's content is checked against its
SHA-256 in the lock, the locked bundles and items are built for the lock's clients by the
same pipeline as `agentrc build` (`stages.generate`), and the project receives the files
through `output.writer` (atomic, under its ownership manifest: a file edited since agentrc
wrote it is never overwritten or deleted without `force`, AR094). The lock is written last,
with the files it installed and their digests. Nothing is written when anything is wrong.

The lock records every file it installed, so a fresh clone (the files committed, no
`.agentrc/`) is still known to be agentrc's: the writer adopts the files whose bytes match.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from agentrc.clients import registry as client_registry
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs.fetch import Fetched, Fetcher
from agentrc.inputs.tree import Root, read_file
from agentrc.model import Kind, SourceTree
from agentrc.output import writer
from agentrc.pipeline import stages
from agentrc.sources import closure
from agentrc.sources import lock as lockfile
from agentrc.sources.dsl import PATH, Source, SourceError, parse
from agentrc.sources.lock import Entry, Lock, LockedFile

LOCK = lockfile.LOCK_FILE


@dataclass(frozen=True)
class Result:
    diagnostics: Tuple[Diagnostic, ...]
    lock: Optional[Lock] = None  # the lock written (or, for a check, the one read)
    changes: Optional[writer.Changes] = None
    entries: Tuple[Entry, ...] = ()  # what the command added or removed
    git_runs: int = 0

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def read_lock(project: str) -> Tuple[Optional[Lock], Tuple[Diagnostic, ...]]:
    """The project's lock; (None, ()) when it has none."""
    path = os.path.join(project, LOCK)
    if not os.path.lexists(path):
        return None, ()
    diags = Diagnostics()
    f = read_file(path, path, Root(project), diags)
    if f is None:
        return None, diags.sorted()
    return lockfile.loads(f.content, path)


def add(project: str, locator: str, bundles: Sequence[str] = (), items: Sequence[Tuple[str, str]] = (),
        clients: Sequence[str] = (), force: bool = False, cwd: Optional[str] = None) -> Result:
    """Install `bundles` and `items` of the source `locator` (everything when none is named)."""
    diags = Diagnostics()
    try:
        source = _relative_to(parse(locator), project, cwd or os.getcwd())
    except SourceError as exc:
        diags.error("<command line>", (0, 0), exc.code, str(exc))
        return Result(diags.sorted())
    lock, lock_diags = read_lock(project)
    if any(d.is_error for d in lock_diags):
        return Result(lock_diags)
    lock = lock or Lock(tuple(client_registry.DEFAULT_CLIENTS))
    if clients:
        lock = replace(lock, clients=tuple(clients))
    fetcher = Fetcher(project)
    fetched = fetcher.fetch(source)
    if not fetched.ok:
        return Result(fetched.diagnostics, git_runs=fetcher.git_runs)
    loaded = stages.load(fetched.tree)
    if not loaded.ok:
        return Result(loaded.diagnostics, git_runs=fetcher.git_runs)
    entries, sel = closure.select(loaded.registry, fetched.tree, fetched.root, source, fetched.commit, bundles, items)
    if any(d.is_error for d in sel):
        return Result(sel, git_runs=fetcher.git_runs)
    merged, conflicts = closure.merge(lock, entries)
    if conflicts:
        return Result(conflicts, git_runs=fetcher.git_runs)
    result = _materialize(project, merged, fetcher, force, check=False)
    return replace(result, entries=entries, diagnostics=tuple(sorted(set(result.diagnostics + loaded.diagnostics))))


def remove(project: str, names: Sequence[str], force: bool = False) -> Result:
    """Uninstall the directly installed bundles and items `names` (NAME or KIND:NAME) and
    whatever only they required."""
    lock, diags = _need_lock(project)
    if lock is None:
        return Result(diags)
    d = Diagnostics()
    gone: List[Tuple[str, str]] = []
    for name in names:
        kind, _, bare = name.rpartition(":")
        hits = [e for e in lock.entries if e.direct and e.name == bare and (not kind or e.kind == kind)]
        if not hits:
            direct = ", ".join(sorted(e.id for e in lock.entries if e.direct)) or "nothing"
            d.error("<command line>", (0, 0), "AR157", f"{name!r} is not installed directly (installed: {direct})")
        gone.extend((e.kind, e.name) for e in hits)
    if d.has_errors:
        return Result(d.sorted())
    after = closure.prune(lock, gone)
    removed = tuple(e for e in lock.entries if after.entry(e.kind, e.name) is None)
    result = _materialize(project, after, Fetcher(project), force, check=False)
    return replace(result, entries=removed)


def install(project: str, frozen: bool = False, force: bool = False) -> Result:
    """Make the project hold exactly what its lock records. `frozen`: write nothing; every
    difference between the lock, the sources at their locked commits and the files is an
    error (AR154)."""
    lock, diags = _need_lock(project)
    if lock is None:
        return Result(diags)
    return _materialize(project, lock, Fetcher(project), force, check=frozen)


def _need_lock(project: str) -> Tuple[Optional[Lock], Tuple[Diagnostic, ...]]:
    lock, diags = read_lock(project)
    if lock is None and not diags:
        d = Diagnostics()
        d.error(os.path.join(project, LOCK), (0, 0), "AR153", "there is no lock in this project; "
                "'agentrc add SOURCE' makes one")
        diags = d.sorted()
    return lock, diags


def _relative_to(source: Source, project: str, cwd: str) -> Source:
    """A local directory typed relative to the working directory, recorded relative to the
    project (so the lock works from anywhere); absolute and ~ paths stay as written."""
    if source.kind != PATH or source.location.startswith(("/", "~")):
        return source
    rel = os.path.relpath(os.path.join(cwd, source.location), os.path.abspath(project)).replace(os.sep, "/")
    if rel == ".":
        rel = "./"
    elif not rel.startswith("../"):
        rel = "./" + rel
    return Source(PATH, rel.rstrip("/") or ".", rel.rstrip("/") or ".", None, source.subpath)


def _materialize(project: str, lock: Lock, fetcher: Fetcher, force: bool, check: bool) -> Result:
    diags = Diagnostics()
    groups: Dict[Tuple[str, Optional[str], Optional[str]], List[Entry]] = {}
    for e in lock.entries:
        groups.setdefault((e.source, e.ref, e.commit), []).append(e)
    files: List = []
    entrypoints: List[str] = []
    entries: List[Entry] = []
    for (name, ref, commit), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "",
                                                                              kv[0][2] or "")):
        try:
            source = parse(name).at(ref)
        except SourceError as exc:
            diags.error(os.path.join(project, LOCK), (0, 0), "AR153", f"source {name!r}: {exc}")
            continue
        fetched = fetcher.fetch(source, commit)
        diags.extend(fetched.diagnostics)
        if not fetched.ok:
            continue
        loaded = stages.load(fetched.tree)
        diags.extend(loaded.diagnostics)
        if not loaded.ok:
            continue
        files.extend(fetched.tree.files)
        entries.extend(_verify(fetched, loaded.registry, group, source, check or source.kind != PATH, diags,
                               entrypoints))
    if diags.has_errors:
        return Result(diags.sorted(), git_runs=fetcher.git_runs)
    lock = lock.with_entries(entries)
    tree = SourceTree(tuple(sorted({f.path: f for f in files}.values(), key=lambda f: f.path)))
    bundles = sorted(e.name for e in lock.bundles)
    plan = stages.generate(tree, list(lock.clients), bundles or None, entrypoints=sorted(set(entrypoints)))
    diags.extend(plan.diagnostics)
    if not plan.ok:
        return Result(diags.sorted(), git_runs=fetcher.git_runs)
    installed = tuple(LockedFile(f.path, writer.sha(f.content), bool(f.merge)) for f in plan.files)
    new_lock = replace(lock, files=installed)
    adopt = {f.path: f.sha256 for f in lock.files if not f.merged}
    if check:
        _check_files(project, lock, new_lock, plan.files, adopt, diags)
        return Result(diags.sorted(), lock, git_runs=fetcher.git_runs)
    changes = None
    try:
        with writer.session(Path(project), write=True) as out:
            changes, _, wdiags = out.diff(plan.files, force, adopt)
            diags.extend(wdiags)
            if not diags.has_errors:
                diags.extend(out.apply(plan.files, changes))
    except writer.OutputError as exc:
        diags.extend(exc.diagnostics)
        return Result(diags.sorted(), git_runs=fetcher.git_runs)
    if not diags.has_errors:
        raw = lockfile.dumps(new_lock)
        try:
            writer.write_atomic(Path(project) / LOCK, raw)
        except OSError as exc:
            diags.error(os.path.join(project, LOCK), (0, 0), "AR142", f"cannot write the lock: {exc.strerror or exc}")
    return Result(diags.sorted(), new_lock, changes, git_runs=fetcher.git_runs)


def _verify(fetched: Fetched, registry, group: Sequence[Entry], source: Source, strict: bool, diags: Diagnostics,
            entrypoints: List[str]) -> List[Entry]:
    """The entries of one source, checked against its content: an entry the source no longer
    has, or whose content differs from the lock's digest, is AR154 (for a local directory,
    whose content may change, the lock takes the new digest unless `strict`)."""
    out = []
    for e in group:
        if e.kind == "bundle":
            b = registry.bundle(e.name)
            path = b.path if b is not None else None
        else:
            item = registry.item(Kind(e.kind), e.name)
            path = item.directory if item is not None else None
            if item is not None:
                entrypoints.append(item.entrypoint)
        if path is None:
            diags.error(source.label, (0, 0), "AR154", f"the lock installs {e.kind} {e.name}, which "
                        f"{source.label}{_at(fetched.commit)} does not have")
            continue
        digest = closure.content_sha(fetched.tree, fetched.root, path)
        if digest != e.sha256:
            if strict:
                diags.error(path, (0, 0), "AR154", f"{e.kind} {e.name} of {source.label}{_at(fetched.commit)} does "
                            f"not have the content the lock records (sha256 {e.sha256[:12]}..., found "
                            f"{digest[:12]}...)")
                continue
            e = replace(e, sha256=digest)
        out.append(e)
    return out


def _at(commit: Optional[str]) -> str:
    return f" at {commit[:12]}" if commit else ""


def _check_files(project: str, lock: Lock, expected: Lock, planned, adopt: Dict[str, str],
                 diags: Diagnostics) -> None:
    """--frozen: the files the sources give are the ones the lock records, and the project
    holds them as written."""
    where = os.path.join(project, LOCK)
    recorded = {f.path: f for f in lock.files}
    for f in expected.files:
        old = recorded.pop(f.path, None)
        if old != f:
            diags.error(where, (0, 0), "AR154", f"{f.path}: the locked sources give "
                        + ("a file the lock does not record" if old is None else "other bytes than the lock records"))
    for path in sorted(recorded):
        diags.error(where, (0, 0), "AR154", f"{path}: the lock records a file the locked sources do not give")
    try:
        with writer.session(Path(project), write=False) as out:
            changes, _, wdiags = out.diff(planned, False, adopt)
    except writer.OutputError as exc:
        diags.extend(exc.diagnostics)
        return
    diags.extend(wdiags)
    for label, paths in (("missing", changes.create), ("differs from what agentrc installed", changes.update),
                         ("is installed but no longer locked", changes.delete)):
        for p in paths:
            diags.error(os.path.join(project, p), (0, 0), "AR154", f"{label}; 'agentrc install' restores it")
