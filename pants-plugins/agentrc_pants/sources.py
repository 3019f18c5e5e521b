"""From targets to the core's input: every agentrc source in a target's transitive closure,
as a SourceTree (paths relative to the build root, exactly as the CLI would show them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, List, Tuple

from pants.engine.addresses import Address, Addresses
from pants.engine.fs import EMPTY_DIGEST, Digest, DigestContents, MergeDigests
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    HydratedSources,
    HydrateSourcesRequest,
    Targets,
    TransitiveTargets,
    TransitiveTargetsRequest,
)

from agentrc.model import SourceFile, SourceTree
from agentrc_pants.merging import KeyedMergeRequest, buckets
from agentrc_pants.rounds import in_rounds
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


@dataclass(frozen=True)
class _TargetFilesRequest:
    fields: Tuple[Any, ...]  # one target's agentrc source fields


@dataclass(frozen=True)
class _TargetFiles:
    digest: Digest
    files: Tuple[SourceFile, ...]


@rule
async def target_files(request: _TargetFilesRequest) -> _TargetFiles:
    """One target's agentrc files, a node of their own: a closure's rule asks for one node
    per target, and an edit reads only the edited target's files again. It hydrated every
    field and read the whole closure's contents itself (at 5,000 items, 10,000 fields and
    7,638 files: 0.3-0.8 s of an edit)."""
    hydrated = await MultiGet(Get(HydratedSources, HydrateSourcesRequest(f)) for f in request.fields)
    digests = [h.snapshot.digest for h in hydrated if h.snapshot.files]
    if not digests:
        return _TargetFiles(EMPTY_DIGEST, ())
    digest = digests[0] if len(digests) == 1 else await Get(Digest, MergeDigests(digests))
    contents = await Get(DigestContents, Digest, digest)
    return _TargetFiles(digest, tuple(SourceFile(fc.path, fc.content, fc.is_executable) for fc in contents))


@dataclass(frozen=True)
class _TargetFilesBucketRequest:
    requests: Tuple[_TargetFilesRequest, ...]  # a bucket of `merging.buckets`, by address


@dataclass(frozen=True)
class _TargetFilesBucket:
    parts: Tuple[_TargetFiles, ...]


_EMPTY = _TargetFiles(EMPTY_DIGEST, ())
targets_asked = 0  # targets asked for by _TargetFilesBucketRequests run in this process (tests count)


@rule
async def target_files_bucket(request: _TargetFilesBucketRequest) -> _TargetFilesBucket:
    """Some targets' files asked for together: only the edited target's bucket asks again."""
    global targets_asked
    targets_asked += len(request.requests)
    return _TargetFilesBucket(tuple(await MultiGet(Get(_TargetFiles, _TargetFilesRequest, r)
                                                   for r in request.requests)))


@rule
async def agentrc_sources(request: AgentrcSourcesRequest) -> AgentrcSources:
    if request.transitive:
        closure = await Get(TransitiveTargets, TransitiveTargetsRequest(request.addresses))
        targets: Iterable = closure.closure
    else:
        targets = await Get(Targets, Addresses(request.addresses))
    requests, keys = [], []
    for tgt in targets:
        fields = tuple(tgt[f] for f in AGENTRC_SOURCE_FIELDS if tgt.has_field(f))
        if fields:
            requests.append(_TargetFilesRequest(fields))
            keys.append(tgt.address.spec)
    # By buckets of targets: a hundred Gets in every edit, not one per target (5,000). By
    # address, as the closure's order can differ from one run to the next, and a bucket in
    # another order would be another request.
    pairs = sorted(zip(keys, requests), key=lambda kr: kr[0])
    keys, requests = [k for k, _ in pairs], [r for _, r in pairs]
    order = buckets(keys)
    found = await in_rounds([Get(_TargetFilesBucket, _TargetFilesBucketRequest(tuple(requests[i] for i in bucket)))
                             for bucket in order], [len(bucket) for bucket in order])
    parts: List[_TargetFiles] = [_EMPTY] * len(requests)
    for bucket, got in zip(order, found):
        for i, part in zip(bucket, got.parts):
            parts[i] = part
    # The merge fails on two targets holding one path with different bytes. By buckets of
    # targets, so an edit merges the edited target's bucket again, not 5,000 digests (merging.py).
    digest = await Get(Digest, KeyedMergeRequest(tuple(zip(keys, (p.digest for p in parts)))))
    files = {f.path: f for p in parts for f in p.files}
    return AgentrcSources(digest, SourceTree(tuple(files[path] for path in sorted(files))))


def rules():
    return collect_rules()
