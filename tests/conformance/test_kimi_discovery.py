"""Kimi Code CLI (PyPI `kimi-cli` 1.51.0, the real CLI, offline) loads what agentrc generates for it.

agentrc writes Kimi AGENTS.md and Agent Skills in the shared `.agents/skills` (rules, agents
and commands as skills). Hooks and MCP servers live only in the user's `~/.kimi/config.toml`
and `~/.kimi/mcp.json`: agentrc writes none, and its report gives the entries to add; the
last tests add them and run Kimi with them.

Each run is `kimi --print -p ...` in a git copy of the build: a private HOME whose
`~/.kimi/config.toml` names one OpenAI-compatible model at a local sink, no credentials,
stdin closed, the sink as the HTTP(S) proxy, and shims in front of PATH for the stdio MCP
servers' commands. The sink records what Kimi sent its model, or answers it as a fake model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from .conformance_helpers import describe, read_frontmatter, run
from .offline_clients import (
    LocalSink,
    client_build,
    copy_project,
    isolated_dirs,
    offline_env,
    read_lines,
    stdio_commands,
    write_shims,
)
from .pypi_clients import model_requests, pypi_client, snippet, system_text
from .test_copilot_discovery import FakeModel

CONFIG = """default_model = "sink"

[providers.sink]
type = "openai_legacy"
base_url = "{url}/v1"
api_key = "agentrc-conformance"

[models.sink]
provider = "sink"
model = "agentrc-test"
max_context_size = 100000
"""


@pytest.fixture(scope="module")
def kimi() -> Path:
    return pypi_client("kimi", "kimi-cli", "kimi")


@pytest.fixture(scope="module")
def build():
    return client_build("registry", "kimi")


def _run(kimi: Path, tree: Path, name: str, *, hooks: str = "", servers: Optional[Dict[str, Any]] = None,
         model: Any = None):
    """(project, sink, process, shim log) of `kimi --print -p hello` in a copy of `tree`."""
    base, home, tmp = isolated_dirs(f"agentrc-kimi-{name}-")
    project = copy_project(tree, base / "project")
    log = base / "shims.log"
    shims = write_shims(base / "shims", stdio_commands(servers or {}), log)
    (home / ".kimi").mkdir()
    if servers:
        (home / ".kimi" / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    with LocalSink(model) as sink:
        (home / ".kimi" / "config.toml").write_text(CONFIG.format(url=sink.url) + hooks, encoding="utf-8")
        env = offline_env(home, tmp, shims=shims, proxy=sink)
        proc = run([str(kimi), "--print", "-p", "hello"], cwd=project, env=env)
    return project, sink, proc, log


def _project_skills(system: str, project: Path) -> Dict[str, Dict[str, str]]:
    """{name: {path, description}} of the `### Project` skills of Kimi's system prompt."""
    section = system.split("### Project\n", 1)[1].split("\n### ", 1)[0]
    return {m.group(1): {"path": Path(m.group(2)).relative_to(project).as_posix(), "description": m.group(3)}
            for m in re.finditer(r"^- (\S+)\n  - Path: (\S+)\n  - Description: (.*)$", section, re.M)}


def _skills(build) -> Dict[str, Dict[str, str]]:
    found = {}
    for item in build.report["items"]:
        if item["client"] == build.client.split(",")[-1] and item["generated"]:
            for out in item["outputs"]:
                if re.fullmatch(r"\.agents/skills/[^/]+/SKILL\.md", out):
                    fm = read_frontmatter(build.out / out)
                    found[str(fm["name"])] = {"path": out, "description": str(fm["description"])}
    assert found, "the build generated no skills for kimi"
    return found


def test_kimi_model_request_has_every_generated_skill_and_agents_md(kimi: Path, build):
    project, sink, proc, _ = _run(kimi, build.out, "model")
    bodies = model_requests(sink.requests)
    assert bodies, describe(proc)
    system = system_text(bodies[0])
    assert _project_skills(system, project) == _skills(build)
    agents_md = (project / "AGENTS.md").read_text(encoding="utf-8").strip()
    assert f"<!-- From: {project}/AGENTS.md -->\n{agents_md}" in system
    assert not sink.connects() and len(sink.requests) == len(bodies), sink.requests


