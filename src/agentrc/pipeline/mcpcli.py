"""MCP servers registered through the clients' own CLIs (spec 001 §3.7, Per-client install).

Claude Code is CLI-first: when `claude` is on PATH, agentrc does not write `.mcp.json`
itself; it registers each server with `claude mcp add-json NAME JSON --scope project`
(the JSON is the entry agentrc renders, its `${VAR}` references passed through as written)
and unregisters servers it registered before and no longer wants with `claude mcp remove
NAME --scope project`. Both verbs refuse what is already (or not) there, so agentrc reads
`.mcp.json` first (bounded, inside the project) and leaves an entry that already holds the
rendering alone: registering is idempotent. Without the CLI, the build's config write of
`.mcp.json` is the fallback (status `config-written`). A CLI that fails is a warning
(AR216) and the server is recorded as `cli-failed`; the rest of the installation goes on.

GitHub Copilot's CLI reads the workspace `.mcp.json` (`copilot mcp list` shows its servers
as Workspace servers once the folder is trusted), the file Claude's servers go to, so a
project needs no `copilot mcp add` (which writes only the user's `~/.copilot/mcp-config.json`).
VS Code, whose `.vscode/mcp.json` the copilot client's output carries, is its own MCP target
(`vscode`, config write). Every CLI runs in the project with no input and a time limit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Dict, List, Optional, Sequence, Tuple

from agentrc.diagnostics import Diagnostics
from agentrc.files import OutputFile
from agentrc.inputs.tree import Root, read_file

CLI_TIMEOUT = 120.0
CLAUDE_CONFIG = ".mcp.json"
USER_CONFIG = ".claude.json"  # Claude Code's own state: its user-scope servers (read, never written)
INSTALLED = "installed"
CONFIG_WRITTEN = "config-written"
CLI_FAILED = "cli-failed"
WHERE = "agentrc.lock.json"


def claude_via_cli(old_mcps: Sequence[Dict[str, object]], check: bool) -> bool:
    """Whether Claude's servers go through `claude mcp`: the CLI is on PATH, or (checking a
    lock, `install --frozen`) the lock says they went through it."""
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
    (those agentrc registered before) it no longer wants; the status of each wanted server."""
    current = _claude_config(project, USER_CONFIG if scope == "user" else CLAUDE_CONFIG)
    for name in sorted(set(registered) - set(wanted)):
        if name in current:
            ok, said = run(project, "claude", ["mcp", "remove", name, "--scope", scope])
            if not ok:
                diags.warning(WHERE, (0, 0), "AR216", f"claude mcp remove {name} failed: {said}")
    status: Dict[str, str] = {}
    for name, entry in sorted(wanted.items()):
        if name in current and _same(current[name], entry):
            status[name] = INSTALLED
            continue
        if name in current:
            ok, said = run(project, "claude", ["mcp", "remove", name, "--scope", scope])
            if not ok:
                diags.warning(WHERE, (0, 0), "AR216", f"claude mcp remove {name} (to update it) failed: {said}")
                status[name] = CLI_FAILED
                continue
        ok, said = run(project, "claude", ["mcp", "add-json", name, entry, "--scope", scope])
        if not ok:
            diags.warning(WHERE, (0, 0), "AR216", f"claude mcp add-json {name} failed: {said}")
        status[name] = INSTALLED if ok else CLI_FAILED
    return status


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


def run(cwd: str, client: str, args: List[str]) -> Tuple[bool, str]:
    """Run a client's CLI with no input and a time limit: (succeeded, its last line)."""
    exe = shutil.which(client)
    if exe is None:
        return False, f"{client} is not on PATH"
    try:
        proc = subprocess.run([exe] + args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
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


def copilot_args(name: str, entry: str) -> Optional[List[str]]:
    """`copilot mcp add` arguments for a rendered `mcpServers` entry, or None when it holds
    what the CLI cannot say (then the config write is the fallback)."""
    try:
        data = json.loads(entry)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if "url" in data:
        if set(data) - {"type", "url", "headers"} or data.get("type", "http") not in ("http", "sse"):
            return None
        args = ["mcp", "add", "--transport", str(data.get("type", "http"))]
        for k, v in sorted(dict(data.get("headers") or {}).items()):
            args += ["--header", f"{k}: {v}"]
        return args + [name, str(data["url"])]
    if set(data) - {"type", "command", "args", "env"} or not isinstance(data.get("command"), str):
        return None
    args = ["mcp", "add"]
    for k, v in sorted(dict(data.get("env") or {}).items()):
        args += ["--env", f"{k}={v}"]
    return args + [name, "--", data["command"]] + [str(a) for a in data.get("args") or ()]


def sync_copilot(home: str, wanted: Dict[str, str], registered: Sequence[str], diags: Diagnostics
                 ) -> Dict[str, str]:
    """Register `wanted` with `copilot mcp add` (the user's configuration) and remove the
    servers of `registered` it no longer wants; the status of each wanted server. An entry
    that already holds the rendering (apart from the keys the CLI adds) is left alone."""
    current = _claude_config(home, COPILOT_CONFIG)
    for name in sorted(set(registered) - set(wanted)):
        if name in current:
            ok, said = run(home, "copilot", ["mcp", "remove", name])
            if not ok:
                diags.warning(WHERE, (0, 0), "AR216", f"copilot mcp remove {name} failed: {said}")
    status: Dict[str, str] = {}
    for name, entry in sorted(wanted.items()):
        have = current.get(name)
        if isinstance(have, dict) and _same({k: v for k, v in have.items() if k not in COPILOT_OWN}, entry):
            status[name] = INSTALLED
            continue
        args = copilot_args(name, entry)
        if args is None:
            diags.warning(WHERE, (0, 0), "AR216", f"copilot mcp add cannot express MCP server {name}; add it by hand")
            status[name] = CLI_FAILED
            continue
        if have is not None:
            ok, said = run(home, "copilot", ["mcp", "remove", name])
            if not ok:
                diags.warning(WHERE, (0, 0), "AR216", f"copilot mcp remove {name} (to update it) failed: {said}")
                status[name] = CLI_FAILED
                continue
        ok, said = run(home, "copilot", args)
        if not ok:
            diags.warning(WHERE, (0, 0), "AR216", f"copilot mcp add {name} failed: {said}")
        status[name] = INSTALLED if ok else CLI_FAILED
    return status
