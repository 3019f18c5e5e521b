"""Installing a bundle's plugins through the clients' own CLIs (spec 001 §3.7, plugins map).

The auto-install form runs `claude plugin marketplace add SOURCE` then `claude plugin
install PLUGIN@MARKETPLACE --scope project` in the project (Copilot CLI: `copilot plugin
marketplace add` and `copilot plugin install`, which install for the user); both are
idempotent, and a marketplace Copilot already knows counts as added. A client CLI that is
not on PATH is a warning naming `install_url` (AR210) and is recorded as
`skipped-cli-missing`; a CLI that fails is a warning (AR211) and is not recorded (it is
transient); instructions are shown as a warning (AR212) and recorded as
`instructions-shown`. No plugin ever fails the rest of the installation. This module runs
the client CLIs (with no input and a time limit); the descriptors are read by
`agentrc.sources.plugins`.

Arguments are data: the source, the `plugin@marketplace` identifier (from a bundle, or from
the lock's records when uninstalling) pass their validators (`agentrc.sources.arguments`)
right before the commands, and follow `--` (both CLIs take it). A value that fails is an
error (AR241) naming it and where it came from: nothing is run for that plugin and it is
not recorded, whatever the CLI's presence (the rest is still installed, and the command
exits 1).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from agentrc.consumer.mcpcli import CLI_TIMEOUT
from agentrc.consumer.mcpcli import run as run_cli
from agentrc.diagnostics import Diagnostics
from agentrc.sources import lock as lockfile
from agentrc.sources.arguments import shown
from agentrc.sources.plugins import CONFIG, INSTALL, PluginAction, problems

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence, Set, Tuple

INSTALLED = "installed"
SKIPPED = "skipped-cli-missing"
SHOWN = "instructions-shown"
WRITTEN = "config-written"


def install(project: str, actions: Sequence[PluginAction], diags: Diagnostics, scope: str = "project",
            previous: Sequence[Dict[str, Any]] = ()) -> Tuple[tuple, ...]:
    """Run every action; the lock records of those that installed, were skipped or shown.
    `scope` is Claude's `--scope` (`user` for a global installation). A plugin `previous`
    (the lock's records) holds as installed, and that the client's own list still shows
    (`claude plugin list --json`, `copilot plugin list --json`), is not installed again:
    its CLIs are not run for it."""
    done = {(str(r.get("client")), str(r.get("identifier"))) for r in previous if status_of(r) == INSTALLED}
    lists: Dict[str, Optional[Set[str]]] = {}
    records = []
    for a in actions:
        if not _valid(a, diags):
            continue
        status = None
        if a.form == INSTALL and (a.client, a.identifier) in done and shutil.which(a.client) is not None:
            if a.client not in lists:
                lists[a.client] = listed(project, a.client, scope)
            if a.identifier in (lists[a.client] or ()):
                status = INSTALLED
        if status is None:
            status = _install(project, a, diags, scope)
        if status is not None:
            records.append(lockfile.record({"name": a.name, "client": a.client, "identifier": a.identifier,
                                            "scope": a.scope if scope == "project" else scope, "bundle": a.bundle,
                                            "status": status}))
    return tuple(records)


def status_of(record: Dict[str, Any]) -> str:
    """A lock record's status; `installed` when it has none (spec 001 §3.7: the default, for
    locks written before the field existed)."""
    status = record.get("status")
    return INSTALLED if status is None else str(status)


def listed(project: str, client: str, scope: str = "project") -> Optional[Set[str]]:
    """The `plugin@marketplace` identifiers the client's CLI lists as installed and enabled
    for `scope` (Claude Code: project plugins of this project; Copilot, whose plugins are the
    user's: all); None when it cannot say."""
    return query(project, client, scope)[0]


def query(project: str, client: str, scope: str = "project") -> Tuple[Optional[Set[str]], str]:
    """`listed`, with why not when it cannot say (the client's CLI is not on PATH, failed,
    or printed no list): `agentrc doctor` tells those apart."""
    exe = shutil.which(client)
    if exe is None:
        return None, f"{client} is not on PATH"
    try:
        proc = subprocess.run([exe, "plugin", "list", "--json"], cwd=project, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=CLI_TIMEOUT)
        data = json.loads(proc.stdout.decode("utf-8", "replace")) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError, RecursionError) as exc:
        return None, f"{client} plugin list --json: {exc}"
    if not isinstance(data, list):
        return None, f"{client} plugin list --json: exit {proc.returncode}, no plugin list"
    here = os.path.realpath(project)
    out: Set[str] = set()
    for p in (x for x in data if isinstance(x, dict) and x.get("enabled") is not False):
        if client == "claude":
            if p.get("scope") != scope or (scope == "project" and not (
                    isinstance(p.get("projectPath"), str) and os.path.realpath(p["projectPath"]) == here)):
                continue
            if isinstance(p.get("id"), str):
                out.add(p["id"])
        elif isinstance(p.get("name"), str) and isinstance(p.get("marketplace"), str):
            out.add(f"{p['name']}@{p['marketplace']}")
    return out, ""


