"""`agentrc_config`: a spec-000 project (ai.config.*, presets, .ai/, AGENTS.md) as a target.

`pants package` builds it in a sandboxed Process: the target's files and the agentrc core
go in, `python -m agentrc build` runs there (Node evaluates `ai.config.js` when there is
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
from pants.engine.fs import (
    AddPrefix,
    Digest,
    DigestContents,
    DigestSubset,
    MergeDigests,
    PathGlobs,
    RemovePrefix,
    Snapshot,
)
from pants.engine.process import Process, ProcessResult
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

from agentrc.inputs.config import CONFIG_NAMES
from agentrc.output.plan import summary_lines
from agentrc_pants.generation import CODE_DIR, REPORT, AgentrcCode, AgentrcPython
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import AgentrcClientsField, AgentrcOutputPathField

OUT = "__out__"
CLI = f"import sys; sys.path.insert(0, {CODE_DIR!r}); from agentrc.cli.main import main; sys.exit(main(sys.argv[1:]))"


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


@rule(desc="Package agentrc config project", level=LogLevel.DEBUG)
async def package_config(field_set: AgentrcConfigFieldSet, subsystem: AgentrcSubsystem) -> BuiltPackage:
    sources, code, python, node = await MultiGet(
        Get(HydratedSources, HydrateSourcesRequest(field_set.sources)),
        Get(AgentrcCode),
        Get(AgentrcPython),
        Get(BinaryPaths, BinaryPathRequest(binary_name="node", search_path=("/usr/bin", "/usr/local/bin", "/bin"))),
    )
    project = field_set.address.spec_path or "."
    clients = tuple(field_set.clients.value or subsystem.clients)
    inputs = await Get(Digest, MergeDigests([sources.snapshot.digest, code.digest]))
    # Node is needed only for ai.config.js; its path (fingerprinted) joins the cache key.
    path = os.path.dirname(node.first_path.path) if node.first_path else ""
    result = await Get(ProcessResult, Process(
        argv=(python.path.path, "-S", "-E", "-c", CLI, "build", project, "--client", ",".join(clients),
              "--out", OUT, "--report", f"{OUT}/{REPORT}", "--no-cache", "--jobs", "1")
             + (("--strict",) if subsystem.strict else ()),
        input_digest=inputs,
        output_directories=(OUT,),
        env={"AGENTRC_PYTHON": python.path.fingerprint, "PATH": path,
             "AGENTRC_NODE": node.first_path.fingerprint if node.first_path else ""},
        description=f"agentrc generate {field_set.address}",
        level=LogLevel.DEBUG,
    ))
    tree = await Get(Digest, RemovePrefix(result.output_digest, OUT))
    # The CLI's ownership manifest describes a working directory, not a package.
    tree = await Get(Digest, DigestSubset(tree, PathGlobs(["**", "!.agentrc/manifest.json"])))
    prefix = field_set.output_path.value_or_default(file_ending=None)
    snapshot = await Get(Snapshot, AddPrefix(tree, prefix))
    # The package's summary is the report's, as data (the lines `agentrc build` prints).
    report = await Get(DigestContents, Digest, await Get(Digest, DigestSubset(
        result.output_digest, PathGlobs([f"{OUT}/{REPORT}"]))))
    totals = json.loads(report[0].content).get("summary", {}) if report else {}
    summary = tuple(summary_lines(totals))
    return BuiltPackage(snapshot.digest, (BuiltPackageArtifact(prefix, summary),))


def rules():
    return [*collect_rules(), UnionRule(PackageFieldSet, AgentrcConfigFieldSet)]
