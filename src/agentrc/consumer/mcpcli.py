"""MCP servers registered through the clients' own CLIs (spec 001 §3.7, Per-client install).

Claude Code is CLI-first: when `claude` is on PATH, agentrc does not write `.mcp.json`
itself; it registers each server with `claude mcp add-json --scope project -- NAME -`, the
entry agentrc renders given on standard input (its `${VAR}` references passed through as
written), and unregisters servers it registered before and no longer wants with `claude mcp
remove --scope project -- NAME`. Both verbs refuse what is already (or not) there, so
agentrc reads `.mcp.json` first (bounded, inside the project) and leaves an entry that
already holds the rendering alone: registering is idempotent. Without the CLI, the build's
config write of `.mcp.json` is the fallback (status `config-written`). A CLI that fails is a
warning (AR216) and the server is recorded as `cli-failed`; the rest of the installation goes on.

Arguments are data (docs/security.md): every name that reaches a command line, from a
bundle or from the lock's records, passes `agentrc.sources.arguments.server_name` right
before the command, and `--` ends the options wherever the CLI takes it; a name that fails
is AR241, nothing is run for it and it is recorded as `cli-failed`, never `installed`. No
server's entry is put on a command line (any process can read another's arguments, and
`env`, `headers`, a URL's query or `args` may hold a secret): `claude` reads it from
standard input. `copilot mcp add` takes `env` and `headers` only as arguments, so a server
whose `env` or `headers` hold literal values (not only `${VAR}` references) is not given to
it (AR216, `cli-failed`): write `${VAR}` references, or add it by hand.

GitHub Copilot's CLI reads the workspace `.mcp.json` (`copilot mcp list` shows its servers
as Workspace servers once the folder is trusted), the file Claude's servers go to, so a
project needs no `copilot mcp add` (which writes only the user's `~/.copilot/mcp-config.json`).
VS Code, whose `.vscode/mcp.json` the copilot client's output carries, is its own MCP target
(`vscode`, config write). Every CLI runs in the project with a time limit and no input but
the entry it is given.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from agentrc.clients.base import redacted
from agentrc.diagnostics import Diagnostics
from agentrc.files import OutputFile
from agentrc.inputs.tree import Root, read_file
from agentrc.sources.arguments import argument, env_name, header_name, server_name, shown

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

CLI_TIMEOUT = 120.0
CLAUDE_CONFIG = ".mcp.json"
USER_CONFIG = ".claude.json"  # Claude Code's own state: its user-scope servers (read, never written)
INSTALLED = "installed"
CONFIG_WRITTEN = "config-written"
CLI_FAILED = "cli-failed"
WHERE = "agentrc.lock.json"


def claude_via_cli(old_mcps: Sequence[Dict[str, object]], check: bool) -> bool:
    """Whether Claude's servers go through `claude mcp`: the CLI is on PATH, or (checking a
    lock, `install --check or --frozen`) the lock says they went through it."""
    if check:
        return any(m.get("client") == "claude" and "config" not in m for m in old_mcps)
    return shutil.which("claude") is not None


def claude_entries(files: Sequence[OutputFile]) -> Tuple[Optional[Dict[str, str]], Tuple[OutputFile, ...]]:
    """The servers of the rendered `.mcp.json` (name -> entry as canonical JSON) and the
    files without it; (None, files) when it holds anything but `mcpServers` entries."""
    f = next((f for f in files if f.path == CLAUDE_CONFIG), None)
    if f is None:
        return {}, tuple(files)
    if not f.merge or any(len(k) != 2 or k[0] != "mcpServers" or appended for k, _, appended in f.keys):
        return None, tuple(files)
    return {k[1]: v for k, v, _ in f.keys}, tuple(x for x in files if x.path != CLAUDE_CONFIG)


def sync_claude(project: str, wanted: Dict[str, str], registered: Sequence[str], diags: Diagnostics,
                scope: str = "project") -> Dict[str, str]:
    """Register `wanted` with `claude mcp` in the project (`scope` project; `user`: for the
    user, `project` being the home directory) and unregister the servers of `registered`
    (those agentrc registered before) it no longer wants; the status of each wanted server.
    A name that is not valid (AR241) is not run; a wanted one is `cli-failed`."""
    current = _claude_config(project, USER_CONFIG if scope == "user" else CLAUDE_CONFIG)
    for name in sorted(set(registered) - set(wanted)):
        if valid(name, True, "claude mcp remove", diags) and name in current:
            ok, said = run(project, "claude", ["mcp", "remove", "--scope", scope, "--", name])
            if not ok:
                diags.warning(WHERE, (0, 0), "AR216", f"claude mcp remove {name} failed: {said}")
    status: Dict[str, str] = {}
    for name, entry in sorted(wanted.items()):
        if not valid(name, False, "claude mcp add-json", diags):
            status[name] = CLI_FAILED
            continue
        if name in current and _same(current[name], entry):
            status[name] = INSTALLED
            continue
        if name in current:
            ok, said = run(project, "claude", ["mcp", "remove", "--scope", scope, "--", name])
            if not ok:
                diags.warning(WHERE, (0, 0), "AR216", f"claude mcp remove {name} (to update it) failed: "
                              f"{said}")
                status[name] = CLI_FAILED
                continue
        # The entry on standard input (`-`), never on the command line.
        ok, said = run(project, "claude", ["mcp", "add-json", "--scope", scope, "--", name, "-"], entry.encode())
        if not ok:
            diags.warning(WHERE, (0, 0), "AR216", f"claude mcp add-json {name} failed: {said}")
        status[name] = INSTALLED if ok else CLI_FAILED
    return status


def valid(name: str, locked: bool, command: str, diags: Diagnostics) -> bool:
    """Whether the server name `name` may reach `command`; if not, AR241 naming it (escaped)
    and where it came from (`locked`: a record of the lock; else an installed bundle's
    server, as rendered into `.mcp.json`). Called right before each command, whatever was
    checked before: once valid, a name is shown as it is."""
    problem = server_name(name)
    if problem is not None:
        origin = "the lock's mcps record" if locked else "an installed bundle's MCP server"
        diags.error(WHERE if locked else CLAUDE_CONFIG, (0, 0), "AR241",
                    f"{origin} {shown(name)} {problem}: {command} is not run for it")
    return problem is None


def _same(have: object, entry: str) -> bool:
    try:
        return have == json.loads(entry)
    except ValueError:
        return False


def _claude_config(project: str, rel: str) -> Dict[str, object]:
    path = os.path.join(project, rel)
    if not os.path.lexists(path):
        return {}
    f = read_file(path, rel, Root(project), Diagnostics())
    try:
        data = json.loads(f.content.decode("utf-8")) if f is not None else {}
    except (ValueError, UnicodeDecodeError):
        return {}
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    return dict(servers) if isinstance(servers, dict) else {}


def run(cwd: str, client: str, args: List[str], stdin: Optional[bytes] = None) -> Tuple[bool, str]:
    """Run a client's CLI with a time limit and no input but `stdin`: (succeeded, its last line).
    An argument holding a NUL byte cannot be passed (and is never run)."""
    exe = shutil.which(client)
    if exe is None:
        return False, f"{client} is not on PATH"
    if any("\x00" in a for a in args):
        return False, "an argument holds a NUL byte"
    try:
        proc = subprocess.run([exe] + args, cwd=cwd, input=b"" if stdin is None else stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=CLI_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, f"took longer than {CLI_TIMEOUT:g} s"
    except OSError as exc:
        return False, exc.strerror or str(exc)
    text = (proc.stderr + proc.stdout).decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return proc.returncode == 0, (lines[-1] if lines else f"exit {proc.returncode}")[:500]


COPILOT_CONFIG = ".copilot/mcp-config.json"  # under the home directory
COPILOT_OWN = ("tools", "source", "enabled")  # keys the Copilot CLI adds to what it is given


def copilot_via_cli(old_mcps: Sequence[Dict[str, object]], check: bool) -> bool:
    """Whether Copilot's user-scope servers go through `copilot mcp` (as `claude_via_cli`)."""
    if check:
        return any(m.get("client") == "copilot" and m.get("scope") == "user" and "config" not in m
                   for m in old_mcps)
    return shutil.which("copilot") is not None


