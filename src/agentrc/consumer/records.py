"""What a consumer's install records and checks beyond the files it writes: the MCP servers
registered through the clients' CLIs (`mcp_records`, `user_mcp_records`), the files of a
global installation (`_user_outputs`), agentrc's keys merged into users' files
(`_merged_keys`), and `install --check`'s comparison of the project with its lock
(`_check_files`).
"""

from __future__ import annotations

import os

from agentrc.consumer import mcpcli as mcp_cli
from agentrc.consumer import plugins as plugin_cli
from agentrc.consumer import userscope
from agentrc.diagnostics import Diagnostics
from agentrc.files import OutputFile
from agentrc.names import bundle_stem
from agentrc.output import writer
from agentrc.sources import lock as lockfile
from agentrc.sources.lock import Lock

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Set, Tuple

LOCK = lockfile.LOCK_FILE
WHERE = "<command line>"


def _user_outputs(files: Sequence[OutputFile], clients: Sequence[str], copilot_cli: bool, diags: Diagnostics,
                  known: Optional[Set[str]] = None) -> Tuple[Tuple[OutputFile, ...], Dict[str, str], Sequence[str]]:
    """A global installation's files at the user's locations, and the servers of `.mcp.json`
    (which `claude mcp add-json --scope user` and `copilot mcp add` register; without the
    copilot CLI, Copilot's are written into ~/.copilot/mcp-config.json). What has no user
    form is reported (AR217); what names the project directory is refused (AR218)."""
    servers: Optional[Dict[str, str]] = {}
    if "claude" in clients or "copilot" in clients:
        servers, _ = mcp_cli.claude_entries(files)
    if "copilot" not in clients or copilot_cli:
        mcp = next((f for f in files if f.path == mcp_cli.CLAUDE_CONFIG), None)
        hit = next((m for m in userscope.PROJECT_MARKERS if mcp is not None and m.encode() in mcp.content), None)
        if hit is not None:
            diags.error(mcp_cli.CLAUDE_CONFIG, (0, 0), "AR218", f"{mcp_cli.CLAUDE_CONFIG} refers to the project "
                        f"directory ({hit}): installed for the user, it would name whatever project the client "
                        "runs in")
        files = [f for f in files if f.path != mcp_cli.CLAUDE_CONFIG]
    moved, skipped, refused = userscope.relocate(files)
    for path, marker in refused:
        diags.error(path, (0, 0), "AR218", f"{path} refers to the project directory ({marker}): installed for the "
                    "user, it would name whatever project the client runs in")
    new = [p for p in skipped if p not in (known or set())]
    if new:
        diags.warning(WHERE, (0, 0), "AR217", "no user-level location for " + ", ".join(new)
                      + ": not installed globally")
    return moved, dict(servers or {}), skipped


def _entry_key(f: Optional[OutputFile], name: str) -> Optional[Tuple[str, ...]]:
    """The key path of server `name`'s entry in the merged config file `f` (None: not there)."""
    return next((k for k, _, _ in (f.keys if f is not None else ()) if k and k[-1] == name), None)


def user_mcp_records(plan, claude_cli: bool, copilot_cli: bool) -> Tuple[Tuple[Tuple[str, object], ...], ...]:
    """The MCP records of a global installation: Claude Code's servers through `claude mcp
    ... --scope user` (`skipped-cli-missing` without the CLI: its user servers live in the
    client's own ~/.claude.json), the others in the user's config files (Copilot's
    ~/.copilot/mcp-config.json, opencode's ~/.config/opencode/opencode.json)."""
    by_path = {f.path: f for f in plan.files}
    out = []
    for r in plan.reports:
        if r.kind != "mcp" or not r.generated:
            continue
        base = {"name": r.name, "scope": "user", "bundle": bundle_stem(r.source)}
        for path in r.outputs:
            if path == mcp_cli.CLAUDE_CONFIG and r.client == "claude":
                out.append(lockfile.record(dict(base, client="claude", status=mcp_cli.INSTALLED if claude_cli
                                                else plugin_cli.SKIPPED)))
                continue
            if path == mcp_cli.CLAUDE_CONFIG and r.client == "copilot" and copilot_cli:
                out.append(lockfile.record(dict(base, client="copilot", status=mcp_cli.INSTALLED)))
                continue
            dest = userscope.user_path(path)
            if dest is None or (path == mcp_cli.CLAUDE_CONFIG and r.client != "copilot"):
                continue
            key = _entry_key(by_path.get(path), r.name)
            data = dict(base, client=r.client, status=mcp_cli.CONFIG_WRITTEN, config=dest)
            if key is not None:
                data["key"] = list(key)
            out.append(lockfile.record(data))
    return tuple(out)


