"""Resolution (spec 001 §3.7): bundle closures, item requires closures, and selection.

Names resolve within a registry (`discovery.registry_of`): a bare name is an item or
bundle of the referencing file's own registry, and one of another registry is reached only
by saying so, with a `{ name, source }` entry whose `source` is that registry's root as a
local path (`../platform`), relative to the referencing registry's root. The CLI and the
Pants backend both resolve through `lookup`, so they agree on every reference. Remote
sources (`owner/repo@ref`, URLs) are resolved by the consumer workflow (`agentrc add`,
agentrc.consumer.consume), which fetches them; `lint` and `build` read local paths only and
report them (AR065).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.model import Bundle, Item, Kind, McpServer, Registry
from agentrc.names import REGISTRY_MARKER
from agentrc.portable import discovery, semver

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, Dict, Hashable, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, TypeVar, Union
    ItemKey = Tuple[str, Kind, str]  # (registry root, kind, name)
if TYPE_CHECKING:
    BundleKey = Tuple[str, str]  # (registry root, name)


def registry_label(root: str) -> str:
    return f"registry {root}" if root else "the unnamed registry (no agentrc-registry.yaml above it)"


@dataclass(frozen=True)
class Found:
    """Where a reference leads: `root` is the registry it resolves in (None when it cannot
    be resolved there), `problem` the code and message when it does not resolve."""

    root: Optional[str]
    problem: Optional[Tuple[str, str]] = None  # (code, message)


def lookup(roots: Sequence[str], defined: Mapping[Tuple[str, str, str], object], root: str, kind: str, name: str,
           source: Optional[str], what: str, missing_code: str) -> Found:
    """Resolve one reference to `kind` `name` (a Kind value or "bundle") made from registry
    `root`, against `defined` ((root, kind, name) keys). `what` words the referrer for
    messages ("bundle core lists"); `missing_code` is the code for a name that exists
    nowhere (AR061, AR062 or AR070). The one rule both front doors apply."""
    noun = f"{kind} {name!r}"
    if source is not None:
        if not discovery.is_local_source(source):
            return Found(None, ("AR065", f"{what} {noun} from source {source!r}, which lint and build do not fetch "
                                         "(agentrc add does)"))
        target = discovery.source_root(root, source, roots)
        if target is None:
            return Found(None, ("AR068", f"{what} {noun} from source {source!r}, which names no registry root "
                                         f"among the inputs (no {REGISTRY_MARKER} there)"))
        if (target, kind, name) not in defined:
            return Found(None, (missing_code, f"{what} {noun} from source {source!r}, which is not in "
                                              f"{registry_label(target)}"))
        return Found(target)
    if (root, kind, name) in defined:
        return Found(root)
    elsewhere = sorted(r for (r, k, n) in defined if k == kind and n == name)
    if elsewhere:
        there = _relative(root, elsewhere[0])
        if missing_code == "AR061":  # bundle `items:` are names of the bundle's own registry (§3.7)
            how = (f"require a bundle of that registry instead: requires: [{{ name: <bundle>, source: {there} }}]")
        else:
            how = f"write {{ name: {name}, source: {there} }}"
        return Found(None, ("AR069", f"{what} {noun}, which is not in its own {registry_label(root)} but in "
                                     f"{registry_label(elsewhere[0])}: a bare name refers to its own registry; "
                                     + how))
    return Found(None, (missing_code, f"{what} {noun}, which is not in the registry"))


def _relative(start: str, target: str) -> str:
    rel = posixpath.relpath(target or ".", start or ".")
    return rel if rel.startswith("..") else "./" + rel if rel != "." else "."


class Index:
    """Name lookups over a registry, built once (registries hold thousands of items)."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self.roots = registry.roots
        self.items: Dict[ItemKey, Item] = {}
        for item in registry.items:
            self.items.setdefault(self.item_key(item), item)
        self.bundles: Dict[BundleKey, Bundle] = {}
        for b in registry.bundles:
            self.bundles.setdefault(self.bundle_key(b), b)
        self.defined: Dict[Tuple[str, str, str], object] = {(r, k.value, n): i for (r, k, n), i in self.items.items()}
        self.defined.update({(r, "bundle", n): b for (r, n), b in self.bundles.items()})

    def root_of(self, x: Union[Item, Bundle]) -> str:
        return discovery.registry_of(x.directory if isinstance(x, Item) else posixpath.dirname(x.path), self.roots)

    def item_key(self, item: Item) -> ItemKey:
        return (self.root_of(item), item.kind, item.name)

    def bundle_key(self, b: Bundle) -> BundleKey:
        return (self.root_of(b), b.name)

    def find(self, root: str, kind: str, name: str, source: Optional[str], what: str, missing_code: str) -> Found:
        return lookup(self.roots, self.defined, root, kind, name, source, what, missing_code)

    def item_edges(self, key: ItemKey) -> List[ItemKey]:
        item = self.items[key]
        out = []
        for r in item.requires:
            found = self.find(key[0], r.kind.value, r.name, r.source, "", "AR070")
            if found.root is not None:
                out.append((found.root, r.kind, r.name))
        return out

    def bundle_edges(self, key: BundleKey) -> List[BundleKey]:
        out = []
        for r in self.bundles[key].requires:
            found = self.find(key[0], "bundle", r.name, r.source, "", "AR062")
            if found.root is not None:
                out.append((found.root, r.name))
        return out


