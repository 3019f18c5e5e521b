"""What each real client CLI discovers in a project directory, offline (issue 31's judge).

The same offline mechanisms tests/conformance uses (and documents in OFFLINE_LIMITS.md): a
private HOME, the HTTP(S) proxy pointed at a local sink that answers every request with an
error, MCP server commands replaced by shims that exit 127. Each function returns
{"names": [...], "dups": [...], "error": str or None}: every item name the client lists
from the project (its built-ins, listed in an empty project, left out), and the names it
lists more than once (an item loading twice).
"""

from __future__ import annotations

import collections
import json
import re
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from tests.conformance.conformance_helpers import NPM_MODULES, opencode_candidates, strip_ansi
from tests.conformance.offline_clients import LocalSink, cli_argv, offline_env, stdio_commands, write_shims

TIMEOUT = 120
BIN = NPM_MODULES / ".bin"
SERVER_FILES = (".mcp.json", ".github/mcp.json", ".vscode/mcp.json", ".gemini/settings.json",
                ".cursor/mcp.json", "opencode.json")


def _servers(project: Path) -> Dict[str, Any]:
    found: Dict[str, Any] = {}
    for rel in SERVER_FILES:
        p = project / rel
        if p.is_file():
            try:
                data = json.loads(p.read_text(encoding="utf-8"))
            except ValueError:
                continue
            block = data.get("mcpServers") or data.get("servers") or data.get("mcp") or {}
            for name, spec in block.items():
                if isinstance(spec, dict):
                    cmd = spec.get("command")
                    if isinstance(cmd, list):  # opencode: command is argv
                        spec = dict(spec, command=cmd[0] if cmd else "")
                    found[name] = spec
    return found


class Env:
    """A private home, tmp, shims and sink for one client run in `project`."""

    def __init__(self, base: Path, project: Path):
        self.home, self.tmp = base / "home", base / "tmp"
        self.home.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.servers = _servers(project)
        self.shims = write_shims(base / "shims", stdio_commands(self.servers), base / "shims.log")
        self.sink = LocalSink()

    def env(self, **extra: str) -> Dict[str, str]:
        return offline_env(self.home, self.tmp, shims=self.shims, proxy=self.sink, extra=extra)

    def close(self) -> None:
        self.sink.close()


