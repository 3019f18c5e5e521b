"""Generation: a registry and a list of clients in, one merged project tree out.

`plan()` is pure. It renders every selected item for every client, adds each client's
project files, and checks that no two outputs need different bytes at one path (several
clients may legitimately write identical bytes to a shared path; that is merged).
"""

from __future__ import annotations

import functools
import hashlib
import operator
import os
import posixpath
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.clients import ignorefile
from agentrc.clients import registry as client_registry
from agentrc.clients.base import KIND_VALUE, SHARED_SKILL_DIR, ClientAdapter, RenderContext, Rendered, skill_names
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fidelity import DEGRADED, DROPPED, FieldOutcome, ItemReport
from agentrc.fidelity import outcome as shared_outcome
from agentrc.files import Fragment, OnDemand, OutputFile
from agentrc.model import Item, Kind, McpServer, Registry
from agentrc.output.discovery import (  # noqa: F401 - imported from here by the pipeline and tests
    DIFFERS,
    FOREIGN,
    ONLY,
    SECOND,
    SHARED,
    Sighting,
    _expand,
    _shared_context,
    _skill_name,
    _skills_of,
    _switches,
    _warn_cross_discovery,
    _with_sightings,
    cross_discovery,
)
from agentrc.output.totals import summary, summary_lines  # noqa: F401 (their old home)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Plan:
    """Every output file a build writes, with the reports and diagnostics planning them made."""
    files: Tuple[OutputFile, ...]  # sorted by path, unique paths
    reports: Tuple[ItemReport, ...]
    diagnostics: Tuple[Diagnostic, ...]
    intake: Tuple[ItemReport, ...] = ()  # the canonical front door's account of each entry's keys
    # What the adapters were told beyond the items (their skills' names, the names given to
    # items that would collide as Agent Skills): a replayed edit renders in the same context.
    context: Optional[RenderContext] = field(default=None, compare=False)
    # Output path -> how many renderings (or project files) planned its bytes, where more than
    # one: an incremental build replays such a file only when it renders every one of them
    # again, so their new bytes cannot clash unseen (AR090). Counted by the plan, not on the
    # files, which a memo kept across plans (pantsd's nodes) would count again in each.
    shared: Mapping[str, int] = field(default_factory=dict, compare=False)

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def plan(registry: Registry, clients: Sequence[ClientAdapter], items: Optional[Sequence[Item]] = None,
         strict: bool = False, memo=None, servers: Sequence[McpServer] = (), extra: Sequence[Fragment] = (),
         spill=None, shared_copies: bool = True) -> Plan:
    """`extra`: fragments from outside the adapters (a bundle plugin's opencode.json entry).
    `spill` (agentrc.output.spill.Spill): where a large plan keeps its items' rendered bytes.
    `shared_copies` (the project file's `shared-copies`): a client that would read another
    built client's copy of an item byte for byte gets no copy of its own (`shared_view`)."""
    items = registry.items if items is None else tuple(items)
    ctx = _context(items, clients, shared_copies)
    diags = Diagnostics()
    reports: List[ItemReport] = []
    by_path = _Planned()
    entries: Dict[Tuple[str, Kind, str], OutputFile] = {}
    fragments: Dict[str, List[Fragment]] = {}
    shared: Dict[Tuple[str, Kind, str], str] = {}  # (reader, kind, name) -> the copy it reads instead
    renders = _render_all(items, clients, ctx, memo, spill, shared)
    for c, adapter in enumerate(clients):
        client_reports = []
        rendered_by, renders[c] = renders[c], []
        for item, rendered in zip(items, rendered_by):
            client_reports.append(rendered.report)
            if rendered.files:
                entries[(adapter.name, item.kind, item.name)] = rendered.files[0]
            _collect(rendered, by_path, fragments, diags, item.entrypoint)
            _dropped(adapter, rendered, item.field_pos, item.entrypoint, strict, diags)
        for server in servers:
            rendered = adapter.render_server(server)
            client_reports.append(rendered.report)
            _collect(rendered, by_path, fragments, diags, server.path)
            _dropped(adapter, rendered, {}, server.path, strict, diags, server.pos)
        for name, config in registry.tools.items():
            if (name == adapter.name or name in adapter.aliases) and set(config) - {"ignore"}:
                rendered = adapter.render_tools(config, f"tools.{name}")
                client_reports.append(rendered.report)
                _collect(rendered, by_path, fragments, diags, f"tools.{name}")
                _dropped(adapter, rendered, {}, f"tools.{name}", strict, diags)
        client_reports.extend(_ignore_file(registry, adapter, by_path, diags, strict))
        for f in adapter.project_files(client_reports):
            _add(by_path, f, diags, f.path)
        reports.extend(client_reports)
    for key, path in shared.items():  # the copy a reader loads as its own, another client's file
        entries[key] = by_path[path]
    sightings = cross_discovery(clients, items, entries)
    for frag in _switches(clients, sightings):
        fragments.setdefault(frag.path, []).append(frag)
    for fr in extra:
        fragments.setdefault(fr.path, []).append(fr)
    # Imported here: a replayed edit renders from this module and merges nothing.
    from agentrc.output import merge as managed

    for path in sorted(fragments):
        assembled = managed.assemble(path, fragments[path], diags)
        if assembled is not None:
            _add(by_path, assembled, diags, path)
    _warn_cross_discovery(sightings, diags, clients)
    reports = _with_sightings(reports, sightings)
    _shared_context(clients, items, reports, diags)
    return Plan(tuple(by_path[p] for p in sorted(by_path)), tuple(reports), diags.sorted(), context=ctx,
                shared=by_path.producers)