def test_kimi_in_a_claude_and_kimi_tree_loads_what_ar095_warns_about(kimi: Path):
    """Built with claude, Kimi reads .claude/skills (its first brand directory when there is
    no .kimi/skills) before .agents/skills: Claude's copy of a name wins, and the report's
    also_loaded_by names exactly the copies Kimi loads from there."""
    both = client_build("registry", "claude,kimi")
    project, sink, proc, _ = _run(kimi, both.out, "claude")
    bodies = model_requests(sink.requests)
    assert bodies, describe(proc)
    loaded = _project_skills(system_text(bodies[0]), project)
    from_claude = {n for n, s in loaded.items() if s["path"].startswith(".claude/skills/")}
    warned = {i["name"] for i in both.report["items"]
              if any(a["client"] == "kimi" for a in i.get("also_loaded_by") or [])}
    claude_skills = {p.parent.name for p in (both.out / ".claude" / "skills").glob("*/SKILL.md")}
    assert from_claude == claude_skills == warned
    assert set(loaded) == claude_skills | set(_skills(both))


def _hooks_to_add(build) -> List[str]:
    entries = []
    for item in build.report["items"]:
        if item["client"] == "kimi" and item["kind"] == "hook":
            for f in item["fields"]:
                m = re.search(r"add: `\[\[hooks\]\]` (\{.*?\}) \(", f.get("detail", ""))
                if f["field"] == "event" and m:
                    entries.append("\n[[hooks]]\n" + m.group(1)[1:-1].replace(", ", "\n") + "\n")
    assert entries, "the report gives no [[hooks]] entry"
    return entries


def _servers_to_add(build) -> Dict[str, Any]:
    servers: Dict[str, Any] = {}
    for item in build.report["items"]:
        if item["client"] == "kimi" and item["kind"] == "mcp":
            details = {f["detail"] for f in item["fields"] if "add: `" in f.get("detail", "")}
            assert len(details) == 1, item
            key, value = snippet(details.pop())
            assert key == "mcpServers"
            servers.update(value)
    assert servers, "the report gives no mcpServers entry"
    return servers


def test_kimi_runs_the_hooks_the_report_says_to_add(kimi: Path, build):
    """The report's [[hooks]] entries, added to ~/.kimi/config.toml: a fake model asks for
    `printenv HOME`, which examples/registry's block-secrets blocks (exit code 2); without the
    entries Kimi runs it."""
    calls = [("Shell", {"command": "printenv HOME"})]
    _, sink, proc, _ = _run(kimi, build.out, "hooks", hooks="".join(_hooks_to_add(build)), model=FakeModel(calls))
    results = [m for b in model_requests(sink.requests) for m in b["messages"] if m.get("role") == "tool"]
    assert results, describe(proc)
    assert "blocked: the command would print a secret" in json.dumps(results[0].get("content")), results[0]
    _, control, proc, _ = _run(kimi, build.out, "no-hooks", model=FakeModel(calls))
    results = [m for b in model_requests(control.requests) for m in b["messages"] if m.get("role") == "tool"]
    assert results and "blocked" not in json.dumps(results[0].get("content")), describe(proc)


def test_kimi_starts_the_servers_the_report_says_to_add(kimi: Path, build):
    """The report's mcpServers, added to ~/.kimi/mcp.json: Kimi starts every one (the stdio
    commands reach their shims, the remote servers the proxy) and, as none answers, names
    each in its error before any model request."""
    servers = _servers_to_add(build)
    _, sink, proc, log = _run(kimi, build.out, "servers", servers=servers)
    started = set(read_lines(log))
    failed = re.search(r"Failed to connect MCP servers: \{(.*)\}", proc.stdout + proc.stderr)
    assert failed, describe(proc)
    assert sorted(re.findall(r"'([^']+)': ", failed.group(1))) == sorted(servers), failed.group(0)
    for name, server in servers.items():
        if "command" in server:
            assert " ".join([server["command"]] + server.get("args", [])) in started, name
        else:
            host = re.match(r"https?://([^/:]+)", server["url"]).group(1)
            assert f"{host}:443" in sink.connects(), name
