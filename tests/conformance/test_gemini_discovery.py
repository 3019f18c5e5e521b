"""Gemini CLI (the real CLI, offline, isolated home) discovers what agentrc generates for it.

examples/registry and examples/project are built for `--client gemini` and each copied into
a git project. Every run: HOME and GEMINI_CLI_HOME in the test's temp dir, TMPDIR there too
(Gemini writes error reports into it), the workspace trusted with GEMINI_CLI_TRUST_WORKSPACE=true,
usage statistics off, stdio MCP server commands shadowed by shims, and a local sink as the
HTTP(S) proxy. The user settings exclude the generated MCP servers (`mcp.excluded`), so no
command starts any of them: `mcp list` still lists each one, with its command or URL, as
"Blocked", and `skills list` (which starts every allowed server) stays offline.

* MCP servers: `gemini mcp list` (text on stderr; no JSON output exists).
* Skills, hooks (count and events) and agent files: `gemini --debug skills list`; the debug
  stderr says "Hook registry initialized with N hook entries", "Invalid hook event name: ...",
  and "Agent loading error: ..." for agent files it rejects.
* Agents, commands, hook names, context files: there is no listing command. `gemini -p
  "/<command> <args>"` with a dummy API key and GOOGLE_GEMINI_BASE_URL pointing at a local
  sink sends its first model request there: the request's system instruction lists the
  registered subagents and skills, its last user turn is the command's prompt expanded
  locally from .gemini/commands/<name>.toml, its contents carry the context files, and stderr
  names the project hooks it detected. Project agents register only when acknowledged, so the
  home gets ~/.gemini/acknowledgments/agents.json with each generated agent's sha256, as a
  person accepting them would. About 3-4 s per run, one run per command.
"""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from .conformance_helpers import NPM_MODULES, check_npm_package, describe, read_frontmatter, run, strip_ansi, tool_missing
from .offline_clients import (
    ClientBuild,
    LocalSink,
    cli_argv,
    client_build,
    copy_project,
    empty_project,
    isolated_dirs,
    load_toml,
    offline_env,
    read_lines,
    stdio_commands,
    write_shims,
)

PACKAGE = "@google/gemini-cli"
SOURCES = ("registry", "project")
COMMAND_ARGS = "AGENTRC-4242"


@pytest.fixture(scope="module")
def gemini() -> List[str]:
    check_npm_package(PACKAGE)  # the pinned version is installed (tools/install.sh ran --version)
    path = NPM_MODULES / ".bin" / "gemini"
    if not path.exists():
        tool_missing(f"{path} is missing")
    return cli_argv(path)


class GeminiProject:
    """A copy of one build (or an empty project) with its own home, shims and proxy sink."""

    def __init__(self, build: Optional[ClientBuild], name: str):
        self.base, self.home, self.tmp = isolated_dirs(f"agentrc-gemini-{name}-")
        if build is None:
            self.project = empty_project(self.base / "project")
        else:
            self.project = copy_project(build.out, self.base / "project")
        settings = self.project / ".gemini" / "settings.json"
        self.settings: Dict[str, Any] = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
        self.servers: Dict[str, Dict[str, Any]] = self.settings.get("mcpServers") or {}
        self.shim_log = self.base / "shims.log"
        self.shims = write_shims(self.base / "shims", stdio_commands(self.servers), self.shim_log)
        self.proxy = LocalSink()
        weakref.finalize(self, self.proxy.close)  # shut the sink down with the test's project
        user = self.home / ".gemini"
        user.mkdir()
        (user / "settings.json").write_text(json.dumps({
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "mcp": {"excluded": sorted(self.servers)},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
        }, indent=2), encoding="utf-8")

    def env(self, **extra: str) -> Dict[str, str]:
        env = offline_env(self.home, self.tmp, shims=self.shims, proxy=self.proxy, extra={
            "GEMINI_CLI_HOME": str(self.home),
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        })
        env.update(extra)
        return env

    def run(self, gemini: List[str], *args: str, **extra: str):
        return run([*gemini, *args], self.project, self.env(**extra), timeout=60)

    def acknowledge_agents(self) -> Dict[str, str]:
        """Accept every project agent as a person would: ~/.gemini/acknowledgments/agents.json
        maps the project to {agent name: sha256 of the file}. Returns {name: relative path}."""
        ack: Dict[str, str] = {}
        paths: Dict[str, str] = {}
        for f in sorted((self.project / ".gemini" / "agents").glob("*.md")):
            name = str(read_frontmatter(f).get("name"))
            ack[name] = hashlib.sha256(f.read_text(encoding="utf-8").encode("utf-8")).hexdigest()
            paths[name] = f.relative_to(self.project).as_posix()
        acks = self.home / ".gemini" / "acknowledgments"
        acks.mkdir(exist_ok=True)
        (acks / "agents.json").write_text(json.dumps({str(self.project): ack}), encoding="utf-8")
        return paths

    def assert_offline(self) -> None:
        assert self.proxy.requests == [], f"Gemini CLI tried to reach the network: {self.proxy.requests}"
        assert read_lines(self.shim_log) == [], f"Gemini CLI started MCP server commands: {read_lines(self.shim_log)}"


