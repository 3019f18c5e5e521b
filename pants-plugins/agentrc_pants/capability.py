"""`agentrc_capability`: one capability (spec 003, a directory holding `oas.json`) as a target,
and the dependencies read from the manifests.

`pants tailor` adds one per directory holding `oas.json` (in a package or on its own). Its
dependencies are inferred from the manifest: every agentrc target owning files under a
declared `skills` entry (a skill directory, or a root of skills) or `agents` entry (a soul
directory), for instance the `agentrc_items` of a skill that is also built for clients. An
`agentrc_oas_package` depends on the `agentrc_capability` of each capability its
`oas-package.json` exports. So `pants dependents`, `--changed-dependents` and every goal
walking the graph see a package through its capabilities down to the items they ship. A
manifest that does not parse infers nothing; `pants package` of the package reports it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import List, Set

from pants.engine.addresses import Address, Addresses
from pants.engine.fs import Digest, DigestContents, PathGlobs, Paths
from pants.engine.internals.graph import Owners, OwnersRequest
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    Dependencies,
    FieldSet,
    HydratedSources,
    HydrateSourcesRequest,
    InferDependenciesRequest,
    InferredDependencies,
    MultipleSourcesField,
    Target,
    Targets,
)
from pants.engine.unions import UnionRule

from agentrc.capabilities.manifest import lexical_escape, parse_capability, parse_package
from agentrc.capabilities.model import CAPABILITY_FILE, PACKAGE_FILE
from agentrc.diagnostics import Diagnostics
from agentrc_pants.oas_package import AgentrcOasPackageDependenciesField, AgentrcOasPackageSourcesField
from agentrc_pants.target_types import NESTED_BUILD_FILES, AgentrcFieldSet


class AgentrcCapabilitySourcesField(MultipleSourcesField):
    default = (CAPABILITY_FILE, "**/*", *NESTED_BUILD_FILES)
    help = "Every file of the capability directory: an install copies and hashes all of them (spec 003)."


class AgentrcCapabilityDependenciesField(Dependencies):
    help = ("Usually inferred: the agentrc targets owning the skill trees and agent directories `oas.json` "
            "declares (`skills`, `agents`).")


class AgentrcCapabilityTarget(Target):
    alias = "agentrc_capability"
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcCapabilitySourcesField, AgentrcCapabilityDependenciesField)
    help = ("A capability (spec 003): the directory holding `oas.json`, with the skills, injection, commands, hooks "
            "and agents it declares. Its dependencies on the agentrc targets of its skills and agents are inferred.")


@dataclass(frozen=True)
class AgentrcCapabilityFieldSet(FieldSet):
    required_fields = (AgentrcCapabilitySourcesField, AgentrcCapabilityDependenciesField)

    sources: AgentrcCapabilitySourcesField
    dependencies: AgentrcCapabilityDependenciesField


@dataclass(frozen=True)
class AgentrcOasPackageDependenciesFieldSet(FieldSet):
    required_fields = (AgentrcOasPackageSourcesField, AgentrcOasPackageDependenciesField)

    sources: AgentrcOasPackageSourcesField
    dependencies: AgentrcOasPackageDependenciesField


class InferCapabilityDependencies(InferDependenciesRequest):
    infer_from = AgentrcCapabilityFieldSet


class InferOasPackageDependencies(InferDependenciesRequest):
    infer_from = AgentrcOasPackageDependenciesFieldSet


async def _manifest(field: MultipleSourcesField, path: str) -> bytes:
    hydrated = await Get(HydratedSources, HydrateSourcesRequest(field))
    contents = await Get(DigestContents, Digest, hydrated.snapshot.digest)
    return next((fc.content for fc in contents if fc.path == path), b"")


async def _owners(globs: List[str]) -> Targets:
    """The targets owning any file matched by `globs`."""
    if not globs:
        return Targets([])
    paths = await Get(Paths, PathGlobs(globs))
    if not paths.files:
        return Targets([])
    owners = await Get(Owners, OwnersRequest(tuple(paths.files)))
    return await Get(Targets, Addresses(owners))


def _declared(directory: str, rel: str) -> List[str]:
    """Globs for a declared path inside the capability `directory` (nothing for one that
    leaves it: the package goal refuses that)."""
    if lexical_escape(rel):
        return []
    base = posixpath.normpath(posixpath.join(directory, rel)) if directory else posixpath.normpath(rel)
    return [base, f"{base}/**"]


@rule(desc="Infer agentrc_capability dependencies")
async def infer_capability_dependencies(request: InferCapabilityDependencies) -> InferredDependencies:
    address = request.field_set.address
    directory = address.spec_path
    raw = await _manifest(request.field_set.sources, posixpath.join(directory, CAPABILITY_FILE))
    cap = parse_capability(CAPABILITY_FILE, raw, Diagnostics()) if raw else None
    if cap is None:
        return InferredDependencies([])
    globs = [g for rel in (*cap.skills, *cap.agents) for g in _declared(directory, rel)]
    owners = await _owners(globs)
    found: Set[Address] = {t.address for t in owners if AgentrcFieldSet.is_applicable(t) and t.address != address}
    return InferredDependencies(sorted(found))


@rule(desc="Infer agentrc_oas_package dependencies")
async def infer_oas_package_dependencies(request: InferOasPackageDependencies) -> InferredDependencies:
    address = request.field_set.address
    directory = address.spec_path
    raw = await _manifest(request.field_set.sources, posixpath.join(directory, PACKAGE_FILE))
    pkg = parse_package(PACKAGE_FILE, raw, Diagnostics()) if raw else None
    if pkg is None:
        return InferredDependencies([])
    manifests = [posixpath.normpath(posixpath.join(directory, rel, CAPABILITY_FILE)) for rel in pkg.capabilities
                 if not lexical_escape(rel)]
    owners = await MultiGet(Get(Owners, OwnersRequest((m,))) for m in manifests)
    targets = await Get(Targets, Addresses(sorted({a for o in owners for a in o})))
    found = {t.address for t in targets if t.has_field(AgentrcCapabilitySourcesField) and t.address != address}
    return InferredDependencies(sorted(found))


def rules():
    return [*collect_rules(), UnionRule(InferDependenciesRequest, InferCapabilityDependencies),
            UnionRule(InferDependenciesRequest, InferOasPackageDependencies)]
