"""Shared machinery for the offline discovery tests of Claude Code, Codex and Gemini CLI
(test_claude_discovery.py, test_codex_discovery.py, test_gemini_discovery.py).

* `client_build(source, client)`: examples/registry or examples/project built for one client
  (or several, comma-separated: "claude,copilot") with the documented command (`python -m agentrc build <source> --client <c> --out <tmp>
  --report <tmp>.json`), memoized per session. `ClientBuild.generated(kind)` reads the
  fidelity report: the items agentrc says it generated for that client, with their outputs.
  That is what the client should discover; the tests also check it against the files written.
* `copy_project(build, dest)`: a private, git-initialised copy to run a client in.
* `LocalSink`: an HTTP server on 127.0.0.1 that records every request and answers with an
  error, or with what its `answer` callback returns. Every client run gets one as its HTTP(S)
  proxy, so nothing leaves the machine and any attempt to reach the network is visible to the
  test; the Gemini and Copilot probes also use one as their model endpoint (the Copilot hook
  test's answers a fake model's tool calls).
* `write_shims(dir, commands, log)`: stand-ins for the stdio MCP server commands (`npx`,
  `node`, ...) first on PATH: they log their argv and exit 127, so a client that starts a
  server fails fast and never downloads a package.
* `offline_env(...)`: an environment built from nothing (no credentials, no user config):
  PATH, LANG, HOME and TMPDIR inside the test's temp dir, the proxy, plus what a test adds.
* `cli_argv(bin)`: how to start an npm-installed CLI without looking up `node` on PATH (the
  shims may hold a `node`).
* `JsonRpcSession`: a line-delimited JSON-RPC client over a child's stdio, with a deadline
  (`codex app-server`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pytest

from helpers import readable

from .conformance_helpers import COMMAND_TIMEOUT, ROOT, describe, make_temp_dir, run

SOURCES = {"registry": "examples/registry", "project": "examples/project"}


# ---------------------------------------------------------------------------------------------
# Builds
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientBuild:
    source: str
    client: str
    out: Path
    report: Dict[str, Any]
    log: str

    def generated(self, kind: str, client: Optional[str] = None) -> Dict[str, List[str]]:
        """{item name: outputs} of the items of `kind` generated for this client (or, in a
        build for several clients such as "claude,copilot", for `client`)."""
        client = client or self.client
        found: Dict[str, List[str]] = {}
        for item in self.report.get("items", []):
            if item.get("client") == client and item.get("kind") == kind and item.get("generated"):
                found[item["name"]] = list(item.get("outputs") or [])
        return found

    def generated_skills(self, root: str, client: Optional[str] = None) -> Dict[str, str]:
        """{item name: skill directory} of every item generated as a skill under `root`
        (skills, and the commands and rules a client receives as skills)."""
        found: Dict[str, str] = {}
        for kind in ("skill", "command", "rule"):
            for name, outputs in self.generated(kind, client).items():
                for out in outputs:
                    if out.startswith(root + "/") and out.endswith("/SKILL.md") and out.count("/") == root.count("/") + 2:
                        found[name] = out[: -len("/SKILL.md")]
        return found


@lru_cache(maxsize=None)
def _build(source: str, client: str) -> Tuple[Optional[ClientBuild], str]:
    base = make_temp_dir(f"agentrc-conformance-{client}-{source}-")
    out, report = base / "out", base / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRC_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    # Relative source path and cwd=ROOT: the documented command (see conformance_helpers).
    cmd = [sys.executable, "-m", "agentrc", "build", SOURCES[source], "--client", client,
           "--out", str(out), "--report", str(report), "--no-cache"]
    proc = subprocess.run(cmd, cwd=str(ROOT), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=COMMAND_TIMEOUT)
    log = describe(proc)
    if proc.returncode != 0 or not out.is_dir():
        hint = ""
        if "unknown client" in proc.stderr:
            hint = f"\n(the {client} adapter is not registered in src/agentrc/clients/registry.py yet)"
        return None, f"agentrc build of {SOURCES[source]} for {client} failed{hint}:\n{log}"
    return ClientBuild(source, client, out, json.loads(report.read_text(encoding="utf-8")), log), log


def client_build(source: str, client: str) -> ClientBuild:
    build, log = _build(source, client)
    if build is None:
        pytest.fail(log, pytrace=False)
    return build


def copy_project(build: Path, dest: Path) -> Path:
    """A git-initialised copy of `build` at `dest` (clients find the project root by git and
    may write into it). Returns the resolved path, which is what clients key trust by."""
    shutil.copytree(str(build), str(dest))
    proc = run(["git", "init", "-q"], cwd=dest, env=_git_env())
    assert proc.returncode == 0, describe(proc)
    return dest.resolve()


def empty_project(dest: Path) -> Path:
    dest.mkdir(parents=True)
    proc = run(["git", "init", "-q"], cwd=dest, env=_git_env())
    assert proc.returncode == 0, describe(proc)
    return dest.resolve()


@lru_cache(maxsize=None)
def _git_home() -> str:
    return str(make_temp_dir("agentrc-git-home-"))


def _git_env() -> Dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": _git_home(), "GIT_CONFIG_NOSYSTEM": "1"}


# ---------------------------------------------------------------------------------------------
# Isolation: environment, shims, local sink
# ---------------------------------------------------------------------------------------------


# A sink's optional answerer: given a recorded request ({method, path, body}), the answer
# (status, content type, bytes), or None for the default error.
Answer = Callable[[Dict[str, Any]], Optional[Tuple[int, str, bytes]]]


class LocalSink:
    """Records every HTTP request it receives (method, path, headers, JSON body when there is
    one) and answers CONNECT with 403 and everything else with a 400 JSON error, unless
    `answer` (settable at any time) answers it: a fake model endpoint, for instance."""

    def __init__(self, answer: Optional[Answer] = None) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.answer = answer
        lock = threading.Lock()
        requests = self.requests
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                body: Any = b""
                length = int(self.headers.get("content-length") or 0)
                if length:
                    body = self.rfile.read(length)
                elif "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    body = b"".join(chunks)
                try:
                    body = json.loads(body) if body else None
                except ValueError:
                    body = body.decode("utf-8", "replace")
                record = {"method": self.command, "path": self.path, "body": body}
                with lock:
                    requests.append(record)
                answered = sink.answer(record) if sink.answer is not None and self.command != "CONNECT" else None
                if answered is not None:
                    status, content_type, data = answered
                    self.send_response(status)
                    self.send_header("content-type", content_type)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if self.command == "CONNECT":
                    self.send_response(403)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                msg = json.dumps({"error": {"code": 400, "message": "agentrc conformance: no network here",
                                            "status": "INVALID_ARGUMENT", "type": "invalid_request_error"}}).encode()
                self.send_response(400)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(msg)))
                self.end_headers()
                self.wfile.write(msg)

            do_CONNECT = do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _record

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(5)

    def __enter__(self) -> "LocalSink":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def connects(self) -> List[str]:
        """host:port of every CONNECT (an HTTPS request sent through the proxy)."""
        return [r["path"] for r in self.requests if r["method"] == "CONNECT"]


def write_shims(directory: Path, commands: Iterable[str], log: Path) -> Path:
    """An executable per command name in `directory` that logs `name args` to `log` and exits
    127. Returns `directory` (put it first on PATH)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in sorted(set(commands)):
        if not name or "/" in name:
            continue  # a path: nothing to put on PATH in front of it
        shim = directory / name
        shim.write_text(f"#!/bin/sh\nprintf '%s\\n' \"{name} $*\" >> '{log}'\nexit 127\n", encoding="utf-8")
        shim.chmod(0o755)
    return directory


