"""`agentrc_oas_package`: a capability package (spec 003, `oas-package.json`) as a target.

`pants package` validates it in a sandboxed Process (`agentrc_pants.cli_process`) exactly as `agentrc cap install` would
(`python -m agentrc cap pack`: every manifest, every capability self-contained) and puts
under dist/ the payload an install fetches plus `integrity.json` (the package's id, version
and payload integrity, the value both `agentrc cap install` and `oas install` lock). The
integrity is also printed with the package. Being a Process, the result is cached locally
and remotely. `pants tailor` adds one target per directory holding `oas-package.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pants.core.goals.package import BuiltPackage, BuiltPackageArtifact, PackageFieldSet
from pants.engine.fs import AddPrefix, Digest, DigestContents, DigestSubset, PathGlobs
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    Dependencies,
    HydratedSources,
    HydrateSourcesRequest,
    MultipleSourcesField,
    Target,
)
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from agentrc_pants.cli_process import OUT, AgentrcCliRequest, AgentrcCliResult
from agentrc_pants.target_types import NESTED_BUILD_FILES, AgentrcOutputPathField


class AgentrcOasPackageSourcesField(MultipleSourcesField):
    default = ("oas-package.json", "**/*", *NESTED_BUILD_FILES)
    help = "Every file of the package directory: an install fetches and hashes all of them (spec 003)."


class AgentrcOasPackageDependenciesField(Dependencies):
    help = ("Usually inferred: the `agentrc_capability` target of each capability `oas-package.json` exports "
            "(agentrc_pants.capability).")


class AgentrcOasPackageTarget(Target):
    alias = "agentrc_oas_package"
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcOasPackageSourcesField, AgentrcOasPackageDependenciesField,
                   AgentrcOutputPathField)
    help = ("A capability package (spec 003): the directory holding `oas-package.json` and the capabilities it "
            "exports, validated and hashed as `agentrc cap install` and `oas install` do.")


@dataclass(frozen=True)
class AgentrcOasPackageFieldSet(PackageFieldSet):
    required_fields = (AgentrcOasPackageSourcesField,)

    sources: AgentrcOasPackageSourcesField
    output_path: AgentrcOutputPathField


class OasPackageInvalid(Exception):
    """The package does not validate; the message is agentrc's diagnostics."""


@rule(desc="Package an OAS capability package", level=LogLevel.DEBUG)
async def package_oas(field_set: AgentrcOasPackageFieldSet) -> BuiltPackage:
    sources = await Get(HydratedSources, HydrateSourcesRequest(field_set.sources))
    root = field_set.address.spec_path or "."
    result = await Get(AgentrcCliResult, AgentrcCliRequest(
        args=("cap", "pack", root, "--out", OUT), sources=sources.snapshot.digest,
        description=f"agentrc cap pack {field_set.address}"))
    if result.exit_code != 0:
        raise OasPackageInvalid(f"{field_set.address}: not a valid capability package\n" + result.stderr)
    tree = result.tree
    record = await Get(DigestContents, Digest, await Get(Digest, DigestSubset(tree, PathGlobs(["integrity.json"]))))
    data = json.loads(record[0].content)
    prefix = field_set.output_path.value_or_default(file_ending=None)
    digest = await Get(Digest, AddPrefix(tree, prefix))
    lines = (f"{data['package']}@{data['version']} {data['integrity']}",
             *(f"capability {cid} ({row['path']})" for cid, row in data["capabilities"].items()))
    return BuiltPackage(digest, (BuiltPackageArtifact(prefix, lines),))


def rules():
    return [*collect_rules(), UnionRule(PackageFieldSet, AgentrcOasPackageFieldSet)]