class _Planned(dict[str, OutputFile]):
    """A plan's files by path, with how many renderings planned each path that more than one did."""

    def __init__(self) -> None:
        super().__init__()
        self.producers: Dict[str, int] = {}


def _ignore_file(registry: Registry, adapter: ClientAdapter, by_path: _Planned,
                 diags: Diagnostics, strict: bool) -> List[ItemReport]:
    """The client's ignore file from the project's list and its own `tools.<name>.ignore`,
    and its report (clients.ignorefile); nothing when neither names a pattern."""
    shared = registry.ignore
    groups: List[Tuple[str, Sequence[str]]] = []
    where: Optional[Tuple[str, Tuple[int, int]]] = None  # the first source, for AR092
    if shared.patterns:
        # Named by the file's name alone: the bytes must not depend on the directory a build ran from.
        groups.append((f"{posixpath.basename(shared.source.replace(os.sep, '/'))}: ignore", shared.patterns))
        where = (shared.source, shared.pos)
    for name in (adapter.name, *adapter.aliases):
        own = (registry.tools.get(name) or {}).get("ignore")
        if own:
            groups.append((f"tools.{name}.ignore", tuple(own)))
            where = where or (f"tools.{name}.ignore", (1, 1))
    if where is None:
        return []
    files, report = ignorefile.render(adapter, groups)
    for f in files:
        _add(by_path, f, diags, f.path)
    for o in report.fields:
        if o.status == DROPPED:
            (diags.error if strict else diags.warning)(where[0], where[1], "AR092",
                                                       f"{adapter.name}: the ignore list dropped: {o.detail}")
    return [report]


def render_all(registry: Registry, clients: Sequence[ClientAdapter], memo) -> None:
    """Every item of `registry` rendered for every client into `memo`, as `plan` renders
    them (the same context, the same order), and nothing else: the memo entries a build's
    worker makes for its share (`pipeline.warm`). The rest of `plan` (each rendering's
    files gathered, the checks across items and clients, the shared files assembled) is
    the build's, and a worker's plan threw it away: a tenth of its time at 10,000 items."""
    items = registry.items
    _render_all(items, clients, _context(items, clients), memo)


def _context(items: Sequence[Item], clients: Sequence[ClientAdapter], shared: bool = True) -> RenderContext:
    return client_registry.render_context(frozenset(i.name for i in items if i.kind is Kind.SKILL),
                                          frozenset(a.name for a in clients), skill_names(items), shared)