def uninstall(project: str, actions: Sequence[PluginAction], diags: Diagnostics, scope: str = "project") -> None:
    """Uninstall the auto-installed plugins `actions` name (those of removed bundles)."""
    for a in actions:
        if a.form != INSTALL or not _valid(a, diags, uninstall=True) or shutil.which(a.client) is None:
            continue
        args = ["plugin", "uninstall"] + (["--scope", scope] if a.client == "claude" else []) + ["--", a.identifier]
        ok, said = run_cli(project, a.client, args)
        if not ok and "not installed" not in said.lower() and "not found" not in said.lower():
            diags.warning(_where(a), (0, 0), "AR211", f"{a.client} plugin uninstall {a.identifier} failed: {said}")


def _install(project: str, a: PluginAction, diags: Diagnostics, scope: str = "project") -> Optional[str]:
    if a.form == CONFIG:
        return WRITTEN  # its opencode.json entry was written with the files
    if a.form != INSTALL:
        diags.warning(_where(a), (0, 0), "AR212", f"plugin {a.name} for {a.client} is not installed automatically: "
                      f"{a.text}")
        return SHOWN
    exe = shutil.which(a.client)
    if exe is None:
        url = f"; install it by hand: {a.install_url}" if a.install_url else ""
        diags.warning(_where(a), (0, 0), "AR210", f"plugin {a.name} for {a.client} skipped: the {a.client} CLI is "
                      f"not on PATH{url}")
        return SKIPPED
    ok, said = run_cli(project, a.client, ["plugin", "marketplace", "add", "--", a.source])
    if not ok and "already" not in said.lower():
        diags.warning(_where(a), (0, 0), "AR211", f"{a.client} plugin marketplace add {a.source} failed: {said}")
        return None
    args = ["plugin", "install"] + (["--scope", scope] if a.client == "claude" else []) + ["--", a.identifier]
    ok, said = run_cli(project, a.client, args)
    if not ok:
        diags.warning(_where(a), (0, 0), "AR211", f"{a.client} plugin install {a.identifier} failed: {said}")
        return None
    return INSTALLED


def _valid(a: PluginAction, diags: Diagnostics, uninstall: bool = False) -> bool:
    """Whether every value `a` gives a client's CLI is valid for its kind; AR241 for each
    that is not (called right before the commands, whatever was checked before)."""
    found = problems(a, uninstall)
    for field, value, problem in found:
        origin = (f"the lock's plugins record of bundle {shown(a.bundle)}" if uninstall
                  else f"plugin {shown(a.name)} of bundle {shown(a.bundle)}")
        verb = "uninstall" if uninstall else "install"
        diags.error(_where(a), (0, 0), "AR241", f"{origin}: {field} {shown(value)} {problem}: {a.client} plugin "
                    f"{verb} is not run for it")
    return not found


def _where(a: PluginAction) -> str:
    return f"bundle {a.bundle}"
