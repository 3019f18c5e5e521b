"""Continue (the real `cn` CLI 1.5.47, offline, isolated home) loads what agentrc generates.

examples/registry is built for `--client continue` and copied into a git project. Every run has
an isolated HOME (whose `~/.continue/config.yaml` names one OpenAI-compatible model at a local
sink, also the HTTP(S) proxy), no credentials, stdin closed, and shims for the stdio servers'
commands that log their arguments and environment and exit. cn has no listing command, so its
first model request (`cn -p`, about 2 s) is the account of what it loaded:

* the system message's `userRules` context: AGENTS.md, then every always-on rule's text;
* the Skills tool's description: every skill (`.continue/skills`) with its description;
* with `--agent .continue/agents/<name>.md`: the agent's prompt before the task as the user
  message, and only its tools;
* with `--mcp .continue/mcpServers/<name>.yaml`: the server started (the shim's log), or for
  the remote one, pointed at the sink, its request with the header's variable expanded.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import yaml

from .conformance_helpers import NPM_MODULES, check_npm_package, describe, run, split_frontmatter
from .offline_clients import LocalSink, cli_argv, client_build, copy_project, isolated_dirs, offline_env

PACKAGE = "@continuedev/cli"
TASK = "TASK-4242"
_SKILL = re.compile(r"^name: (.*)\ndescription: (.*)$", re.M)


@pytest.fixture(scope="module")
def cn() -> List[str]:
    check_npm_package(PACKAGE)
    return cli_argv(NPM_MODULES / "@continuedev" / "cli" / "dist" / "cn.js")


@pytest.fixture(scope="module")
def build():
    return client_build("registry", "continue")


@pytest.fixture(scope="module")
def project(build, tmp_path_factory) -> Path:
    return copy_project(build.out, tmp_path_factory.mktemp("continue") / "project")


class Run:
    """One `cn -p` in `project`: the sink's requests and the shims' log."""

    def __init__(self, cn: List[str], project: Path, *args: str, env: Optional[Dict[str, str]] = None):
        base, home, tmp = isolated_dirs("agentrc-continue-")
        shims = base / "shims"
        shims.mkdir()
        self.log = base / "shims.log"
        (shims / "npx").write_text(f"#!/bin/sh\nprintf '%s\\n' \"npx $* SCHEMA_ROOT=$SCHEMA_ROOT\" >> '{self.log}'\n"
                                   "exit 127\n", encoding="utf-8")
        (shims / "npx").chmod(0o755)
        with LocalSink() as sink:
            config = home / ".continue" / "config.yaml"
            config.parent.mkdir()
            config.write_text(yaml.safe_dump({
                "name": "sink", "version": "1.0.0", "schema": "v1",
                "models": [{"name": "sink", "provider": "openai", "model": "gpt-4o", "apiBase": f"{sink.url}/v1",
                            "apiKey": "agentrc-conformance", "roles": ["chat"]}]}), encoding="utf-8")
            self.proc = run(cn + ["-p", TASK, "--config", str(config), *args], cwd=project,
                            env=offline_env(home, tmp, shims=shims, proxy=sink, extra=env), timeout=60)
            self.requests = list(sink.requests)
        self.posts = [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def first(self) -> Dict[str, Any]:
        assert self.posts, describe(self.proc)
        return self.posts[0]

    def started(self) -> List[str]:
        return self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []


@pytest.fixture(scope="module")
def request_(cn, project, tmp_path_factory) -> Dict[str, Any]:
    """The first model request in the project, which also holds a hand-written
    `.continue/settings.json` whose hooks would leave a mark: cn reads that file but fires no
    hook event, which is why agentrc writes no hooks for it (OFFLINE_LIMITS' hooks rows)."""
    mark = tmp_path_factory.mktemp("continue-hooks") / "fired"
    hook = {"hooks": [{"type": "command", "command": f"echo fired >> '{mark}'"}]}
    settings = project / ".continue" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"SessionStart": [hook], "UserPromptSubmit": [hook]}}), encoding="utf-8")
    try:
        first = Run(cn, project).first()
    finally:
        settings.unlink()
    assert not mark.exists(), "cn fired a hook: agentrc's Continue adapter should write them now"
    return first


def _user_rules(system: str) -> str:
    m = re.search(r'<context name="userRules">\n(.*)\n</context>', system, re.S)
    assert m, system[-2000:]
    return m.group(1)


def test_continue_model_request_has_agents_md_and_every_always_on_rule(request_, build):
    rules = _user_rules(request_["messages"][0]["content"])
    agents_md = (build.out / "AGENTS.md").read_text(encoding="utf-8")
    assert rules.startswith(agents_md.strip()) or rules.startswith(agents_md), rules[:300]
    files = sorted((build.out / ".continue" / "rules").glob("*.md"))
    assert files and sorted(p.stem for p in files) == sorted(build.generated("rule"))
    always, scoped = [], []
    for f in files:
        fm, body = split_frontmatter(f.read_text(encoding="utf-8"))
        (scoped if fm.get("globs") else always).append(body.strip())
    assert always and scoped
    for body in always:
        assert body in rules
    for body in scoped:  # cn loads always-on rules only (the report says so)
        assert body not in rules
    # Nothing else: AGENTS.md and the always-on rules account for the whole context.
    rest = rules.replace(agents_md.strip(), "", 1)
    for body in always:
        rest = rest.replace(body, "", 1)
    assert not rest.strip(), rest