def _render_all(items: Sequence[Item], clients: Sequence[ClientAdapter], ctx: RenderContext, memo,
                spill=None, shared: Optional[Dict[Tuple[str, Kind, str], str]] = None) -> List[List[Rendered]]:
    """Each client's renderings of `items`, in their order. Each item is rendered for every
    client in turn, so that what the clients share (its formatted document,
    `RenderContext.formatted`) is kept for one item at a time; `plan` then takes the
    renderings client by client, in the order outputs, reports and conflicts have always
    been taken in."""
    outcomes: Dict[tuple, Tuple[FieldOutcome, ...]] = {}  # memo entries' field outcomes, made once each (`_unpack`)
    renders: List[List[Rendered]] = [[] for _ in clients]
    sharing = ctx.shared and len(clients) > 1 and any(_sources(a.name, k, ctx.clients) for a in clients
                                                       for k in a.also_reads)
    # A memo that defers its entries (`Memo.defer`: the CLI's build, which packs and pickles
    # them in a child while it writes) gets each new rendering as the plan keeps it (its
    # bytes spilled, not a second copy held) and packs it then (`_pack`, 3% of a cold build).
    # (With no spill, a plan's renderings keep their bytes: the memo gets them packed at once.)
    later: Optional[List[Tuple[tuple, Rendered]]] = [] if spill is not None and getattr(memo, "defer", False) \
        else None
    for item in items:
        plain = [_plain(adapter, item, ctx, memo, outcomes, later) for adapter in clients]
        own = list(plain) if later else plain  # (`plain` may take shared views: what to put, kept)
        if sharing:
            by_name = {a.name: r for a, r in zip(clients, plain)}
            for c, adapter in enumerate(clients):
                view = shared_view(adapter, item, ctx, plain[c], by_name.get)
                if view is not plain[c]:
                    plain[c] = view
                    if shared is not None:
                        shared[(adapter.name, item.kind, item.name)] = view.report.outputs[0]
        kept = [rendered if spill is None else spill.keep(rendered) for rendered in plain]
        for rendered_by, rendered in zip(renders, kept):
            rendered_by.append(rendered)
        if later:
            _put_later(memo, later, own, plain, kept)
        ctx.formatted.clear()
    return renders


def _put_later(memo, later: List[Tuple[tuple, Rendered]], own: List[Rendered], plain: List[Rendered],
               kept: List[Rendered]) -> None:
    """The renderings `_plain` made for one item into a deferring memo: as the plan keeps
    them, or packed now when the plan holds another in their place (a shared view: the
    rendering itself would keep its bytes in memory until the memo is saved)."""
    as_kept = {id(r): k for r, p, k in zip(own, plain, kept) if r is p}
    for key, rendered in later:
        held = as_kept.get(id(rendered))
        memo.put(key, held if held is not None else _pack(rendered, digests=memo.digests))
    later.clear()


def shared_view(reader: ClientAdapter, item: Item, ctx: RenderContext, own: Rendered,
                other: Callable[[str], Optional[Rendered]]) -> Rendered:
    """`own` (the reader's rendering of `item`), or, when the reader also reads a built
    client's directory that gets the same Agent Skill byte for byte (SKILL.md and every file
    beside it) and every copy of it the reader finds there is those bytes, the same report
    with no files: its outputs are that client's copy, which the reader loads as its own. So
    each item loads once (Copilot reads .claude/skills: no .github/skills copy), and files
    whose bytes differ are always written (the reader's own copy wins or is named, AR095).
    `other(name)`: that client's plain rendering of the item, or None."""
    if not ctx.shared or not own.files or own.fragments or reader.layout != "project":
        return own
    sources = _sources(reader.name, item.kind, ctx.clients)
    entry = own.files[0].path
    if not sources or not entry.endswith("/SKILL.md"):
        return own
    mine = _beside(own.files, entry)
    if mine is None:
        return own
    chosen: Optional[Rendered] = None
    for writer, prefix, primary in sources:
        theirs = other(writer)
        if theirs is None or not theirs.files:
            continue
        path = theirs.files[0].path
        if not path.startswith(prefix) or not path.endswith("/SKILL.md") or _skill_name(path) != _skill_name(entry):
            continue
        if path == entry or not _same_files(_beside(theirs.files, path), mine):
            return own  # the same file already, or a copy it reads that differs: its own copy stays
        if chosen is None and primary:
            chosen = theirs
    if chosen is None:
        return own
    report = object.__new__(ItemReport)
    report.__dict__.update(own.report.__dict__)
    report.__dict__["outputs"] = chosen.report.outputs
    return Rendered((), report, ())