def offline_env(home: Path, tmp: Path, *, shims: Optional[Path] = None, proxy: Optional[LocalSink] = None,
                extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """A from-scratch environment: nothing of the caller's but PATH (no API keys, tokens, cloud
    credentials or client config variables), a private HOME, TMPDIR and XDG dirs, the local
    sink as the HTTP(S) proxy, and `extra`."""
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    if shims is not None:
        path = f"{shims}{os.pathsep}{path}"
    env = {
        "PATH": path,
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if proxy is not None:
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[key] = env[key.lower()] = proxy.url
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.update(extra or {})
    return env


def isolated_dirs(prefix: str) -> Tuple[Path, Path, Path]:
    """(base, home, tmp) under a new temp dir."""
    base = make_temp_dir(prefix)
    home, tmp = base / "home", base / "tmp"
    home.mkdir()
    tmp.mkdir()
    return base, home, tmp


def cli_argv(binary: Path) -> List[str]:
    """argv prefix that starts `binary`: node scripts are run with the absolute node found on
    the caller's PATH, so a `node` shim in front of PATH cannot intercept the client itself."""
    real = binary.resolve()
    with open(str(real), "rb") as f:
        first = f.readline()
    if first.startswith(b"#!") and b"node" in first:
        node = shutil.which("node")
        if node is None:
            return [str(binary)]  # the caller's check reports it
        return [str(Path(node).resolve()), str(real)]
    return [str(real)]


def read_lines(path: Path) -> List[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


# ---------------------------------------------------------------------------------------------
# Generated files
# ---------------------------------------------------------------------------------------------


def flatten_hooks(hooks: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """One dict per handler of a Claude-style hooks object
    ({event: [{matcher?, hooks: [{type, command, ...}]}]}), in file order."""
    flat = []
    for event, groups in hooks.items():
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group.get("hooks", [])):
                entry = dict(handler)
                entry.update(event=event, matcher=group.get("matcher"), group=gi, index=hi)
                flat.append(entry)
    return flat


def stdio_commands(servers: Mapping[str, Mapping[str, Any]]) -> List[str]:
    return sorted({str(s["command"]) for s in servers.values() if s.get("command")})


def http_hosts(servers: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """host:port of every URL server (what a client's CONNECT through the proxy names)."""
    from urllib.parse import urlsplit

    hosts = set()
    for s in servers.values():
        url = s.get("url") or s.get("httpUrl")
        if url:
            u = urlsplit(str(url))
            hosts.add(f"{u.hostname}:{u.port or (443 if u.scheme == 'https' else 80)}")
    return sorted(hosts)


def load_toml(path: Path) -> Dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:
        try:
            import tomli as tomllib  # type: ignore[import-not-found,no-redef]
        except ImportError:
            pytest.skip("reading TOML needs Python 3.11 or the tomli package")
    return tomllib.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# JSON-RPC over stdio (codex app-server)
# ---------------------------------------------------------------------------------------------


@dataclass
class JsonRpcSession:
    """Starts `argv` in its own process group and speaks one-JSON-object-per-line JSON-RPC
    with it. Every wait has a deadline; `close()` kills the group."""

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    stderr_path: Path
    deadline_s: float = 30.0
    proc: Any = field(init=False, default=None)
    _next_id: int = field(init=False, default=0)
    _buffer: bytes = field(init=False, default=b"")
    notifications: List[Dict[str, Any]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self._stderr = open(str(self.stderr_path), "wb")
        self.proc = subprocess.Popen(list(self.argv), cwd=str(self.cwd), env=dict(self.env), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True)
        self._end = time.monotonic() + self.deadline_s

    def _send(self, msg: Dict[str, Any]) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        msg: Dict[str, Any] = {"method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        self._next_id += 1
        rid = self._next_id
        msg: Dict[str, Any] = {"id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        while True:
            line = self._readline()
            if line is None:
                pytest.fail(f"{' '.join(self.argv)}: no answer to {method} (exit code {self.proc.poll()}, "
                            f"{self.deadline_s:.0f}s deadline); stderr:\n{self.stderr()}", pytrace=False)
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if reply.get("id") == rid and "method" not in reply:
                return reply
            self.notifications.append(reply)

    def _readline(self) -> Optional[bytes]:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = self._end - time.monotonic()
            if left <= 0:
                return None
            if not readable(fd, left):
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")[-6000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                pass
        try:  # the group this session started (the server and anything it spawned)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait(5)
        self._stderr.close()

    def __enter__(self) -> "JsonRpcSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
