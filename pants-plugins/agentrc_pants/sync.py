"""`pants agentrc-sync ::`: write the generated client trees into the workspace.

This is the goal a monorepo runs so its clients read the content (and CI runs with
`--check`). It uses the CLI's ownership rules exactly (`agentrc.output.writer`): the manifest at
`<root>/.agentrc/manifest.json`, stale owned files deleted, foreign or hand-edited files
never touched. Generation itself is the same cached rule `package` uses. A spec-000
project (`agentrc_config`) is written into its own directory, where its AGENTS.md lives.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict

from pants.base.build_root import BuildRoot
from pants.core.goals.package import BuiltPackage
from pants.engine.console import Console
from pants.engine.fs import Digest, DigestContents
from pants.engine.goal import Goal, GoalSubsystem
from pants.engine.rules import Get, MultiGet, collect_rules, goal_rule
from pants.engine.target import Targets
from pants.option.option_types import BoolOption, StrListOption, StrOption

from agentrc.files import OutputFile
from agentrc.output import writer
from agentrc.pipeline import stages as pipeline
from agentrc_pants.config import AgentrcConfigFieldSet, AgentrcConfigSourcesField
from agentrc_pants.generation import REPORT, GenerationRequest, GenerationResult
from agentrc_pants.project import ProjectClients, ProjectClientsRequest
from agentrc_pants.sources import AgentrcSources, AgentrcSourcesRequest
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import AgentrcBundleSourceField, AgentrcClientsField, AgentrcEntrypointField


class AgentrcSyncSubsystem(GoalSubsystem):
    name = "agentrc-sync"
    help = "Write the agentrc client trees of the given targets into the workspace (or check they are current)."

    check = BoolOption(default=False, help="Write nothing; exit 1 listing missing, outdated and stale files.")
    root = StrOption(default="", help="Directory, relative to the build root, to write into (default: the build root).")
    clients = StrListOption(default=[], help="Clients to write; default: every client the targets ask for.")


class AgentrcSyncGoal(Goal):
    subsystem_cls = AgentrcSyncSubsystem
    environment_behavior = Goal.EnvironmentBehavior.LOCAL_ONLY


@goal_rule
async def agentrc_sync(console: Console, sync: AgentrcSyncSubsystem, agentrc: AgentrcSubsystem,
                       targets: Targets, build_root: BuildRoot) -> AgentrcSyncGoal:
    items = [t for t in targets if t.has_field(AgentrcEntrypointField)]
    bundles = [t for t in targets if t.has_field(AgentrcBundleSourceField)]
    configs = [t for t in targets if t.has_field(AgentrcConfigSourcesField)]
    if not items and not bundles and not configs:
        console.print_stderr("agentrc-sync: no agentrc targets in the given specs.")
        return AgentrcSyncGoal(exit_code=0)
    trees = []  # (directory relative to the build root, files)
    if items or bundles:
        clients = tuple(sync.clients) or tuple(sorted(
            {c for t in items + bundles for c in (t[AgentrcClientsField].value or agentrc.clients)}))
        sources = await Get(AgentrcSources, AgentrcSourcesRequest(tuple(t.address for t in items + bundles)))
        manifests = tuple(t[AgentrcBundleSourceField].file_path for t in bundles)  # unambiguous across registries
        project = await Get(ProjectClients, ProjectClientsRequest(sync.root))  # the tree written: its project file
        result = await Get(GenerationResult, GenerationRequest(
            sources.digest, sources.tree, clients, manifests,
            tuple(t[AgentrcEntrypointField].file_path for t in items), agentrc.strict,
            tuple(t[AgentrcBundleSourceField].file_path for t in bundles),
            shared_copies=project.shares, ignore=project.ignore))
        for d in result.diagnostics:
            console.print_stderr(d.format())
        if any(d.is_error for d in result.diagnostics):
            console.print_stderr("agentrc-sync failed: nothing written")
            return AgentrcSyncGoal(exit_code=1)
        generated = await Get(DigestContents, Digest, result.digest)
        try:
            trees.append((sync.root, _files(generated, "")))
        except ValueError as exc:
            return _unreadable(console, exc)
    # A spec-000 project is written into its own directory (its AGENTS.md holds the block).
    packages = await MultiGet(Get(BuiltPackage, AgentrcConfigFieldSet, AgentrcConfigFieldSet.create(t))
                              for t in configs)
    for t, built in zip(configs, packages):
        generated = await Get(DigestContents, Digest, built.digest)
        relpath = built.artifacts[0].relpath
        assert relpath is not None  # agentrc_config packages always name their directory
        try:
            trees.append((t.address.spec_path, _files(generated, relpath + "/")))
        except ValueError as exc:
            return _unreadable(console, exc)
    code = 0
    for directory, files in trees:
        code = max(code, _write(console, os.path.join(build_root.path, directory), directory or ".", files,
                                sync.check))
    return AgentrcSyncGoal(exit_code=code)


def _files(generated, prefix: str):
    """The package's files below `prefix`, with the merge information of its report (ValueError
    when the two disagree)."""
    files = [OutputFile(fc.path[len(prefix):], fc.content, fc.is_executable, "pants") for fc in generated
             if fc.path.startswith(prefix) and fc.path[len(prefix):] != REPORT]
    report: Dict[str, Any] = next((json.loads(fc.content) for fc in generated if fc.path == prefix + REPORT), {})
    return pipeline.with_merge_info(files, report)  # config files users own are merged, key by key


def _unreadable(console: Console, exc: ValueError) -> AgentrcSyncGoal:
    """A package whose report and files disagree: nothing is written, rather than a merge guessed."""
    console.print_stderr(f"agentrc-sync failed: nothing written: {exc}")
    return AgentrcSyncGoal(exit_code=1)


def _write(console: Console, root: str, shown: str, files, check: bool) -> int:
    try:
        # Locked and recovered first, like the CLI's build (agentrc.output.writer).
        with writer.session(root, write=not check, notify=console.print_stderr) as tree:
            changes, _, problems = tree.diff(files)
            if not check and not any(d.is_error for d in problems):
                problems += tree.apply(files, changes)
    except writer.OutputError as exc:
        changes, problems = None, exc.diagnostics
    for d in problems:
        console.print_stderr(d.format())
    if changes is None or any(d.is_error for d in problems):
        partial = any(writer.PARTIAL in d.message for d in problems)
        what = "the next run completes the write to" if partial else "nothing written to"
        console.print_stderr(f"agentrc-sync failed: {what} {shown}")
        return 1
    if check:
        for label, paths in (("missing", changes.create), ("outdated", changes.update), ("stale", changes.delete)):
            for p in paths:
                console.print_stdout(f"{label}: {os.path.join(shown, p)}")
        console.print_stderr(f"{shown}: {'up to date' if changes.empty else 'out of date'}")
        return 0 if changes.empty else 1
    console.print_stderr(f"{shown}: {len(changes.create)} created, {len(changes.update)} updated, "
                         f"{len(changes.delete)} deleted, {changes.unchanged} unchanged")
    return 0


def rules():
    return collect_rules()
