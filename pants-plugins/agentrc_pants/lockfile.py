"""The consumer lockfile as a build input: `agentrc_lock` targets (spec 001 §3.7).

`pants package` of a lock target fetches every locked source at its locked commit, each in
a sandboxed Process (`agentrc.pipeline.sandbox.fetch_main`, which runs the same
`agentrc.inputs.fetch` as the CLI), keyed by the source and the commit only: the fetch is
hermetic and lands in Pants' local and remote caches. The rule then checks each locked
bundle and item against its SHA-256 (`agentrc.sources.closure.verify`) and builds them for
the lock's clients with the same generation as every other target. The rule itself reads
neither the disk nor the network.

Local-directory sources are read from the build root (relative to the lock's directory, as
the lock records them) through the engine, and must match the lock's digests too. Not here
yet: plugins (installed by the clients' CLIs, not a build). The lock is updated by the
`agentrc-update-lock` goal (`agentrc_pants.update_lock`) or `agentrc update`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import posixpath
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from pants.core.goals.package import BuiltPackage, BuiltPackageArtifact, PackageFieldSet
from pants.core.util_rules.system_binaries import BinaryPathRequest, BinaryPaths, BinaryPathTest
from pants.engine.fs import (
    EMPTY_DIGEST,
    AddPrefix,
    CreateDigest,
    Digest,
    DigestContents,
    FileContent,
    PathGlobs,
    Snapshot,
)
from pants.engine.process import FallibleProcessResult, Process
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import HydratedSources, HydrateSourcesRequest
from pants.engine.unions import UnionRule
from pants.util.frozendict import FrozenDict
from pants.util.logging import LogLevel

from agentrc.clients import names as client_names
from agentrc.diagnostics import Diagnostic
from agentrc.inputs.tree import SKIP_DIRS, is_build_file
from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import sandbox
from agentrc.pipeline import stages as pipeline
from agentrc.sources import closure
from agentrc.sources import lock as lockfile
from agentrc.sources.dsl import GIT, PATH, Source, SourceError, parse
from agentrc_pants.generation import (
    CODE_DIR,
    AgentrcBuildError,
    AgentrcCode,
    AgentrcPython,
    GenerationRequest,
    GenerationResult,
)
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import AgentrcLockFieldSet

logger = logging.getLogger(__name__)

FETCH_BOOTSTRAP = (f"import sys; sys.path.insert(0, {CODE_DIR!r}); "
                   "from agentrc.pipeline.sandbox import fetch_main; sys.exit(fetch_main(sys.argv[1:]))")
SOURCES_DIR = "__sources__"  # where each fetched source's files sit in the generation's tree


@dataclass(frozen=True)
class LockedSourceRequest:
    source: str  # the lock's `source` (a git locator without its ref)
    commit: str


@dataclass(frozen=True)
class LockedSource:
    files: Tuple[SourceFile, ...]  # relative to the registry's root (the #subpath)
    diagnostics: Tuple[Diagnostic, ...]


@dataclass(frozen=True)
class AgentrcGit:
    path: str


@rule(desc="Find git for fetching locked agentrc sources", level=LogLevel.DEBUG)
async def agentrc_git(subsystem: AgentrcSubsystem) -> AgentrcGit:
    paths = await Get(BinaryPaths, BinaryPathRequest(binary_name="git",
                                                     search_path=tuple(subsystem.process_python_search_path),
                                                     test=BinaryPathTest(["--version"])))
    first = paths.first_path
    if first is None:
        raise ValueError("No git found on [agentrc].process_python_search_path "
                         f"{list(subsystem.process_python_search_path)}; agentrc_lock targets fetch with git.")
    return AgentrcGit(first.path)


@rule(desc="Fetch a locked agentrc source", level=LogLevel.DEBUG)
async def fetch_locked_source(request: LockedSourceRequest) -> LockedSource:
    code, python, git = await MultiGet(Get(AgentrcCode), Get(AgentrcPython), Get(AgentrcGit))
    payload = json.dumps({"source": request.source, "commit": request.commit}, sort_keys=True).encode()
    input_digest = await Get(Digest, CreateDigest([FileContent("__request__.json", payload)]))
    # Fallible: a failed fetch exits non-zero, so it is not cached, and its diagnostics are read.
    result = await Get(FallibleProcessResult, Process(
        argv=(python.path.path, "-S", "-E", "-c", FETCH_BOOTSTRAP, "__request__.json"),
        input_digest=input_digest,
        immutable_input_digests=FrozenDict({CODE_DIR: code.digest}),
        # The source and the commit (in the request) are the key; git's path and the
        # interpreter's version too, as they are the same on every machine of a kind.
        env={"AGENTRC_GIT": git.path, "PATH": os.path.dirname(git.path), "HOME": "/nonexistent",
             "AGENTRC_PYTHON": python.path.fingerprint},
        output_files=(sandbox.FETCHED,),
        output_directories=(sandbox.FETCH_OUT,),
        description=f"agentrc fetch {request.source} at {request.commit[:12]}",
        level=LogLevel.DEBUG,
    ))
    contents = await Get(DigestContents, Digest, result.output_digest)
    by_path = {fc.path: fc.content for fc in contents}
    if sandbox.FETCHED not in by_path:  # the interpreter or the code failed before writing it
        stderr = result.stderr.decode("utf-8", "replace").strip().splitlines()
        return LockedSource((), (Diagnostic(request.source, 0, 0, "error", "AR201", "the fetch process failed: "
                                            + (stderr[-1] if stderr else f"exit {result.exit_code}")),))
    report = json.loads(by_path[sandbox.FETCHED])
    executable = set(report["executable"])
    files = tuple(SourceFile(rel, by_path[f"{sandbox.FETCH_OUT}/{rel}"], rel in executable)
                  for rel in sorted(report["files"]))
    return LockedSource(files, tuple(Diagnostic(**d) for d in report["diagnostics"]))


@rule(desc="Package an agentrc lock", level=LogLevel.DEBUG)
async def package_lock(field_set: AgentrcLockFieldSet, subsystem: AgentrcSubsystem) -> BuiltPackage:
    where = str(field_set.address)
    hydrated = await Get(HydratedSources, HydrateSourcesRequest(field_set.source))
    contents = await Get(DigestContents, Digest, hydrated.snapshot.digest)
    path = contents[0].path
    lock, diags = lockfile.loads(contents[0].content, path, client_names.CLIENTS)
    if lock is None:
        raise AgentrcBuildError(where, diags)
    requests, local, problems = _partition(lock, path)
    fetched = list(await MultiGet(Get(LockedSource, LockedSourceRequest(name, commit))
                                  for name, _, commit, _ in requests))
    read = await MultiGet(Get(DigestContents, PathGlobs([f"{d}/**"])) for _, d, _ in local)
    # Git sources sit under a directory named after the source and commit; local ones where they are.
    sources: List[_Read]
    sources = [(f"{SOURCES_DIR}/{hashlib.sha256(f'{name}@{commit}'.encode()).hexdigest()[:16]}", name, ref, commit,
                locked, got.files, got.diagnostics) for (name, ref, commit, locked), got in zip(requests, fetched)]
    sources += [(d, name, None, None, locked, _registry_files(d, contents), ())
                for (name, d, locked), contents in zip(local, read)]
    files, entrypoints = _verified(sources, problems)
    if any(d.is_error for d in problems):
        raise AgentrcBuildError(where, tuple(sorted(set(problems))))
    bundles = tuple(sorted(e.name for e in lock.bundles))
    result = await Get(GenerationResult, GenerationRequest(
        EMPTY_DIGEST, SourceTree(tuple(sorted(files, key=lambda f: f.path))), tuple(lock.clients), bundles,
        tuple(sorted(set(entrypoints))), subsystem.strict, (), f"agentrc generate {where}", True,
        tuple(lock.mcps_removed)))
    result.raise_on_error(where)
    for d in result.diagnostics:
        logger.warning(d.format())
    prefix = field_set.output_path.value_or_default(file_ending=None)
    snapshot = await Get(Snapshot, AddPrefix(result.digest, prefix))
    return BuiltPackage(snapshot.digest, (BuiltPackageArtifact(prefix, (result.summary_line(prefix),)),))


# A locked source as read: (root in the sandbox, name, ref, commit, its lock entries, its files, problems).
_Read = Tuple[str, str, Optional[str], Optional[str], Tuple[lockfile.Entry, ...], Tuple[SourceFile, ...],
              Tuple[Diagnostic, ...]]


_Fetch = Tuple[str, Optional[str], str, Tuple[lockfile.Entry, ...]]  # a git source: name, ref, commit, entries
_Local = Tuple[str, str, Tuple[lockfile.Entry, ...]]  # a local directory: name, directory, entries


def _partition(lock: lockfile.Lock, path: str) -> Tuple[List[_Fetch], List[_Local], List[Diagnostic]]:
    """The lock's entries by source: git sources at a locked commit to fetch (name, ref,
    commit, entries), local directories to read (name, directory, entries), and the
    problems (AR200: a local directory outside the build root)."""
    problems: List[Diagnostic] = []
    groups: Dict[Tuple[str, Optional[str], Optional[str]], List[lockfile.Entry]] = {}
    for e in lock.entries:
        groups.setdefault((e.source, e.ref, e.commit), []).append(e)
    requests: List[_Fetch] = []
    local: List[_Local] = []
    for (name, ref, commit), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2] or "")):
        source = _parse(name)
        if source is not None and source.kind == GIT and commit is not None:
            requests.append((name, ref, commit, tuple(group)))
            continue
        directory = _local_dir(os.path.dirname(path), source)
        if directory is None:
            problems.append(Diagnostic(path, 0, 0, "error", "AR200", f"source {name!r}: the Pants backend reads "
                                       "local directories inside the build root only (a relative path in the lock)"))
            continue
        local.append((name, directory, tuple(group)))
    return requests, local, problems


def _verified(sources: List[_Read], problems: List[Diagnostic]) -> Tuple[List[SourceFile], List[str]]:
    """The files and entrypoints of the sources that load and match their lock entries
    (`closure.verify`); what is wrong with the others is added to `problems`."""
    files: List[SourceFile] = []
    entrypoints: List[str] = []
    for root, name, ref, commit, locked, got_files, got_diags in sources:
        problems.extend(got_diags)
        if any(d.is_error for d in got_diags):
            continue
        tree = SourceTree(tuple(SourceFile(f"{root}/{f.path}", f.content, f.executable) for f in got_files))
        loaded = pipeline.load(tree, cross_source=True)
        problems.extend(loaded.diagnostics)
        if not loaded.ok:
            continue
        label = name + (f"@{ref}" if ref else "")
        _, points, verified = closure.verify(loaded.registry, tree, root, locked, label, commit)
        problems.extend(verified)
        files.extend(tree.files)
        entrypoints.extend(points)
    return files, entrypoints


def _parse(name: str) -> Optional[Source]:
    try:
        return parse(name)
    except SourceError:
        return None


def _local_dir(lock_dir: str, source: Optional[Source]) -> Optional[str]:
    """A local source's directory relative to the build root (the lock records it relative
    to the project, where the lock is), or None when it is not inside the build root."""
    if source is None or source.kind != PATH or source.location.startswith(("/", "~")):
        return None
    d = posixpath.normpath(posixpath.join(lock_dir, source.location, source.subpath))
    return None if d == ".." or d.startswith("../") or d.startswith("/") else d


def _registry_files(directory: str, contents: DigestContents) -> Tuple[SourceFile, ...]:
    """The files of a local registry as `agentrc.inputs.tree` reads them (no hidden or skipped
    directory, no BUILD file), relative to it: the same content digests as the CLI's."""
    out = []
    prefix = "" if directory == "." else directory + "/"
    for fc in contents:
        rel = fc.path[len(prefix):]
        parts = rel.split("/")
        if any(p.startswith(".") or p in SKIP_DIRS for p in parts[:-1]) or is_build_file(parts[-1]):
            continue
        out.append(SourceFile(rel, fc.content, fc.is_executable))
    return tuple(sorted(out, key=lambda f: f.path))


def rules():
    return [
        *collect_rules(),
        UnionRule(PackageFieldSet, AgentrcLockFieldSet),
    ]


