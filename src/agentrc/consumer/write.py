"""The write of a consumer command (`add`, `install`, `update`, `remove`, `remove-mcp`): its
files, the clients' CLIs, then its lock, as one plan of the steps executor (`output.steps`).

The plan has three steps, each a small object:

- `_Files`, the commit point: the output writer's own transaction (staged, journaled, rolled
  forward by the next run after a kill). A failure here undoes nothing because nothing
  visible changed, and stops the plan: no CLI runs and the lock stays as it was.
- `_Clis`: the clients' CLIs register and unregister MCP servers and install or uninstall
  plugins. They never raise: each outcome becomes the status the lock records (AR216...).
- `_Lock`: the lock, written last in its place checked before anything was written (AR224),
  so it records what the CLIs did; a frozen install leaves it as it is.

The plan keeps no journal on disk: a journal naming CLI registrations in the project's
`.agentrc/` could be planted by a cloned repository, and replaying it would register servers
nobody consented to. A run killed after its files therefore leaves the lock as it was, and the
next consumer command reconciles from that lock (its files through the writer's manifest, its
servers and plugins through the CLIs), which the consent gate has seen.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace

from agentrc.classcode import dataclass
from agentrc.consumer import mcpcli as mcp_cli
from agentrc.consumer import plugins as plugin_cli
from agentrc.diagnostics import Diagnostics
from agentrc.files import OutputFile
from agentrc.inputs.lockread import lock_path
from agentrc.output import atomic, steps, writer
from agentrc.sources import lock as lockfile
from agentrc.sources import plugins as plugin_forms
from agentrc.sources.lock import Lock

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class How:
    """How the write runs: a dry run stops after the diff; `user` is the global scope; `held`
    an output directory the command already holds; `frozen` leaves the lock as it is."""

    dry_run: bool
    user: bool
    held: Optional[writer.Output]
    frozen: bool


@dataclass(frozen=True)
class Wanted:
    """What the command wants the project to hold: the files, the servers that go through
    Claude Code's and Copilot's CLIs (None: not through a CLI), the lock, the plugins."""

    files: Sequence[OutputFile]
    claude_servers: Optional[Dict[str, str]]
    copilot_servers: Optional[Dict[str, str]]
    lock: Lock
    plugins: Sequence[plugin_forms.PluginAction]


@dataclass
class Written:
    """The lock the project now records (None when the directory could not be opened) and
    the writer's changes."""

    lock: Optional[Lock] = None
    changes: Optional[writer.Changes] = None
    output: Optional[writer.Output] = None  # the directory written (its manifest's statuses for the stamp)


def write(project: str, lock: Lock, wanted: Wanted, force: bool, adopt: Dict[str, str],
          adopt_keys: Dict[str, List[Tuple[str, ...]]], diags: Diagnostics, how: How) -> Written:
    """Diff, then the plan (see the module's docstring). `lock` is the lock the project held."""
    where = lock_path(project, how.user)
    lock_root = os.path.dirname(where) if how.user else project
    try:
        with (contextlib.nullcontext(how.held) if how.held is not None
              else writer.session(project, write=not how.dry_run)) as out:
            changes, _, wdiags = out.diff(wanted.files, force, adopt, adopt_keys)
            diags.extend(wdiags)
            _not_ours(project, lock, changes, force, diags)
            if not how.frozen:  # the lock's place checked before anything is written (AR224)
                try:
                    atomic.check(where, lock_root)
                except OSError as exc:
                    diags.error(where, (0, 0), atomic.code_of(exc, "AR142"), f"cannot write the lock: "
                                f"{exc.strerror or exc}")
            if how.dry_run or diags.has_errors:
                return Written(wanted.lock, changes)
            clis = _Clis(project, lock, wanted, diags, "user" if how.user else "project")
            plan: List[steps.Step] = [_Files(out, wanted.files, changes, diags), clis]
            if not how.frozen:
                plan.append(_Lock(where, lock_root, clis, diags))
            try:
                steps.run(plan)
            except steps.Failed as exc:
                if not isinstance(exc.cause, _NotWritten):
                    raise exc.cause from None
                return Written(wanted.lock, changes)
            return Written(lock if how.frozen else clis.lock, changes, out)
    except writer.OutputError as exc:
        diags.extend(exc.diagnostics)
        return Written()


class _NotWritten(Exception):
    """The writer reported errors (its diagnostics are the command's): the plan stops."""


class _Files(steps.Step):
    kind = "files"
    point = True

    def __init__(self, out: writer.Output, files: Sequence[OutputFile], changes: writer.Changes,
                 diags: Diagnostics):
        self.out, self.files, self.changes, self.diags = out, files, changes, diags

    def do(self) -> None:
        self.diags.extend(self.out.apply(self.files, self.changes))
        if self.diags.has_errors:
            raise _NotWritten()


