"""`agentrc_config`: a spec-000 project (ai.config.*, presets, .ai/, AGENTS.md) as a target.

`pants package` builds it in a sandboxed Process (`agentrc_pants.cli_process`): the target's
files and the agentrc core go in, `python -m agentrc build` runs there (Node evaluates `ai.config.js` when there is
one), and the client tree plus the fidelity report come out. Being a Process, the result
is cached locally and remotely like the process mode of item targets.

Pants hides dot-directories by default: a repository with `.ai/` directories adds
`pants_ignore.add = ["!.ai/"]` to pants.toml (this one does).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from pants.core.goals.package import BuiltPackage, BuiltPackageArtifact, PackageFieldSet
from pants.core.util_rules.system_binaries import BinaryPathRequest, BinaryPaths
from pants.engine.fs import AddPrefix, Digest, DigestContents, DigestSubset, PathGlobs, Snapshot
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    HydratedSources,
    HydrateSourcesRequest,
    MultipleSourcesField,
    Target,
)
from pants.engine.unions import UnionRule
from pants.util.frozendict import FrozenDict
from pants.util.logging import LogLevel

from agentrc.inputs.config import CONFIG_NAMES
from agentrc.output.plan import summary_lines
from agentrc_pants.cli_process import OUT, AgentrcCliRequest, AgentrcCliResult
from agentrc_pants.generation import REPORT
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import AgentrcClientsField, AgentrcOutputPathField


class AgentrcConfigSourcesField(MultipleSourcesField):
    default = (*CONFIG_NAMES, "AGENTS.md", ".ai/**/*", "presets/**/*")
    help = ("The project's canonical-document files: `ai.config.*`, the root `AGENTS.md`, `.ai/` and local "
            "preset directories (docs/canonical.md).")


class AgentrcConfigTarget(Target):
    alias = "agentrc_config"
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcConfigSourcesField, AgentrcClientsField, AgentrcOutputPathField)
    help = ("A project configured by spec 000 (ai.config.*, presets, .ai/, AGENTS.md), merged into one canonical "
            "document and generated for each client.")


@dataclass(frozen=True)
class AgentrcConfigFieldSet(PackageFieldSet):
    required_fields = (AgentrcConfigSourcesField,)

    sources: AgentrcConfigSourcesField
    clients: AgentrcClientsField
    output_path: AgentrcOutputPathField


class AgentrcConfigBuildFailed(Exception):
    """`agentrc build` failed in the sandbox; the message is its diagnostics."""


@rule(desc="Package agentrc config project", level=LogLevel.DEBUG)
async def package_config(field_set: AgentrcConfigFieldSet, subsystem: AgentrcSubsystem) -> BuiltPackage:
    sources, node = await MultiGet(
        Get(HydratedSources, HydrateSourcesRequest(field_set.sources)),
        Get(BinaryPaths, BinaryPathRequest(binary_name="node", search_path=("/usr/bin", "/usr/local/bin", "/bin"))),
    )
    project = field_set.address.spec_path or "."
    clients = tuple(field_set.clients.value or subsystem.clients)
    # Node is needed only for ai.config.js; its path (fingerprinted) joins the cache key.
    path = os.path.dirname(node.first_path.path) if node.first_path else ""
    result = await Get(AgentrcCliResult, AgentrcCliRequest(
        args=("build", project, "--client", ",".join(clients), "--out", OUT, "--report", f"{OUT}/{REPORT}",
              "--no-cache", "--jobs", "1") + (("--strict",) if subsystem.strict else ()),
        sources=sources.snapshot.digest,
        description=f"agentrc generate {field_set.address}",
        env=FrozenDict({"PATH": path, "AGENTRC_NODE": node.first_path.fingerprint if node.first_path else ""}),
    ))
    if result.exit_code != 0:
        raise AgentrcConfigBuildFailed(f"{field_set.address}: agentrc build failed\n{result.stderr}")
    # The CLI's ownership manifest describes a working directory, not a package.
    tree = await Get(Digest, DigestSubset(result.tree, PathGlobs(["**", "!.agentrc/manifest.json"])))
    prefix = field_set.output_path.value_or_default(file_ending=None)
    snapshot = await Get(Snapshot, AddPrefix(tree, prefix))
    # The package's summary is the report's, as data (the lines `agentrc build` prints).
    report = await Get(DigestContents, Digest, await Get(Digest, DigestSubset(result.tree, PathGlobs([REPORT]))))
    totals = json.loads(report[0].content).get("summary", {}) if report else {}
    summary = tuple(summary_lines(totals))
    return BuiltPackage(snapshot.digest, (BuiltPackageArtifact(prefix, summary),))


def rules():
    return [*collect_rules(), UnionRule(PackageFieldSet, AgentrcConfigFieldSet)]