def _beside(files: Sequence[OutputFile], entry: str) -> Optional[Dict[str, OutputFile]]:
    """{path under the entrypoint's directory: file}, or None when a file lies elsewhere (a
    copy to compare must be one directory, as a client loads a skill)."""
    base = entry[:-len("SKILL.md")]
    out = {}
    for f in files:
        if not f.path.startswith(base):
            return None
        out[f.path[len(base):]] = f
    return out


def _same_files(a: Optional[Dict[str, OutputFile]], b: Optional[Dict[str, OutputFile]]) -> bool:
    """Two skill directories (`_beside`) hold the same files, modes and bytes (compared by
    digest where one is known by its digest alone)."""
    if a is None or b is None or a.keys() != b.keys():
        return False
    return all(f.executable == b[k].executable and f.same_bytes(b[k]) for k, f in a.items())


@functools.lru_cache(maxsize=256)
def _sources(reader: str, kind: Kind, clients: FrozenSet[str]) -> Tuple[Tuple[str, str, bool], ...]:
    """(writer, the prefix its copy must have, whether its copy may be the shared one) of the
    built clients whose `kind` the reader also reads. A writer may hold the shared copy when
    it never gives up its own: it reads no other client's files of that kind, or only the
    shared directory it writes into itself (so no copy is shared twice over)."""
    adapter = client_registry.get([reader])[0]
    out = []
    for writer, prefix in _expand(adapter.also_reads.get(kind, ())):
        if writer == reader or writer not in clients:
            continue
        theirs = client_registry.get([writer])[0]
        reads = theirs.also_reads.get(kind, ())
        primary = not reads or (set(reads) == {SHARED_SKILL_DIR} and theirs.skill_dir == SHARED_SKILL_DIR)
        out.append((writer, prefix, primary))
    return tuple(out)


_status = operator.attrgetter("status")


def _collect(rendered: Rendered, by_path: _Planned, fragments: Dict[str, List[Fragment]],
             diags: Diagnostics, source: str) -> None:
    for f in rendered.files:
        _add(by_path, f, diags, source)
    for fr in rendered.fragments:
        fragments.setdefault(fr.path, []).append(fr)


def _dropped(adapter: ClientAdapter, rendered: Rendered, field_pos, source: str, strict: bool,
             diags: Diagnostics, default_pos=(0, 0)) -> None:
    fields = rendered.report.fields
    statuses = set(map(_status, fields))  # most renderings: one loop in C, and nothing to say
    if DEGRADED in statuses:
        for o in fields:
            if o.field == "name" and o.status == DEGRADED and o.detail.startswith("invoked as"):
                diags.warning(source, default_pos if default_pos != (0, 0) else (1, 1), "AR261",
                              f"{adapter.name}: {rendered.report.kind} {rendered.report.name} {o.detail.split(':')[0]}")
    if DROPPED not in statuses:
        return
    dropped = [o for o in fields if o.status == DROPPED]
    if len(dropped) == len([o for o in fields if o.status != "omitted"]) > 2:
        # The client has nothing for the whole item: one warning, not one per field.
        report = diags.error if strict else diags.warning
        report(source, default_pos if default_pos != (0, 0) else (1, 1), "AR092",
               f"{adapter.name}: {rendered.report.kind} {rendered.report.name} dropped: {dropped[0].detail}")
        return
    for outcome in fields:
        if outcome.status == DROPPED:
            report = diags.error if strict else diags.warning
            report(source, field_pos.get(outcome.field, default_pos), "AR092",
                   f"{adapter.name}: {rendered.report.kind} {rendered.report.name}: {outcome.field} dropped: "
                   f"{outcome.detail}")


