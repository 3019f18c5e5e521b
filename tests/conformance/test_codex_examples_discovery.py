"""Codex CLI (the real CLI, offline, isolated CODEX_HOME) discovers what agentrc generates for
it, for both examples and compared item by item with the build's fidelity report.

test_codex_discovery.py (the adapter's own suite) checks examples/registry against fixed
names, agent-file warnings and the explicit-only policy; this file runs both examples through
the shared offline harness (offline_clients.py: no credentials, shims, a proxy sink whose log
must stay empty) and derives every expectation from what agentrc reports it generated.

examples/registry and examples/project are built for `--client codex` and each copied into a
git project that $CODEX_HOME/config.toml marks trusted (`[projects."<abs path>"] trust_level =
"trusted"`): Codex skips a project's .codex/ (MCP servers, hooks, agents) silently otherwise.

* MCP servers: `codex mcp list --json` (reads the config, never starts a server).
* Skills and hooks: `codex app-server` over stdio JSON-RPC, `skills/list` and `hooks/list`,
  which also return the parse errors and warnings of every file (an unknown hook event is
  dropped silently, so the hooks are compared one by one).
* Agents (and AGENTS.md): `codex debug prompt-input` renders the model input without calling
  a model; custom agents are the "Available roles" of the spawn_agent tool. It starts the
  project's MCP servers to list their tools, so it runs with every generated server disabled
  (`-c mcp_servers.<name>.enabled=false`); the servers themselves are checked by `mcp list`.

Every run has a from-scratch environment (no credentials), stdin closed, stdio server
commands shadowed by shims and a local sink as HTTP(S) proxy; the tests assert nothing reached
either.
"""

from __future__ import annotations

import json
import re
import weakref
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import yaml

from .conformance_helpers import NPM_MODULES, check_npm_package, describe, read_frontmatter, run, tool_missing
from .offline_clients import (
    ClientBuild,
    JsonRpcSession,
    LocalSink,
    cli_argv,
    client_build,
    copy_project,
    empty_project,
    flatten_hooks,
    isolated_dirs,
    load_toml,
    offline_env,
    read_lines,
    stdio_commands,
    write_shims,
)

PACKAGE = "@openai/codex"
SOURCES = ("registry", "project")

# Codex's hooks.json events (Claude's names) and the camelCase names hooks/list reports.
_EVENT_NAMES = {"PreToolUse": "preToolUse", "PostToolUse": "postToolUse", "SessionStart": "sessionStart",
                "UserPromptSubmit": "userPromptSubmit", "Stop": "stop", "PermissionRequest": "permissionRequest",
                "SubagentStop": "subagentStop", "Notification": "notification", "PreCompact": "preCompact",
                "SessionEnd": "sessionEnd"}


@pytest.fixture(scope="module")
def codex() -> List[str]:
    check_npm_package(PACKAGE)  # the pinned version is installed (tools/install.sh ran --version)
    path = NPM_MODULES / ".bin" / "codex"
    if not path.exists():
        tool_missing(f"{path} is missing")
    return cli_argv(path)


def _home_config(project: Path, sink: LocalSink) -> str:
    """$CODEX_HOME/config.toml: trust `project`, and keep Codex's own traffic local.

    * Plugins are off: with them on, `codex app-server` fetches the curated plugin marketplace
      from github.com at start (seen as CONNECT github.com:443 at the proxy sink).
    * The model provider is the local sink: with the default provider, `codex debug
      prompt-input` opens a connection to api.openai.com (CONNECT api.openai.com:443 in 3 of 4
      runs) although it sends no request.

    Project skills, hooks, agents and MCP servers depend on neither."""
    return (
        'model_provider = "agentrc-sink"\n\n'
        "[features]\nplugins = false\n\n"
        f'[model_providers.agentrc-sink]\nname = "agentrc sink"\nbase_url = "{sink.url}/v1"\nwire_api = "responses"\n\n'
        f'[projects.{json.dumps(str(project))}]\ntrust_level = "trusted"\n'
    )


