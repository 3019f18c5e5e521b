"""Resolution (spec 001 §3.7): bundle closures, item requires closures, and selection.

Everything is same-source for now: `source:` locators are parsed and reported (AR065)
until the sources + lockfile work lands; the graph code below is keyed by (kind, name)
and bundle name so that a source label can be added to the keys without a rewrite.
"""

from __future__ import annotations

import difflib
from typing import Callable, Dict, Hashable, Iterable, List, Optional, Sequence, Set, Tuple, TypeVar

from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.model import Bundle, Item, Kind, McpServer, Registry


class Index:
    """Name lookups over a registry, built once (registries hold thousands of items)."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self.items: Dict[Tuple[Kind, str], Item] = {}
        for item in registry.items:
            self.items.setdefault(item.key, item)
        self.bundles: Dict[str, Bundle] = {}
        for b in registry.bundles:
            self.bundles.setdefault(b.name, b)


def check(registry: Registry) -> Tuple[Diagnostic, ...]:
    """Every reference in the registry resolves, and no requires graph has a cycle."""
    idx = Index(registry)
    diags = Diagnostics()
    for b in registry.bundles:
        for ref in b.items:
            if (ref.kind, ref.name) not in idx.items:
                diags.error(b.path, ref.pos, "AR061", f"bundle {b.name} lists {ref.kind.value} {ref.name!r}, "
                            f"which is not in the registry{_did_you_mean(ref.name, idx, ref.kind)}")
        for req in b.requires:
            if req.source is not None:
                diags.error(b.path, req.pos, "AR065", f"bundle {b.name} requires {req.name!r} from source "
                            f"{req.source!r}; cross-source resolution is not supported yet")
            elif req.name not in idx.bundles:
                diags.error(b.path, req.pos, "AR062",
                            f"bundle {b.name} requires bundle {req.name!r}, which is not in the registry")
    for item in registry.items:
        for ref in item.requires:
            if ref.source is not None:
                diags.error(item.entrypoint, ref.pos, "AR065", f"{item.label} requires {ref.kind.value} {ref.name!r} "
                            f"from source {ref.source!r}; cross-source resolution is not supported yet")
            elif (ref.kind, ref.name) not in idx.items:
                diags.error(item.entrypoint, ref.pos, "AR070", f"{item.label} requires {ref.kind.value} {ref.name!r}, "
                            f"which is not in the registry{_did_you_mean(ref.name, idx, ref.kind)}")
        for skill, pos in item.preload_skills:
            if (Kind.SKILL, skill) not in idx.items:
                diags.warning(item.entrypoint, pos, "AR072", f"preloaded skill {skill!r} is not in the registry; "
                              "it stays a runtime hint and is not installed with the agent")
    _check_servers(registry, diags)
    find_cycles(
        [b.name for b in registry.bundles],
        lambda n: [r.name for r in idx.bundles[n].requires if r.source is None and r.name in idx.bundles],
        lambda cycle: diags.error(idx.bundles[cycle[0]].path, _edge_pos_b(idx, cycle), "AR063",
                                  "bundle requires cycle: " + " -> ".join(cycle + [cycle[0]])),
    )
    find_cycles(
        [i.key for i in registry.items],
        lambda k: [(r.kind, r.name) for r in idx.items[k].requires
                   if r.source is None and (r.kind, r.name) in idx.items],
        lambda cycle: diags.error(idx.items[cycle[0]].entrypoint, _edge_pos_i(idx, cycle), "AR071",
                                  "requires cycle: " + " -> ".join(f"{k.value} {n}" for k, n in cycle + [cycle[0]])),
    )
    return diags.sorted()


def select(registry: Registry, bundle_names: Optional[Sequence[str]] = None,
           entrypoints: Optional[Sequence[str]] = None) -> Tuple[Tuple[Item, ...], Tuple[Diagnostic, ...]]:
    """The items to generate: everything, or the closure of the named bundles and/or of the
    items at the given entrypoint paths (how the Pants plugin packages one item target).

    A bundle closure is its transitive `requires`, the union of their items, then each
    item's transitive `requires` and the preloaded skills present in the registry (the
    soft requires of §3.4).
    """
    idx = Index(registry)
    diags = Diagnostics()
    if not bundle_names and entrypoints is None:
        return registry.items, ()
    wanted = set(entrypoints or ())
    roots: List[Tuple[Kind, str]] = [i.key for i in registry.items if i.entrypoint in wanted]
    for b in _bundle_closure(idx, bundle_names or (), diags):
        roots.extend((r.kind, r.name) for r in b.items)
    chosen: Dict[Tuple[Kind, str], Item] = {}
    stack2 = list(roots)
    while stack2:
        key = stack2.pop()
        item = idx.items.get(key)
        if item is None or key in chosen:
            continue
        chosen[key] = item
        stack2.extend((r.kind, r.name) for r in item.requires if r.source is None)
        stack2.extend((Kind.SKILL, s) for s, _ in item.preload_skills)
    items = tuple(i for i in registry.items if i.key in chosen)
    return items, diags.sorted()


def servers(registry: Registry, bundle_names: Optional[Sequence[str]] = None,
            entrypoints: Optional[Sequence[str]] = None) -> Tuple[McpServer, ...]:
    """The MCP servers to configure: those of the named bundles' closure, of every bundle
    when the whole registry is built, none for a build of single items. One per name
    (check() reports names defined differently)."""
    idx = Index(registry)
    if bundle_names:
        chosen = _bundle_closure(idx, bundle_names, Diagnostics())
    elif entrypoints is None:
        chosen = list(registry.bundles)
    else:
        chosen = []
    found: Dict[str, McpServer] = {}
    for b in sorted(chosen, key=lambda b: b.name):
        for s in b.servers:
            found.setdefault(s.name, s)
    return tuple(found[n] for n in sorted(found))


def _bundle_closure(idx: Index, names: Sequence[str], diags: Diagnostics) -> List[Bundle]:
    seen: Dict[str, Bundle] = {}
    stack = list(names)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        b = idx.bundles.get(name)
        if b is None:
            diags.error("<command line>", (0, 0), "AR066", f"no bundle named {name!r}")
            continue
        seen[name] = b
        stack.extend(r.name for r in b.requires if r.source is None)
    return [seen[n] for n in sorted(seen)]


def _check_servers(registry: Registry, diags: Diagnostics) -> None:
    first: Dict[str, McpServer] = {}
    for b in registry.bundles:
        for s in b.servers:
            other = first.setdefault(s.name, s)
            if other is not s and other.fields != s.fields:
                diags.error(b.path, s.pos, "AR067", f"MCP server {s.name!r} is also defined, differently, by "
                            f"bundle {other.bundle} ({other.path})")


NodeT = TypeVar("NodeT", bound=Hashable)


def find_cycles(nodes: Iterable[NodeT], edges: Callable[[NodeT], List[NodeT]],
                report: Callable[[List[NodeT]], None]) -> None:
    """Report each elementary cycle reached by DFS once, rotated to start at its least node."""
    WHITE, GREY, BLACK = 0, 1, 2
    color: Dict[NodeT, int] = {}
    reported: Set[Tuple[NodeT, ...]] = set()
    for start in nodes:
        if color.get(start, WHITE) != WHITE:
            continue
        path: List[NodeT] = []
        iters = []
        color[start] = GREY
        path.append(start)
        iters.append(iter(edges(start)))
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                color[path.pop()] = BLACK
                iters.pop()
                continue
            state = color.get(nxt, WHITE)
            if state == GREY:
                cycle = path[path.index(nxt):]
                low = min(range(len(cycle)), key=lambda i: str(cycle[i]))
                canon = tuple(cycle[low:] + cycle[:low])
                if canon not in reported:
                    reported.add(canon)
                    report(list(canon))
            elif state == WHITE:
                color[nxt] = GREY
                path.append(nxt)
                iters.append(iter(edges(nxt)))


def _edge_pos_b(idx: Index, cycle: List[str]):
    nxt = cycle[1] if len(cycle) > 1 else cycle[0]
    return next((r.pos for r in idx.bundles[cycle[0]].requires if r.name == nxt), (1, 1))


def _edge_pos_i(idx: Index, cycle: List[Tuple[Kind, str]]):
    nxt = cycle[1] if len(cycle) > 1 else cycle[0]
    return next((r.pos for r in idx.items[cycle[0]].requires if (r.kind, r.name) == nxt), (1, 1))


def _did_you_mean(name: str, idx: Index, kind: Kind) -> str:
    others = [n for (k, n) in idx.items if k == kind]
    match = difflib.get_close_matches(name, others, n=1)
    if match:
        return f" (did you mean {match[0]!r}?)"
    elsewhere = [k.value for (k, n) in idx.items if n == name]
    return f" (a {elsewhere[0]} has that name)" if elsewhere else ""
