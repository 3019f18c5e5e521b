"""Generation: a registry and a list of clients in, one merged project tree out.

`plan()` is pure. It renders every selected item for every client, adds each client's
project files, and checks that no two outputs need different bytes at one path (several
clients may legitimately write identical bytes to a shared path; that is merged).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from agentrc.clients import registry as client_registry
from agentrc.clients.base import KIND_VALUE, SHARED_SKILL_DIR, ClientAdapter, RenderContext, Rendered, skill_names
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fidelity import DEGRADED, DROPPED, FieldOutcome, ItemReport
from agentrc.fidelity import outcome as shared_outcome
from agentrc.files import Fragment, OnDemand, OutputFile
from agentrc.model import Item, Kind, McpServer, Registry
from agentrc.output import merge as managed
from agentrc.output.totals import summary, summary_lines  # noqa: F401 (their old home)


@dataclass(frozen=True)
class Plan:
    files: Tuple[OutputFile, ...]  # sorted by path, unique paths
    reports: Tuple[ItemReport, ...]
    diagnostics: Tuple[Diagnostic, ...]
    intake: Tuple[ItemReport, ...] = ()  # the canonical front door's account of each entry's keys
    # What the adapters were told beyond the items (their skills' names, the names given to
    # items that would collide as Agent Skills): a replayed edit renders in the same context.
    context: Optional[RenderContext] = field(default=None, compare=False)

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
    by_path: Dict[str, OutputFile] = {}
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
            if name == adapter.name or name in adapter.aliases:
                rendered = adapter.render_tools(config, f"tools.{name}")
                client_reports.append(rendered.report)
                _collect(rendered, by_path, fragments, diags, f"tools.{name}")
                _dropped(adapter, rendered, {}, f"tools.{name}", strict, diags)
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
    for path in sorted(fragments):
        assembled = managed.assemble(path, fragments[path], diags)
        if assembled is not None:
            _add(by_path, assembled, diags, path)
    _warn_cross_discovery(sightings, diags, clients)
    reports = _with_sightings(reports, sightings)
    _shared_context(clients, items, reports, diags)
    return Plan(tuple(by_path[p] for p in sorted(by_path)), tuple(reports), diags.sorted(), context=ctx)


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
    for item in items:
        plain = [_plain(adapter, item, ctx, memo, outcomes) for adapter in clients]
        if sharing:
            by_name = {a.name: r for a, r in zip(clients, plain)}
            for c, adapter in enumerate(clients):
                view = shared_view(adapter, item, ctx, plain[c], by_name.get)
                if view is not plain[c]:
                    plain[c] = view
                    if shared is not None:
                        shared[(adapter.name, item.kind, item.name)] = view.report.outputs[0]
        for rendered_by, rendered in zip(renders, plain):
            rendered_by.append(rendered if spill is None else spill.keep(rendered))
        ctx.formatted.clear()
    return renders


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


def _collect(rendered: Rendered, by_path: Dict[str, OutputFile], fragments: Dict[str, List[Fragment]],
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
FOREIGN, ONLY, DIFFERS, SECOND, SHARED = "foreign", "only", "differs", "second", "shared"


@dataclass(frozen=True)
class Sighting:
    """One copy of an item that `reader` also loads from another client's directory: the
    facts behind both AR095 and the item's `also_loaded_by` in the fidelity report."""

    reader: str
    writers: Tuple[str, ...]  # the clients whose output `path` is
    kind: Kind
    name: str
    path: str
    why: str  # FOREIGN: outside its audience; ONLY: its only copy; DIFFERS: a name clash; SECOND: loaded too;
    # SHARED: the one copy written for both
    own: str = ""  # the reader's own copy of the item
    own_wins: bool = False  # DIFFERS: the reader documents that its own copy wins
    audience: Tuple[str, ...] = ()
    hidden: str = ""  # the reader's switch agentrc wrote to hide the copy ("" = it is loaded)

    @property
    def skill(self) -> str:
        """The skill name the copy is loaded by, or "" when it is not a skill."""
        return _skill_name(self.path)

    def detail(self) -> str:
        """What happens, in the words the report and AR095 share."""
        if self.hidden:
            return f"hidden from {self.reader} by {self.hidden}"
        if self.why == FOREIGN:
            return f"{self.reader} loads it although its audience ({', '.join(self.audience)}) excludes {self.reader}"
        if self.why == ONLY:
            return f"{self.reader} loads it from here (it has no copy of its own)"
        if self.why == SHARED:
            return (f"{self.reader} loads it from here as its own: the same bytes, so agentrc writes no second copy "
                    "(shared-copies)")
        if self.why == SECOND:
            return f"{self.reader} loads it a second time, beside its own copy {self.own}"
        which = "its own copy wins" if self.own_wins else "which of the two it loads is not defined"
        return f"{self.reader} has its own copy {self.own}, which differs; {which}"


