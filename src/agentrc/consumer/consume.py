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

import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar, cast

from agentrc.clients import registry as client_registry
from agentrc.consumer import consent, consumeplan
from agentrc.consumer import mcpcli as mcp_cli
from agentrc.consumer import write as consumer_write
from agentrc.consumer.reading import (  # noqa: E402 (the consumer's own modules after the stages it uses)
    ProjectFetcher,
    _built_files,
    _cross_cycles,
    _digested,
    _fetch_and_load,
    _judged,
    _redirected,
    _required_source,
)
from agentrc.consumer.records import _check_files, _merged_keys, _user_outputs, mcp_records, user_mcp_records
from agentrc.diagnostics import Diagnostic, Diagnostics, hide_credentials
from agentrc.files import OutputFile
from agentrc.inputs import config, lockread, projectfile
from agentrc.inputs.fetch import Fetched, Fetcher
from agentrc.model import Bundle, Registry, SourceTree
from agentrc.output import atomic, writer
from agentrc.output.plan import Plan
from agentrc.pipeline import stages
from agentrc.portable import checks, resolve
from agentrc.sources import closure, surface
from agentrc.sources import lock as lockfile
from agentrc.sources import plugins as plugin_forms
from agentrc.sources.dsl import PATH, Source, SourceError, parse
from agentrc.sources.lock import Entry, Lock, LockedFile

LOCK = lockfile.LOCK_FILE
lock_path, read_lock = lockread.lock_path, lockread.read_lock  # where other stages read a lock from
_F = TypeVar("_F", bound=Callable[..., Any])
WHERE = "<command line>"


@dataclass(frozen=True)
class Result:
    diagnostics: Tuple[Diagnostic, ...]
    lock: Optional[Lock] = None  # the lock written (or, for a check, the one read)
    changes: Optional[writer.Changes] = None
    entries: Tuple[Entry, ...] = ()  # what the command added or removed
    git_runs: int = 0
    updates: Tuple[Tuple[str, Optional[Entry], Optional[Entry]], ...] = ()  # update: (id, old, new)
    # update: ((layer, name), old, new) of the canonical project's capability references
    capability_updates: Tuple[Tuple[Tuple[str, str], Optional[lockfile.CapabilityRecord],
                                    Optional[lockfile.CapabilityRecord]], ...] = ()
    consent: Tuple[surface.Exposure, ...] = ()  # what needs the consumer's consent (AR229)
    planned: Optional[consumeplan.Planned] = None  # --dry-run: MCP servers, plugins, hooks

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def add(project: str, locator: str, bundles: Sequence[str] = (), items: Sequence[Tuple[str, str]] = (),
        clients: Sequence[str] = (), force: bool = False, cwd: Optional[str] = None, user: bool = False,
        allow_local: Sequence[str] = (), trust: bool = False, dry_run: bool = False) -> Result:
    """Install `bundles` and `items` of the source `locator` (everything when none is named).
    `allow_local`: local directories outside the project the consumer names (`--allow-local`);
    a local `locator` is one too. `dry_run`: write nothing, run no CLI; the result plans."""
    diags = Diagnostics()
    try:
        source = _relative_to(parse(locator), project, cwd or os.getcwd())
    except SourceError as exc:
        diags.error("<command line>", (0, 0), exc.code, str(exc))
        return Result(diags.sorted())
    allowed = tuple(allow_local) + ((source.location,) if source.kind == PATH else ())
    if dry_run:
        return _add(project, source, bundles, items, clients, force, user, None, allowed, trust, True)
    return _held(project, lambda out: _add(project, source, bundles, items, clients, force, user, out, allowed,
                                           trust))


def _held(project: str, run: Callable[[Optional[writer.Output]], Result]) -> Result:
    """`run` with the project's output directory held (the writer's lock) from before the
    lock file is read until after it is written: two commands on one project never both
    read the same lock and lose one's change. A project that is not there yet is made by
    the write (nobody else can have read its lock)."""
    if not os.path.isdir(project):
        return run(None)
    try:
        with writer.session(Path(project)) as out:
            return run(out)
    except writer.OutputError as exc:
        return Result(tuple(sorted(exc.diagnostics)))


