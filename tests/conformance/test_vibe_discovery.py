"""Mistral Vibe (PyPI `mistral-vibe`, the real CLI, offline) loads what agentrc generates for it.

Each run is `vibe --trust -p ...` in a git copy of the build: a private HOME whose
`~/.vibe/config.toml` names one model at a local sink (a `generic` provider; update checks
off), no credentials, stdin closed, the sink as the HTTP(S) proxy, and shims in front of PATH
for the stdio MCP servers' commands (they log their argv and exit). `--output-dir` makes Vibe
write its session journal, whose first entry records the capabilities it loaded (skills,
subagents, hook bindings); the sink records what Vibe sent its model, or answers it as a
fake model (the hook test).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from agentrc.text import tomledit

from .conformance_helpers import ROOT, describe, make_temp_dir, read_frontmatter, run
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
from .pypi_clients import model_requests, pypi_client, system_text
from .test_copilot_discovery import FakeModel

PLUGIN = "agentrc-examples"
CONFIG = """active_model = "agentrc-test"
enable_update_checks = false
enable_telemetry = false

[[providers]]
name = "sink"
api_base = "{url}/v1"
api_key_env_var = "AGENTRC_SINK_KEY"
backend = "generic"

[[models]]
name = "agentrc-test"
provider = "sink"
alias = "agentrc-test"
"""


@pytest.fixture(scope="module")
def vibe() -> Path:
    return pypi_client("vibe", "mistral-vibe", "vibe")


@pytest.fixture(scope="module")
def build():
    return client_build("registry", "vibe")


class Run:
    """One `vibe --trust -p` run in a fresh copy of the build."""

    def __init__(self, vibe: Path, tree: Path, name: str, hooks: Optional[str] = None,
                 mcp: str = ".vibe/plugins/agentrc/mcp.json"):
        base, self.home, self.tmp = isolated_dirs(f"agentrc-vibe-{name}-")
        self.project = copy_project(tree, base / "project")
        if hooks is not None:
            (self.project / ".vibe" / "hooks.toml").write_text(hooks, encoding="utf-8")
        self.servers = json.loads((self.project / mcp).read_text(encoding="utf-8"))["mcpServers"]
        self.log = base / "shims.log"
        self.shims = write_shims(base / "shims", stdio_commands(self.servers), self.log)
        self.out = base / "export"
        self.vibe = vibe

    def __call__(self, *args: str, model: Any = None):
        with LocalSink(model) as sink:
            (self.home / ".vibe").mkdir(exist_ok=True)
            (self.home / ".vibe" / "config.toml").write_text(CONFIG.format(url=sink.url), encoding="utf-8")
            env = offline_env(self.home, self.tmp, shims=self.shims, proxy=sink,
                              extra={"AGENTRC_SINK_KEY": "agentrc-conformance"})
            proc = run([str(self.vibe), "--trust", "--output-dir", str(self.out), *args], cwd=self.project, env=env)
        self.sink = sink
        return proc

    def capabilities(self, key: str = "checkpoint_capabilities") -> Any:
        """What the session journal's first file says the session loaded (its `key`)."""
        journal = sorted((self.out / "session" / "journal").glob("*.jsonl"))
        assert journal, f"no session journal in {self.out}"
        for line in journal[0].read_text(encoding="utf-8").splitlines():
            found = _find(json.loads(line), key)
            if found is not None:
                return found
        raise AssertionError(f"no {key} in {journal[0]}")