def literal_values(entry: Dict[str, object]) -> bool:
    """Whether a rendered entry's `env` or `headers` hold a literal value (anything but
    `${VAR}` references, with an auth scheme such as "Bearer "): a secret, as often as not,
    which never goes on a command line. The rule is the diagnostics' (`clients.base.redacted`)."""
    return redacted(entry) != entry


def copilot_args(name: str, entry: str) -> Optional[List[str]]:
    """`copilot mcp add` arguments for a rendered `mcpServers` entry, or None when it holds
    what the CLI cannot say or what may not go on a command line (literal `env` or
    `headers` values, names that are not names, a URL that is not one). Options are given
    as `--opt=value`, so no value is read as an option; the command and its arguments
    follow `--` (copilot takes the name before it for a local server, after it for a URL)."""
    try:
        data = json.loads(entry)
    except ValueError:
        return None
    if not isinstance(data, dict) or literal_values(data) or server_name(name) is not None:
        return None
    if "url" in data:
        if set(data) - {"type", "url", "headers"} or data.get("type", "http") not in ("http", "sse"):
            return None
        headers = dict(data.get("headers") or {})
        url = str(data["url"])
        if argument(url) is not None or not url.lower().startswith(("https://", "http://")) or any(
                header_name(k) is not None or _controls(v) for k, v in headers.items()):
            return None
        args = ["mcp", "add", f"--transport={data.get('type', 'http')}"]
        args += [f"--header={k}: {v}" for k, v in sorted(headers.items())]
        return args + ["--", name, url]
    if set(data) - {"type", "command", "args", "env"} or not isinstance(data.get("command"), str):
        return None
    env = dict(data.get("env") or {})
    if any(env_name(k) is not None or _controls(v) for k, v in env.items()):
        return None
    args = ["mcp", "add"] + [f"--env={k}={v}" for k, v in sorted(env.items())]
    return args + [name, "--", data["command"]] + [str(a) for a in data.get("args") or ()]


