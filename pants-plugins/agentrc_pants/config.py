"""`agentrc_config`: a spec-000 project (ai.config.*, presets, .ai/, AGENTS.md) as a target.

`pants package` builds it in a sandboxed Process (`agentrc_pants.cli_process`): the target's
files and the agentrc core go in, `python -m agentrc build` runs there (Node evaluates `ai.config.js` when there is
one), and the client tree plus the fidelity report come out. Being a Process, the result
is cached locally and remotely like the process mode of item targets.

Capability references (`package.json#ai.capabilities`, the config's `capabilities`) are
built from the project's `agentrc.lock.json` only: each git reference's locked commit is
fetched by the lock target's fetch rule (`agentrc_pants.lockfile.fetch_locked_source`, a
Process keyed by source and commit, cached locally and remotely) and laid out as the CLI's
source cache in the sandbox, each entry with the record of its files the CLI verifies it
against (`entry_record`), where the CLI runs with `AGENTRC_NO_FETCH`: a reference the lock
does not pin is AR223, never a fetch. The lock is written by `agentrc build` of the
project outside Pants.

Pants hides dot-directories by default: a repository with `.ai/` directories adds
`pants_ignore.add = ["!.ai/"]` to pants.toml (this one does).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import List

from pants.core.goals.package import BuiltPackage, BuiltPackageArtifact, PackageFieldSet
from pants.core.util_rules.system_binaries import BinaryPathRequest, BinaryPaths
from pants.engine.fs import (
    EMPTY_DIGEST,
    AddPrefix,
    CreateDigest,
    Digest,
    DigestContents,
    DigestSubset,
    FileContent,
    MergeDigests,
    PathGlobs,
    Snapshot,
)
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

from agentrc.clients import names as client_names
from agentrc.inputs.config import CONFIG_NAMES
from agentrc.inputs.fetch import entry_path, entry_record
from agentrc.output.plan import summary_lines
from agentrc.sources import lock as lockfile
from agentrc.sources.dsl import GIT, SourceError, parse
from agentrc.sources.lock import LOCK_FILE
from agentrc_pants.cli_process import OUT, AgentrcCliRequest, AgentrcCliResult
from agentrc_pants.generation import REPORT, AgentrcBuildError
from agentrc_pants.lockfile import LockedSource, LockedSourceRequest
from agentrc_pants.project import ProjectClients, ProjectClientsRequest, pick
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import AgentrcClientsField, AgentrcOutputPathField


class AgentrcConfigSourcesField(MultipleSourcesField):
    default = (*CONFIG_NAMES, "AGENTS.md", LOCK_FILE, ".ai/**/*", "presets/**/*")
    help = ("The project's canonical-document files: `ai.config.*`, the root `AGENTS.md`, `.ai/`, local "
            "preset directories (docs/canonical.md) and `agentrc.lock.json`, which pins capability references.")


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


CACHE = "__agentrc_cache__"  # the sandbox's source cache (the CLI's $AGENTRC_CACHE_DIR)


@dataclass(frozen=True)
class LockedCapabilitiesRequest:
    address: str
    sources: Digest  # the config target's files
    project: str


@dataclass(frozen=True)
class LockedCapabilities:
    digest: Digest  # the sandbox's source cache (under CACHE)


@rule(desc="Fetch an agentrc config project's locked capability references", level=LogLevel.DEBUG)
async def locked_capabilities(request: LockedCapabilitiesRequest) -> LockedCapabilities:
    """The git commits the project's agentrc.lock.json pins for its capability references,
    fetched by the lock target's rule and laid out as the CLI's source cache."""
    lock_path = LOCK_FILE if request.project == "." else f"{request.project}/{LOCK_FILE}"
    subset = await Get(Digest, DigestSubset(request.sources, PathGlobs([lock_path])))
    found = await Get(DigestContents, Digest, subset)
    if not found:
        return LockedCapabilities(EMPTY_DIGEST)
    lock, diags = lockfile.loads(found[0].content, lock_path, client_names.CLIENTS)
    if lock is None:
        raise AgentrcBuildError(request.address, diags)
    pinned = []
    for record in lock.capabilities:
        try:
            source = parse(record.source)
        except SourceError:
            continue  # the CLI reports the reference itself
        if source.kind == GIT and record.commit:
            pinned.append((source, record.source, record.commit))
    unique = sorted(set(pinned), key=lambda p: (p[1], p[2]))
    fetched = await MultiGet(Get(LockedSource, LockedSourceRequest(name, commit)) for _, name, commit in unique)
    problems = [d for got in fetched for d in got.diagnostics if d.is_error]
    if problems:
        raise AgentrcBuildError(request.address, tuple(sorted(set(problems))))
    files: List[FileContent] = []
    for (source, _, commit), got in zip(unique, fetched):
        root = f"{CACHE}/sources/{entry_path(source, commit)}".rstrip("/")
        files.extend(FileContent(f"{root}/{f.path}", f.content, f.executable) for f in got.files)
        # The record the CLI verifies a cache entry against (AR228 without it).
        listed, data = entry_record(source, commit, ((f.path, f.content, f.executable) for f in got.files))
        files.append(FileContent(f"{CACHE}/sources/{listed}", data))
    return LockedCapabilities(await Get(Digest, CreateDigest(files)))


class AgentrcConfigBuildFailed(Exception):
    """`agentrc build` failed in the sandbox; the message is its diagnostics."""


@rule(desc="Package agentrc config project", level=LogLevel.DEBUG)
async def package_config(field_set: AgentrcConfigFieldSet, subsystem: AgentrcSubsystem) -> BuiltPackage:
    sources, node = await MultiGet(
        Get(HydratedSources, HydrateSourcesRequest(field_set.sources)),
        Get(BinaryPaths, BinaryPathRequest(binary_name="node", search_path=("/usr/bin", "/usr/local/bin", "/bin"))),
    )
    project = field_set.address.spec_path or "."
    clients = pick(field_set.clients.value, await Get(ProjectClients, ProjectClientsRequest(project)), subsystem)
    cache = await Get(LockedCapabilities, LockedCapabilitiesRequest(str(field_set.address), sources.snapshot.digest,
                                                                     project))
    # Node is needed only for ai.config.js; its path (fingerprinted) joins the cache key.
    path = os.path.dirname(node.first_path.path) if node.first_path else ""
    result = await Get(AgentrcCliResult, AgentrcCliRequest(
        args=("build", project, "--client", ",".join(clients), "--out", OUT, "--report", f"{OUT}/{REPORT}",
              "--no-cache", "--jobs", "1") + (("--strict",) if subsystem.strict else ()),
        sources=await Get(Digest, MergeDigests([sources.snapshot.digest, cache.digest])),
        description=f"agentrc generate {field_set.address}",
        env=FrozenDict({"PATH": path, "AGENTRC_NODE": node.first_path.fingerprint if node.first_path else "",
                        "AGENTRC_CACHE_DIR": CACHE, "AGENTRC_NO_FETCH": "1"}),
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
