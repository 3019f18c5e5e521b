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
from dataclasses import replace

from agentrc.clients import registry as client_registry
from agentrc.consumer import consent, consumeplan, unchanged
from agentrc.consumer import write as consumer_write
from agentrc.consumer.reading import (
    ProjectFetcher,
    _required_source,  # noqa: F401 - tests and fuzz targets read it here
)
from agentrc.consumer.records import _check_files, _merged_keys
from agentrc.consumer.rendering import _adoptable, _consumed, _outputs, _render
from agentrc.consumer.resolving import resolve_closure
from agentrc.consumer.result import Result
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import lockread
from agentrc.inputs.fetch import Fetcher
from agentrc.output import atomic, writer
from agentrc.sources import closure
from agentrc.sources import lock as lockfile
from agentrc.sources.dsl import PATH, Source, SourceError, parse
from agentrc.sources.lock import Entry, Lock
from agentrc.text.lazy import lazy_module

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar

    from agentrc.consumer.resolving import Pins, Selection
    from agentrc.inputs import config
else:  # the canonical project's reader, imported when an update looks for its capabilities
    config = lazy_module("agentrc.inputs.config")


LOCK = lockfile.LOCK_FILE
lock_path, read_lock = lockread.lock_path, lockread.read_lock  # where other stages read a lock from
if TYPE_CHECKING:
    _F = TypeVar("_F", bound=Callable[..., Any])
WHERE = "<command line>"


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
        with writer.session(project) as out:
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
    fetcher = ProjectFetcher(project, allowed, lock.clients)
    entries, found = _resolve([(source, bundles, items)], fetcher)
    if any(d.is_error for d in found):
        return Result(found, git_runs=fetcher.git_runs)
    merged, conflicts = closure.merge(lock, entries)
    if conflicts:
        return Result(conflicts, git_runs=fetcher.git_runs)
    # Into a lock with no entries, this add resolved every entry of the new lock, as an update
    # would at the same commits: its stamp answers the update that follows (`unchanged`).
    whole = found if read is None or not read.entries else None
    result = _materialize(project, merged, fetcher, force, check=False, dry_run=dry_run, user=user, held=out,
                          previous=read, trust=trust, found=whole)
    return replace(result, entries=entries, diagnostics=tuple(sorted(set(result.diagnostics + found))))


# The closure across sources (consumer/resolving), read as consumed content; fuzzed under this name.
_resolve = _consumed(resolve_closure)


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
    fetcher = ProjectFetcher(project, allowed, clients if _other_clients(lock, clients) else lock.clients)
    entries, found = _resolve(parsed, fetcher, pins)
    if any(x.is_error for x in found):
        return Result(found, git_runs=fetcher.git_runs)
    target = replace(lock, entries=entries)
    if _other_clients(lock, clients):
        target = replace(target, clients=tuple(clients))
    result = _materialize(project, target, fetcher, force, check=False, dry_run=dry_run,
                          user=user, held=out, previous=lock, trust=trust, found=None if names else found)
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


if TYPE_CHECKING:
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
    fetcher = ProjectFetcher(project, allowed, lock.clients)
    return _materialize(project, lock, fetcher, force, check=mode == "check", user=user,
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
    keys: Dict[Tuple[str, Optional[str]], Any] = {}  # (source, ref) -> its key: a lock names a few, 1,000 times
    for e in entries:
        at = (e.source, e.ref)
        key = keys.get(at)
        if key is None:
            try:
                key = keys[at] = parse(e.source).at(e.ref).key
            except SourceError:
                continue  # reported when the root is parsed
        pins[(key, e.ref)] = e.commit
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


_FETCH_CODES = frozenset({"AR201", "AR202", "AR203", "AR223", "AR226", "AR227", "AR228"})


def _materialize(project: str, lock: Lock, fetcher: Fetcher, force: bool, check: bool,
                 dry_run: bool = False, user: bool = False, held: Optional[writer.Output] = None,
                 previous: Optional[Lock] = None, trust: Optional[bool] = None, frozen: bool = False,
                 found: Optional[Tuple[Diagnostic, ...]] = None) -> Result:
    """Make the project hold what `lock` records (see the module's docstring). `trust`:
    the consent gate's answer (`consent.gate`; None for a removal, which asks nothing).
    `check`: write nothing, report every drift. `frozen`: install, but only if the lock
    would be written back unchanged (it is not written). `dry_run`: write nothing, run no
    CLI, and plan (`Result.planned`; consent that is missing is listed, not an error). `found`:
    what resolving every source of `lock` again said (an update; `unchanged.save`)."""
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
    if result.ok and not dry_run:
        _kept(project, fetcher, result, written, None if user else found, user)
    if frozen and result.lock is not None:
        result = replace(result, lock=read)
    return replace(result, git_runs=fetcher.git_runs, planned=planned, consent=needed if dry_run else ())


def _kept(project: str, fetcher: Fetcher, result: Result, written: consumer_write.Written,
          found: Optional[Tuple[Diagnostic, ...]], user: bool) -> None:
    """What a command that worked parsed and rendered (the memo), and the stamp the next
    command with nothing to do answers from (`consumer.unchanged`; none for a global one)."""
    fetcher.save_memo()
    unchanged.save(project, None if user else written.lock, result.diagnostics, written.changes, written.output,
                   found)