def _run(argv: List[str], cwd: Path, env: Dict[str, str]) -> subprocess.CompletedProcess:
    """Run with stdout in a file: opencode exits before a pipe drains, cutting its JSON at 64 KiB."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        proc = subprocess.run(argv, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=TIMEOUT)
        out.seek(0)
        proc.stdout = out.read()
    return proc


def _result(*lists: Iterable[str], error: Optional[str] = None) -> Dict[str, Any]:
    """Names from one listing per kind: a name twice in one listing is a duplicate; a skill and
    an agent of one name are two items."""
    names: set = set()
    dups: set = set()
    for one in lists:
        counts = collections.Counter(one)
        names |= set(counts)
        dups |= {n for n, c in counts.items() if c > 1}
    return {"names": sorted(names), "dups": sorted(dups), "error": error}


def claude(project: Path, base: Path) -> Dict[str, Any]:
    """The `claude -p` stream-json init message: skills, slash commands and agents."""
    e = Env(base, project)
    try:
        env = e.env(DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", MCP_TIMEOUT="2000")
        proc = _run([*cli_argv(BIN / "claude"), "-p", "x", "--output-format", "stream-json", "--verbose",
                     "--no-session-persistence"], project, env)
    finally:
        e.close()
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("type") == "system" and msg.get("subtype") == "init":
            return _result(msg.get("skills") or [], msg.get("slash_commands") or [], msg.get("agents") or [])
    return _result([], error="no init message: " + proc.stderr[-400:])


def copilot(project: Path, base: Path) -> Dict[str, Any]:
    """`copilot skill list --json` (project skills; agents have no listing command)."""
    e = Env(base, project)
    (e.home / ".copilot").mkdir(exist_ok=True)
    (e.home / ".copilot" / "config.json").write_text(json.dumps({"trustedFolders": [str(project)]}))
    try:
        env = e.env(XDG_CACHE_HOME=str(base / "cache"), COPILOT_AUTO_UPDATE="false")
        proc = _run([*cli_argv(BIN / "copilot"), "skill", "list", "--json"], project, env)
    finally:
        e.close()
    try:
        listed = json.loads(proc.stdout)
    except ValueError:
        return _result([], error="no JSON: " + proc.stderr[-400:])
    err = proc.stderr.strip()[-400:] if "failed to load" in proc.stderr else None
    return _result([s["name"] for s in listed if s.get("source") == "project"], error=err)


def opencode(project: Path, base: Path) -> Dict[str, Any]:
    """`opencode debug skill` (project skills) and `opencode agent list` (agents)."""
    e = Env(base, project)
    extra = {k: "1" for k in ("OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH",
                              "OPENCODE_DISABLE_SHARE", "OPENCODE_DISABLE_LSP_DOWNLOAD",
                              "OPENCODE_DISABLE_DEFAULT_PLUGINS")}
    try:
        env = e.env(**extra)
        exe = next((str(p) for p in opencode_candidates() if p.exists()), str(BIN / "opencode"))
        skills = _run([exe, "debug", "skill"], project, env)
        agents = _run([exe, "agent", "list"], project, env)
    finally:
        e.close()
    try:  # the JSON array may follow log lines
        listed = json.loads(skills.stdout[skills.stdout.index("["):])
    except ValueError:
        return _result([], error="no JSON: %s %s" % (skills.stdout[-200:], skills.stderr[-200:]))
    root = str(project.resolve()) + "/"
    names = [s["name"] for s in listed if root in str(s.get("location") or "")]
    found = [m.group(1) for m in (re.match(r"^(\S+) \((primary|subagent|all)\)$", line)
                                  for line in strip_ansi(agents.stdout).splitlines()) if m]
    return _result(names, found)


def gemini(project: Path, base: Path) -> Dict[str, Any]:
    """`gemini --debug skills list` (workspace skills under the project)."""
    e = Env(base, project)
    user = e.home / ".gemini"
    user.mkdir(exist_ok=True)
    (user / "settings.json").write_text(json.dumps({
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "mcp": {"excluded": sorted(e.servers)},
        "security": {"auth": {"selectedType": "gemini-api-key"}}}))
    try:
        env = e.env(GEMINI_CLI_HOME=str(e.home), GEMINI_CLI_TRUST_WORKSPACE="true")
        proc = _run([*cli_argv(BIN / "gemini"), "--debug", "skills", "list"], project, env)
    finally:
        e.close()
    pat = re.compile(r"^(\S+) \[(Enabled|Disabled)\]\n  Description: (.*)\n  Location:\s+(.*)$", re.M)
    root = str(project.resolve()) + "/"
    names = [n for n, _s, _d, loc in pat.findall(strip_ansi(proc.stdout)) if loc.strip().startswith(root)]
    return _result(names, error=None if proc.returncode == 0 else "exit %d" % proc.returncode)


def codex(project: Path, base: Path) -> Dict[str, Any]:
    """The app server's `skills/list` for the project (agents: .codex/agents/*.toml parse
    warnings are what Codex reports; they are counted as errors)."""
    home = base / "codex-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'check_for_update_on_startup = false\nmodel_provider = "agentrc-offline"\n\n[features]\nplugins = false\n\n'
        '[model_providers.agentrc-offline]\nname = "offline"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'wire_api = "responses"\n\n[projects."%s"]\ntrust_level = "trusted"\n' % project.resolve())
    e = Env(base, project)
    env = e.env(CODEX_HOME=str(home))
    proc = subprocess.Popen([str(BIN / "codex"), "app-server"], cwd=str(project), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        _rpc(proc, 1, "initialize", {"clientInfo": {"name": "agentrc-corpus", "version": "0"}}, [])
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
        proc.stdin.flush()
        notes: List[dict] = []
        result = _rpc(proc, 2, "skills/list", {"cwds": [str(project)]}, notes)
    finally:
        proc.kill()
        proc.communicate()
        e.close()
    if result is None:
        return _result([], error="no answer to skills/list")
    root = str(project.resolve()) + "/"
    names = [s["name"] for entry in result["data"] for s in entry["skills"] if root in s["path"]]
    errors = [x for entry in result["data"] for x in entry.get("errors", [])]
    warnings = [n["params"].get("summary") for n in notes if n.get("method") == "configWarning"]
    agents = [p.stem for p in (project / ".codex" / "agents").glob("*.toml")]
    bad = [w for w in warnings if "agent" in str(w)]
    return _result(names, agents, error=(str(errors + bad)[:400]) if errors or bad else None)


def _rpc(proc: subprocess.Popen, ident: int, method: str, params: Dict[str, Any], notes: List[dict]) -> Any:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    end = time.monotonic() + TIMEOUT
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stdout], [], [], 1)
        if not ready:
            continue
        line = proc.stdout.readline()
        if not line:
            return None
        message = json.loads(line)
        if message.get("id") == ident:
            return message.get("result")
        if "method" in message:
            notes.append(message)
    return None


CLIENTS = {"claude": claude, "copilot": copilot, "opencode": opencode, "codex": codex, "gemini": gemini}


def versions(base: Path) -> Dict[str, str]:
    """Each judge's --version, run in the same isolated environment."""
    out = {}
    base.mkdir(parents=True, exist_ok=True)
    e = Env(base, base)
    try:
        for name in ("claude", "copilot", "opencode", "codex", "gemini", "markdownlint-cli2"):
            exe = BIN / name
            argv = [str(exe)] if name in ("opencode", "codex") else cli_argv(exe)
            flag = [] if name == "markdownlint-cli2" else ["--version"]
            proc = _run([*argv, *flag], base, e.env())
            out[name] = (proc.stdout.strip() or proc.stderr.strip()).splitlines()[0][:80] if (
                proc.stdout.strip() or proc.stderr.strip()) else "?"
    finally:
        e.close()
    return out
