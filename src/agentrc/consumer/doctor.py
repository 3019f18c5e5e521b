"""`agentrc doctor`: the project checked against its lock (spec 001 §3.7, Reconciliation).

Each installed file is compared with the SHA-256 the lock records (missing or edited:
drift). Each MCP record is checked against its target: Claude Code through its own CLI
(`claude mcp list`, run in the project with an isolated input and a time limit), every
other target against the config file agentrc wrote (the entry's key must be there). A
server the lock records and a present target does not have is `not-registered`, which
fails the check (exit 1) like file drift; `cli-not-found`, `query-failed`,
`config-missing` and `config-unreadable` say the target cannot be verified and do not
fail it (the server may have been configured another way). A server the install skipped
or could not register (`skipped-no-project-scope`, `cli-failed`, ...) is shown with that
status and does not fail the check either. `requires-env` is not
checked here: `agentrc add` warns about unset variables when it installs.

No value of the lock reaches a command line here: the only commands are `claude mcp list`
and `copilot mcp list --json`, and the lock's server names are looked up in what they print
(a hand-edited name such as `--scope=user` is only compared, never passed; the lock's own
validation refuses it before, AR203).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

from agentrc.consumer.consume import need_lock
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs.tree import Root, read_file
from agentrc.output.merge import has_key

CLI_TIMEOUT = 60.0

OK = "ok"
MISSING = "missing"
EDITED = "edited"
REGISTERED = "registered"
NOT_REGISTERED = "not-registered"
CLI_NOT_FOUND = "cli-not-found"
QUERY_FAILED = "query-failed"
CONFIG_MISSING = "config-missing"
CONFIG_UNREADABLE = "config-unreadable"
FAILING = {MISSING, EDITED, NOT_REGISTERED}


@dataclass(frozen=True)
class Check:
    kind: str  # "file" or "mcp"
    name: str  # the path, or the server's name
    client: str
    target: str  # what was looked at: the file, `claude mcp list`
    status: str
    detail: str = ""

    @property
    def failing(self) -> bool:
        return self.status in FAILING

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "client": self.client, "target": self.target,
                "status": self.status, "detail": self.detail, "failing": self.failing}


def doctor(project: str, user: bool = False) -> Tuple[Tuple[Check, ...], Tuple[Diagnostic, ...]]:
    """`user`: the global installation (`project` is the home directory)."""
    lock, diags = need_lock(project, user)
    if lock is None:
        return (), diags
    checks: List[Check] = []
    for f in lock.files:
        if f.merged:
            continue  # the user's file too: its MCP entries are checked below
        checks.append(_file(project, f.path, f.sha256))
    claude: Optional[Tuple[Optional[Set[str]], str, str]] = None
    copilot: Optional[Tuple[Optional[Set[str]], str, str]] = None
    for m in lock.mcps:
        rec = dict(m)
        name, client = str(rec.get("name")), str(rec.get("client"))
        if rec.get("status") not in (None, "installed", "config-written"):
            # Skipped or failed when installed: nothing to verify; reported, never failing.
            checks.append(Check("mcp", name, client, "", str(rec.get("status")), "as recorded by the install"))
            continue
        if client == "copilot" and "config" not in rec:  # registered with `copilot mcp add`
            if copilot is None:
                copilot = _copilot_servers(project)
            names, status, detail = copilot
            checks.append(Check("mcp", name, client, "copilot mcp list", status if names is None else
                                REGISTERED if name in names else NOT_REGISTERED, detail))
            continue
        if client == "claude":
            if claude is None:
                claude = _claude_servers(project)
            names, status, detail = claude
            if names is None:
                checks.append(Check("mcp", name, client, "claude mcp list", status, detail))
            else:
                checks.append(Check("mcp", name, client, "claude mcp list",
                                    REGISTERED if name in names else NOT_REGISTERED))
            continue
        config = rec.get("config")
        if not isinstance(config, str):
            checks.append(Check("mcp", name, client, "", CONFIG_MISSING, "the lock names no config file"))
            continue
        checks.append(_config(project, name, client, config, tuple(rec.get("key") or ("mcpServers", name))))
    return tuple(checks), diags


def _file(project: str, path: str, sha256: str) -> Check:
    full = os.path.join(project, path)
    if not os.path.lexists(full):
        return Check("file", path, "", path, MISSING, "'agentrc install' restores it")
    data = _read(project, path)
    if data is None or hashlib.sha256(data).hexdigest() != sha256:
        return Check("file", path, "", path, EDITED, "differs from what agentrc installed")
    return Check("file", path, "", path, OK)


def _read(project: str, path: str) -> Optional[bytes]:
    f = read_file(os.path.join(project, path), path, Root(project), Diagnostics())
    return f.content if f is not None else None


def _config(project: str, name: str, client: str, path: str, key: Tuple[str, ...]) -> Check:
    if not os.path.lexists(os.path.join(project, path)):
        return Check("mcp", name, client, path, CONFIG_MISSING)
    data = _read(project, path)
    fmt = "toml" if path.endswith(".toml") else "json"
    try:
        if data is None:
            raise ValueError("cannot be read")
        found = has_key(fmt, data.decode("utf-8"), key)
    except (ValueError, UnicodeDecodeError) as exc:
        return Check("mcp", name, client, path, CONFIG_UNREADABLE, str(exc))
    return Check("mcp", name, client, path, REGISTERED if found else NOT_REGISTERED,
                 "" if found else f"no {'.'.join(key)} in it")


def _claude_servers(project: str) -> Tuple[Optional[Set[str]], str, str]:
    """The servers `claude mcp list` reports for the project, or None with why not."""
    exe = shutil.which("claude")
    if exe is None:
        return None, CLI_NOT_FOUND, "claude is not on PATH"
    try:
        proc = subprocess.run([exe, "mcp", "list"], cwd=project, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=CLI_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, QUERY_FAILED, str(exc)
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, QUERY_FAILED, f"exit {proc.returncode}" + (f": {said[-1]}" if said else "")
    names: Set[str] = set()
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        head, sep, _ = line.partition(": ")
        if sep and head.strip() and " " not in head.strip():
            names.add(head.strip())
    return names, REGISTERED, ""


def _copilot_servers(home: str) -> Tuple[Optional[Set[str]], str, str]:
    """The user's servers `copilot mcp list --json` reports, or None with why not."""
    exe = shutil.which("copilot")
    if exe is None:
        return None, CLI_NOT_FOUND, "copilot is not on PATH"
    try:
        proc = subprocess.run([exe, "mcp", "list", "--json"], cwd=home, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=CLI_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, QUERY_FAILED, str(exc)
    try:
        servers = json.loads(proc.stdout.decode("utf-8", "replace")).get("mcpServers") if proc.returncode == 0 \
            else None
    except (ValueError, AttributeError):
        servers = None
    if not isinstance(servers, dict):
        return None, QUERY_FAILED, f"exit {proc.returncode}, no server list"
    return {n for n, v in servers.items() if isinstance(v, dict) and v.get("source") == "user"}, REGISTERED, ""


def summary(checks) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for c in checks:
        counts[c.status] = counts.get(c.status, 0) + 1
    return dict(sorted(counts.items()))