def _find(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        if key in value:
            return value[key]
        value = list(value.values())
    if isinstance(value, list):
        for v in value:
            found = _find(v, key)
            if found is not None:
                return found
    return None


def _skills(build) -> Dict[str, Dict[str, str]]:
    """{name: {description, path}} of every SKILL.md agentrc generated for vibe."""
    found = {}
    for item in build.report["items"]:
        if item["client"] == "vibe" and item["generated"]:
            for out in item["outputs"]:
                if re.fullmatch(r"\.agents/skills/[^/]+/SKILL\.md", out):
                    fm = read_frontmatter(build.out / out)
                    found[str(fm["name"])] = {"description": str(fm["description"]), "path": out}
    assert found, "the build generated no skills for vibe"
    return found


def _agents(build) -> Dict[str, Dict[str, Any]]:
    return {p.stem: tomledit.loads(p.read_text(encoding="utf-8")) for p in (build.out / ".vibe/agents").glob("*.toml")}


def test_vibe_session_loads_every_generated_skill_subagent_server_and_agents_md(vibe: Path, build):
    r = Run(vibe, build.out, "session")
    proc = r("-p", "hello", "--max-turns", "1")
    caps = r.capabilities()
    skills = {s["name"]: {"description": s["description"], "path": Path(s["path"]).relative_to(r.project).as_posix()}
              for s in caps["skills"] if Path(s["path"]).is_relative_to(r.project)}
    assert skills == _skills(build), describe(proc)
    subagents = {a["name"]: a["description"] for a in caps["agent_types"]}
    want = {n: a["description"] for n, a in _agents(build).items() if a["agent_type"] == "subagent"}
    assert want and subagents == want
    bodies = model_requests(r.sink.requests)
    assert bodies, describe(proc)
    system = system_text(bodies[0])
    agents_md = (r.project / "AGENTS.md").read_text(encoding="utf-8").strip()
    assert f"Contents of {r.project}/AGENTS.md:\n\n{agents_md}" in system
    listed = html.unescape(system)  # the skills list is XML: its text is escaped
    for name, skill in skills.items():
        assert f"<name>{name}</name>\n    <description>{skill['description']}</description>" in listed, name
    _servers_started(r)
    assert "<name>agentrc</name>" in system, "the plugin holding the MCP servers is not in the prompt"


def _servers_started(r: Run) -> None:
    """Every generated MCP server was started: the stdio ones reached their shims, the remote
    ones the proxy (which refuses them); nothing else went out."""
    started = set(read_lines(r.log))
    hosts = {f"{re.match(r'https?://([^/:]+)', s['url']).group(1)}:443" for s in r.servers.values() if "url" in s}
    assert set(r.sink.connects()) <= hosts, r.sink.connects()
    assert hosts <= set(r.sink.connects()), r.sink.connects()
    for name, server in r.servers.items():
        if server["type"] == "stdio":
            assert " ".join([server["command"]] + server["args"]) in started, name


def test_vibe_runs_a_primary_agent_on_its_instructions(vibe: Path, build):
    primary = {n: a for n, a in _agents(build).items() if a["agent_type"] == "agent"}
    assert primary, "examples/registry has no mode: primary agent for vibe"
    for name, agent in primary.items():
        r = Run(vibe, build.out, f"agent-{name}")
        proc = r("--agent", name, "-p", "hello", "--max-turns", "1")
        bodies = model_requests(r.sink.requests)
        assert bodies, describe(proc)
        assert agent["instructions"].strip() in system_text(bodies[0]), name


def _hooks_to_add(build) -> List[Dict[str, Any]]:
    """The [[hooks]] entries the report tells users to add to .vibe/hooks.toml."""
    entries = []
    for item in build.report["items"]:
        if item["client"] == "vibe" and item["kind"] == "hook":
            for f in item["fields"]:
                m = re.search(r"add to \.vibe/hooks\.toml: `\[\[hooks\]\]` (\{.*?\})(?: \(|; )", f.get("detail", ""))
                if f["field"] == "event" and m:
                    entries.append(tomledit.loads("h = " + m.group(1))["h"])
    assert entries, "the report gives no [[hooks]] entry"
    return entries


def test_vibe_runs_the_hooks_the_report_says_to_add(vibe: Path, build):
    """The entries given in the report, pasted into .vibe/hooks.toml, are bound at their
    events, and examples/registry's block-secrets denies a `printenv` (a fake model asks
    for it), whose output otherwise reaches the model."""
    entries = _hooks_to_add(build)
    r = Run(vibe, build.out, "hooks", hooks=tomledit.dumps({"hooks": entries}))
    calls = [("bash", {"command": "printenv HOME"})]
    proc = r("-p", "hello", "--max-turns", "3", "--auto-approve", model=FakeModel(calls))
    points = {"pre_tool": "pre_tool_call", "post_tool": "post_tool_call", "post_agent": "post_agent"}
    bound = {b["id"]: b["point"] for b in r.capabilities()["hook_bindings"]}
    for entry in entries:
        assert bound.get(f"{r.project}:{entry['name']}") == points[entry["type"]], (entry, bound)
    results = [m for b in model_requests(r.sink.requests) for m in b["messages"] if m.get("role") == "tool"]
    assert results, describe(proc)
    assert "blocked: the command would print a secret" in str(results[0].get("content")), results[0]


def _plugin_build() -> Tuple[Path, Dict[str, Any]]:
    """examples/registry as one Vibe plugin (`--layout plugin --plugin-name agentrc-examples`)."""
    base = make_temp_dir("agentrc-vibe-plugin-")
    out, report = base / "plugin", base / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRC_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", "examples/registry", "--layout", "plugin",
                           "--client", "vibe", "--plugin-name", PLUGIN, "--out", str(out), "--report", str(report),
                           "--no-cache"], cwd=str(ROOT), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, describe(proc)
    return out, json.loads(report.read_text(encoding="utf-8"))


def test_vibe_loads_the_plugin_build_with_its_skills_subagents_and_servers(vibe: Path):
    plugin, report = _plugin_build()
    tree = make_temp_dir("agentrc-vibe-plugin-tree-") / "project"
    shutil.copytree(str(plugin), str(tree / ".vibe" / "plugins" / PLUGIN), ignore=shutil.ignore_patterns(".agentrc"))
    r = Run(vibe, tree, "plugin", mcp=f".vibe/plugins/{PLUGIN}/mcp.json")
    proc = r("-p", "hello", "--max-turns", "1")
    plugins = r.capabilities("checkpoint_plugins")
    assert plugins, describe(proc)
    caps = next(p["capabilities"] for p in plugins if p["name"] == PLUGIN)
    space = PLUGIN.replace("-", "_")  # Vibe's tool namespace for the plugin
    skills = {d.parent.name: read_frontmatter(d)["description"] for d in (plugin / "skills").glob("*/SKILL.md")}
    assert skills and {s["name"]: s["description"] for s in caps["skills"]} == {
        f"{space}:{n}": d for n, d in skills.items()}
    agents = {p.stem: tomledit.loads(p.read_text(encoding="utf-8"))["description"]
              for p in (plugin / "ai.mistral.vibe" / "agents").glob("*.toml")}
    assert agents and {a["name"]: a["description"] for a in caps["agent_types"]} == {
        f"{space}:{n}": d for n, d in agents.items()}
    assert not [i for i in report["items"] if i["client"] == "vibe" and i["kind"] == "hook" and i["outputs"]]
    _servers_started(r)
