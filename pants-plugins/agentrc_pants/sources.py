"""From targets to the core's input: every agentrc source in a target's transitive closure,
as a SourceTree (paths relative to the build root, exactly as the CLI would show them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Tuple

from pants.engine.addresses import Address, Addresses
from pants.engine.fs import Digest, DigestContents, MergeDigests
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    HydratedSources,
    HydrateSourcesRequest,
    Targets,
    TransitiveTargets,
    TransitiveTargetsRequest,
)

from agentrc.model import SourceFile, SourceTree
from agentrc_pants.target_types import (
    AgentrcBundleSourceField,
    AgentrcEntrypointField,
    AgentrcRegistrySourceField,
    AgentrcSupportingFilesField,
)

AGENTRC_SOURCE_FIELDS = (AgentrcEntrypointField, AgentrcSupportingFilesField, AgentrcBundleSourceField,
                         AgentrcRegistrySourceField)


@dataclass(frozen=True)
class AgentrcSourcesRequest:
    addresses: Tuple[Address, ...]
    transitive: bool = True


@dataclass(frozen=True)
class AgentrcSources:
    digest: Digest
    tree: SourceTree


@rule
async def agentrc_sources(request: AgentrcSourcesRequest) -> AgentrcSources:
    if request.transitive:
        closure = await Get(TransitiveTargets, TransitiveTargetsRequest(request.addresses))
        targets: Iterable = closure.closure
    else:
        targets = await Get(Targets, Addresses(request.addresses))
    fields = [tgt[f] for tgt in targets for f in AGENTRC_SOURCE_FIELDS if tgt.has_field(f)]
    hydrated = await MultiGet(Get(HydratedSources, HydrateSourcesRequest(f)) for f in fields)
    digest = await Get(Digest, MergeDigests(h.snapshot.digest for h in hydrated))
    contents = await Get(DigestContents, Digest, digest)
    tree = SourceTree(tuple(SourceFile(fc.path, fc.content, fc.is_executable) for fc in contents))
    return AgentrcSources(digest, tree)


def rules():
    return collect_rules()
