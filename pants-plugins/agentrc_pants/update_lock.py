"""`pants agentrc-update-lock ::`: resolve the refs of the sources an `agentrc_lock` target
locks again and rewrite the lock (what `generate-lockfiles` is to Python resolves).

A thin goal over `agentrc update`'s core (`agentrc.consumer.consume.update`): for each
`agentrc_lock` target in the specs, the project is the lock's directory in the workspace;
the sources are fetched (the user cache, `agentrc.inputs.fetch`), the closure is resolved
again, and the lock and the files it installs are written together through the same
writer, so `pants package` of the target, `agentrc install --check` (nothing to change)
and `agentrc install --frozen` (the lock installed as it is) agree with it afterwards.
`--dry-run` writes nothing and shows the commits and files that would change; `--names`
updates only the sources of those installed bundles or items; `--trust` consents to the
executable surface the sources bring (a terminal-less goal never prompts). The goal runs
locally (it writes the workspace and reaches the sources' remotes), never in a sandbox.
"""

from __future__ import annotations

import os

from pants.base.build_root import BuildRoot
from pants.engine.console import Console
from pants.engine.goal import Goal, GoalSubsystem
from pants.engine.rules import collect_rules, goal_rule
from pants.engine.target import Targets
from pants.option.option_types import BoolOption, StrListOption

from agentrc.consumer import consume
from agentrc.sources.closure import locator
from agentrc_pants.target_types import AgentrcLockSourceField


class AgentrcUpdateLockSubsystem(GoalSubsystem):
    name = "agentrc-update-lock"
    help = ("Resolve the refs of the sources locked by the given agentrc_lock targets again and rewrite each lock "
            "and the files it installs (agentrc update).")

    dry_run = BoolOption(default=False, help="Write nothing; show the commits and files that would change.")
    names = StrListOption(default=[], help="Update only the sources of these installed bundles or items "
                                           "(NAME or KIND:NAME); default: every source.")
    force = BoolOption(default=False, help="Overwrite installed files edited since agentrc wrote them.")
    trust = BoolOption(default=False, help="Install the hooks, MCP servers, executable scripts and plugins the "
                                           "sources bring (agentrc update --trust); without it a source whose "
                                           "executable surface is new or changed fails, naming each.")


class AgentrcUpdateLockGoal(Goal):
    subsystem_cls = AgentrcUpdateLockSubsystem
    environment_behavior = Goal.EnvironmentBehavior.LOCAL_ONLY


@goal_rule
async def agentrc_update_lock(console: Console, opts: AgentrcUpdateLockSubsystem, targets: Targets,
                              build_root: BuildRoot) -> AgentrcUpdateLockGoal:
    locks = [t for t in targets if t.has_field(AgentrcLockSourceField)]
    if not locks:
        console.print_stderr("agentrc-update-lock: no agentrc_lock targets in the given specs.")
        return AgentrcUpdateLockGoal(exit_code=0)
    code = 0
    for t in locks:
        path = t[AgentrcLockSourceField].file_path
        if os.path.basename(path) != consume.LOCK:
            console.print_stderr(f"{path}: agentrc-update-lock updates an {consume.LOCK} in its project "
                                 "directory; this lock target names another file")
            code = 1
            continue
        shown = os.path.dirname(path) or "."
        result = consume.update(os.path.join(build_root.path, shown), tuple(opts.names), dry_run=opts.dry_run,
                                force=opts.force, trust=opts.trust)
        for d in result.diagnostics:
            console.print_stderr(d.format())
        if not result.ok:
            if result.consent:
                console.print_stderr(f"{shown}: approve what is listed with 'pants agentrc-update-lock --trust'")
            console.print_stderr(f"{shown}: update failed: nothing written")
            code = 1
            continue
        for ident, old, new in result.updates:
            kind, name = ident.split(":", 1)
            if old is None and new is not None:
                console.print_stdout(f"{shown}: + {kind} {name} from {locator(new)}")
            elif new is None and old is not None:
                console.print_stdout(f"{shown}: - {kind} {name} from {locator(old)}")
            elif old is not None and new is not None:
                was = (old.commit or old.sha256)[:12]
                now = (new.commit or new.sha256)[:12]
                console.print_stdout(f"{shown}: ~ {kind} {name} from {locator(new)}: {was} -> {now}")
        changes = result.changes
        if changes is not None:
            verb = "would be " if opts.dry_run else ""
            if opts.dry_run:
                for label, paths in (("create", changes.create), ("update", changes.update),
                                     ("delete", changes.delete)):
                    for p in paths:
                        console.print_stdout(f"{shown}: would {label}: {p}")
            console.print_stderr(f"{shown}: {len(result.updates)} lock entr{'y' if len(result.updates) == 1 else 'ies'}"
                                 f" changed; {len(changes.create)} {verb}created, {len(changes.update)} {verb}updated, "
                                 f"{len(changes.delete)} {verb}deleted, {changes.unchanged} unchanged")
    return AgentrcUpdateLockGoal(exit_code=code)


def rules():
    return collect_rules()