class CodexProject:
    """A trusted copy of one build, with its own CODEX_HOME, shims and proxy sink."""

    def __init__(self, build: ClientBuild):
        self.build = build
        self.base, self.home, self.tmp = isolated_dirs(f"agentrc-codex-{build.source}-")
        self.project = copy_project(build.out, self.base / "project")
        self.codex_home = self.home / ".codex"
        self.codex_home.mkdir()
        self.proxy = LocalSink()
        weakref.finalize(self, self.proxy.close)  # shut the sink down with the test's project
        (self.codex_home / "config.toml").write_text(_home_config(self.project, self.proxy), encoding="utf-8")
        config = self.project / ".codex" / "config.toml"
        self.servers: Dict[str, Dict[str, Any]] = load_toml(config).get("mcp_servers", {}) if config.exists() else {}
        self.shim_log = self.base / "shims.log"
        self.shims = write_shims(self.base / "shims", stdio_commands(self.servers), self.shim_log)

    def env(self) -> Dict[str, str]:
        return offline_env(self.home, self.tmp, shims=self.shims, proxy=self.proxy,
                           extra={"CODEX_HOME": str(self.codex_home), "RUST_LOG": "error"})

    def run(self, codex: List[str], *args: str):
        return run([*codex, *args], self.project, self.env(), timeout=60)

    def assert_offline(self) -> None:
        assert self.proxy.requests == [], f"Codex tried to reach the network: {self.proxy.requests}"
        assert read_lines(self.shim_log) == [], f"Codex started MCP server commands: {read_lines(self.shim_log)}"


def _stderr_problems(stderr: str) -> List[str]:
    """stderr lines that report a problem, minus the known harmless notice about helper
    binaries under a temporary directory."""
    return [l for l in stderr.splitlines()
            if re.search(r"\b(error|warn(ing)?)\b", l, re.I) and "could not create PATH aliases" not in l]


@pytest.mark.parametrize("source", SOURCES)
def test_codex_mcp_list_lists_every_generated_server(codex: List[str], source: str):
    build = client_build(source, "codex")
    cx = CodexProject(build)
    expected = cx.servers
    assert sorted(expected) == sorted(build.generated("mcp")), (sorted(expected), build.generated("mcp"))
    assert expected, f"examples/{source} should exercise MCP servers"

    proc = cx.run(codex, "mcp", "list", "--json")
    cx.assert_offline()

    assert proc.returncode == 0, describe(proc)
    assert _stderr_problems(proc.stderr) == [], describe(proc)
    listed = {s["name"]: s for s in json.loads(proc.stdout)}
    assert sorted(listed) == sorted(expected), describe(proc)
    for name, conf in expected.items():
        got = listed[name]
        assert got["enabled"] is True and got.get("disabled_reason") is None, got
        transport = got["transport"]
        if "url" in conf:
            assert transport["type"] == "streamable_http", got
            assert transport["url"] == conf["url"], got
            assert transport.get("bearer_token_env_var") == conf.get("bearer_token_env_var"), got
        else:
            assert transport["type"] == "stdio", got
            assert transport["command"] == conf["command"], got
            assert (transport.get("args") or []) == conf.get("args", []), got
            assert (transport.get("env") or {}) == conf.get("env", {}), got
            assert (transport.get("env_vars") or []) == conf.get("env_vars", []), got


def _app_server(codex: List[str], cx: CodexProject, *calls: Tuple[str, Dict[str, Any]]) -> List[Dict[str, Any]]:
    with JsonRpcSession([*codex, "app-server"], cx.project, cx.env(), cx.base / "app-server.stderr", deadline_s=30) as rpc:
        init = rpc.request("initialize", {"clientInfo": {"name": "agentrc-conformance", "version": "0"}})
        assert "result" in init, init
        rpc.notify("initialized")
        replies = []
        for method, params in calls:
            reply = rpc.request(method, params)
            assert "result" in reply, f"{method}: {reply}\nstderr:\n{rpc.stderr()}"
            replies.append(reply["result"])
        # Start-up config problems (e.g. "Ignoring malformed agent role definition ... <file>"
        # for an agent TOML Codex rejects) arrive as configWarning notifications. Those about
        # the machine (e.g. "could not find bubblewrap on PATH") name no project file.
        warnings = [n.get("params") for n in rpc.notifications if n.get("method") == "configWarning"]
        about_project = [w for w in warnings if str(cx.project) in json.dumps(w) or "agent role" in json.dumps(w)]
        assert about_project == [], about_project
        return replies