def _add(project: str, source: Source, bundles: Sequence[str], items: Sequence[Tuple[str, str]],
         clients: Sequence[str], force: bool, user: bool, out: Optional[writer.Output],
         allowed: Sequence[str] = (), trust: bool = False, dry_run: bool = False) -> Result:
    read, lock_diags = read_lock(project, user)
    if any(d.is_error for d in lock_diags):
        return Result(lock_diags)
    lock = read or Lock(tuple(client_registry.DEFAULT_CLIENTS))
    if clients:
        lock = replace(lock, clients=tuple(clients))
    fetcher = ProjectFetcher(project, allowed)
    entries, found = _resolve([(source, bundles, items)], fetcher)
    if any(d.is_error for d in found):
        return Result(found, git_runs=fetcher.git_runs)
    merged, conflicts = closure.merge(lock, entries)
    if conflicts:
        return Result(conflicts, git_runs=fetcher.git_runs)
    result = _materialize(project, merged, fetcher, force, check=False, dry_run=dry_run, user=user, held=out,
                          previous=read, trust=trust)
    return replace(result, entries=entries, diagnostics=tuple(sorted(set(result.diagnostics + found))))


Selection = Tuple[Source, Sequence[str], Sequence[Tuple[str, str]]]
Pins = Dict[Tuple[Tuple[str, str, str], Optional[str]], Optional[str]]


def _consumed(run: _F) -> _F:
    """`run` with what it reads checked as consumed content (`checks.consuming`: a
    description over 1,024 characters does not block; issue 31)."""
    @functools.wraps(run)
    def checked(*args, **kwargs):  # type: ignore[no-untyped-def]
        with checks.consuming():
            return run(*args, **kwargs)
    return cast(_F, checked)


@_consumed
def _resolve(roots: Sequence[Selection], fetcher: Fetcher, pins: Optional[Pins] = None
             ) -> Tuple[Tuple[Entry, ...], Tuple[Diagnostic, ...]]:
    """The closure of the selection across sources (spec 001 §3.7): the selection's source
    first, then each `{ name, source }` reference met, each distinct source fetched once,
    every entry recorded with its own source and `required_by`. The same name from two
    sources (or refs) is AR206; a requires cycle through sources is AR071. `pins` holds
    the commits of (source, ref) pairs to take as they are locked instead of resolving
    the ref again (what `update NAME` leaves alone)."""
    diags = Diagnostics()
    found: List[Entry] = []
    cross: Set[Tuple[str, str]] = set()  # (parent id, child id) edges between sources
    done: Dict[Tuple[Tuple[str, str, str], Optional[str], str, str], bool] = {}
    queue: List[Tuple[Source, Sequence[str], Sequence[Tuple[str, str]], Optional[str],
                      Optional[closure.External]]] = [(src, b, i, None, None) for src, b, i in roots]
    loaded_by: Dict[Tuple[Tuple[str, str, str], Optional[str]], Tuple[Fetched, Registry]] = {}
    again: List[Tuple[str, str, str, str]] = []
    while queue:
        src, want_bundles, want_items, parent, via = queue.pop(0)
        key = (src.key, src.ref)
        if key not in loaded_by:
            got = _fetch_and_load(fetcher, src, (pins or {}).get(key), diags)
            if got is None:
                continue
            loaded_by[key] = got
        fetched, registry = loaded_by[key]
        required = registry.bundle(via.name) if via is not None and via.version is not None else None
        if via is not None and via.version is not None and required is not None:
            problem = resolve.version_problem(required, via.version)
            if problem is not None:
                diags.error(via.path, via.pos, problem[0], f"{via.parent} requires {problem[1]} (from {src.label})")
        externals: List[closure.External] = []
        asked = list(want_bundles)
        want_bundles = _redirected(fetched, registry, src, want_bundles, not want_items and parent is None, queue,
                                   diags)
        if asked and not want_bundles and not want_items:
            continue  # every plugin asked for lives in another repository
        entries, sel = closure.select(registry, _digested(fetched), fetched.root, src, fetched.commit,
                                      want_bundles, want_items, parent, externals)
        diags.extend(sel)
        missed = [n for n in list(want_bundles) + [name for _, name in want_items]
                  if any(d.code == "AR205" for d in sel)]
        diags.extend(_judged(fetched, registry, entries, missed))  # only the selected closure is linted
        found.extend(entries)
        for ext in externals:
            try:
                child = _required_source(src, ext.source, fetched.commit)
            except SourceError as exc:
                diags.error(ext.path, ext.pos, exc.code, f"requires {ext.kind} {ext.name} from "
                            f"{hide_credentials(ext.source)!r}: {exc}")
                continue
            cross.add((ext.parent, f"{ext.kind}:{ext.name}"))
            seen = (child.key, child.ref, ext.kind, ext.name)
            if done.get(seen):
                again.append((child.name, ext.kind, ext.name, ext.parent))  # only the provenance is new
                continue
            done[seen] = True
            if ext.kind == "bundle":
                queue.append((child, [ext.name], [], ext.parent, ext))
            else:
                queue.append((child, [], [(ext.kind, ext.name)], ext.parent, ext))
    if diags.has_errors:
        return (), diags.sorted()
    for name, kind, item, parent in again:
        found += [replace(e, direct=False, required_by=(parent,)) for e in found
                  if (e.kind, e.name, e.source) == (kind, item, name)][:1]
    merged, conflicts = closure.merge(Lock(()), found)
    diags.extend(conflicts)
    _cross_cycles(merged, cross, diags)
    registries = {fetched.source.name: reg for fetched, reg in loaded_by.values()}
    for e in merged.bundles:
        b = registries[e.source].bundle(e.name) if e.source in registries else None
        for server in (b.servers if b is not None else ()):
            for var in server.requires_env:
                if var not in os.environ:  # whether it is set; its value is never read
                    diags.warning(server.path, server.pos, "AR209", f"MCP server {server.name} requires the "
                                  f"environment variable {var}, which is not set")
    return merged.entries, diags.sorted()