def test_continue_skills_tool_lists_every_generated_skill_and_command(request_, build):
    tool = next(t["function"] for t in request_["tools"] if t["function"]["name"] == "Skills")
    listed = dict(_SKILL.findall(tool["description"]))
    generated = build.generated_skills(".continue/skills")
    assert generated and set(build.generated("command")) <= set(generated)
    assert sorted(listed) == sorted(Path(d).name for d in generated.values())
    for directory in generated.values():
        fm, _ = split_frontmatter((build.out / directory / "SKILL.md").read_text(encoding="utf-8"))
        assert listed[fm["name"]] == fm["description"], directory


def test_continue_runs_every_generated_agent_file_with_its_prompt_and_tools(cn, project, build):
    agents = sorted((build.out / ".continue" / "agents").glob("*.md"))
    assert agents and sorted(p.stem for p in agents) == sorted(build.generated("agent"))
    for f in agents:
        fm, body = split_frontmatter(f.read_text(encoding="utf-8"))
        first = Run(cn, project, "--agent", f".continue/agents/{f.name}").first()
        assert first["messages"][-1] == {"role": "user", "content": f"{body.strip()}\n\n{TASK}"}, f.name
        names = {t["function"]["name"] for t in first.get("tools", [])}
        if fm.get("tools"):
            wanted = {t.strip() for t in str(fm["tools"]).split(",")}
            edits = {"Edit", "MultiEdit"}  # cn offers one of the two, by model; the file names both
            # CheckBackgroundJob is not a built-in an agent file can name, so cn always offers it.
            assert wanted - edits <= names and not (names - wanted - {"CheckBackgroundJob"}), (f.name, names)
            assert bool(names & edits) == bool(wanted & edits), (f.name, names)


def test_continue_starts_every_generated_mcp_block_named_with_mcp(cn, project, build, tmp_path):
    blocks = sorted((build.out / ".continue" / "mcpServers").glob("*.yaml"))
    servers = [i["name"] for i in build.report["items"] if i["kind"] == "mcp" and i["generated"]]
    assert blocks and sorted(p.stem for p in blocks) == sorted(servers)
    for block in blocks:
        [server] = yaml.safe_load(block.read_text(encoding="utf-8"))["mcpServers"]
        if "command" in server:
            ran = Run(cn, project, "--mcp", f"./.continue/mcpServers/{block.name}")
            env = " ".join(f"{k}={v}" for k, v in server.get("env", {}).items())
            assert f"{server['command']} {' '.join(server.get('args', []))} {env}" in ran.started(), block.name
            continue
        # The remote one, its URL pointed at a local listener: cn's request carries the
        # header, the variable read from the environment.
        with _HeaderSink() as listener:
            copy = copy_project(build.out, tmp_path / block.stem)
            text = block.read_text(encoding="utf-8").replace(server["url"], listener.url)
            (copy / ".continue" / "mcpServers" / block.name).write_text(text, encoding="utf-8")
            Run(cn, copy, "--mcp", f"./.continue/mcpServers/{block.name}", env={"API_DOCS_TOKEN": "tok-4242"})
        assert listener.headers, f"cn sent nothing to {block.name}'s server"
        for key, value in server["requestOptions"]["headers"].items():
            assert listener.headers[0].get(key.lower()) == value.replace("${{ secrets.API_DOCS_TOKEN }}", "tok-4242")
    # cn loads no block the command line does not name.
    assert not Run(cn, project).started()


class _HeaderSink:
    """A listener on 127.0.0.1 that records each request's headers and answers 404."""

    def __init__(self) -> None:
        self.headers: List[Dict[str, str]] = []
        seen = self.headers

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                seen.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST = do_DELETE = _any

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/mcp"

    def __enter__(self) -> "_HeaderSink":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


def test_continue_in_a_claude_and_continue_tree_loads_what_ar095_names(cn, tmp_path):
    """cn reads .claude/skills too: built with claude, the Skills tool lists its own skills
    and every copy in .claude/skills the report's also_loaded_by names, each name as often as
    it has copies (both load; which one a name finds is not defined), and a skill whose bytes
    are Claude's too is written once, in .claude/skills (shared copies)."""
    build = client_build("registry", "claude,continue")
    both = copy_project(build.out, tmp_path / "both")
    named = [by["path"] for i in build.report["items"] if i["client"] == "claude"
             for by in i.get("also_loaded_by", []) if by["client"] == "continue"]
    assert named and all(p.startswith(".claude/skills/") for p in named)
    own = sorted(p.parent.name for p in (build.out / ".continue" / "skills").glob("*/SKILL.md"))
    tool = next(t["function"] for t in Run(cn, both).first()["tools"] if t["function"]["name"] == "Skills")
    listed = sorted(name for name, _ in _SKILL.findall(tool["description"]))
    assert listed == sorted(own + [Path(p).parent.name for p in named])
