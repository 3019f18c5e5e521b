"""Codex CLI (the real CLI, offline, isolated CODEX_HOME) reads what agentrc generates for it.

The examples are built for codex into a git repository that a throwaway CODEX_HOME trusts
(project `.codex/` is read only in trusted projects). Codex then reports, without a model:

* `codex mcp list --json`: the servers of `.codex/config.toml`, with their transports;
* the app server's `hooks/list` and `skills/list`: the parsed `.codex/hooks.json` and the
  skills of `.agents/skills`, with any warnings and errors;
* the app server's start-up `configWarning`s: a malformed `.codex/agents/*.toml` is reported
  there ("Ignoring malformed agent role definition") and skipped;
* `codex debug prompt-input`: the model-visible skill list (commands are explicit-only, so
  they are absent) and the AGENTS.md text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from helpers import readable

from .conformance_helpers import NPM_MODULES, REGISTRY, ROOT, check_npm_package, describe, make_temp_dir, run

PACKAGE = "@openai/codex"
COMMANDS = ("fix-issue", "release-checklist")  # examples/registry/commands


@pytest.fixture(scope="module")
def codex() -> Path:
    check_npm_package(PACKAGE)
    return NPM_MODULES / ".bin" / "codex"


@pytest.fixture(scope="module")
def project() -> Tuple[Path, Dict[str, str]]:
    """The examples built for codex in a git repository, and an environment whose
    CODEX_HOME trusts it."""
    out = make_temp_dir("agentrc-codex-") / "project"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", REGISTRY.relative_to(ROOT).as_posix(),
                           "--client", "codex", "--out", str(out), "--no-cache"], cwd=str(ROOT), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    subprocess.run(["git", "init", "-q", str(out)], check=True)
    home = make_temp_dir("agentrc-codex-home-")
    # No network: no plugin marketplace, and a model provider on a closed local port (Codex
    # otherwise contacts github.com and api.openai.com even for listing commands).
    (home / "config.toml").write_text(
        'check_for_update_on_startup = false\nmodel_provider = "agentrc-offline"\n\n'
        "[features]\nplugins = false\n\n"
        '[model_providers.agentrc-offline]\nname = "agentrc offline"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'wire_api = "responses"\n\n'
        f'[projects."{out.resolve()}"]\ntrust_level = "trusted"\n',
        encoding="utf-8")
    codex_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
    codex_env["CODEX_HOME"] = str(home)
    return out, codex_env


class AppServer:
    """`codex app-server` over stdio: JSON-RPC requests, and the notifications seen so far."""

    def __init__(self, codex: Path, cwd: Path, env: Dict[str, str]):
        self.proc = subprocess.Popen([str(codex), "app-server"], cwd=str(cwd), env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.notes: List[dict] = []
        self.next_id = 0
        self.request("initialize", {"clientInfo": {"name": "agentrc-conformance", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "initialized"})

    def _send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Dict[str, Any], timeout: float = 60) -> Any:
        self.next_id += 1
        ident = self.next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        assert self.proc.stdout is not None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not readable(self.proc.stdout, 1):
                continue
            line = self.proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == ident:
                assert "error" not in message, message
                return message["result"]
            if "method" in message:
                self.notes.append(message)
        pytest.fail(f"codex app-server: no answer to {method}: {self.proc.stderr.read() if self.proc.poll() else ''}",
                    pytrace=False)

    def warnings(self) -> List[str]:
        return [n["params"]["summary"] for n in self.notes if n["method"] == "configWarning"]

    def close(self) -> None:
        self.proc.kill()
        self.proc.communicate()


def _app(codex: Path, project: Path, env: Dict[str, str]) -> AppServer:
    return AppServer(codex, project, env)


def test_codex_lists_every_mcp_server_with_its_transport(codex: Path, project):
    out, env = project
    listed = run([codex, "mcp", "list", "--json"], out, env)
    assert listed.returncode == 0, describe(listed)
    servers = {s["name"]: s for s in json.loads(listed.stdout)}
    assert sorted(servers) == ["api-docs", "schema-tools"], describe(listed)
    remote = servers["api-docs"]["transport"]
    assert remote["type"] == "streamable_http" and remote["bearer_token_env_var"] == "API_DOCS_TOKEN"
    local = servers["schema-tools"]["transport"]
    assert local["type"] == "stdio" and local["command"] == "npx" and local["env"] == {"SCHEMA_ROOT": "./schemas"}


def test_codex_parses_the_hooks_file(codex: Path, project):
    out, env = project
    app = _app(codex, out, env)
    try:
        result = app.request("hooks/list", {"cwds": [str(out)]})
    finally:
        app.close()
    (entry,) = result["data"]
    assert entry["errors"] == [] and entry["warnings"] == [], entry
    hooks = {(h["eventName"], h["matcher"]): h for h in entry["hooks"]}
    assert sorted(hooks) == [("postToolUse", "apply_patch"), ("preToolUse", "Bash")], entry
    assert hooks[("preToolUse", "Bash")]["timeoutSec"] == 10
    assert hooks[("postToolUse", "apply_patch")]["timeoutSec"] == 30
    for h in entry["hooks"]:
        assert h["source"] == "project" and h["handlerType"] == "command" and h["enabled"], h
        script = h["command"].split('"')[1].split(")/", 1)[1]  # "$(git rev-parse ...)/<path>" args
        assert (out / script).is_file() and os.access(str(out / script), os.X_OK), h["command"]


def test_codex_loads_every_skill_and_agent_without_warnings(codex: Path, project):
    out, env = project
    app = _app(codex, out, env)
    try:
        result = app.request("skills/list", {"cwds": [str(out)]})
        warnings = app.warnings()
    finally:
        app.close()
    (entry,) = result["data"]
    assert entry.get("errors", []) == [], entry
    found = sorted(s["name"] for s in entry["skills"] if str(out.resolve()) in s["path"])
    expected = sorted(p.parent.name for p in (out / ".agents" / "skills").glob("*/SKILL.md"))
    assert found == expected
    assert sorted(p.name for p in (out / ".codex" / "agents").glob("*.toml")), "no agents were generated"
    assert not [w for w in warnings if "agent role" in w], warnings


def test_a_malformed_agent_file_is_reported(codex: Path, project):
    """The check above means something: Codex reports agent files it cannot load."""
    out, env = project
    bad = out / ".codex" / "agents" / "zz-malformed.toml"
    bad.write_text('name = "zz"\ndescription = "x"\nsandbox_mode = "workspace-read"\ndeveloper_instructions = "x"\n',
                   encoding="utf-8")
    try:
        app = _app(codex, out, env)
        try:
            app.request("skills/list", {"cwds": [str(out)]})
            warnings = app.warnings()
        finally:
            app.close()
    finally:
        bad.unlink()
    assert [w for w in warnings if "malformed agent role" in w and "zz-malformed.toml" in w], warnings


def test_commands_are_explicit_only_and_agents_md_is_read(codex: Path, project):
    out, env = project
    proc = run([codex, "debug", "prompt-input", "hello"], out, env)
    assert proc.returncode == 0, describe(proc)
    text = "\n".join(c.get("text", "") for m in json.loads(proc.stdout) for c in m.get("content", []))
    visible = {line.split(":", 1)[0][2:] for line in text.splitlines() if line.startswith("- ") and "(file: " in line}
    skills = {p.parent.name for p in (out / ".agents" / "skills").glob("*/SKILL.md")}
    # Commands, and skills with disable-model-invocation (release-notes), run only as $name.
    explicit = {p.parent.parent.name for p in (out / ".agents" / "skills").glob("*/agents/openai.yaml")
                if "allow_implicit_invocation: false" in p.read_text(encoding="utf-8")}
    assert explicit == set(COMMANDS) | {"release-notes"}
    assert visible & skills == skills - explicit, text
    assert "## About this repository" in text  # the CONTEXT.md items, through AGENTS.md
