"""Qwen Code (the real CLI, offline, isolated home) loads what agentrc generates for it.

examples/registry and examples/project are built for `--client qwen` and each copied into a
git project. Every run: HOME in the test's temp dir with usage statistics off in
~/.qwen/settings.json, stdio MCP server commands shadowed by shims, a local sink as the
HTTP(S) proxy and as the OpenAI-compatible model endpoint (`--auth-type openai
--openai-base-url`). Each run is `qwen --debug -o stream-json "/<command> AGENTRC-4242"`
(or "hello" when the build has no command), and reads:

* the stream-json init message: `agents`, `slash_commands` (skills and commands) and
  `mcp_servers`, minus what an empty project lists (Qwen Code's built-ins);
* the first model request: the system prompt's "--- Context from: AGENTS.md ---" and
  "--- Rule from: .qwen/rules/<name>.md ---" blocks (the rules without `paths:`), and the
  last user message, the command expanded by Qwen Code ({{args}} replaced);
* the debug log (~/.qwen/debug): "Hook registry initialized with N hook entries", and no
  agent, skill or command refused ("Skipped invalid file", "Failed to parse").

`qwen mcp list` lists every server of .qwen/settings.json with its URL or command line,
pending approval: nothing starts. About 4 s per run.

The `--layout plugin` build of examples/registry is installed with `qwen extensions install
DIR --consent` into the home of an empty project; the same run then lists its agents, its
skills as `<extension>:<name>`, its commands and MCP servers, and sends its QWEN.md. An
extension's servers start without approval: the stdio ones reach the shims, the URL ones
the sink (as CONNECTs to their hosts), and nothing else does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Set

import pytest

from .conformance_helpers import (
    COMMAND_TIMEOUT,
    NPM_MODULES,
    ROOT,
    check_npm_package,
    describe,
    make_temp_dir,
    run,
    split_frontmatter,
    strip_ansi,
    tool_missing,
)
from .offline_clients import (
    LocalSink,
    cli_argv,
    client_build,
    copy_project,
    empty_project,
    http_hosts,
    isolated_dirs,
    offline_env,
    read_lines,
    stdio_commands,
    write_shims,
)

PACKAGE = "@qwen-code/qwen-code"
ARGS = "AGENTRC-4242"
_LISTED = re.compile(r"<skill>\s*<name>\s*(.*?)\s*</name>.*?<location>\s*(\w+)\s*</location>", re.S)
_BLOCK = re.compile(r"--- (Context|Rule) from: (\S+) ---\n(.*?)\n--- End of \1 from: \2 ---", re.S)


@pytest.fixture(scope="module")
def qwen() -> List[str]:
    check_npm_package(PACKAGE)
    path = NPM_MODULES / ".bin" / "qwen"
    if not path.exists():
        tool_missing(f"{path} is missing")
    return cli_argv(path)


class QwenProject:
    """A copy of one build (or an empty project) with its own home, shims and sink."""

    def __init__(self, out: Optional[Path], name: str):
        self.base, self.home, self.tmp = isolated_dirs(f"agentrc-qwen-{name}-")
        self.project = empty_project(self.base / "project") if out is None else copy_project(out, self.base / "project")
        settings = self.project / ".qwen" / "settings.json"
        self.settings: Dict[str, Any] = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
        self.servers: Dict[str, Dict[str, Any]] = self.settings.get("mcpServers") or {}
        self.shim_log = self.base / "shims.log"
        self.shims = write_shims(self.base / "shims", stdio_commands(self.servers), self.shim_log)
        self.sink = LocalSink()
        weakref.finalize(self, self.sink.close)
        (self.home / ".qwen").mkdir()
        (self.home / ".qwen" / "settings.json").write_text(json.dumps({"privacy": {"usageStatisticsEnabled": False}}),
                                                          encoding="utf-8")

    def run(self, qwen: List[str], *args: str):
        env = offline_env(self.home, self.tmp, shims=self.shims, proxy=self.sink)
        return run([*qwen, *args], self.project, env, timeout=90)

    def ask(self, qwen: List[str], prompt: str) -> Dict[str, Any]:
        """The init message, the first model request and the debug log of one run."""
        before = len(self.sink.requests)
        proc = self.run(qwen, "--debug", "--auth-type", "openai", "--openai-api-key", "agentrc-conformance",
                        "--openai-base-url", f"{self.sink.url}/v1", "-m", "m1", "-o", "stream-json", prompt)
        lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
        init = next((x for x in lines if x.get("type") == "system" and x.get("subtype") == "init"), None)
        assert init is not None, f"no init message:\n{describe(proc)}"
        posts = [r for r in self.sink.requests[before:] if r["method"] == "POST"]
        assert posts and posts[0]["path"] == "/v1/chat/completions", f"no model request:\n{describe(proc)}"
        debug = sorted((self.home / ".qwen" / "debug").glob("*.txt"), key=lambda p: p.stat().st_mtime)
        return {"init": init, "request": posts[0]["body"], "log": debug[-1].read_text(encoding="utf-8")}

    def assert_offline(self) -> None:
        assert not self.sink.connects(), f"Qwen Code tried to reach the network: {self.sink.connects()}"
        assert read_lines(self.shim_log) == [], f"Qwen Code started MCP server commands: {read_lines(self.shim_log)}"


def _text(content: Any) -> str:
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def _names(root: Path, pattern: str) -> Set[str]:
    return {str(split_frontmatter(p.read_text(encoding="utf-8"))[0]["name"]) for p in root.glob(pattern)}


@pytest.fixture(scope="module")
def builtins(qwen: List[str]) -> Dict[str, Set[str]]:
    seen = QwenProject(None, "empty").ask(qwen, "hello")["init"]
    return {"agents": set(seen["agents"]), "slash_commands": set(seen["slash_commands"])}


@pytest.mark.parametrize("source", ("registry", "project"))
def test_qwen_loads_every_generated_agent_skill_command_rule_and_agents_md(qwen, builtins, source):
    build = client_build(source, "qwen")
    qp = QwenProject(build.out, source)
    qwen_dir = qp.project / ".qwen"
    commands = sorted((qwen_dir / "commands").glob("*.md"))
    assert sorted(c.stem for c in commands) == sorted(build.generated("command")), "commands != .qwen/commands"
    runs = [(c, qp.ask(qwen, f"/{c.stem} {ARGS}")) for c in commands] or [(None, qp.ask(qwen, "hello"))]
    agents = _names(qwen_dir, "agents/*.md")
    skills = _names(qwen_dir, "skills/*/SKILL.md")
    hidden = {str(fm["name"]) for fm in (split_frontmatter(p.read_text(encoding="utf-8"))[0]
                                         for p in qwen_dir.glob("skills/*/SKILL.md"))
              if fm.get("disable-model-invocation") is True}
    baseline = sorted(f".qwen/rules/{r.name}" for r in (qwen_dir / "rules").glob("*.md")
                      if "paths" not in split_frontmatter(r.read_text(encoding="utf-8"))[0])
    agents_md = qp.project / "AGENTS.md"
    for command, seen in runs:
        init = seen["init"]
        assert set(init["agents"]) - builtins["agents"] == agents, "agents Qwen Code lists != .qwen/agents"
        # A project skill named like a bundled one (review) replaces it: the names are compared
        # without the built-ins, and the skills the model sees by their location.
        own = skills | {c.stem for c in commands}
        assert set(init["slash_commands"]) - builtins["slash_commands"] == own - builtins["slash_commands"]
        assert own <= set(init["slash_commands"])
        listed = {n for n, where in _LISTED.findall(" ".join(_text(m["content"]) for m in seen["request"]["messages"][1:]))
                  if where == "project"}
        assert listed == skills - hidden, "skills the model is offered != .qwen/skills without disable-model-invocation"
        system = _text(seen["request"]["messages"][0]["content"])
        blocks = {(kind, where): text for kind, where, text in _BLOCK.findall(system)}
        assert sorted(w for k, w in blocks if k == "Rule") == baseline, "rules in the prompt != rules without paths:"
        if agents_md.exists():
            assert blocks[("Context", "AGENTS.md")].strip() == agents_md.read_text(encoding="utf-8").strip()
        if command is not None:
            body = split_frontmatter(command.read_text(encoding="utf-8"))[1].strip().replace("{{args}}", ARGS)
            assert _text(seen["request"]["messages"][-1]["content"]).endswith(body), command.name
        assert "Skipped invalid file" not in seen["log"] and "Failed to parse" not in seen["log"], seen["log"][-3000:]
        handlers = sum(len(g["hooks"]) for groups in (qp.settings.get("hooks") or {}).values() for g in groups)
        assert f"Hook registry initialized with {handlers} hook entries" in seen["log"]
        assert sorted(s["name"] for s in init["mcp_servers"]) == sorted(qp.servers)
    assert agents == set(build.generated("agent")) and skills >= set(build.generated("skill"))
    qp.assert_offline()


@pytest.mark.parametrize("source", ("registry", "project"))
def test_qwen_mcp_list_lists_every_generated_server(qwen, source):
    build = client_build(source, "qwen")
    qp = QwenProject(build.out, f"mcp-{source}")
    assert sorted(qp.servers) == sorted(build.generated("mcp"))
    proc = qp.run(qwen, "mcp", "list")
    assert proc.returncode == 0, describe(proc)
    listed = {}
    for line in strip_ansi(proc.stdout + proc.stderr).splitlines():
        m = re.match(r"^\S+ ([^:\s]+): (.*) \((\w+)\) - (.*)$", line.strip())
        if m:
            listed[m.group(1)] = (m.group(2), m.group(3))
    assert sorted(listed) == sorted(qp.servers), describe(proc)
    for name, entry in qp.servers.items():
        target, transport = listed[name]
        if "command" in entry:
            assert (target, transport) == (" ".join([entry["command"], *entry.get("args", [])]), "stdio"), name
        else:
            assert (target, transport) == ((entry.get("httpUrl") or entry["url"]), "http" if "httpUrl" in entry
                                           else "sse"), name
    qp.assert_offline()


@lru_cache(maxsize=None)
def _extension_build() -> Path:
    """examples/registry built with --layout plugin for qwen, once per session."""
    out = make_temp_dir("agentrc-qwen-extension-") / "agentrc-plugin"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRC_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", "examples/registry", "--client", "qwen",
                           "--layout", "plugin", "--out", str(out), "--no-cache"], cwd=str(ROOT), env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    assert proc.returncode == 0, describe(proc)
    return out


def test_qwen_installs_the_extension_and_loads_everything_in_it(qwen, builtins):
    ext = _extension_build()
    manifest = json.loads((ext / "qwen-extension.json").read_text(encoding="utf-8"))
    qp = QwenProject(None, "extension")
    qp.servers = manifest.get("mcpServers") or {}
    qp.shims = write_shims(qp.base / "shims", stdio_commands(qp.servers), qp.shim_log)
    proc = qp.run(qwen, "extensions", "install", str(ext), "--consent")
    assert proc.returncode == 0 and "installed successfully" in proc.stdout + proc.stderr, describe(proc)
    name = manifest["name"]
    commands = sorted((ext / "commands").glob("*.md"))
    assert commands
    for command in commands:
        seen = qp.ask(qwen, f"/{command.stem} {ARGS}")
        init = seen["init"]
        assert set(init["agents"]) - builtins["agents"] == _names(ext, "agents/*.md")
        skills = {f"{name}:{s}" for s in _names(ext, "skills/*/SKILL.md")}
        assert set(init["slash_commands"]) - builtins["slash_commands"] == skills | {c.stem for c in commands}
        assert sorted(s["name"] for s in init["mcp_servers"]) == sorted(qp.servers)
        system = _text(seen["request"]["messages"][0]["content"])
        blocks = {where: text for kind, where, text in _BLOCK.findall(system) if kind == "Context"}
        context = [t for w, t in blocks.items() if w.endswith(f"/extensions/{name}/QWEN.md")]
        assert [c.strip() for c in context] == [(ext / "QWEN.md").read_text(encoding="utf-8").strip()]
        body = split_frontmatter(command.read_text(encoding="utf-8"))[1].strip().replace("{{args}}", ARGS)
        assert _text(seen["request"]["messages"][-1]["content"]).endswith(body), command.name
        hooks = json.loads((ext / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
        handlers = sum(len(g["hooks"]) for groups in hooks.values() for g in groups)
        assert f"Hook registry initialized with {handlers} hook entries" in seen["log"]
        assert "Skipped invalid file" not in seen["log"] and "Failed to parse" not in seen["log"]
    assert set(qp.sink.connects()) <= set(http_hosts(qp.servers)), qp.sink.connects()
    started = {line.split()[0] for line in read_lines(qp.shim_log)}
    assert started <= set(stdio_commands(qp.servers)), started
