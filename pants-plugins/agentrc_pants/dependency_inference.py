"""Dependency inference: the graph of items and bundles comes from their own text.

Item `requires` and bundle `items`/`requires` are hard edges (an unknown name fails with
the target and the missing item named); `preload-skills` are soft edges, added only when
the skill exists (spec 001 §3.4). The index of names is built once per graph from every
agentrc target's entrypoint, read in a node per entrypoint: an edit re-reads one file, and
when its name and references are unchanged (a body edit) the index is not rebuilt at all.

Names are namespaced by registry (`agentrc_registry` targets, issue 10 point 14) and every
reference is resolved by the core's `resolve.lookup`, the rule `agentrc lint`/`build` apply:
a bare name in the target's own registry, `{ name, source: ../other }` in another one. A
bare name found only in another registry fails with AR069, a local `source:` naming no
registry with AR068, both worded and hinted by the core. Each target also depends on its
registry's target, so the registry marker is in every closure the core sees.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

from pants.engine.addresses import Address
from pants.engine.fs import Digest, DigestContents
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import (
    AllTargets,
    HydratedSources,
    HydrateSourcesRequest,
    InferDependenciesRequest,
    InferredDependencies,
    SourcesField,
)
from pants.engine.unions import UnionRule
from pants.util.frozendict import FrozenDict

from agentrc.codes import CODES
from agentrc.diagnostics import Diagnostic
from agentrc.portable.discovery import registry_of, registry_roots
from agentrc.portable.peek import Peek, peek
from agentrc.portable.resolve import Found, find_cycles, lookup
from agentrc_pants import memory
from agentrc_pants.rounds import in_rounds
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import (
    AgentrcBundleSourceField,
    AgentrcEntrypointField,
    AgentrcFieldSet,
    AgentrcRegistrySourceField,
)

ENTRY_FIELDS = (AgentrcEntrypointField, AgentrcBundleSourceField)
NameKey = Tuple[str, str, str]  # (registry root, kind or "bundle", name)


class UnresolvedAgentrcReference(Exception):
    pass


@dataclass(frozen=True)
class AgentrcIndex:
    """(registry root, kind, name) -> addresses declaring it; `bundle` is a kind here too.
    Registry roots are the directories of `agentrc_registry` targets' markers; every target
    belongs to the nearest one above it ("" when none), as in the core."""

    names: FrozenDict[NameKey, Tuple[Address, ...]]
    peeks: FrozenDict[Address, Peek]
    cycles: FrozenDict[Address, str]  # address -> the requires cycle it is on, as text
    roots: Tuple[str, ...] = ()
    where: FrozenDict[Address, Tuple[str, str]] = FrozenDict()  # address -> (entry file, registry root)
    registries: FrozenDict[str, Address] = FrozenDict()  # registry root -> its agentrc_registry target


@dataclass(frozen=True)
class EntrypointPeekRequest:
    field: SourcesField  # a target's entrypoint or bundle manifest field


@dataclass(frozen=True)
class EntrypointPeeks:
    peeks: Tuple[Peek, ...]
    paths: Tuple[str, ...] = ()  # the file of each peek


@rule
async def peek_entrypoint(request: EntrypointPeekRequest) -> EntrypointPeeks:
    hydrated = await Get(HydratedSources, HydrateSourcesRequest(request.field))
    contents = await Get(DigestContents, Digest, hydrated.snapshot.digest)
    found = [(fc.path, peek(fc.path, fc.content)) for fc in contents]
    kept = [(path, info) for path, info in found if info is not None]
    return EntrypointPeeks(tuple(info for _, info in kept), tuple(path for path, _ in kept))


@rule(desc="Index agentrc item and bundle names")
async def agentrc_index(all_targets: AllTargets, subsystem: AgentrcSubsystem) -> AgentrcIndex:
    if subsystem.release_memory:
        memory.watch()
    markers = {tgt[AgentrcRegistrySourceField].file_path: tgt.address for tgt in all_targets
               if tgt.has_field(AgentrcRegistrySourceField)}
    roots = registry_roots(markers)
    registries = {posixpath.dirname(path): address for path, address in markers.items()}
    fields = [(tgt.address, tgt[f]) for tgt in all_targets for f in ENTRY_FIELDS if tgt.has_field(f)]
    found = await in_rounds([Get(EntrypointPeeks, EntrypointPeekRequest(f)) for _, f in fields])
    names: Dict[NameKey, list] = defaultdict(list)
    peeks = {}
    where = {}
    for (address, _), result in zip(fields, found):
        for path, info in zip(result.paths, result.peeks):
            root = registry_of(posixpath.dirname(path), roots)
            names[(root, info.kind, info.name)].append(address)
            peeks[address] = info
            where[address] = (path, root)
    index_names = {k: tuple(sorted(v)) for k, v in names.items()}
    return AgentrcIndex(FrozenDict(index_names), FrozenDict(peeks),
                        FrozenDict(_cycles(index_names, peeks, where, roots)), roots, FrozenDict(where),
                        FrozenDict(registries))


Reference = Tuple[str, str, Optional[str], str, str]  # (kind, name, source, verb, code when missing)


def _references(info: Peek) -> List[Reference]:
    """Every hard reference of a peeked file."""
    out: List[Reference]
    if info.kind == "bundle":
        out = [(k, n, None, "lists", "AR061") for k, n in info.refs]
        out += [("bundle", n, None, "requires", "AR062") for n in info.bundles]
    else:
        out = [(k, n, None, "requires", "AR070") for k, n in info.refs]
    out += [(k, n, src, "requires", "AR062" if k == "bundle" else "AR070") for k, n, src in info.sourced]
    return out


def _resolve(names, roots, root: str, info: Peek, ref) -> Found:
    kind, name, source, verb, code = ref
    return lookup(roots, names, root, kind, name, source, f"{info.kind} {info.name} {verb}", code)


def _cycles(names, peeks, where, roots) -> Dict[Address, str]:
    """Requires cycles, found here so they fail with agentrc's own words (AR063/AR071)
    instead of Pants' generic dependency-cycle error."""
    def edges(address):
        info, root = peeks[address], where[address][1]
        out = []
        for ref in _references(info):
            found = _resolve(names, roots, root, info, ref)
            if found.root is not None:
                out.extend(a for a in names.get((found.root, ref[0], ref[1]), ()) if a in peeks)
        return out

    out: Dict[Address, str] = {}

    def report(cycle):
        text = " -> ".join(f"{peeks[a].kind} {peeks[a].name}" for a in cycle + [cycle[0]])
        for a in cycle:
            out.setdefault(a, text)

    find_cycles(sorted(peeks), edges, report)
    return out