def cross_discovery(clients: Sequence[ClientAdapter], items: Sequence[Item],
                    entries: Dict[Tuple[str, Kind, str], OutputFile]) -> List[Sighting]:
    """Every copy of an item that a built client also loads from another built client's
    directory (its `also_reads`), unless the copy is the same file as its own. A copy is
    hidden by the reader's own switch (`skill_switch`) when it is a skill the reader has no
    skill of its own by, and the reader is outside the item's audience or has the item in
    another form already (a rule it loads as an instruction, a command). A reader's entry
    that another client wrote (its owner) is the shared copy it loads as its own (`shared_view`):
    a SHARED sighting, and the other copies it finds are those bytes too."""
    built = {a.name for a in clients}
    of_kind: Dict[Kind, Dict[str, Item]] = {}
    for i in items:
        of_kind.setdefault(i.kind, {})[i.name] = i
    found: List[Sighting] = []
    # Client -> the skill names of its entrypoints, made when a copy could first be hidden
    # (one pass over every entry for all readers, not one per reader; none in most builds).
    skills_of: Optional[Dict[str, Set[str]]] = None
    for reader in clients:
        for kind, others in reader.also_reads.items():
            at: Dict[Tuple[str, str], List[str]] = {}  # (item, path) -> writers: .agents/skills is shared
            for other, prefix in _expand(others):
                if other not in built or other == reader.name:
                    continue
                for name in of_kind.get(kind, {}):
                    theirs = entries.get((other, kind, name))
                    if theirs is not None and theirs.path.startswith(prefix):
                        at.setdefault((name, theirs.path), []).append(other)
            by_name = of_kind.get(kind, {})
            for (name, path), writers in at.items():
                item, theirs = by_name[name], entries[(writers[0], kind, name)]
                mine = entries.get((reader.name, kind, name))
                if mine is not None and not mine.owner.startswith(reader.name + ":"):  # the shared copy
                    if mine.path == path:
                        found.append(Sighting(reader.name, tuple(writers), kind, name, path, SHARED, path,
                                              audience=tuple(item.audience)))
                    continue  # another copy of the same bytes (`shared_view` checked every one)
                if mine is not None and mine.path == path:
                    continue
                own = mine.path if mine is not None else ""
                if mine is None:
                    why = ONLY if item.targets(reader.family) else FOREIGN
                elif _same_slot(kind, mine.path, path):
                    if mine.same_bytes(theirs):
                        continue  # the same item under the same name: nothing changes
                    why = DIFFERS
                else:
                    why = SECOND
                sighting = Sighting(reader.name, tuple(writers), kind, name, path, why, own,
                                    kind in reader.prefers_own, tuple(item.audience))
                if reader.skill_switch and why in (FOREIGN, SECOND) and sighting.skill:
                    if skills_of is None:
                        skills_of = _skills_of(entries)
                    if sighting.skill not in skills_of.get(reader.name, ()):
                        hidden = reader.skill_switch.replace("<name>", sighting.skill)
                        sighting = dataclasses.replace(sighting, hidden=hidden)
                found.append(sighting)
    return found