# Why a client also loads another client's copy of an item (Sighting.why). SHARED: the copy is
# the one agentrc wrote for both (`shared_view`): loaded once, nothing to warn about.
def _render(adapter: ClientAdapter, item: Item, ctx: RenderContext, memo,
            outcomes: Optional[Dict[tuple, Tuple[FieldOutcome, ...]]] = None) -> Rendered:
    """`adapter`'s rendering of `item` as a plan takes it (`shared_view`): what an
    incremental build compares with the last build's (`memoized`)."""
    own = _plain(adapter, item, ctx, memo, outcomes)
    if not own.files or not getattr(ctx, "shared", False) or not adapter.also_reads.get(item.kind):
        return own  # (a context that does not say, as a test's stand-in, shares nothing)
    return shared_view(adapter, item, ctx, own, lambda name: _plain(
        client_registry.get([name])[0], item, ctx, memo, outcomes) if name in ctx.clients else None)


def _plain(adapter: ClientAdapter, item: Item, ctx: RenderContext, memo,
           outcomes: Optional[Dict[tuple, Tuple[FieldOutcome, ...]]] = None,
           later: Optional[List[Tuple[tuple, Rendered]]] = None) -> Rendered:
    """`adapter`'s own rendering of `item`, through the memo (which keeps these). `later`:
    a rendering made here goes there with its key instead (the caller puts it, `_put_later`)."""
    # An item renders from its own directory alone, so its digest (plus the client) is a
    # complete key; items without a digest (built in memory) are always rendered.
    if memo is None or not item.digest:
        return adapter.render(item, ctx)
    key = render_key(adapter, item, ctx)
    hit = memo.get(key)
    if isinstance(hit, Rendered):  # held unpacked by whoever handed the memo its entries (`unpacked`)
        return hit
    if hit is not None:
        return _unpack(hit, lambda: adapter.render(item, ctx), {} if outcomes is None else outcomes)
    rendered = adapter.render(item, ctx)
    if later is not None:
        later.append((key, rendered))
    else:
        memo.put(key, _pack(rendered, digests=getattr(memo, "digests", False)))
    return rendered


def render_key(adapter: ClientAdapter, item: Item, ctx: RenderContext) -> tuple:
    """The memo key of `item` rendered by `adapter` in a build of `ctx`. The skill name is in
    it too: it depends on the other items of the build (`skill_names`)."""
    kind = KIND_VALUE[item.kind]
    return ("render", adapter.name, adapter.layout, kind, item.name, item.digest, _sorted(ctx.clients),
            ctx.renamed.get((kind, item.name), ""))


def memoized(adapter: ClientAdapter, item: Item, ctx: RenderContext, memo) -> Optional[Rendered]:
    """The rendering the memo holds for `item`, as `_render` would give it, or None when it
    holds none (nothing is rendered): what an incremental build compares a new rendering with."""
    own = _memoized(adapter, item, ctx, memo)
    if own is None or not own.files or not getattr(ctx, "shared", False) or not adapter.also_reads.get(item.kind):
        return own
    return shared_view(adapter, item, ctx, own, lambda name: _memoized(
        client_registry.get([name])[0], item, ctx, memo) if name in ctx.clients else None)


def _memoized(adapter: ClientAdapter, item: Item, ctx: RenderContext, memo) -> Optional[Rendered]:
    hit = memo.get(render_key(adapter, item, ctx)) if item.digest else None
    if hit is None or isinstance(hit, Rendered):  # held unpacked (`unpacked`), as `_plain` takes it
        return hit

    def unavailable() -> Rendered:
        raise LookupError(f"{item.label}: the memo holds its files' digests, not their bytes")
    return _unpack(hit, unavailable, {})


@functools.lru_cache(maxsize=64)
def _sorted(clients: FrozenSet[str]) -> Tuple[str, ...]:
    """The build's clients in a memo key: sorted once per build, not once per rendering."""
    return tuple(sorted(clients))


def _pack(r: Rendered, digests: bool = False) -> tuple:
    """Plain tuples: a memo of thousands of renders unpickles several times faster so.
    `digests` (a memo kept on disk, `Memo.digests`): each file's sha256 where its bytes would
    be, as `digests_only` would put it, but hashed by the file itself (`OutputFile.sha256`,
    computed once), so the output manifest reuses it: every output is hashed once, not twice."""
    rep = r.report
    # Every field of a file, its merge format and keys too: without them a memoized CLAUDE.md
    # came back as a whole file, which the writer then owned (and deleted as stale) whole.
    return (tuple((f.path, f.sha256() if digests else f.content, f.executable, f.owner, f.merge, f.keys)
                  for f in r.files),
            (rep.client, rep.kind, rep.name, rep.source, rep.generated, rep.outputs,
             tuple((o.field, o.status, o.detail) for o in rep.fields)),
            tuple((f.path, f.format, f.key, f.value, f.append, f.owner) for f in r.fragments))