def remove(project: str, names: Sequence[str], force: bool = False, user: bool = False,
           allow_local: Sequence[str] = (), dry_run: bool = False, clients: Sequence[str] = ()) -> Result:
    """Uninstall the directly installed bundles and items `names` (NAME or KIND:NAME) and
    whatever only they required; `dry_run` writes nothing, runs no CLI, and plans.
    `clients`: the project file's client set, installed for when the lock's differs."""
    if dry_run:
        return _remove(project, names, force, user, None, allow_local, True, clients)
    return _held(project, lambda out: _remove(project, names, force, user, out, allow_local, clients=clients))


def _remove(project: str, names: Sequence[str], force: bool, user: bool, out: Optional[writer.Output],
            allowed: Sequence[str] = (), dry_run: bool = False, clients: Sequence[str] = ()) -> Result:
    lock, diags = need_lock(project, user)
    if lock is None:
        return Result(diags)
    d = Diagnostics()
    hits = _named_direct(lock, names, d)
    if d.has_errors:
        return Result(d.sorted())
    after = closure.prune(lock, [(e.kind, e.name) for e in hits])
    if _other_clients(lock, clients):
        after = replace(after, clients=tuple(clients))
    removed = tuple(e for e in lock.entries if after.entry(e.kind, e.name) is None)
    result = _materialize(project, after, ProjectFetcher(project, allowed), force, check=False, dry_run=dry_run,
                          user=user, held=out, previous=lock)
    return replace(result, entries=removed)


def remove_mcp(project: str, names: Sequence[str], force: bool = False, user: bool = False,
               allow_local: Sequence[str] = ()) -> Result:
    """Unregister the MCP servers `names` from every target the lock configured them for
    (agentrc's entries leave each config file) and keep them out while their bundles stay
    installed (`mcps_removed`)."""
    return _held(project, lambda out: _remove_mcp(project, names, force, user, out, allow_local))


def _remove_mcp(project: str, names: Sequence[str], force: bool, user: bool, out: Optional[writer.Output],
                allowed: Sequence[str] = ()) -> Result:
    lock, diags = need_lock(project, user)
    if lock is None:
        return Result(diags)
    known = {str(dict(m).get("name")) for m in lock.mcps}
    d = Diagnostics()
    for name in names:
        if name not in known:
            d.error(WHERE, (0, 0), "AR207", f"no MCP server {name!r} is configured (configured: "
                    f"{', '.join(sorted(known)) or 'none'})")
    if d.has_errors:
        return Result(d.sorted())
    after = replace(lock, mcps_removed=lock.mcps_removed + tuple(names))
    return _materialize(project, after, ProjectFetcher(project, allowed), force, check=False, user=user, held=out)


def update(project: str, names: Sequence[str] = (), dry_run: bool = False, force: bool = False,
           user: bool = False, allow_local: Sequence[str] = (), trust: bool = False,
           ref: Optional[str] = None, clients: Sequence[str] = ()) -> Result:
    """Resolve the refs of the installed sources again (all, or the sources of the direct
    entries `names`) and install what they give now; `dry_run` writes nothing. The
    result's `updates` pairs each changed entry's old and new lock record. `ref`: re-pin
    the one source of the direct entries `names` to `ref` (moving v1 to v2): its direct
    entries are resolved there, the closure again, the consent gate for what changes.
    `clients`: the project file's client set, installed for when the lock's differs."""
    if dry_run:
        return _update(project, names, True, force, user, None, allow_local, trust, ref, clients)
    return _held(project, lambda out: _update(project, names, False, force, user, out, allow_local, trust, ref,
                                              clients))


