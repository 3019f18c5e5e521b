"""The closure of a consumer's selection across sources (spec 001 §3.7): the selection's
source first, then each `{ name, source }` reference met, each distinct source fetched once,
every entry recorded with its own source and `required_by`. The same name from two sources
(or refs) is AR206; a requires cycle through sources is AR071.

A walk over a queue of (source, what is asked of it, who asked): `_Walk.visit` reads one
source and selects from it, `_Walk.follow` queues the sources its references name, and
`_Walk.finish` merges what was found into lock entries.
"""

from __future__ import annotations

import os
from dataclasses import replace

from agentrc.consumer.reading import (
    _cross_cycles,
    _digested,
    _fetch_and_load,
    _judged,
    _redirected,
    _required_source,
)
from agentrc.diagnostics import Diagnostic, Diagnostics, hide_credentials
from agentrc.inputs.fetch import Fetched, Fetcher
from agentrc.model import Registry
from agentrc.portable import resolve
from agentrc.sources import closure
from agentrc.sources.dsl import Source, SourceError
from agentrc.sources.lock import Entry, Lock

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Set, Tuple
    Selection = Tuple[Source, Sequence[str], Sequence[Tuple[str, str]]]
if TYPE_CHECKING:
    Pins = Dict[Tuple[Tuple[str, str, str], Optional[str]], Optional[str]]
if TYPE_CHECKING:
    _Queued = Tuple[Source, Sequence[str], Sequence[Tuple[str, str]], Optional[str], Optional[closure.External]]


def resolve_closure(roots: Sequence[Selection], fetcher: Fetcher, pins: Optional[Pins] = None
                    ) -> Tuple[Tuple[Entry, ...], Tuple[Diagnostic, ...]]:
    """The entries of the closure of `roots` and the diagnostics. `pins` holds the commits of
    (source, ref) pairs to take as they are locked instead of resolving the ref again (what
    `update NAME` leaves alone)."""
    walk = _Walk(fetcher, pins or {})
    queue: List[_Queued] = [(src, b, i, None, None) for src, b, i in roots]
    while queue:
        walk.visit(queue.pop(0), queue)
    return walk.finish()


class _Walk:
    def __init__(self, fetcher: Fetcher, pins: Pins):
        self.fetcher, self.pins = fetcher, pins
        self.diags = Diagnostics()
        self.found: List[Entry] = []
        self.cross: Set[Tuple[str, str]] = set()  # (parent id, child id) edges between sources
        self.done: Set[Tuple[Tuple[str, str, str], Optional[str], str, str]] = set()
        self.loaded_by: Dict[Tuple[Tuple[str, str, str], Optional[str]], Tuple[Fetched, Registry]] = {}
        self.again: List[Tuple[str, str, str, str]] = []

    def visit(self, queued: _Queued, queue: List[_Queued]) -> None:
        """One source read (once per source and ref) and what is asked of it selected."""
        src, want_bundles, want_items, parent, via = queued
        key = (src.key, src.ref)
        if key not in self.loaded_by:
            got = _fetch_and_load(self.fetcher, src, self.pins.get(key), self.diags)
            if got is None:
                return
            self.loaded_by[key] = got
        fetched, registry = self.loaded_by[key]
        self._check_version(registry, src, via)
        externals: List[closure.External] = []
        asked = list(want_bundles)
        want_bundles = _redirected(fetched, registry, src, want_bundles, not want_items and parent is None, queue,
                                   self.diags)
        if asked and not want_bundles and not want_items:
            return  # every plugin asked for lives in another repository
        entries, sel = closure.select(registry, _digested(fetched), fetched.root, src, fetched.commit,
                                      want_bundles, want_items, parent, externals)
        self.diags.extend(sel)
        missed = [n for n in list(want_bundles) + [name for _, name in want_items]
                  if any(d.code == "AR205" for d in sel)]
        self.diags.extend(_judged(fetched, registry, entries, missed))  # only the selected closure is linted
        self.found.extend(entries)
        for ext in externals:
            self.follow(src, fetched, ext, queue)

    def _check_version(self, registry: Registry, src: Source, via: Optional[closure.External]) -> None:
        """A reference's version constraint checked against the bundle it names (AR073)."""
        if via is None or via.version is None:
            return
        required = registry.bundle(via.name)
        if required is not None:
            problem = resolve.version_problem(required, via.version)
            if problem is not None:
                self.diags.error(via.path, via.pos, problem[0],
                                 f"{via.parent} requires {problem[1]} (from {src.label})")

    def follow(self, src: Source, fetched: Fetched, ext: closure.External, queue: List[_Queued]) -> None:
        """A reference to another source queued (once; a repeat only adds its provenance)."""
        try:
            child = _required_source(src, ext.source, fetched.commit)
        except SourceError as exc:
            self.diags.error(ext.path, ext.pos, exc.code, f"requires {ext.kind} {ext.name} from "
                             f"{hide_credentials(ext.source)!r}: {exc}")
            return
        self.cross.add((ext.parent, f"{ext.kind}:{ext.name}"))
        seen = (child.key, child.ref, ext.kind, ext.name)
        if seen in self.done:
            self.again.append((child.name, ext.kind, ext.name, ext.parent))  # only the provenance is new
            return
        self.done.add(seen)
        if ext.kind == "bundle":
            queue.append((child, [ext.name], [], ext.parent, ext))
        else:
            queue.append((child, [], [(ext.kind, ext.name)], ext.parent, ext))

    def finish(self) -> Tuple[Tuple[Entry, ...], Tuple[Diagnostic, ...]]:
        """What was found merged into lock entries (AR206 conflicts, AR071 cycles), and a
        warning for each MCP server's required variable that is not set (AR209)."""
        diags, found = self.diags, self.found
        if diags.has_errors:
            return (), diags.sorted()
        for name, kind, item, parent in self.again:
            found += [replace(e, direct=False, required_by=(parent,)) for e in found
                      if (e.kind, e.name, e.source) == (kind, item, name)][:1]
        merged, conflicts = closure.merge(Lock(()), found)
        diags.extend(conflicts)
        _cross_cycles(merged, self.cross, diags)
        registries = {fetched.source.name: reg for fetched, reg in self.loaded_by.values()}
        for e in merged.bundles:
            b = registries[e.source].bundle(e.name) if e.source in registries else None
            for server in (b.servers if b is not None else ()):
                for var in server.requires_env:
                    if var not in os.environ:  # whether it is set; its value is never read
                        diags.warning(server.path, server.pos, "AR209", f"MCP server {server.name} requires the "
                                      f"environment variable {var}, which is not set")
        return merged.entries, diags.sorted()