def digests_only(packed: tuple, known: Optional[Dict[int, str]] = None) -> tuple:
    """A memo entry of `_pack` with each file's bytes replaced by their sha256 (hex): what
    the CLI's memo keeps on disk. Fragments stay whole: files are assembled from them.
    `known`: digests already taken, by the id of the bytes (a worker's spilled files)."""
    files, report, frags = packed
    get = (known or {}).get
    # Each digest as `OutputFile.sha256` takes it, without an OutputFile made for it.
    return (tuple((p, c if isinstance(c, str) else get(id(c)) or hashlib.sha256(c).hexdigest(), *rest)
                  for p, c, *rest in files),
            report, frags)


def as_packed(entry: Any) -> tuple:
    """A render entry of a memo as `_pack` makes it (digests for its files): a deferring
    memo holds the renderings themselves until it is saved (`_put_later`)."""
    return _pack(entry, digests=True) if isinstance(entry, Rendered) else entry


def unpacked(packed: tuple) -> Optional[Rendered]:
    """A render entry of `_pack` as the Rendered a plan takes as it is, for a holder that
    keeps its entries across builds (the Pants plugin's item directory nodes in pantsd):
    a plan then unpacks only what changed (inside pantsd, a 5,000-item edit's plan went from
    0.76-0.82 s to 0.69-0.72 s). None when a file is kept as a digest or elsewhere (a
    memo on disk, a worker's spill): those stay packed, their bytes read when needed."""
    if not all(isinstance(f[1], bytes) for f in packed[0]):
        return None
    return _unpack(packed, _no_rendering, {})


def _no_rendering() -> Rendered:
    raise AssertionError("an entry whose files are all bytes never renders again")


def _unpack(packed: tuple, again: Callable[[], Rendered], outcomes: Dict[tuple, Tuple[FieldOutcome, ...]]
            ) -> Rendered:
    """The rendering a memo entry holds. A file kept as a digest gets its bytes from
    `again()` (the item rendered once more) if and when they are read. `outcomes`: the
    FieldOutcomes made so far in this plan, by their (field, status, detail) triples."""
    files, (client, kind, name, source, generated, outputs, fields), frags = packed
    fresh: Dict[str, bytes] = {}

    def produce(path: str) -> Callable[[], bytes]:
        def content() -> bytes:
            if not fresh:
                fresh.update((f.path, f.content) for f in again().files)
            return fresh[path]
        return content

    return Rendered(tuple(OutputFile(*f) if isinstance(f[1], bytes)
                          else OnDemand(f[0], f[1], produce(f[0]), *f[2:]) if isinstance(f[1], str)
                          else f[1].file(f[0], f[2], f[3])  # a worker's spilled bytes (`spill.Ref`)
                          for f in files),
                    ItemReport(client, kind, name, source, generated, outputs, _outcomes(fields, outcomes)),
                    tuple(Fragment(*f) for f in frags))


def _outcomes(fields: tuple, made: Dict[tuple, Tuple[FieldOutcome, ...]]) -> Tuple[FieldOutcome, ...]:
    """The FieldOutcomes of a memo entry's (field, status, detail) triples, made once per
    distinct set in a plan (`made`): items of one kind mostly share theirs, and one edit at
    5,000 items made 120,000 of them (they are frozen, so one tuple serves every report)."""
    known = made.get(fields)
    if known is None:
        known = made[fields] = tuple(shared_outcome(*o) for o in fields)
    return known


def _add(by_path: _Planned, f: OutputFile, diags: Diagnostics, source: str) -> None:
    other = by_path.get(f.path)
    if other is None:
        by_path[f.path] = f
    elif other.executable != f.executable or not other.same_bytes(f):
        diags.error(source, (0, 0), "AR090", f"{f.path}: {f.owner} and {other.owner} need different bytes")
    else:  # one more producer: an incremental build replays it only with all of them
        by_path.producers[f.path] = by_path.producers.get(f.path, 1) + 1