class InferAgentrcDependencies(InferDependenciesRequest):
    infer_from = AgentrcFieldSet


@rule(desc="Infer agentrc dependencies")
async def infer_agentrc_dependencies(request: InferAgentrcDependencies, index: AgentrcIndex) -> InferredDependencies:
    address = request.field_set.address
    info = index.peeks.get(address)
    if info is None:
        return InferredDependencies([])
    if address in index.cycles:
        raise UnresolvedAgentrcReference(f"{address} ({info.kind} {info.name}) is on a requires cycle: "
                                         f"{index.cycles[address]}. Remove one of its requires edges.")
    path, root = index.where[address]
    found: Set[Address] = set()
    registry = index.registries.get(root)
    if registry is not None and registry != address:
        found.add(registry)  # the marker travels with every build of the registry's targets
    missing = []
    problems = []
    for ref in _references(info):
        result = _resolve(index.names, index.roots, root, info, ref)
        if result.root is not None:
            found.update(a for a in index.names[(result.root, ref[0], ref[1])] if a != address)
        elif result.problem is not None and result.problem[0] in ("AR068", "AR069"):
            code, message = result.problem
            problems.append(Diagnostic(path, 0, 0, "error", code, message, CODES[code].hint).format())
        elif result.problem is not None and result.problem[0] != "AR065":  # remote: reported by lint/package
            missing.append(f"{ref[0]} {ref[1]!r}")
    for skill in info.soft:
        found.update(a for a in index.names.get((root, "skill", skill), ()) if a != address)
    if problems:
        raise UnresolvedAgentrcReference(f"{address} ({info.kind} {info.name}):\n" + "\n".join(problems))
    if missing:
        raise UnresolvedAgentrcReference(
            f"{address} ({info.kind} {info.name}) references {', '.join(missing)}, which no agentrc target "
            "declares. Fix the name, or run `pants tailor ::` if the item exists but has no target."
        )
    return InferredDependencies(sorted(found))


def rules():
    return [*collect_rules(), UnionRule(InferDependenciesRequest, InferAgentrcDependencies)]
