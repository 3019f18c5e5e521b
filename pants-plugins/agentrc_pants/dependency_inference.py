"""Dependency inference: the graph of items and bundles comes from their own text.

Item `requires` and bundle `items`/`requires` are hard edges (an unknown name fails with
the target and the missing item named); `preload-skills` are soft edges, added only when
the skill exists (spec 001 §3.4). The index of names is built once per graph from every
agentrc target's entrypoint, read in a node per entrypoint: an edit re-reads one file, and
when its name and references are unchanged (a body edit) the index is not rebuilt at all.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, Set, Tuple

from pants.engine.addresses import Address
from pants.engine.fs import Digest, DigestContents
from pants.engine.rules import Get, MultiGet, collect_rules, rule
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

from agentrc.portable.peek import Peek, peek
from agentrc.portable.resolve import find_cycles
from agentrc_pants.target_types import AgentrcBundleSourceField, AgentrcEntrypointField, AgentrcFieldSet

ENTRY_FIELDS = (AgentrcEntrypointField, AgentrcBundleSourceField)


class UnresolvedAgentrcReference(Exception):
    pass


@dataclass(frozen=True)
class AgentrcIndex:
    """(kind, name) -> addresses declaring it; `bundle` is a kind here too."""

    names: FrozenDict[Tuple[str, str], Tuple[Address, ...]]
    peeks: FrozenDict[Address, Peek]
    cycles: FrozenDict[Address, str]  # address -> the requires cycle it is on, as text


@dataclass(frozen=True)
class EntrypointPeekRequest:
    field: SourcesField  # a target's entrypoint or bundle manifest field


@dataclass(frozen=True)
class EntrypointPeeks:
    peeks: Tuple[Peek, ...]


@rule
async def peek_entrypoint(request: EntrypointPeekRequest) -> EntrypointPeeks:
    hydrated = await Get(HydratedSources, HydrateSourcesRequest(request.field))
    contents = await Get(DigestContents, Digest, hydrated.snapshot.digest)
    found = (peek(fc.path, fc.content) for fc in contents)
    return EntrypointPeeks(tuple(info for info in found if info is not None))


@rule(desc="Index agentrc item and bundle names")
async def agentrc_index(all_targets: AllTargets) -> AgentrcIndex:
    fields = [(tgt.address, tgt[f]) for tgt in all_targets for f in ENTRY_FIELDS if tgt.has_field(f)]
    found = await MultiGet(Get(EntrypointPeeks, EntrypointPeekRequest(f)) for _, f in fields)
    names: Dict[Tuple[str, str], list] = defaultdict(list)
    peeks = {}
    for (address, _), result in zip(fields, found):
        for info in result.peeks:
            names[(info.kind, info.name)].append(address)
            peeks[address] = info
    index_names = {k: tuple(sorted(v)) for k, v in names.items()}
    return AgentrcIndex(FrozenDict(index_names), FrozenDict(peeks), FrozenDict(_cycles(index_names, peeks)))


def _hard_edges(info: Peek):
    return list(info.refs) + [("bundle", b) for b in info.bundles]


def _cycles(names, peeks) -> Dict[Address, str]:
    """Requires cycles, found here so they fail with agentrc's own words (AR063/AR071)
    instead of Pants' generic dependency-cycle error."""
    def edges(address):
        return [a for ref in _hard_edges(peeks[address]) for a in names.get(ref, ()) if a in peeks]

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
    found: Set[Address] = set()
    missing = []
    hard = _hard_edges(info)
    for kind, name in hard:
        owners = index.names.get((kind, name), ())
        if not owners:
            missing.append(f"{kind} {name!r}")
        found.update(a for a in owners if a != address)
    for skill in info.soft:
        found.update(a for a in index.names.get(("skill", skill), ()) if a != address)
    if missing:
        raise UnresolvedAgentrcReference(
            f"{address} ({info.kind} {info.name}) references {', '.join(missing)}, which no agentrc target "
            "declares. Fix the name, or run `pants tailor ::` if the item exists but has no target."
        )
    return InferredDependencies(sorted(found))


def rules():
    return [*collect_rules(), UnionRule(InferDependenciesRequest, InferAgentrcDependencies)]