def _hook_entries(settings: Dict[str, Any]) -> List[Dict[str, Any]]:
    entries = []
    for event, groups in (settings.get("hooks") or {}).items():
        for group in groups:
            for hook in group.get("hooks", []):
                entries.append(dict(hook, event=event, matcher=group.get("matcher")))
    return entries


_MCP_LINE = re.compile(r"^\S+ (?P<name>[^:\s]+)(?: \(from [^)]+\))?: (?P<target>.*) \((?P<transport>\w+)\) - (?P<status>\w+)$")


@pytest.mark.parametrize("source", SOURCES)
def test_gemini_mcp_list_lists_every_generated_server(gemini: List[str], source: str):
    build = client_build(source, "gemini")
    gp = GeminiProject(build, f"mcp-{source}")
    assert sorted(gp.servers) == sorted(build.generated("mcp")), (sorted(gp.servers), build.generated("mcp"))
    assert gp.servers, f"examples/{source} should exercise MCP servers"

    proc = gp.run(gemini, "mcp", "list")
    gp.assert_offline()

    assert proc.returncode == 0, describe(proc)
    text = strip_ansi(proc.stdout + proc.stderr)
    listed = {m.group("name"): m for m in map(_MCP_LINE.match, text.splitlines()) if m}
    assert sorted(listed) == sorted(gp.servers), describe(proc)
    for name, conf in gp.servers.items():
        m = listed[name]
        assert m.group("status") == "Blocked", describe(proc)  # excluded by the test's user settings
        if conf.get("url") or conf.get("httpUrl"):
            assert (m.group("target").strip(), m.group("transport")) == (conf.get("httpUrl") or conf["url"], "http"), m.group(0)
        else:
            want = " ".join([conf["command"], *conf.get("args", [])])
            assert (m.group("target").strip(), m.group("transport")) == (want, "stdio"), m.group(0)


_SKILL = re.compile(r"^(\S+) \[(Enabled|Disabled)\]\n  Description: (.*)\n  Location:\s+(.*)$", re.M)


@pytest.mark.parametrize("source", SOURCES)
def test_gemini_skills_list_lists_every_generated_skill_and_loads_every_hook(gemini: List[str], source: str):
    build = client_build(source, "gemini")
    gp = GeminiProject(build, f"skills-{source}")
    skills = build.generated_skills(".agents/skills")
    written = sorted(p.parent.name for p in (gp.project / ".agents" / "skills").glob("*/SKILL.md"))
    assert sorted(Path(d).name for d in skills.values()) == written, (skills, written)
    hooks = _hook_entries(gp.settings)
    assert sorted({h.get("name") for h in hooks}) == sorted(build.generated("hook")), (hooks, build.generated("hook"))
    assert skills and hooks, f"examples/{source} should exercise skills and hooks"

    proc = gp.run(gemini, "--debug", "skills", "list")
    gp.assert_offline()

    assert proc.returncode == 0, describe(proc)
    found = {name: (state, desc, loc) for name, state, desc, loc in _SKILL.findall(strip_ansi(proc.stdout))}
    assert sorted(found) == sorted(skills), describe(proc)
    for name, d in skills.items():
        state, desc, loc = found[name]
        assert state == "Enabled", found[name]
        assert Path(loc.strip()).resolve() == gp.project / d / "SKILL.md", found[name]
        assert desc == str(read_frontmatter(gp.project / d / "SKILL.md").get("description")).strip(), found[name]
    err = strip_ansi(proc.stderr)
    assert "Invalid hook event name" not in err, describe(proc)
    assert "Agent loading error" not in err, describe(proc)
    m = re.search(r"Hook registry initialized with (\d+) hook entries", err)
    assert m, "no `Hook registry initialized` line in gemini --debug output:\n" + describe(proc)
    assert int(m.group(1)) == len(hooks), describe(proc)


