"""`pants package`: each registry, bundle or item target becomes a client tree under dist/.

`pants package ::` writes one tree per registry; a bundle's own tree when no packaged
registry's tree already holds the bundle, or its target sets `package=True`; an item's own
tree only when its target sets `package=True` (docs/pants.md): a tree per item made every
`package ::` clear and rewrite every item's directory and re-check every item's closure, so
it grew with the number of items, and the bundles' trees inside a registry were a third of
`dist/` again at 5,000 items (issue 13).

The tree is byte for byte what `agentrc build --client ... --out DIR` writes for the same
sources (minus the CLI's ownership manifest, which describes a working directory), plus
the fidelity report at `.agentrc/report.json`.
"""

from __future__ import annotations

import logging
import posixpath
from typing import Optional, Tuple

from pants.core.goals.package import BuiltPackage, BuiltPackageArtifact, PackageFieldSet
from pants.core.util_rules.distdir import DistDir
from pants.engine.fs import EMPTY_DIGEST, AddPrefix, Digest
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import WrappedTarget, WrappedTargetRequest
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from agentrc_pants.dependency_inference import AgentrcIndex
from agentrc_pants.generation import GenerationRequest, GenerationResult
from agentrc_pants.project import ProjectClients, ProjectClientsRequest, pick
from agentrc_pants.sources import AgentrcSources, AgentrcSourcesRequest
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import (
    AgentrcBundleFieldSet,
    AgentrcClientsField,
    AgentrcItemFieldSet,
    AgentrcOutputPathField,
    AgentrcRegistryFieldSet,
    AgentrcRegistryPackageField,
)

logger = logging.getLogger(__name__)


async def _clients(field_value: Optional[Tuple[str, ...]], directory: str,
                   subsystem: AgentrcSubsystem) -> Tuple[str, ...]:
    """The target's `clients=`, else the nearest agentrc.yaml's, else `[agentrc].clients`."""
    if field_value:
        return tuple(field_value)
    return pick(None, await Get(ProjectClients, ProjectClientsRequest(directory)), subsystem)


async def _shares(directory: str) -> bool:
    """The nearest agentrc.yaml's `shared-copies` (on without one), as `agentrc build` reads it."""
    return (await Get(ProjectClients, ProjectClientsRequest(directory))).shares


def _built(field_set, result: GenerationResult, digest: Digest, prefix: str) -> BuiltPackage:
    # `digest`: the tree under its prefix as a Digest, not a Snapshot: nothing here reads its
    # file list (23,000 paths a 5,000-item registry's, listed again for every edit).
    result.raise_on_error(str(field_set.address))
    for d in result.diagnostics:
        logger.warning(d.format())
    return BuiltPackage(digest, (BuiltPackageArtifact(prefix, (result.summary_line(prefix),)),))


@rule(desc="Package agentrc item", level=LogLevel.DEBUG)
async def package_item(field_set: AgentrcItemFieldSet, subsystem: AgentrcSubsystem) -> BuiltPackage:
    sources = await Get(AgentrcSources, AgentrcSourcesRequest((field_set.address,)))
    clients = await _clients(field_set.clients.value, field_set.address.spec_path, subsystem)
    result = await Get(GenerationResult, GenerationRequest(
        sources.digest, sources.tree, clients, (),
        (field_set.source.file_path,), subsystem.strict, (), f"agentrc generate {field_set.address}",
        shared_copies=await _shares(field_set.address.spec_path)))
    prefix = field_set.output_path.value_or_default(file_ending=None)
    digest = await Get(Digest, AddPrefix(result.digest, prefix))
    return _built(field_set, result, digest, prefix)


async def _registry_tree_holding(field_set: AgentrcBundleFieldSet, clients: Tuple[str, ...],
                                 subsystem: AgentrcSubsystem, index: AgentrcIndex) -> Optional[str]:
    """Where the tree of the packaged registry that holds this bundle goes (its dist path),
    or None when no registry's tree holds it: the bundle is under no registry root, its
    registry is not packaged, or the two build for different clients."""
    root = index.where.get(field_set.address, ("", ""))[1]
    address = index.registries.get(root)
    if address is None:
        return None
    registry = (await Get(WrappedTarget, WrappedTargetRequest(address, description_of_origin="agentrc bundle"))).target
    if not registry[AgentrcRegistryPackageField].value:
        return None
    if set(await _clients(registry[AgentrcClientsField].value, registry.address.spec_path, subsystem)) != set(clients):
        return None
    return registry[AgentrcOutputPathField].value_or_default(file_ending=None)


@rule(desc="Package agentrc bundle", level=LogLevel.DEBUG)
async def package_bundle(field_set: AgentrcBundleFieldSet, subsystem: AgentrcSubsystem,
                         index: AgentrcIndex, dist_dir: DistDir) -> BuiltPackage:
    clients = await _clients(field_set.clients.value, field_set.address.spec_path, subsystem)
    if field_set.package.value is None:
        held = await _registry_tree_holding(field_set, clients, subsystem, index)
        if held is not None:
            # Nothing written, and nothing cleared: the line says where the bundle's files are.
            return BuiltPackage(EMPTY_DIGEST, (BuiltPackageArtifact(None, (
                f"{field_set.address}: in the registry's tree, {dist_dir.relpath / held} (package=True on the bundle "
                "writes its own)",)),))
    sources = await Get(AgentrcSources, AgentrcSourcesRequest((field_set.address,)))
    manifest = field_set.source.file_path
    # Selected by its manifest's path, which is unambiguous when registries reuse bundle names.
    result = await Get(GenerationResult, GenerationRequest(
        sources.digest, sources.tree, clients, (manifest,), None,
        subsystem.strict, (manifest,), f"agentrc generate {field_set.address}",
        shared_copies=await _shares(field_set.address.spec_path)))
    prefix = field_set.output_path.value_or_default(file_ending=None)
    digest = await Get(Digest, AddPrefix(result.digest, prefix))
    return _built(field_set, result, digest, prefix)


@rule(desc="Package agentrc registry", level=LogLevel.DEBUG)
async def package_registry(field_set: AgentrcRegistryFieldSet, subsystem: AgentrcSubsystem,
                           index: AgentrcIndex) -> BuiltPackage:
    # The registry's items and bundles are the targets the index places in this root (the
    # nearest marker above them, as in the core); their closure adds what they reference in
    # other registries. One closure, one generation over the whole tree: what
    # `agentrc build <root>` builds (every item, every bundle's MCP servers).
    root = posixpath.dirname(field_set.source.file_path)
    members = tuple(sorted(address for address, (_, where) in index.where.items() if where == root))
    sources = await Get(AgentrcSources, AgentrcSourcesRequest((field_set.address, *members)))
    clients = await _clients(field_set.clients.value, field_set.address.spec_path, subsystem)
    project = await Get(ProjectClients, ProjectClientsRequest(field_set.address.spec_path))
    result = await Get(GenerationResult, GenerationRequest(
        sources.digest, sources.tree, clients, (), None, subsystem.strict, (),
        f"agentrc generate {field_set.address}", shared_copies=project.shares, ignore=project.ignore))
    prefix = field_set.output_path.value_or_default(file_ending=None)
    digest = await Get(Digest, AddPrefix(result.digest, prefix))
    return _built(field_set, result, digest, prefix)


def rules():
    return [
        *collect_rules(),
        UnionRule(PackageFieldSet, AgentrcItemFieldSet),
        UnionRule(PackageFieldSet, AgentrcBundleFieldSet),
        UnionRule(PackageFieldSet, AgentrcRegistryFieldSet),
    ]