def sync_copilot(home: str, wanted: Dict[str, str], registered: Sequence[str], diags: Diagnostics
                 ) -> Dict[str, str]:
    """Register `wanted` with `copilot mcp add` (the user's configuration) and remove the
    servers of `registered` it no longer wants; the status of each wanted server. An entry
    that already holds the rendering (apart from the keys the CLI adds) is left alone."""
    current = _claude_config(home, COPILOT_CONFIG)
    for name in sorted(set(registered) - set(wanted)):
        if valid(name, True, "copilot mcp remove", diags) and name in current:
            ok, said = run(home, "copilot", ["mcp", "remove", "--", name])
            if not ok:
                diags.warning(WHERE, (0, 0), "AR216", f"copilot mcp remove {name} failed: {said}")
    status: Dict[str, str] = {}
    for name, entry in sorted(wanted.items()):
        if not valid(name, False, "copilot mcp add", diags):
            status[name] = CLI_FAILED
            continue
        have = current.get(name)
        if isinstance(have, dict) and _same({k: v for k, v in have.items() if k not in COPILOT_OWN}, entry):
            status[name] = INSTALLED
            continue
        args = copilot_args(name, entry)
        if args is None:
            diags.warning(WHERE, (0, 0), "AR216", f"copilot mcp add cannot be given MCP server {name}: "
                          + _why_not(entry) + "; add it by hand")
            status[name] = CLI_FAILED
            continue
        if have is not None:
            ok, said = run(home, "copilot", ["mcp", "remove", "--", name])
            if not ok:
                diags.warning(WHERE, (0, 0), "AR216", f"copilot mcp remove {name} (to update it) failed: "
                              f"{said}")
                status[name] = CLI_FAILED
                continue
        ok, said = run(home, "copilot", args)
        if not ok:
            diags.warning(WHERE, (0, 0), "AR216", f"copilot mcp add {name} failed: {said}")
        status[name] = INSTALLED if ok else CLI_FAILED
    return status


def _controls(value: object) -> bool:
    return not isinstance(value, str) or any(ord(c) < 32 or ord(c) == 127 for c in value)


def _why_not(entry: str) -> str:
    try:
        data = json.loads(entry)
    except ValueError:
        data = None
    if isinstance(data, dict) and literal_values(data):
        return ("its env or headers hold literal values, which it takes only on the command line, where other "
                "processes can read them (write ${VAR} references instead)")
    return "it holds what the CLI cannot say"