class _Clis(steps.Step):
    """The clients' CLIs; `lock` becomes the wanted lock with the status each record got."""

    kind = "clis"

    def __init__(self, project: str, old: Lock, wanted: Wanted, diags: Diagnostics, scope: str):
        self.project, self.old, self.wanted, self.diags, self.scope = project, old, wanted, diags, scope
        self.lock = wanted.lock

    def do(self) -> None:
        w = self.wanted
        mcps = _mcp_clis(self.project, [dict(m) for m in self.old.mcps], w.lock, w.claude_servers,
                         w.copilot_servers, self.diags, self.scope)
        self.lock = replace(w.lock, mcps=mcps, plugins=plugins(self.project, self.old, w.plugins, self.diags,
                                                               self.scope))


class _Lock(steps.Step):
    """The lock written, while the project is still held (the writer's lock), after the files."""

    kind = "lock"

    def __init__(self, where: str, root: str, clis: _Clis, diags: Diagnostics):
        self.where, self.root, self.clis, self.diags = where, root, clis, diags

    def do(self) -> None:
        try:
            atomic.write_atomic(self.where, lockfile.dumps(self.clis.lock), self.root)
        except OSError as exc:
            self.diags.error(self.where, (0, 0), atomic.code_of(exc, "AR142"),
                             f"cannot write the lock: {exc.strerror or exc}")


def plugins(project: str, lock: Lock, wanted: Sequence[plugin_forms.PluginAction], diags: Diagnostics,
            scope: str = "project") -> Tuple[tuple, ...]:
    """Install the plugins of the locked bundles through the clients' CLIs (idempotent), and
    uninstall those the lock recorded as installed for bundles no longer locked."""
    keep = {(a.client, a.identifier) for a in wanted if a.form == plugin_forms.INSTALL}
    gone = []
    for rec in (dict(p) for p in lock.plugins):
        ident = str(rec.get("identifier", ""))
        if rec.get("status", "installed") != "installed" or (rec.get("client"), ident) in keep or "@" not in ident:
            continue
        plugin, _, market = ident.rpartition("@")
        gone.append(plugin_forms.PluginAction(str(rec.get("name")), str(rec.get("client")), str(rec.get("bundle")),
                                              plugin_forms.INSTALL, "", market, plugin))
    plugin_cli.uninstall(project, gone, diags, scope)
    return plugin_cli.install(project, wanted, diags, scope, [dict(p) for p in lock.plugins])


def _not_ours(project: str, lock: Lock, changes: writer.Changes, force: bool, diags: Diagnostics) -> None:
    """Files the directory's manifest owns but the lock never installed were written by
    `agentrc build --out` into the same directory: the consumer workflow would delete them
    as stale (AR214), unless `force`."""
    installed = {f.path for f in lock.files}
    for path in changes.delete:
        if path not in installed and not force:
            diags.error(os.path.join(project, path), (0, 0), "AR214", "written by 'agentrc build' into this "
                        "directory, not installed by agentrc.lock.json: the consumer workflow would delete it")


def _mcp_clis(project: str, old: Sequence[Dict[str, object]], lock: Lock,
              claude_servers: Optional[Dict[str, str]], copilot_servers: Optional[Dict[str, str]],
              diags: Diagnostics, scope: str = "project") -> Tuple[tuple, ...]:
    """Register and unregister the servers that go through the clients' CLIs (Claude Code
    when `claude` is on PATH); the lock's MCP records with the status each got (Copilot's
    records of `.mcp.json` share Claude's: the CLI wrote the entry both read)."""
    registered = [str(m.get("name")) for m in old if m.get("client") == "claude" and "config" not in m
                  and m.get("status") == mcp_cli.INSTALLED]
    by_copilot = [str(m.get("name")) for m in old if m.get("client") == "copilot" and "config" not in m
                  and m.get("status") == mcp_cli.INSTALLED and m.get("scope") == "user"]
    copilot: Dict[str, str] = {}
    if copilot_servers is not None:
        copilot = mcp_cli.sync_copilot(project, copilot_servers, by_copilot, diags)
    if claude_servers is None and copilot_servers is None:  # no CLI: the config writes were the fallback
        return lock.mcps
    status = mcp_cli.sync_claude(project, claude_servers, registered, diags, scope) \
        if claude_servers is not None else {}
    out = []
    for m in (dict(x) for x in lock.mcps):
        if m.get("client") == "copilot" and "config" not in m:
            m["status"] = copilot.get(str(m.get("name")), mcp_cli.CLI_FAILED)
        elif m.get("client") == "claude" and "config" not in m and claude_servers is not None:
            m["status"] = status.get(str(m.get("name")), mcp_cli.CLI_FAILED)
        elif m.get("config") == mcp_cli.CLAUDE_CONFIG and scope == "project":
            m["status"] = mcp_cli.INSTALLED if status.get(str(m.get("name"))) == mcp_cli.INSTALLED \
                else mcp_cli.CLI_FAILED
        out.append(lockfile.record(m))
    return tuple(out)
