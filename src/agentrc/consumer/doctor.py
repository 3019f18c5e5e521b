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

Each plugin record (a record without `status` is `installed`, as the spec defaults it) is
checked the same way against its client's own list (`claude plugin list --json`, `copilot
plugin list --json`): one the lock holds as installed that the client does not list
installed and enabled is `not-installed` and fails; a skipped, instructions-only or
config-write record is shown as recorded. The lock's capability records (what `agentrc
build` recorded for a canonical project's capability references) are compared with what
the references resolve to now, read as a build reads them: `changed`, `not-locked` (the
project declares one the lock does not record) and `not-declared` fail, as does a record
whose reference no longer resolves (`unresolved`, with the reading's errors).

No value of the lock reaches a command line here: the only commands are `claude mcp list`,
`copilot mcp list --json` and the clients' `plugin list --json`, and the lock's server and
plugin names are looked up in what they print (a hand-edited name such as `--scope=user` is
only compared, never passed; the lock's own validation refuses it before, AR203). Reading
capability references fetches those the lock does not pin, as `agentrc build` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

from agentrc.classcode import dataclass
from agentrc.consumer import plugins as plugin_cli
from agentrc.consumer.consume import need_lock
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs.tree import Root, read_file
from agentrc.output.merge import has_key
from agentrc.sources.lock import CapabilityRecord, Lock
from agentrc.sources.plugins import CLI_CLIENTS

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Set, Tuple

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
NOT_INSTALLED = "not-installed"  # a plugin the lock records as installed that its client does not list
CHANGED = "changed"  # a capability reference that resolves otherwise than the lock records
NOT_LOCKED = "not-locked"  # a capability reference the project declares and the lock does not record
NOT_DECLARED = "not-declared"  # a capability record of the lock the project no longer declares
UNRESOLVED = "unresolved"  # a capability record whose reference did not resolve (the diagnostics say why)
FAILING = {MISSING, EDITED, NOT_REGISTERED, NOT_INSTALLED, CHANGED, NOT_LOCKED, NOT_DECLARED, UNRESOLVED}


@dataclass(frozen=True)
class Check:
    """One line of `agentrc doctor`: what was looked at for which client, and how it was found."""
    kind: str  # "file", "mcp", "plugin" or "capability"
    name: str  # the path, the server's, the plugin's or the capability reference's name
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
    checks.extend(_mcps(project, lock))
    checks.extend(_plugins(project, lock))
    if not user:  # a global installation has no canonical project, hence no capability references
        found, problems = _capabilities(project, lock)
        checks.extend(found)
        diags = tuple(diags) + tuple(problems)
    return tuple(checks), diags


def _mcps(project: str, lock: Lock) -> List[Check]:
    """Each MCP record of the lock against its target: Claude Code's, and Copilot's
    registered with `copilot mcp add`, against what the client's CLI lists (asked once per
    client); the others against the config file that holds their entry."""
    asked: Dict[str, Tuple[Optional[Set[str]], str, str]] = {}
    checks: List[Check] = []
    for rec in (dict(m) for m in lock.mcps):
        name, client = str(rec.get("name")), str(rec.get("client"))
        if rec.get("status") not in (None, "installed", "config-written"):
            # Skipped or failed when installed: nothing to verify; reported, never failing.
            checks.append(Check("mcp", name, client, "", str(rec.get("status")), "as recorded by the install"))
            continue
        cli = "claude" if client == "claude" else "copilot" if client == "copilot" and "config" not in rec else ""
        if cli:
            if cli not in asked:
                asked[cli] = _claude_servers(project) if cli == "claude" else _copilot_servers(project)
            names, status, detail = asked[cli]
            checks.append(Check("mcp", name, client, f"{cli} mcp list", status if names is None else
                                REGISTERED if name in names else NOT_REGISTERED, detail))
            continue
        config = rec.get("config")
        if not isinstance(config, str):
            checks.append(Check("mcp", name, client, "", CONFIG_MISSING, "the lock names no config file"))
            continue
        checks.append(_config(project, name, client, config, tuple(rec.get("key") or ("mcpServers", name))))
    return checks


def _plugins(project: str, lock: Lock) -> List[Check]:
    """Each plugin record of the lock against what its client's CLI lists (`claude plugin
    list --json`, `copilot plugin list --json`, asked once per client and scope). A record
    without `status` is `installed` (spec 001 §3.7). What the install skipped, showed as
    instructions or wrote into `opencode.json` is shown as recorded, never failing."""
    lists: Dict[Tuple[str, str], Tuple[Optional[Set[str]], str]] = {}
    checks: List[Check] = []
    for rec in (dict(p) for p in lock.plugins):
        name, client, ident = str(rec.get("name")), str(rec.get("client")), str(rec.get("identifier"))
        status, scope = plugin_cli.status_of(rec), str(rec.get("scope") or "project")
        if status != plugin_cli.INSTALLED or client not in CLI_CLIENTS or "@" not in ident:
            detail = "as recorded by the install"
            if status == plugin_cli.SKIPPED and shutil.which(client) is not None:
                detail = f"{client} is on PATH now: 'agentrc install' installs {ident}"
            checks.append(Check("plugin", name, client, "", status, detail))
            continue
        target = f"{client} plugin list --json"
        if (client, scope) not in lists:
            lists[(client, scope)] = ((None, f"{client} is not on PATH") if shutil.which(client) is None
                                      else plugin_cli.query(project, client, scope))
        names, why = lists[(client, scope)]
        if names is None:
            checks.append(Check("plugin", name, client, target,
                                CLI_NOT_FOUND if why.endswith("not on PATH") else QUERY_FAILED, why))
        elif ident in names:
            checks.append(Check("plugin", name, client, target, OK))
        else:
            where = " for this project" if client == "claude" and scope == "project" else ""
            checks.append(Check("plugin", name, client, target, NOT_INSTALLED,
                                f"{client} does not list {ident} as installed and enabled{where}: "
                                "'agentrc install' installs it again"))
    return checks


def _capabilities(project: str, lock: Lock) -> Tuple[List[Check], Tuple[Diagnostic, ...]]:
    """The lock's capability records (what `agentrc build` recorded for the project's
    capability references) against what the references resolve to now: as a build reads
    them (`inputs.config.load_project`: at the commits the lock pins, the content checked
    against the recorded SHA-256, AR222; a reference the lock does not pin is fetched at its
    ref). The errors of that reading are returned with the checks. Only a lock that holds
    capability records has the project read (a consumer's lock has none, and its `.ai/` or
    `ai.config.js` is not evaluated for nothing)."""
    if not lock.capabilities:
        return [], ()
    from agentrc.inputs import config  # the canonical reader: only for a project that has references

    declared: Tuple[CapabilityRecord, ...] = ()
    problems: Tuple[Diagnostic, ...] = ()
    if config.is_project(project):
        loaded, problems = config.load_project(project)
        declared = loaded.capabilities
    errors = tuple(d for d in problems if d.is_error)
    old = {(c.layer, c.name): c for c in lock.capabilities}
    new = {(c.layer, c.name): c for c in declared}
    checks: List[Check] = []
    for layer, name in sorted(set(old) | set(new)):
        was, now = old.get((layer, name)), new.get((layer, name))
        if was == now:
            checks.append(Check("capability", name, "", layer, OK))
        elif was is None:
            checks.append(Check("capability", name, "", layer, NOT_LOCKED, "the lock does not record it: "
                                "'agentrc build' records it"))
        elif now is None:
            checks.append(Check("capability", name, "", layer, UNRESOLVED if errors else NOT_DECLARED,
                                "it does not resolve (see the diagnostics)" if errors else
                                "the project no longer references it: 'agentrc build' drops its record"))
        else:
            checks.append(Check("capability", name, "", layer, CHANGED, _changed(was, now)))
    return checks, errors


def _changed(was: CapabilityRecord, now: CapabilityRecord) -> str:
    """How a capability reference resolves otherwise than the lock records it."""
    parts = [f"{field} {getattr(was, field) or '(none)'} -> {getattr(now, field) or '(none)'}"
             for field in ("type", "source", "ref", "commit") if getattr(was, field) != getattr(now, field)]
    if was.sha256 != now.sha256:
        parts.append(f"content sha256 {was.sha256[:12]} -> {now.sha256[:12]}")
    return "; ".join(parts) + ": 'agentrc build' records it"


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
