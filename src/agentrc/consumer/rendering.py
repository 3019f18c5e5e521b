"""A consumer's lock rendered: every locked source fetched at its locked commit, its entries
checked against their digests, the locked bundles and items built for the lock's clients by
the build's own pipeline, and what the write needs from the result (the files, the servers
that go through the clients' CLIs, the lock with what it installed)."""

from __future__ import annotations

import functools
import os
from dataclasses import replace

from agentrc.classcode import dataclass
from agentrc.consumer import consent
from agentrc.consumer import mcpcli as mcp_cli
from agentrc.consumer.reading import (  # noqa: E402 (the consumer's own modules after the stages it uses)
    _built_files,
    _digested,
    _fetch_and_load,
)
from agentrc.consumer.records import _user_outputs, mcp_records, user_mcp_records
from agentrc.diagnostics import Diagnostics
from agentrc.files import OutputFile
from agentrc.inputs import projectfile
from agentrc.inputs.fetch import Fetcher
from agentrc.model import Bundle, IgnoreList, SourceTree
from agentrc.output.plan import Plan
from agentrc.pipeline import stages
from agentrc.portable import checks
from agentrc.sources import closure
from agentrc.sources import lock as lockfile
from agentrc.sources import plugins as plugin_forms
from agentrc.sources.dsl import PATH, SourceError, parse
from agentrc.sources.lock import Entry, Lock, LockedFile

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

    _F = TypeVar("_F", bound=Callable[..., Any])

LOCK = lockfile.LOCK_FILE


def _consumed(run: _F) -> _F:
    """`run` with what it reads checked as consumed content (`checks.consuming`: a
    description over 1,024 characters does not block; issue 31)."""
    @functools.wraps(run)
    def checked(*args, **kwargs):  # type: ignore[no-untyped-def]
        with checks.consuming():
            return run(*args, **kwargs)
    return checked  # type: ignore[return-value]


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
                           shared_copies=not user and _shares(project),
                           ignore=IgnoreList() if user else _ignore(project),
                           memo=fetcher.memo)
    fetcher.settle()  # the plan has every entry it asked the workers for
    diags.extend(plan.diagnostics)
    return _Rendered(plan, lock, wanted, surfaces) if plan.ok else None


def _project_file(project: str):
    """The project's own agentrc.yaml, None without one or with one that cannot be read (the
    command that reads it for its clients reports that)."""
    path = os.path.join(project, projectfile.FILE_NAME)
    return projectfile.load(path)[0] if os.path.isfile(path) else None


def _shares(project: str) -> bool:
    """The project file's `shared-copies` (on without one). The user's global locations
    share nothing: the clients' user-level skill directories do not read each other's
    (Copilot CLI lists no personal skill from ~/.claude/skills)."""
    found = _project_file(project)
    return found.shares if found is not None else True


def _ignore(project: str) -> IgnoreList:
    """The project file's `ignore:` list, which each client's ignore file gets as `build`
    writes it (a global installation writes none: the list is a project's)."""
    found = _project_file(project)
    return found.ignore if found is not None else IgnoreList()


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
            given.update({f.path: f.sha256() for f in again.plan.files})
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
    installed = tuple(LockedFile(f.path, f.sha256(), bool(f.merge)) for f in out_files)  # by digest: unrendered
    new_lock = replace(lock, files=installed, mcps=mcps, user_skipped=tuple(skipped) if user else ())
    return _Outputs(out_files, claude_servers, copilot_servers, new_lock)