def mcp_records(plan, claude_cli: bool = False) -> Tuple[Tuple[Tuple[str, object], ...], ...]:
    """The lock's MCP records (spec 001 §3.7): one per server and MCP target (claude,
    copilot, vscode, opencode, ...), project scope. A config write names its file and the
    key path of its entry. Claude Code's servers go through `claude mcp` when `claude_cli`
    (status `installed`, no file: the CLI owns `.mcp.json`; the Copilot CLI reads the same
    workspace `.mcp.json`, its record keeps the file). The copilot client's
    `.vscode/mcp.json` is the VS Code target."""
    by_path = {f.path: f for f in plan.files}
    out = []
    for r in plan.reports:
        if r.kind != "mcp" or not r.generated:
            continue
        base = {"name": r.name, "scope": "project", "bundle": bundle_stem(r.source)}
        for path in r.outputs:
            if claude_cli and path == mcp_cli.CLAUDE_CONFIG and r.client == "claude":
                out.append(lockfile.record(dict(base, client="claude", status=mcp_cli.INSTALLED)))
                continue
            key = _entry_key(by_path.get(path), r.name)
            client = "vscode" if path == ".vscode/mcp.json" else r.client
            status = mcp_cli.INSTALLED if claude_cli and path == mcp_cli.CLAUDE_CONFIG else mcp_cli.CONFIG_WRITTEN
            data = dict(base, client=client, status=status, config=path)
            if key is not None:
                data["key"] = list(key)
            out.append(lockfile.record(data))
    return tuple(out)


def _merged_keys(lock: Lock) -> Dict[str, List[Tuple[str, ...]]]:
    """The entries the lock says agentrc merged into shared files (an MCP server's key in
    `.mcp.json`, `opencode.json`, ...), by file: in a fresh clone, without `.agentrc/`, the
    writer adopts them from here, so a removal takes them out."""
    out: Dict[str, List[Tuple[str, ...]]] = {}
    for m in (dict(r) for r in lock.mcps):
        config, key = m.get("config"), m.get("key")
        if (m.get("scope") == "project" and m.get("status") == mcp_cli.CONFIG_WRITTEN and isinstance(config, str)
                and isinstance(key, (list, tuple)) and key):  # not an entry a client's CLI wrote
            paths = out.setdefault(config, [])
            if tuple(map(str, key)) not in paths:
                paths.append(tuple(map(str, key)))
    return out


def _check_files(project: str, lock: Lock, expected: Lock, planned, adopt: Dict[str, str],
                 diags: Diagnostics, adopt_keys: Optional[Dict[str, List[Tuple[str, ...]]]] = None) -> None:
    """--check: the files the sources give are the ones the lock records, and the project
    holds them as written."""
    where = os.path.join(project, LOCK)
    recorded = {f.path: f for f in lock.files}
    for f in expected.files:
        old = recorded.pop(f.path, None)
        if old != f:
            diags.error(where, (0, 0), "AR204", f"{f.path}: the locked sources give "
                        + ("a file the lock does not record" if old is None else "other bytes than the lock records"))
    for path in sorted(recorded):
        diags.error(where, (0, 0), "AR204", f"{path}: the lock records a file the locked sources do not give")
    def targets(lk: Lock) -> Set[Tuple[str, ...]]:
        return {tuple(str(dict(m).get(k)) for k in ("name", "client", "scope", "bundle", "config")) for m in lk.mcps}

    if targets(lock) != targets(expected):
        diags.error(where, (0, 0), "AR204", "the locked sources configure other MCP servers than the lock records")
    try:
        with writer.session(project, write=False) as out:
            changes, _, wdiags = out.diff(planned, False, adopt, adopt_keys)
    except writer.OutputError as exc:
        diags.extend(exc.diagnostics)
        return
    diags.extend(wdiags)
    for label, paths in (("missing", changes.create), ("differs from what agentrc installed", changes.update),
                         ("is installed but no longer locked", changes.delete)):
        for p in paths:
            diags.error(os.path.join(project, p), (0, 0), "AR204", f"{label}; 'agentrc install' restores it")