def _split_names(lock: Lock, names: Sequence[str], d: Diagnostics) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """`names` split into capability references (`capability:NAME`, or a bare NAME the
    lock's `capabilities` hold and no direct entry has) and lock entries; AR207 in `d` for
    a capability the lock does not hold."""
    cap_names = {c.name for c in lock.capabilities}
    direct = {e.name for e in lock.entries if e.direct}
    named_caps: List[str] = []
    named_entries: List[str] = []
    for n in names:
        if n.startswith("capability:"):
            named_caps.append(n.split(":", 1)[1])
        elif n in cap_names and n not in direct:
            named_caps.append(n)
        else:
            named_entries.append(n)
    for n in named_caps:
        if n not in cap_names:
            d.error(WHERE, (0, 0), "AR207", f"capability {n!r} is not in the lock (locked: "
                    + (", ".join(sorted(cap_names)) or "none") + ")")
    return tuple(named_caps), tuple(named_entries)


def _repin(named: Sequence[Entry], ref: str, caps: Sequence[str], d: Diagnostics) -> Optional[Tuple[str, str]]:
    """update --ref: the one git source the direct entries `named` come from, and `ref`
    checked as a ref; None with the problem in `d` otherwise."""
    sources = sorted({e.source for e in named})
    if caps or len(sources) != 1:
        d.error(WHERE, (0, 0), "AR207", "--ref re-pins one source: name installed bundles or items of one source "
                f"(named: {', '.join(sources) or 'none'}" + (", and capabilities" if caps else "") + ")")
        return None
    try:
        source = parse(sources[0]).at(ref)
    except SourceError as exc:
        d.error(WHERE, (0, 0), exc.code, f"--ref {ref!r}: {exc}")
        return None
    if source.kind == PATH:
        d.error(WHERE, (0, 0), "AR200", f"--ref: {sources[0]} is a local directory, which has no refs")
        return None
    return sources[0], ref


def _update(project: str, names: Sequence[str], dry_run: bool, force: bool, user: bool,
            out: Optional[writer.Output], allowed: Sequence[str] = (), trust: bool = False,
            ref: Optional[str] = None, clients: Sequence[str] = ()) -> Result:
    lock, diags = need_lock(project, user)
    if lock is None:
        return Result(diags)
    d = Diagnostics()
    caps, names = _split_names(lock, names, d)
    named = _named_direct(lock, names, d)
    refresh: Set[Tuple[str, Optional[str]]] = {(e.source, e.ref) for e in named}
    moved = _repin(named, ref, caps, d) if ref is not None and not d.has_errors else None
    if d.has_errors:
        return Result(d.sorted())
    if not lock.entries or (caps and not names):
        return _update_capabilities(project, lock, Result((), lock), caps, dry_run) if not user else Result(())
    pins = _pins([e for e in lock.entries if (e.source, e.ref) not in refresh]) if names else {}
    parsed = _roots(lock, project, d, moved)
    if d.has_errors:
        return Result(d.sorted())
    fetcher = ProjectFetcher(project, allowed)
    entries, found = _resolve(parsed, fetcher, pins)
    if any(x.is_error for x in found):
        return Result(found, git_runs=fetcher.git_runs)
    target = replace(lock, entries=entries)
    if _other_clients(lock, clients):
        target = replace(target, clients=tuple(clients))
    result = _materialize(project, target, fetcher, force, check=False, dry_run=dry_run,
                          user=user, held=out, previous=lock, trust=trust)
    old = {e.id: e for e in lock.entries}
    new = {e.id: e for e in (result.lock.entries if result.lock is not None else entries)}
    updates = tuple((i, old.get(i), new.get(i)) for i in sorted(set(old) | set(new))
                    if old.get(i) is None or new.get(i) is None
                    or (old[i].ref, old[i].commit, old[i].sha256) != (new[i].ref, new[i].commit, new[i].sha256))
    result = replace(result, updates=updates, diagnostics=tuple(sorted(set(result.diagnostics + found))))
    if user or not result.ok or not lock.capabilities or (names and not caps):
        return result
    return _update_capabilities(project, lock, result, caps, dry_run)