def check(registry: Registry, cross_source: bool = False) -> Tuple[Diagnostic, ...]:
    """Every reference in the registry resolves, and no requires graph has a cycle.
    `cross_source`: the caller resolves `source:` references itself (the consumer workflow,
    agentrc.consumer.consume); otherwise a remote one is AR065."""
    idx = Index(registry)
    diags = Diagnostics()
    for b in registry.bundles:
        root = idx.root_of(b)
        for ref in b.items:
            found = idx.find(root, ref.kind.value, ref.name, ref.source, f"bundle {b.name} lists", "AR061")
            if found.problem:
                code, message = found.problem
                if code == "AR061":
                    message += _did_you_mean(ref.name, idx, root, ref.kind)
                diags.error(b.path, ref.pos, code, message)
        for req in b.requires:
            if cross_source and req.source is not None:
                continue
            found = idx.find(root, "bundle", req.name, req.source, f"bundle {b.name} requires", "AR062")
            if found.problem:
                diags.error(b.path, req.pos, *found.problem)
            elif req.version is not None and found.root is not None:
                problem = version_problem(idx.bundles[(found.root, req.name)], req.version)
                if problem is not None:
                    diags.error(b.path, req.pos, problem[0], f"bundle {b.name} requires {problem[1]}")
    for item in registry.items:
        root = idx.root_of(item)
        for ref in item.requires:
            if cross_source and ref.source is not None:
                continue
            found = idx.find(root, ref.kind.value, ref.name, ref.source, f"{item.label} requires", "AR070")
            if found.problem:
                code, message = found.problem
                if code == "AR070":
                    message += _did_you_mean(ref.name, idx, root, ref.kind)
                diags.error(item.entrypoint, ref.pos, code, message)
        for skill, pos in item.preload_skills:
            if (root, Kind.SKILL, skill) not in idx.items:
                diags.warning(item.entrypoint, pos, "AR072", f"preloaded skill {skill!r} is not in the registry; "
                              "it stays a runtime hint and is not installed with the agent")
    _check_servers(idx, diags)
    find_cycles(
        sorted(idx.bundles), idx.bundle_edges,
        lambda cycle: diags.error(idx.bundles[cycle[0]].path, _edge_pos_b(idx, cycle), "AR063",
                                  "bundle requires cycle: " + " -> ".join(n for _, n in cycle + [cycle[0]])),
    )
    find_cycles(
        sorted(idx.items, key=lambda k: (k[0], k[1].value, k[2])), idx.item_edges,
        lambda cycle: diags.error(idx.items[cycle[0]].entrypoint, _edge_pos_i(idx, cycle), "AR071",
                                  "requires cycle: " + " -> ".join(f"{k.value} {n}" for _, k, n in cycle + [cycle[0]])),
    )
    return diags.sorted()


def version_problem(bundle: Bundle, constraint: str) -> Optional[Tuple[str, str]]:
    """Why `bundle` does not meet a `requires` entry's `version` constraint, as (code,
    message), or None when it does: AR074 for a constraint or version that is not semver,
    AR073 for a version outside the constraint or no `metadata.version` at all."""
    version = bundle.metadata.get("version")
    try:
        semver.parse_constraint(constraint)
    except ValueError as exc:
        return "AR074", f"bundle {bundle.name} at version {constraint!r}, which is not a constraint: {exc}"
    if version is None:
        return "AR073", f"bundle {bundle.name} at version {constraint!r}, and it has no metadata.version"
    try:
        ok = semver.satisfies(str(version), constraint)
    except ValueError as exc:
        return "AR074", f"bundle {bundle.name} at version {constraint!r}; its metadata.version: {exc}"
    if not ok:
        return "AR073", f"bundle {bundle.name} at version {constraint!r}; it is at {version}"
    return None


