"""Generation: a registry and a list of clients in, one merged project tree out.

`plan()` is pure. It renders every selected item for every client, adds each client's
project files, and checks that no two outputs need different bytes at one path (several
clients may legitimately write identical bytes to a shared path; that is merged).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from agentrc.clients import registry as client_registry
from agentrc.clients.base import SHARED_SKILL_DIR, ClientAdapter, RenderContext, Rendered, skill_names
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fidelity import DROPPED, STATUSES, FieldOutcome, ItemReport
from agentrc.files import Fragment, OnDemand, OutputFile
from agentrc.model import Item, Kind, McpServer, Registry
from agentrc.output import merge as managed


@dataclass(frozen=True)
class Plan:
    files: Tuple[OutputFile, ...]  # sorted by path, unique paths
    reports: Tuple[ItemReport, ...]
    diagnostics: Tuple[Diagnostic, ...]
    intake: Tuple[ItemReport, ...] = ()  # the canonical front door's account of each entry's keys

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def plan(registry: Registry, clients: Sequence[ClientAdapter], items: Optional[Sequence[Item]] = None,
         strict: bool = False, memo=None, servers: Sequence[McpServer] = ()) -> Plan:
    items = registry.items if items is None else tuple(items)
    ctx = client_registry.render_context(frozenset(i.name for i in items if i.kind is Kind.SKILL),
                                         frozenset(a.name for a in clients), skill_names(items))
    diags = Diagnostics()
    reports: List[ItemReport] = []
    by_path: Dict[str, OutputFile] = {}
    entries: Dict[Tuple[str, Kind, str], OutputFile] = {}
    fragments: Dict[str, List[Fragment]] = {}
    for adapter in clients:
        client_reports = []
        for item in items:
            rendered = _render(adapter, item, ctx, memo)
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
    for path in sorted(fragments):
        assembled = managed.assemble(path, fragments[path], diags)
        if assembled is not None:
            _add(by_path, assembled, diags, path)
    _cross_discovery(clients, items, entries, diags)
    _shared_context(clients, items, reports, diags)
    return Plan(tuple(by_path[p] for p in sorted(by_path)), tuple(reports), diags.sorted())


def _collect(rendered: Rendered, by_path: Dict[str, OutputFile], fragments: Dict[str, List[Fragment]],
             diags: Diagnostics, source: str) -> None:
    for f in rendered.files:
        _add(by_path, f, diags, source)
    for fr in rendered.fragments:
        fragments.setdefault(fr.path, []).append(fr)


def _dropped(adapter: ClientAdapter, rendered: Rendered, field_pos, source: str, strict: bool,
             diags: Diagnostics, default_pos=(0, 0)) -> None:
    fields = rendered.report.fields
    dropped = [o for o in fields if o.status == DROPPED]
    if dropped and len(dropped) == len([o for o in fields if o.status != "omitted"]) > 2:
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


def _cross_discovery(clients: Sequence[ClientAdapter], items: Sequence[Item],
                     entries: Dict[Tuple[str, Kind, str], OutputFile], diags: Diagnostics) -> None:
    """Warn, once per client pair and kind, when a client will also load another client's
    copies of items and those copies differ from its own or were not meant for it."""
    built = {a.name for a in clients}
    for reader in clients:
        for kind, others in reader.also_reads.items():
            # Clients writing one shared file (Codex and Gemini CLI in .agents/skills) give the
            # same findings: one warning names them together.
            found: Dict[Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]], List[str]] = {}
            for other in _expand(others):
                if other not in built or other == reader.name:
                    continue
                differ, foreign, paths = [], [], []
                for item in items:
                    theirs = entries.get((other, item.kind, item.name))
                    if item.kind is not kind or theirs is None:
                        continue
                    paths.append(theirs.path)
                    mine = entries.get((reader.name, item.kind, item.name))
                    if mine is None:
                        foreign.append(item.name)
                    elif not mine.same_bytes(theirs):
                        differ.append(item.name)
                if differ or foreign:
                    found.setdefault((tuple(differ), tuple(foreign), tuple(paths)), []).append(other)
            for (differ_names, foreign_names, _), writers in found.items():
                parts = []
                if differ_names:
                    which = ("it documents that its own copy wins" if kind in reader.prefers_own
                             else "which copy it loads is not defined")
                    parts.append(f"{len(differ_names)} differ from its own copies ({_names(list(differ_names))}), "
                                 f"and {which}")
                if foreign_names:
                    parts.append(f"{len(foreign_names)} are outside its audience ({_names(list(foreign_names))})")
                diags.warning("<build>", (0, 0), "AR095", f"{reader.name} also discovers the {kind.plural} "
                              f"written for {' and '.join(writers)}: " + "; ".join(parts))


def _expand(clients: Sequence[str]) -> Tuple[str, ...]:
    """`also_reads` names with SHARED_SKILL_DIR replaced by the clients that write there."""
    out: List[str] = []
    for name in clients:
        out.extend(client_registry.agent_skills_writers() if name == SHARED_SKILL_DIR else (name,))
    return tuple(out)


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


def _render(adapter: ClientAdapter, item: Item, ctx: RenderContext, memo) -> Rendered:
    # An item renders from its own directory alone, so its digest (plus the client) is a
    # complete key; items without a digest (built in memory) are always rendered.
    if memo is None or not item.digest:
        return adapter.render(item, ctx)
    # The skill name too: it depends on the other items of the build (`skill_names`).
    key = ("render", adapter.name, adapter.layout, item.kind.value, item.name, item.digest, tuple(sorted(ctx.clients)),
           ctx.renamed.get((item.kind.value, item.name), ""))
    hit = memo.get(key)
    if hit is not None:
        return _unpack(hit, lambda: adapter.render(item, ctx))
    rendered = adapter.render(item, ctx)
    memo.put(key, _pack(rendered))
    return rendered


def _pack(r: Rendered) -> tuple:
    """Plain tuples: a memo of thousands of renders unpickles several times faster so."""
    rep = r.report
    # Every field of a file, its merge format and keys too: without them a memoized CLAUDE.md
    # came back as a whole file, which the writer then owned (and deleted as stale) whole.
    return (tuple((f.path, f.content, f.executable, f.owner, f.merge, f.keys) for f in r.files),
            (rep.client, rep.kind, rep.name, rep.source, rep.generated, rep.outputs,
             tuple((o.field, o.status, o.detail) for o in rep.fields)),
            tuple((f.path, f.format, f.key, f.value, f.append, f.owner) for f in r.fragments))


def digests_only(packed: tuple) -> tuple:
    """A memo entry of `_pack` with each file's bytes replaced by their sha256 (hex): what
    the CLI's memo keeps on disk. Fragments stay whole: files are assembled from them."""
    files, report, frags = packed
    return (tuple((p, c if isinstance(c, str) else OutputFile(p, c).sha256(), *rest) for p, c, *rest in files),
            report, frags)