def _update_capabilities(project: str, lock: Lock, result: Result, names: Tuple[str, ...],
                         dry_run: bool) -> Result:
    """The canonical project's capability references (`names`, or all) resolved at their
    refs again, and the lock's `capabilities` records replaced with what they give now; the
    client files follow at the next `agentrc build` (which reads the new commits)."""
    if not config.is_project(project):
        return result
    loaded, problems = config.load_project(project, unpin=names)
    if any(x.is_error for x in problems):
        return replace(result, diagnostics=tuple(sorted(set(result.diagnostics + problems))))
    old = {(c.layer, c.name): c for c in lock.capabilities}
    new = {(c.layer, c.name): c for c in loaded.capabilities}
    changed = tuple((key, old.get(key), new.get(key)) for key in sorted(set(old) | set(new))
                    if old.get(key) != new.get(key))
    base = result.lock or lock
    written = replace(base, capabilities=loaded.capabilities)
    if changed and not dry_run:
        where = lock_path(project)
        try:
            atomic.write_atomic(where, lockfile.dumps(written), project)
        except OSError as exc:
            d = Diagnostics()
            d.error(where, (0, 0), atomic.code_of(exc, "AR142"), f"cannot write the lock: {exc.strerror or exc}")
            return replace(result, diagnostics=tuple(sorted(set(result.diagnostics) | set(d.items))))
    return replace(result, lock=written, capability_updates=changed)


def _named_direct(lock: Lock, names: Sequence[str], d: Diagnostics) -> List[Entry]:
    """The direct entries each of `names` (NAME or KIND:NAME) names, in order; AR207 in `d`
    for a name that names none."""
    found: List[Entry] = []
    for name in names:
        kind, _, bare = name.rpartition(":")
        hits = [e for e in lock.entries if e.direct and e.name == bare and (not kind or e.kind == kind)]
        if not hits:
            direct = ", ".join(sorted(e.id for e in lock.entries if e.direct)) or "nothing"
            d.error(WHERE, (0, 0), "AR207", f"{name!r} is not installed directly (installed: {direct})")
        found.extend(hits)
    return found


Declared = Callable[[Lock], Sequence[str]]


def install(project: str, frozen: bool = False, force: bool = False, user: bool = False,
            allow_local: Sequence[str] = (), trust: bool = False, check: bool = False,
            declared: Optional[Declared] = None, clients: Sequence[str] = ()) -> Result:
    """Make the project hold exactly what its lock records.

    `check`: write nothing; every difference between the lock, the sources at their locked
    commits and the files is an error (AR204). `frozen` (npm ci, pnpm --frozen-lockfile,
    uv sync --frozen): install what the lock records, a fresh clone holding only the lock
    included, but only if the lock would be written back unchanged: a local source whose
    content moved, recorded files the sources do not give, an entry the locked commits
    resolve otherwise are AR204 and nothing is written; the lock itself is never written.
    `declared`: what in the lock does not match the project's declarations (the project
    file), one line each; under `frozen` or `check` each is AR204 (`lock_mismatch`).
    `clients`: the project file's client set, installed for when it differs from the lock's
    (the explicit edit that changes the set; `frozen` and `check` report it through `declared`)."""
    if check:
        return _install(project, "check", force, user, None, allow_local, trust, declared)
    mode = "frozen" if frozen else "install"
    return _held(project, lambda out: _install(project, mode, force, user, out, allow_local, trust, declared,
                                               clients))


def lock_mismatch(project: str, problems: Sequence[str], user: bool = False) -> Tuple[Diagnostic, ...]:
    """The errors saying the lock does not match the project file (each of `problems`):
    what `install --frozen` and `install --check` stop at (AR204, at the lock)."""
    d = Diagnostics()
    for problem in problems:
        d.error(lock_path(project, user), (0, 0), "AR204", f"the lock does not match the project file: {problem} "
                "('agentrc install' without --frozen brings the lock up to date)")
    return d.sorted()


def _install(project: str, mode: str, force: bool, user: bool, out: Optional[writer.Output],
             allowed: Sequence[str] = (), trust: bool = False, declared: Optional[Declared] = None,
             clients: Sequence[str] = ()) -> Result:
    lock, diags = need_lock(project, user)
    if lock is None:
        return Result(diags)
    if declared is not None and mode != "install":
        mismatch = lock_mismatch(project, declared(lock), user)
        if mismatch:
            return Result(mismatch)
    previous = None
    if mode == "install" and _other_clients(lock, clients):
        lock, previous = replace(lock, clients=tuple(clients)), lock
    return _materialize(project, lock, ProjectFetcher(project, allowed), force, check=mode == "check", user=user,
                        held=out, trust=trust, frozen=mode == "frozen", previous=previous)