BundleSelector = str  # a bundle's name, or the path of its manifest (unambiguous across registries)


def select(registry: Registry, bundle_names: Optional[Sequence[BundleSelector]] = None,
           entrypoints: Optional[Sequence[str]] = None) -> Tuple[Tuple[Item, ...], Tuple[Diagnostic, ...]]:
    """The items to generate: everything, or the closure of the named bundles and/or of the
    items at the given entrypoint paths (how the Pants plugin packages one item target).

    A bundle closure is its transitive `requires`, the union of their items, then each
    item's transitive `requires` and the preloaded skills present in the item's registry
    (the soft requires of §3.4). Items of several registries may meet in one build only
    when their names differ (AR018): they land in one client tree; so may bundles (one name,
    one source per closure, §3.7) and differing MCP servers of one name (AR067).
    """
    idx = Index(registry)
    diags = Diagnostics()
    if not bundle_names and entrypoints is None:
        items = registry.items
        _check_closure_servers(idx, registry.bundles, diags)
    else:
        wanted = set(entrypoints or ())
        roots: List[ItemKey] = [idx.item_key(i) for i in registry.items if i.entrypoint in wanted]
        closure = _bundle_closure(idx, bundle_names or (), diags)
        _check_closure_bundles(idx, closure, diags)
        _check_closure_servers(idx, closure, diags)
        for b in closure:
            broot = idx.root_of(b)
            roots.extend((broot, r.kind, r.name) for r in b.items)
        chosen: Dict[ItemKey, Item] = {}
        stack = list(roots)
        while stack:
            key = stack.pop()
            item = idx.items.get(key)
            if item is None or key in chosen:
                continue
            chosen[key] = item
            stack.extend(idx.item_edges(key))
            stack.extend((key[0], Kind.SKILL, s) for s, _ in item.preload_skills)
        items = tuple(i for i in registry.items if idx.item_key(i) in chosen)
    _check_clashes(idx, items, diags)
    return items, diags.sorted()


def _check_closure_bundles(idx: Index, closure: Sequence[Bundle], diags: Diagnostics) -> None:
    """Spec 001 §3.7: one bundle name resolving to two sources within one closure is an error."""
    first: Dict[str, Bundle] = {}
    for b in sorted(closure, key=lambda b: b.path):
        other = first.setdefault(b.name, b)
        if other is not b:
            diags.error(b.path, (1, 1), "AR018", f"bundle {b.name} ({registry_label(idx.root_of(b))}) and "
                        f"{other.path} ({registry_label(idx.root_of(other))}) are both in this build's closure")


def _check_closure_servers(idx: Index, bundles: Sequence[Bundle], diags: Diagnostics) -> None:
    """MCP servers of one name from different registries' bundles, defined differently, cannot
    share a client's configuration (within a registry, check() reports them)."""
    first: Dict[str, McpServer] = {}
    for b in sorted(bundles, key=lambda b: (b.name, b.path)):
        for srv in b.servers:
            other = first.setdefault(srv.name, srv)
            if other is not srv and other.fields != srv.fields and idx.root_of(b) != _root_of_path(idx, other.path):
                diags.error(b.path, srv.pos, "AR067", f"MCP server {srv.name!r} is also defined, differently, by "
                            f"bundle {other.bundle} ({other.path}), and both are in this build")


def _root_of_path(idx: Index, path: str) -> str:
    return discovery.registry_of(posixpath.dirname(path), idx.roots)


def _check_clashes(idx: Index, items: Sequence[Item], diags: Diagnostics) -> None:
    """Two items of one kind and name from different registries cannot share a client tree."""
    by_name: Dict[Tuple[Kind, str], List[Item]] = defaultdict(list)
    for item in items:
        by_name[item.key].append(item)
    for group in by_name.values():
        if len(group) < 2:
            continue
        first, *rest = sorted(group, key=lambda i: i.entrypoint)
        for other in rest:
            if idx.root_of(other) == idx.root_of(first):
                continue  # a duplicate within one registry: AR013 already
            diags.error(other.entrypoint, (1, 1), "AR018",
                        f"{other.label} ({registry_label(idx.root_of(other))}) and {first.entrypoint} "
                        f"({registry_label(idx.root_of(first))}) would both be built into one client tree")