@pytest.mark.parametrize("source", SOURCES)
def test_codex_app_server_lists_every_generated_skill_and_hook(codex: List[str], source: str):
    build = client_build(source, "codex")
    cx = CodexProject(build)
    project = str(cx.project)

    skills = build.generated_skills(".agents/skills")
    written = sorted(p.parent.name for p in (cx.project / ".agents" / "skills").glob("*/SKILL.md"))
    assert sorted(Path(d).name for d in skills.values()) == written, (skills, written)
    names = {str(read_frontmatter(cx.project / d / "SKILL.md").get("name")): d for d in skills.values()}
    assert sorted(names) == sorted(skills), "skill frontmatter names != item names"
    hooks_file = cx.project / ".codex" / "hooks.json"
    hooks = flatten_hooks(json.loads(hooks_file.read_text(encoding="utf-8"))["hooks"]) if hooks_file.exists() else []
    assert skills and hooks and build.generated("hook"), f"examples/{source} should exercise skills and hooks"

    skill_result, hook_result = _app_server(
        codex, cx,
        ("skills/list", {"cwds": [project], "forceReload": True}),
        ("hooks/list", {"cwds": [project]}),
    )
    cx.assert_offline()

    (sk,) = skill_result["data"]
    assert sk["errors"] == [], sk["errors"]
    repo = {s["name"]: s for s in sk["skills"] if s.get("scope") == "repo"}
    assert sorted(repo) == sorted(names), sorted(repo)
    for name, d in names.items():
        s = repo[name]
        assert Path(s["path"]).resolve() == cx.project / d / "SKILL.md", s
        assert s["enabled"] is True, s
        assert s["description"] == read_frontmatter(cx.project / d / "SKILL.md").get("description"), s

    (hk,) = hook_result["data"]
    assert hk["errors"] == [] and hk["warnings"] == [], (hk["errors"], hk["warnings"])
    found = sorted((h["eventName"], h.get("matcher"), h["handlerType"], h["command"], h.get("timeoutSec"))
                   for h in hk["hooks"] if h.get("source") == "project")
    want = sorted((_EVENT_NAMES.get(h["event"], h["event"]), h["matcher"], h["type"], h["command"], h.get("timeout", 600))
                  for h in hooks)
    assert found == want, json.dumps(hk["hooks"], indent=1)
    assert all(Path(h["sourcePath"]).resolve() == hooks_file for h in hk["hooks"] if h.get("source") == "project")


def _prompt_input(codex: List[str], cx: CodexProject) -> List[Dict[str, Any]]:
    # `-c` splits the key path on dots and takes no quoted keys: bare TOML keys only.
    bad = [n for n in cx.servers if not re.fullmatch(r"[A-Za-z0-9_-]+", n)]
    assert not bad, f"cannot disable MCP servers {bad} with `codex -c` (not bare TOML keys)"
    off = [a for name in sorted(cx.servers) for a in ("-c", f"mcp_servers.{name}.enabled=false")]
    proc = cx.run(codex, "debug", "prompt-input", *off, "x")
    assert proc.returncode == 0, describe(proc)
    assert _stderr_problems(proc.stderr) == [], describe(proc)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        pytest.fail("codex debug prompt-input printed no JSON:\n" + describe(proc), pytrace=False)
        raise