def _skills_of(entries: Dict[Tuple[str, Kind, str], OutputFile]) -> Dict[str, Set[str]]:
    """Each client's skill names: those of its entrypoints (`cross_discovery`'s `entries`)."""
    out: Dict[str, Set[str]] = {}
    for (c, _, _), f in entries.items():
        out.setdefault(c, set()).add(_skill_name(f.path))
    return out


def _skill_name(path: str) -> str:
    parts = path.split("/")
    return parts[-2] if len(parts) > 2 and parts[-1] == "SKILL.md" else ""


def _same_slot(kind: Kind, mine: str, theirs: str) -> bool:
    """Whether two copies compete for one name (two skills, two agents, two commands of
    the same form) rather than both loading (a rule is an instruction file in one place and
    a skill in another; instruction files all load)."""
    skills = (mine.endswith("/SKILL.md"), theirs.endswith("/SKILL.md"))
    if skills[0] != skills[1]:
        return False
    return skills[0] or kind is not Kind.RULE


def _switches(clients: Sequence[ClientAdapter], sightings: Sequence[Sighting]) -> List[Fragment]:
    out: List[Fragment] = []
    for reader in clients:
        names = sorted({(s.skill, f"{reader.name}:{s.kind.value}:{s.name}") for s in sightings
                        if s.reader == reader.name and s.hidden})
        out.extend(reader.hide_skills(names))
    return out


def _with_sightings(reports: Sequence[ItemReport], sightings: Sequence[Sighting]) -> List[ItemReport]:
    """Each writer's report of an item names the other clients that also load its copy."""
    notes: Dict[Tuple[str, str, str], List[Tuple[str, str, str]]] = {}
    for s in sightings:
        for writer in s.writers:
            notes.setdefault((writer, s.kind.value, s.name), []).append((s.reader, s.path, s.detail()))
    if not notes:
        return list(reports)
    return [_also_loaded(r, tuple(sorted(notes[(r.client, r.kind, r.name)])))
            if (r.client, r.kind, r.name) in notes else r for r in reports]


def _also_loaded(report: ItemReport, by: Tuple[Tuple[str, str, str], ...]) -> ItemReport:
    """`report` with `also_loaded_by` set: every other field's value as it is, in one update
    of the new report's dict (`dataclasses.replace` checks and passes each field again: 2.8
    against 1 microsecond, for every skill opencode and Copilot also load from .claude/)."""
    new = object.__new__(ItemReport)
    new.__dict__.update(report.__dict__)
    new.__dict__["also_loaded_by"] = by
    return new


def _warn_cross_discovery(sightings: Sequence[Sighting], diags: Diagnostics,
                          clients: Sequence[ClientAdapter] = ()) -> None:
    """AR095: one line per reader and directory it also loads copies from, with their count
    and, by kind, writers and reason, their names; the hint is a fix for one tree. A shared
    copy is the reader's own and a hidden one is not loaded: neither is named."""
    groups: Dict[Tuple[str, str], List[Sighting]] = {}
    for s in sightings:
        if not s.hidden and s.why != SHARED:
            groups.setdefault((s.reader, s.path.rsplit("/", 2 if s.skill else 1)[0]), []).append(s)
    switches = {a.name: a.discovery_off for a in clients}
    for (reader, where), found in sorted(groups.items()):
        parts: Dict[Tuple[str, Tuple[str, ...], str, bool], List[Sighting]] = {}
        for s in found:
            parts.setdefault((s.kind.value, s.writers, s.why, s.own_wins), []).append(s)
        if len(parts) == 1:
            message = f"{reader} also loads {_part(found, where)}"
        else:
            message = (f"{reader} also loads {len(found)} copies from {where}: "
                       + "; ".join(_part(group) for _, group in sorted(parts.items())))
        writers = sorted({w for s in found for w in s.writers})
        switch = switches.get(reader, {}).get(where, "")
        diags.warning("<build>", (0, 0), "AR095", message, hint=(
            (f"{switch}, or " if switch else "") + f"leave {reader} (or {', '.join(writers)}) out of clients: in "
            "agentrc.yaml for this tree; copies with the same bytes are written once already (shared-copies; "
            "docs/fidelity.md#cross-discovery)"))