def _unpack(packed: tuple, again: Callable[[], Rendered]) -> Rendered:
    """The rendering a memo entry holds. A file kept as a digest gets its bytes from
    `again()` (the item rendered once more) if and when they are read."""
    files, (client, kind, name, source, generated, outputs, fields), frags = packed
    fresh: Dict[str, bytes] = {}

    def produce(path: str) -> Callable[[], bytes]:
        def content() -> bytes:
            if not fresh:
                fresh.update((f.path, f.content) for f in again().files)
            return fresh[path]
        return content

    return Rendered(tuple(OutputFile(*f) if isinstance(f[1], bytes) else OnDemand(f[0], f[1], produce(f[0]), *f[2:])
                          for f in files),
                    ItemReport(client, kind, name, source, generated, outputs,
                               tuple(FieldOutcome(*o) for o in fields)),
                    tuple(Fragment(*f) for f in frags))


def _add(by_path: Dict[str, OutputFile], f: OutputFile, diags: Diagnostics, source: str) -> None:
    other = by_path.get(f.path)
    if other is None:
        by_path[f.path] = f
    elif other.executable != f.executable or not other.same_bytes(f):
        diags.error(source, (0, 0), "AR090", f"{f.path}: {f.owner} and {other.owner} need different bytes")


def summary(reports: Iterable[ItemReport]) -> Dict[str, Dict[str, int]]:
    """Per client: how many items were generated, and how many fields per status."""
    out: Dict[str, Dict[str, int]] = {}
    for r in reports:
        s = out.setdefault(r.client, dict({"items": 0, "skipped": 0, "servers": 0},
                                          **{status: 0 for status in STATUSES}))
        if r.kind == "mcp":
            s["servers"] += 1 if r.generated else 0
        elif r.kind != "tools":
            s["items" if r.generated and r.outputs else "skipped"] += 1
        for f in r.fields:
            s[f.status] = s.get(f.status, 0) + 1
    return out


def summary_lines(totals: Dict[str, Dict[str, int]]) -> List[str]:
    """One line per client of `summary()`: what `agentrc build` prints and what `pants
    package` shows for a package."""
    lines = []
    for client, s in totals.items():
        fields = ", ".join(f"{s.get(k, 0)} {k}" for k in ("emitted", "mapped", "degraded", "dropped"))
        servers = f", {s['servers']} MCP servers" if s.get("servers") else ""
        lines.append(f"{client}: {s['items']} items generated, {s['skipped']} not generated (audience, or a kind "
                     f"the client lacks){servers}; fields: {fields}")
    return lines