def _roles(items: List[Dict[str, Any]]) -> Dict[str, str]:
    """{role: description} from the "Available roles" of the spawn_agent tool's agent_type."""
    found: List[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("name") == "spawn_agent":
                desc = (((node.get("parameters") or {}).get("properties") or {}).get("agent_type") or {}).get("description")
                if isinstance(desc, str):
                    found.append(desc)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(items)
    assert len(found) == 1 and "Available roles:\n" in found[0], f"no spawn_agent agent_type roles in prompt-input: {found}"
    roles = found[0].split("Available roles:\n", 1)[1]
    return {name: body.strip() for name, body in re.findall(r"^([\w.-]+): \{\n(.*?)\n\}$", roles, re.M | re.S)}


_BASELINE_AGENT = "agentrc-baseline-probe"


@pytest.fixture(scope="module")
def codex_builtin_roles(codex: List[str]) -> Dict[str, str]:
    """Codex's built-in roles. They are listed only when at least one custom agent exists, so
    the empty project gets one user agent ($CODEX_HOME/agents), left out of the result."""
    base, home, tmp = isolated_dirs("agentrc-codex-empty-")
    (home / ".codex" / "agents").mkdir(parents=True)
    (home / ".codex" / "agents" / "probe.toml").write_text(
        f'name = "{_BASELINE_AGENT}"\ndescription = "probe"\ndeveloper_instructions = "probe"\n', encoding="utf-8")
    project = empty_project(base / "project")
    with LocalSink() as proxy:
        (home / ".codex" / "config.toml").write_text(_home_config(project, proxy), encoding="utf-8")
        proc = run([*codex, "debug", "prompt-input", "x"], project,
                   offline_env(home, tmp, proxy=proxy, extra={"CODEX_HOME": str(home / ".codex")}), timeout=60)
        assert proxy.requests == [], f"Codex tried to reach the network: {proxy.requests}"
    assert proc.returncode == 0, describe(proc)
    roles = _roles(json.loads(proc.stdout))
    assert _BASELINE_AGENT in roles, roles
    del roles[_BASELINE_AGENT]
    return roles


@pytest.mark.parametrize("source", SOURCES)
def test_codex_prompt_input_lists_every_generated_agent(codex: List[str], codex_builtin_roles: Dict[str, str], source: str):
    build = client_build(source, "codex")
    cx = CodexProject(build)
    agents: Dict[str, Dict[str, Any]] = {}
    for name, outputs in build.generated("agent").items():
        tomls = [o for o in outputs if o.startswith(".codex/agents/") and o.endswith(".toml")]
        assert len(tomls) == 1, (name, outputs)
        agents[name] = load_toml(cx.project / tomls[0])
        assert agents[name].get("name") == name, (name, agents[name])
    assert sorted(p.stem for p in (cx.project / ".codex" / "agents").glob("*.toml")) == sorted(agents)
    assert agents, f"examples/{source} should exercise agents"

    items = _prompt_input(codex, cx)
    cx.assert_offline()

    roles = _roles(items)
    assert set(agents) <= set(roles), f"agents missing from spawn_agent roles: {sorted(set(agents) - set(roles))}"
    assert set(roles) - set(agents) <= set(codex_builtin_roles), sorted(set(roles) - set(agents))
    for name, conf in agents.items():
        assert roles[name] == conf["description"].strip(), (name, roles[name])
    # The model sees the project skills that allow implicit invocation: a skill whose
    # agents/openai.yaml says `policy: allow_implicit_invocation: false` (what agentrc writes for
    # commands and for skills with disable-model-invocation) is left out of the list.
    skills = build.generated_skills(".agents/skills")
    implicit = sorted(name for name, d in skills.items() if _allows_implicit(cx.project / d))
    assert _prompt_skills(items, cx.project / ".agents" / "skills") == implicit
    # The generated AGENTS.md reaches the model input too (Codex reads it untrusted or not).
    if (cx.project / "AGENTS.md").exists():
        assert f"# AGENTS.md instructions for {cx.project}" in json.dumps(items), "AGENTS.md not in prompt-input"


def _allows_implicit(skill_dir: Path) -> bool:
    sidecar = skill_dir / "agents" / "openai.yaml"
    if not sidecar.exists():
        return True
    policy = (yaml.safe_load(sidecar.read_text(encoding="utf-8")) or {}).get("policy") or {}
    return policy.get("allow_implicit_invocation", True) is not False


def _prompt_skills(items: List[Dict[str, Any]], root: Path) -> List[str]:
    """Names of the skills under `root` in prompt-input's <skills_instructions>."""
    for text in (c.get("text", "") for i in items for c in i.get("content") or [] if isinstance(c, dict)):
        if "<skills_instructions>" not in text:
            continue
        roots = {label: Path(path).resolve() for label, path in re.findall(r"^- `(r\d+)` = `(.*)`$", text, re.M)}
        entries = re.findall(r"^- ([\w:.-]+): .*?\(file: (r\d+)/\S+\)$", text, re.M)
        return sorted(name for name, label in entries if roots.get(label) == root.resolve())
    pytest.fail("no <skills_instructions> in prompt-input", pytrace=False)
    raise AssertionError("unreachable")