def _part(found: List[Sighting], where: str = "") -> str:
    """One kind, writers and reason of an AR095 line: "2 skills written for claude[ from
    <where>], outside its audience (a, b)" (the directory is said once per line)."""
    first = found[0]
    names = _names(sorted(s.name for s in found))
    noun = first.kind.plural if len(found) > 1 else first.kind.value
    copies = "copies" if len(found) > 1 else "copy"
    how = {FOREIGN: f"outside its audience ({names})",
           ONLY: f"as its only {copies} ({names})",
           SECOND: f"as {'second copies' if len(found) > 1 else 'a second copy'} beside its own ({names})",
           DIFFERS: f"different from its own {copies} ({names}); "
                    + ("its own copy wins" if first.own_wins else "which of the two it loads is not defined"),
           }[first.why]
    return f"{len(found)} {noun} written for {' and '.join(first.writers)}{f' from {where}' if where else ''}, {how}"


def _expand(clients: Sequence[str]) -> Tuple[Tuple[str, str], ...]:
    """`also_reads` names as (client, the prefix of the copies read: "" for all): SHARED_SKILL_DIR
    stands for what every client writing there puts under it (Codex's agents are TOML files
    elsewhere, OpenClaw's are skills there). A client named itself is read whole."""
    out: Dict[str, str] = {}
    for name in clients:
        if name == SHARED_SKILL_DIR:
            for writer in client_registry.agent_skills_writers():
                out.setdefault(writer, SHARED_SKILL_DIR + "/")
        else:
            out[name] = ""
    return tuple(out.items())


def _shared_context(clients: Sequence[ClientAdapter], items: Sequence[Item], reports: Sequence[ItemReport],
                    diags: Diagnostics) -> None:
    """A context item's section lands in a file every client reads (AGENTS.md): `audience`
    cannot keep it from the clients it leaves out. Say so rather than pretend."""
    written: Dict[str, set] = {}  # context item -> the files its section went to (by name: not n^2)
    for r in reports:
        if r.kind == "context" and r.generated:
            written.setdefault(r.name, set()).update(r.outputs[:1])
    for item in items:
        if item.kind is not Kind.CONTEXT or not item.audience:
            continue
        for path in sorted(written.get(item.name, ())):
            readers = [a.name for a in clients if a.layout == "project" and not item.targets(a.family)
                       and Kind.CONTEXT in a.kinds and getattr(a, "context_file", "") == path]
            if readers:
                diags.warning(item.entrypoint, item.field_pos.get("audience", (1, 1)), "AR095",
                              f"context {item.name} is for {', '.join(item.audience)}, but {', '.join(readers)} "
                              f"also read {path}, which holds it")


def _names(names: List[str], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


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
           outcomes: Optional[Dict[tuple, Tuple[FieldOutcome, ...]]] = None) -> Rendered:
    """`adapter`'s own rendering of `item`, through the memo (which keeps these)."""
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
    if hit is None:
        return None

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
    known = known or {}
    return (tuple((p, c if isinstance(c, str) else known.get(id(c)) or OutputFile(p, c).sha256(), *rest)
                  for p, c, *rest in files),
            report, frags)


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


def _add(by_path: Dict[str, OutputFile], f: OutputFile, diags: Diagnostics, source: str) -> None:
    other = by_path.get(f.path)
    if other is None:
        by_path[f.path] = f
    elif other.executable != f.executable or not other.same_bytes(f):
        diags.error(source, (0, 0), "AR090", f"{f.path}: {f.owner} and {other.owner} need different bytes")
    else:
        other.mark_shared()  # one more producer: an incremental build replays it only with all of them