def _other_clients(lock: Lock, clients: Sequence[str]) -> bool:
    """Whether the project file's set `clients` (empty: it declares none) is not the set the
    lock was installed for: the next command installs for it (issue 31, item 7)."""
    return bool(clients) and set(clients) != set(lock.clients)


def _frozen_entries(project: str, lock: Lock, fetcher: Fetcher, user: bool, diags: Diagnostics) -> None:
    """--frozen: the lock's entries must be what resolving its direct entries at the locked
    commits gives again (content digests, the closure, the commits); else AR204 for each
    difference, since installing would have to rewrite the lock."""
    mine = Diagnostics()  # `diags` may hold the build's errors already
    roots = _roots(lock, project, mine)
    diags.extend(mine.items)
    if mine.has_errors:
        return
    entries, found = _resolve(roots, fetcher, _pins(lock.entries))
    diags.extend(found)
    if any(x.is_error for x in found):
        return
    for problem in consumeplan.entry_drift(lock.entries, entries):
        diags.error(lock_path(project, user), (0, 0), "AR204", f"{problem}: the lock would have to change "
                    "(--frozen installs only what it records; 'agentrc update' resolves the sources again)")


def _roots(lock: Lock, project: str, d: Diagnostics, moved: Optional[Tuple[str, str]] = None) -> List[Selection]:
    """The lock's direct entries as selections by source and ref, in a stable order;
    `moved` (source, ref): that source's selections taken at `ref` instead (update --ref)."""
    roots: Dict[Tuple[str, Optional[str]], Tuple[List[str], List[Tuple[str, str]]]] = {}
    for e in lock.entries:
        if e.direct:
            ref = moved[1] if moved is not None and e.source == moved[0] else e.ref
            bundles, items = roots.setdefault((e.source, ref), ([], []))
            if e.kind == "bundle":
                bundles.append(e.name)
            else:
                items.append((e.kind, e.name))
    parsed: List[Selection] = []
    for (name, ref), (bundles, items) in sorted(roots.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        try:
            parsed.append((parse(name).at(ref), bundles, items))
        except SourceError as exc:
            d.error(os.path.join(project, LOCK), (0, 0), "AR203", f"source {name!r}: {exc}")
    return parsed


def _pins(entries: Sequence[Entry]) -> Pins:
    """The locked commit of each (source, ref) of `entries`: taken as it is, not resolved again."""
    pins: Pins = {}
    for e in entries:
        try:
            pins[(parse(e.source).at(e.ref).key, e.ref)] = e.commit
        except SourceError:
            pass  # reported when the root is parsed
    return pins


def need_lock(project: str, user: bool = False) -> Tuple[Optional[Lock], Tuple[Diagnostic, ...]]:
    lock, diags = read_lock(project, user)
    if lock is None and not diags:
        d = Diagnostics()
        d.error(lock_path(project, user), (0, 0), "AR203", "there is no lock " + ("for the user" if user else
                "in this project") + "; 'agentrc add SOURCE" + (" --global" if user else "") + "' makes one")
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
    elif rel != ".." and not rel.startswith("../"):
        rel = "./" + rel
    return Source(PATH, rel.rstrip("/") or ".", rel.rstrip("/") or ".", None, source.subpath)


@dataclass(frozen=True)
class _Rendered:
    """A lock's entries rendered again: the plan, the entries as verified, the plugin actions."""

    plan: Plan
    lock: Lock
    wanted: Tuple[plugin_forms.PluginAction, ...]
    surfaces: consent.Surfaces


@_consumed
def _render(project: str, lock: Lock, fetcher: Fetcher, check: bool, diags: Diagnostics,
            user: bool = False) -> Optional[_Rendered]:
    """Every locked source fetched at its locked commit, each entry's content checked against
    the lock, and the locked bundles and items planned for the lock's clients; None, with the
    problems in `diags`, when any of it fails."""
    groups: Dict[Tuple[str, Optional[str], Optional[str]], List[Entry]] = {}
    for e in lock.entries:
        groups.setdefault((e.source, e.ref, e.commit), []).append(e)
    files: List = []
    entrypoints: List[str] = []
    entries: List[Entry] = []
    locked_bundles: List[Bundle] = []
    surfaces: consent.Surfaces = {}
    for (name, ref, commit), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "",
                                                                              kv[0][2] or "")):
        try:
            source = parse(name).at(ref)
        except SourceError as exc:
            diags.error(os.path.join(project, LOCK), (0, 0), "AR203", f"source: {exc}")
            continue
        got = _fetch_and_load(fetcher, source, commit, diags, group)
        if got is None:
            continue
        fetched, registry = got
        files.extend(_built_files(fetched, registry, group))
        locked_bundles.extend(b for b in (registry.bundle(e.name) for e in group if e.kind == "bundle")
                              if b is not None)
        kept, points, problems = closure.verify(registry, _digested(fetched), fetched.root, group, source.label,
                                                fetched.commit, check or source.kind != PATH)
        diags.extend(problems)
        entries.extend(kept)
        entrypoints.extend(points)
        surfaces.update(consent.surfaces_of(registry, kept))
        if source.kind != PATH:
            consent.hidden_text(fetched.tree, registry, kept, diags)
    if diags.has_errors:
        return None
    lock = lock.with_entries(entries)
    tree = SourceTree(tuple(sorted({f.path: f for f in files}.values(), key=lambda f: f.path)))
    bundles = sorted(e.name for e in lock.bundles)
    wanted = tuple(plugin_forms.actions(locked_bundles, lock.clients))
    plan = stages.generate(tree, list(lock.clients), bundles or None, entrypoints=sorted(set(entrypoints)),
                           cross_source=True, skip_servers=frozenset(lock.mcps_removed),
                           extra_fragments=plugin_forms.config_fragments(wanted), report_plugins=False,
                           shared_copies=not user and _shares(project))
    diags.extend(plan.diagnostics)
    return _Rendered(plan, lock, wanted, surfaces) if plan.ok else None