def _model_request(gemini: List[str], gp: GeminiProject, prompt: str) -> Tuple[Dict[str, Any], str, Any]:
    """Run `gemini -p PROMPT` against a local model sink; (the request body that carries the
    tools, i.e. the main turn; its system instruction text; the finished process)."""
    with LocalSink() as model:
        proc = gp.run(gemini, "--approval-mode", "yolo", "-p", prompt, "-o", "json",
                      GEMINI_API_KEY="agentrc-dummy-not-a-key", GOOGLE_GEMINI_BASE_URL=model.url)
        requests = list(model.requests)
    gp.assert_offline()
    bodies = [r["body"] for r in requests if isinstance(r.get("body"), dict) and r["body"].get("tools")]
    assert bodies, f"no model request with tools reached the local sink ({len(requests)} requests):\n" + describe(proc)
    body = bodies[0]
    si = body.get("systemInstruction") or {}
    text = "\n".join(p.get("text", "") for p in si.get("parts", [])) if isinstance(si, dict) else str(si)
    return body, text, proc


def _last_user_text(body: Dict[str, Any]) -> str:
    users = [c for c in body.get("contents", []) if c.get("role") == "user"]
    assert users, body.get("contents")
    return (users[-1]["parts"][-1].get("text") or "").strip()


@pytest.fixture(scope="module")
def gemini_builtin_agents(gemini: List[str]) -> List[str]:
    gp = GeminiProject(None, "empty")
    _, text, _ = _model_request(gemini, gp, "x")
    agents = re.findall(r"<subagent>\s*<name>(.*?)</name>", text)
    assert agents, "no <subagent> in the system instruction of an empty project"
    return agents


def _commands(project: Path) -> Dict[str, Path]:
    """{slash command: toml file}: commands/a/b.toml is /a:b."""
    root = project / ".gemini" / "commands"
    return {":".join(p.relative_to(root).with_suffix("").parts): p for p in sorted(root.rglob("*.toml"))}


@pytest.mark.parametrize("source", SOURCES)
def test_gemini_model_request_has_every_generated_agent_command_and_hook(
    gemini: List[str], gemini_builtin_agents: List[str], source: str
):
    build = client_build(source, "gemini")
    gp = GeminiProject(build, f"request-{source}")
    agents = gp.acknowledge_agents()
    assert sorted(agents) == sorted(build.generated("agent")), (agents, build.generated("agent"))
    commands = _commands(gp.project)
    assert sorted(commands) == sorted(build.generated("command")), (commands, build.generated("command"))
    hook_names = sorted(h.get("name") for h in _hook_entries(gp.settings))
    assert agents and commands and hook_names, f"examples/{source} should exercise agents, commands and hooks"

    for i, (name, path) in enumerate(sorted(commands.items())):
        body, text, proc = _model_request(gemini, gp, f"/{name} {COMMAND_ARGS}")
        prompt = str(load_toml(path)["prompt"]).strip()
        got = _last_user_text(body)
        if "{{args}}" in prompt:
            assert got == prompt.replace("{{args}}", COMMAND_ARGS), f"/{name} expanded to:\n{got}\n" + describe(proc)
        else:
            assert got.startswith(prompt) and COMMAND_ARGS in got, f"/{name} expanded to:\n{got}\n" + describe(proc)
        if i:
            continue  # the session's registrations are the same on every run
        subagents = re.findall(r"<subagent>\s*<name>(.*?)</name>", text)
        assert set(agents) <= set(subagents), f"agents missing: {sorted(set(agents) - set(subagents))}"
        assert set(subagents) - set(agents) <= set(gemini_builtin_agents), sorted(set(subagents) - set(agents))
        locations = re.findall(r"<skill>\s*<name>(.*?)</name>.*?<location>(.*?)</location>", text, re.S)
        skills = sorted(n for n, loc in locations if Path(loc).resolve().is_relative_to(gp.project))
        assert skills == sorted(build.generated_skills(".agents/skills")), skills
        err = strip_ansi(proc.stderr)
        m = re.search(r"project-level hooks have been detected in this workspace:\n((?:  - .*\n?)+)", err)
        assert m, "no `project-level hooks have been detected` notice:\n" + describe(proc)
        assert sorted(re.findall(r"^  - (.*)$", m.group(1), re.M)) == hook_names, describe(proc)
        context = re.findall(r"Context from: (\S+) ---", json.dumps(body.get("contents")))
        if (gp.project / "AGENTS.md").exists():
            assert str(gp.project / "AGENTS.md") in context, context