def servers(registry: Registry, bundle_names: Optional[Sequence[BundleSelector]] = None,
            entrypoints: Optional[Sequence[str]] = None) -> Tuple[McpServer, ...]:
    """The MCP servers to configure: those of the named bundles' closure, of every bundle
    when the whole registry is built, none for a build of single items. One per name
    (check() reports names defined differently)."""
    found: Dict[str, McpServer] = {}
    for b in built_bundles(registry, bundle_names, entrypoints):
        for s in b.servers:
            found.setdefault(s.name, s)
    return tuple(found[n] for n in sorted(found))


def built_bundles(registry: Registry, bundle_names: Optional[Sequence[BundleSelector]] = None,
                  entrypoints: Optional[Sequence[str]] = None) -> Tuple[Bundle, ...]:
    """The bundles a build takes in: the named bundles' closure, every bundle when the
    whole registry is built, none for a build of single items; by name, then path."""
    if bundle_names:
        chosen = _bundle_closure(Index(registry), bundle_names, Diagnostics())
    elif entrypoints is None:
        chosen = list(registry.bundles)
    else:
        chosen = []
    return tuple(sorted(chosen, key=lambda b: (b.name, b.path)))


def bundle_for(registry: Registry, selector: BundleSelector) -> Optional[Bundle]:
    """The one bundle a selector names (its manifest path, or a name defined once)."""
    hits = _named(registry.bundles, selector)
    return hits[0] if len(hits) == 1 else None


def _named(bundles: Iterable[Bundle], selector: BundleSelector) -> List[Bundle]:
    by_path = [b for b in bundles if b.path == selector]
    return by_path or [b for b in bundles if b.name == selector]


def _bundle_closure(idx: Index, selectors: Sequence[BundleSelector], diags: Diagnostics) -> List[Bundle]:
    stack: List[BundleKey] = []
    for sel in selectors:
        hits = _named(idx.bundles.values(), sel)
        if not hits:
            diags.error("<command line>", (0, 0), "AR066", f"no bundle named {sel!r}")
        elif len(hits) > 1:
            where = ", ".join(b.path for b in sorted(hits, key=lambda b: b.path))
            diags.error("<command line>", (0, 0), "AR066", f"bundle {sel!r} is defined in several registries "
                        f"({where})", "Name the bundle by its file instead, e.g. --bundle " + hits[0].path)
        else:
            stack.append(idx.bundle_key(hits[0]))
    seen: Dict[BundleKey, Bundle] = {}
    while stack:
        key = stack.pop()
        if key in seen or key not in idx.bundles:
            continue
        seen[key] = idx.bundles[key]
        stack.extend(idx.bundle_edges(key))
    return [seen[k] for k in sorted(seen)]


def _check_servers(idx: Index, diags: Diagnostics) -> None:
    first: Dict[Tuple[str, str], McpServer] = {}
    for b in idx.registry.bundles:
        root = idx.root_of(b)
        for s in b.servers:
            other = first.setdefault((root, s.name), s)
            if other is not s and other.fields != s.fields:
                diags.error(b.path, s.pos, "AR067", f"MCP server {s.name!r} is also defined, differently, by "
                            f"bundle {other.bundle} ({other.path})")


if TYPE_CHECKING:
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


def _edge_pos_b(idx: Index, cycle: List[BundleKey]):
    nxt = cycle[1] if len(cycle) > 1 else cycle[0]
    return next((r.pos for r in idx.bundles[cycle[0]].requires if r.name == nxt[1]), (1, 1))


def _edge_pos_i(idx: Index, cycle: List[ItemKey]):
    nxt = cycle[1] if len(cycle) > 1 else cycle[0]
    return next((r.pos for r in idx.items[cycle[0]].requires if (r.kind, r.name) == nxt[1:]), (1, 1))


def _did_you_mean(name: str, idx: Index, root: str, kind: Kind) -> str:
    import difflib  # only when a name is not found

    others = [n for (r, k, n) in idx.items if k == kind and r == root]
    match = difflib.get_close_matches(name, others, n=1)
    if match:
        return f" (did you mean {match[0]!r}?)"
    elsewhere = [k.value for (r, k, n) in idx.items if n == name and r == root]
    return f" (a {elsewhere[0]} has that name)" if elsewhere else ""
