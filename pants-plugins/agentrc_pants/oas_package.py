"""`agentrc_oas_package`: a capability package (spec 003, `oas-package.json`) as a target.

`pants package` validates it in a sandboxed Process exactly as `agentrc cap install` would
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
from pants.engine.fs import AddPrefix, Digest, DigestContents, DigestSubset, MergeDigests, PathGlobs, RemovePrefix
from pants.engine.process import FallibleProcessResult, Process
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    HydratedSources,
    HydrateSourcesRequest,
    MultipleSourcesField,
    Target,
)
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from agentrc_pants.generation import CODE_DIR, AgentrcCode, AgentrcPython
from agentrc_pants.target_types import BUILD_FILES, AgentrcOutputPathField

OUT = "__out__"
CLI = f"import sys; sys.path.insert(0, {CODE_DIR!r}); from agentrc.cli.main import main; sys.exit(main(sys.argv[1:]))"


class AgentrcOasPackageSourcesField(MultipleSourcesField):
    default = ("oas-package.json", "**/*", *BUILD_FILES)
    help = "Every file of the package directory: an install fetches and hashes all of them (spec 003)."


class AgentrcOasPackageTarget(Target):
    alias = "agentrc_oas_package"
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcOasPackageSourcesField, AgentrcOutputPathField)
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
    sources, code, python = await MultiGet(
        Get(HydratedSources, HydrateSourcesRequest(field_set.sources)),
        Get(AgentrcCode),
        Get(AgentrcPython),
    )
    root = field_set.address.spec_path or "."
    inputs = await Get(Digest, MergeDigests([sources.snapshot.digest, code.digest]))
    result = await Get(FallibleProcessResult, Process(
        argv=(python.path.path, "-S", "-E", "-c", CLI, "cap", "pack", root, "--out", OUT),
        input_digest=inputs,
        output_directories=(OUT,),
        env={"AGENTRC_PYTHON": python.path.fingerprint},
        description=f"agentrc cap pack {field_set.address}",
        level=LogLevel.DEBUG,
    ))
    if result.exit_code != 0:
        raise OasPackageInvalid(f"{field_set.address}: not a valid capability package\n"
                                + result.stderr.decode("utf-8", "replace"))
    tree = await Get(Digest, RemovePrefix(result.output_digest, OUT))
    record = await Get(DigestContents, Digest, await Get(Digest, DigestSubset(tree, PathGlobs(["integrity.json"]))))
    data = json.loads(record[0].content)
    prefix = field_set.output_path.value_or_default(file_ending=None)
    digest = await Get(Digest, AddPrefix(tree, prefix))
    lines = (f"{data['package']}@{data['version']} {data['integrity']}",
             *(f"capability {cid} ({row['path']})" for cid, row in data["capabilities"].items()))
    return BuiltPackage(digest, (BuiltPackageArtifact(prefix, lines),))


def rules():
    return [*collect_rules(), UnionRule(PackageFieldSet, AgentrcOasPackageFieldSet)]