def _shares(project: str) -> bool:
    """The project file's `shared-copies` (on without one, or with one that cannot be read:
    the command that reads it for its clients reports that). The user's global locations
    share nothing: the clients' user-level skill directories do not read each other's
    (Copilot CLI lists no personal skill from ~/.claude/skills)."""
    path = os.path.join(project, projectfile.FILE_NAME)
    if not os.path.isfile(path):
        return True
    found, _ = projectfile.load(path)
    return found.shares if found is not None else True


def _adoptable(project: str, lock: Lock, produced: Dict[str, str], previous: Optional[Lock], fetcher: Fetcher,
               diags: Diagnostics) -> Dict[str, str]:
    """The files of the lock agentrc may take as its own (path -> sha256). Where the project
    keeps agentrc's manifest (`.agentrc/`), the manifest decides: none. In a clone without
    it, a file is agentrc's only when the locked sources, rendered again, give that path with
    that digest: those of this command (`produced`), or of the lock as it was read
    (`previous`, whose removed entries still gave their files). A recorded file no locked
    source gives is an error (AR204), never deleted. (The caller asks only without `.agentrc/`.)"""
    recorded = {f.path: f.sha256 for f in lock.files if not f.merged}
    given = dict(produced)
    if previous is not None and any(given.get(p) != h for p, h in recorded.items()):
        again = _render(project, previous, fetcher, False, Diagnostics())
        if again is not None:
            given.update({f.path: writer.sha(f.content) for f in again.plan.files})
    for path, digest in sorted(recorded.items()):
        if given.get(path) != digest:
            diags.error(os.path.join(project, LOCK), (0, 0), "AR204", f"files: {path!r} is recorded, but no locked "
                        "source gives it with that digest: it is not agentrc's to replace or delete (restore the "
                        "lock from version control, or delete the entry)")
    return {p: h for p, h in recorded.items() if given.get(p) == h}


@dataclass(frozen=True)
class _Outputs:
    """What a rendered lock puts where: the project's (or the user's) files, the servers the
    clients' CLIs register (None: written into the config files instead), the new lock."""

    files: Tuple[OutputFile, ...]
    claude_servers: Optional[Dict[str, str]]
    copilot_servers: Optional[Dict[str, str]]
    lock: Lock


def _outputs(plan: Plan, lock: Lock, cli_from_lock: bool, user: bool, diags: Diagnostics) -> _Outputs:
    """The files, CLI registrations and lock records of `plan`. `cli_from_lock`: whether
    Claude's (and, globally, Copilot's) servers go through their CLIs is what the lock says
    (a check, a frozen install), not whether the CLI is on this machine's PATH."""
    old_mcps = [dict(m) for m in lock.mcps]
    out_files: Tuple[OutputFile, ...] = plan.files
    claude_servers: Optional[Dict[str, str]] = None  # what `claude mcp` registers (CLI first)
    claude_cli = "claude" in lock.clients and mcp_cli.claude_via_cli(old_mcps, cli_from_lock)
    copilot_servers: Optional[Dict[str, str]] = None
    skipped: Sequence[str] = ()
    if user:
        copilot_cli = "copilot" in lock.clients and mcp_cli.copilot_via_cli(old_mcps, cli_from_lock)
        out_files, servers, skipped = _user_outputs(plan.files, lock.clients, copilot_cli, diags,
                                                    set(lock.user_skipped))
        claude_servers = servers if claude_cli else None
        copilot_servers = servers if copilot_cli else None
        mcps = user_mcp_records(plan, claude_cli, copilot_cli)
    else:
        if claude_cli:
            claude_servers, out_files = mcp_cli.claude_entries(plan.files)
        mcps = mcp_records(plan, claude_servers is not None)
    installed = tuple(LockedFile(f.path, writer.sha(f.content), bool(f.merge)) for f in out_files)
    new_lock = replace(lock, files=installed, mcps=mcps, user_skipped=tuple(skipped) if user else ())
    return _Outputs(out_files, claude_servers, copilot_servers, new_lock)


_FETCH_CODES = frozenset({"AR201", "AR202", "AR203", "AR223", "AR226", "AR227", "AR228"})


def _materialize(project: str, lock: Lock, fetcher: Fetcher, force: bool, check: bool,
                 dry_run: bool = False, user: bool = False, held: Optional[writer.Output] = None,
                 previous: Optional[Lock] = None, trust: Optional[bool] = None, frozen: bool = False) -> Result:
    """Make the project hold what `lock` records (see the module's docstring). `trust`:
    the consent gate's answer (`consent.gate`; None for a removal, which asks nothing).
    `check`: write nothing, report every drift. `frozen`: install, but only if the lock
    would be written back unchanged (it is not written). `dry_run`: write nothing, run no
    CLI, and plan (`Result.planned`; consent that is missing is listed, not an error)."""
    diags = Diagnostics()
    read = lock
    consented = consent.approved(lock.entries, previous.entries if previous is not None else ())
    rendered = _render(project, lock, fetcher, check or frozen, diags, user)
    if frozen and (rendered is not None or not any(d.code in _FETCH_CODES for d in diags.items)):
        # The content matched (or failed to build): the closure and the commits must match too,
        # and a lock that lost an entry its sources require says so, not only the build's error.
        _frozen_entries(project, lock, fetcher, user, diags)
    if rendered is None or diags.has_errors:
        return Result(diags.sorted(), git_runs=fetcher.git_runs)
    gated, needed = consent.gate(rendered.lock.entries, rendered.surfaces, consented, trust,
                                 Diagnostics() if dry_run else diags)
    if needed and not dry_run:
        return Result(diags.sorted(), git_runs=fetcher.git_runs, consent=needed)
    lock = rendered.lock.with_entries(gated)
    outs = _outputs(rendered.plan, lock, check or frozen, user, diags)
    managed = os.path.lexists(os.path.join(project, writer.MANIFEST))  # then the manifest decides what is ours
    if user:
        adopt = {f.path: f.sha256 for f in lock.files if not f.merged}
    else:
        adopt = {} if managed else _adoptable(project, lock, {f.path: f.sha256 for f in outs.lock.files}, previous,
                                              fetcher, diags)
    if frozen:
        for problem in consumeplan.lock_drift(read, outs.lock):
            diags.error(lock_path(project, user), (0, 0), "AR204", f"{problem}: the lock would have to change "
                        "(--frozen installs only what it records; 'agentrc install' updates it)")
    if diags.has_errors:
        return Result(diags.sorted(), git_runs=fetcher.git_runs)
    adopt_keys = {} if user or managed else _merged_keys(lock)
    if check:
        _check_files(project, lock, outs.lock, outs.files, adopt, diags, adopt_keys)
        return Result(diags.sorted(), lock, git_runs=fetcher.git_runs)
    planned = None
    if dry_run:
        old_surfaces = None
        if previous is not None:
            again = _render(project, previous, fetcher, False, Diagnostics(), user)
            old_surfaces = again.surfaces if again is not None else None
        planned = consumeplan.planned(previous or replace(lock, mcps=(), plugins=()), outs.lock, rendered.wanted,
                                      rendered.surfaces, old_surfaces)
    wanted = consumer_write.Wanted(outs.files, outs.claude_servers, outs.copilot_servers, outs.lock, rendered.wanted)
    written = consumer_write.write(project, lock, wanted, force, adopt, adopt_keys, diags,
                                   consumer_write.How(dry_run, user, held, frozen))
    result = Result(diags.sorted(), written.lock, written.changes)
    if frozen and result.lock is not None:
        result = replace(result, lock=read)
    return replace(result, git_runs=fetcher.git_runs, planned=planned, consent=needed if dry_run else ())
