"""Codex and Gemini CLI (the real CLIs, offline, isolated homes) install what `agentrc build
--layout plugin` writes for them, and list the components agentrc wrote.

examples/registry is built with `--bundle api` (its closure holds rules, skills, commands, an
agent, two hooks, a context item and both MCP transports) as a Codex plugin and as a Gemini CLI
extension. Every CLI run has a private home, TMPDIR, stdin closed, the stdio MCP server
commands shadowed by shims that exit at once, and a local sink as the HTTP(S) proxy.

Codex 0.171 (plugins on, the remote plugin catalog off):

* `codex plugin marketplace add DIR` and `codex plugin add api@api-marketplace` install the
  plugin from the build output; `codex plugin list --json` shows it installed and enabled.
* `codex mcp list --json` lists the plugin's .mcp.json servers (it never starts one).
* `codex debug prompt-input` (renders the model input, calls no model) lists the plugin's
  skills as `api:<name>`: every skills/ directory except the explicit-only ones (commands,
  agents/openai.yaml `allow_implicit_invocation: false`).
* None of these reaches the proxy. `codex app-server`, the only command that lists hooks and
  skill errors, fetches the curated plugin marketplace from github.com whenever plugins are
  on, so the plugin's skills/ and hooks/hooks.json are also checked by the app server with
  plugins off, as a trusted project's .agents/skills and .codex/hooks.json (the same skill
  loader and the same hooks-file schema): Codex's own parse of the files, entry by entry.

Gemini CLI 0.61:

* `gemini extensions validate DIR`, then `gemini extensions link DIR --consent`.
* `gemini extensions list -o json` (on stderr): version, context file, MCP servers, hooks
  (with ${extensionPath} replaced), skills and agents equal the files agentrc wrote.
* `gemini -p "/<command> ARGS"` with a dummy key and GOOGLE_GEMINI_BASE_URL at a local sink
  expands each extension command locally; the first model request also lists the extension's
  agents and skills and carries its GEMINI.md.
* `extensions link` sends one usage-statistics event to play.googleapis.com even with
  `privacy.usageStatisticsEnabled: false` (its ExtensionManager builds a telemetry config
  without the user's setting): the proxy refuses that CONNECT, and it is the only request any
  run makes (asserted).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from .conformance_helpers import (NPM_MODULES, REGISTRY, ROOT, check_npm_package, describe, make_temp_dir,
                                  read_frontmatter, run, strip_ansi, tool_missing)
from .offline_clients import (JsonRpcSession, LocalSink, cli_argv, empty_project, isolated_dirs, load_toml,
                              offline_env, read_lines, stdio_commands, write_shims)

BUNDLE = "api"
ARGS = "AGENTRC-4242"


def _build(client: str) -> Tuple[Path, Dict[str, Any]]:
    """examples/registry --bundle api as `client`'s plugin, and the fidelity report."""
    base = make_temp_dir(f"agentrc-plugin-{client}-")
    out, report = base / BUNDLE, base / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRC_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", REGISTRY.relative_to(ROOT).as_posix(),
                           "--layout", "plugin", "--client", client, "--bundle", BUNDLE, "--out", str(out),
                           "--report", str(report), "--no-cache"],
                          cwd=str(ROOT), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, describe(proc)
    return out, json.loads(report.read_text(encoding="utf-8"))


def _generated(report: Dict[str, Any], client: str, kind: str) -> List[str]:
    return sorted(i["name"] for i in report["items"] if i["client"] == client and i["kind"] == kind and i["generated"])


def _skill_dirs(plugin: Path) -> List[str]:
    return sorted(p.parent.name for p in (plugin / "skills").glob("*/SKILL.md"))


def _hook_entries(hooks: Dict[str, Any]) -> List[Tuple[str, Any, str, Any]]:
    """(event, matcher, command, timeout) of every handler of a {"hooks": {...}} file."""
    return sorted((event, group.get("matcher"), h["command"], h.get("timeout"))
                  for event, groups in hooks.items() for group in groups for h in group["hooks"])


# ---------------------------------------------------------------------------------------------
# Codex
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def codex() -> Path:
    check_npm_package("@openai/codex")
    return NPM_MODULES / ".bin" / "codex"


@pytest.fixture(scope="module")
def codex_plugin() -> Tuple[Path, Dict[str, Any]]:
    return _build("codex")


def _codex_home(home: Path, extra: str = "") -> Path:
    """$CODEX_HOME with no update check, the remote plugin catalog off, and the model provider
    on a closed local port (Codex otherwise opens a connection to api.openai.com)."""
    codex_home = home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'check_for_update_on_startup = false\nmodel_provider = "agentrc-offline"\n\n'
        f"[features]\nremote_plugin = false\n{extra}\n"
        '[model_providers.agentrc-offline]\nname = "agentrc offline"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'wire_api = "responses"\n', encoding="utf-8")
    return codex_home


def _explicit_only(plugin: Path) -> List[str]:
    return sorted(p.parent.parent.name for p in (plugin / "skills").glob("*/agents/openai.yaml")
                  if "allow_implicit_invocation: false" in p.read_text(encoding="utf-8"))


def test_codex_installs_the_plugin_and_lists_its_skills_and_mcp_servers(codex: Path, codex_plugin):
    plugin, report = codex_plugin
    manifest = json.loads((plugin / ".codex-plugin" / "plugin.json").read_text(encoding="utf-8"))
    servers = json.loads((plugin / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert manifest["mcpServers"] == "./.mcp.json" and manifest["skills"] == "./skills/"
    assert sorted(servers) == _generated(report, "codex", "mcp") == ["api-docs", "schema-tools"]
    skills = _skill_dirs(plugin)
    assert skills == sorted(_generated(report, "codex", "skill") + _generated(report, "codex", "rule")
                            + _generated(report, "codex", "command"))
    assert _generated(report, "codex", "agent") == [] and not (plugin / "agents").exists()  # dropped
    explicit = _explicit_only(plugin)
    assert set(_generated(report, "codex", "command")) <= set(explicit)

    base, home, tmp = isolated_dirs("agentrc-codex-plugin-")
    codex_home = _codex_home(home)
    project = empty_project(base / "project")
    shim_log = base / "shims.log"
    shims = write_shims(base / "shims", stdio_commands(servers), shim_log)
    plugin_id = f"{BUNDLE}@{BUNDLE}-marketplace"
    with LocalSink() as proxy:
        env = offline_env(home, tmp, shims=shims, proxy=proxy, extra={"CODEX_HOME": str(codex_home)})
        added = run([codex, "plugin", "marketplace", "add", plugin], project, env)
        assert added.returncode == 0, describe(added)
        installed = run([codex, "plugin", "add", plugin_id, "--json"], project, env)
        assert installed.returncode == 0, describe(installed)
        assert json.loads(installed.stdout)["version"] == manifest["version"], describe(installed)
        listed = run([codex, "plugin", "list", "--json"], project, env)
        assert listed.returncode == 0, describe(listed)
        mcp = run([codex, "mcp", "list", "--json"], project, env)
        assert mcp.returncode == 0, describe(mcp)
        # prompt-input starts the MCP servers to list their tools: turn the plugin's off (the
        # per-plugin server policy in config.toml; `-c` cannot name the quoted plugin key).
        with (codex_home / "config.toml").open("a", encoding="utf-8") as config:
            config.writelines(f'\n[plugins."{plugin_id}".mcp_servers.{name}]\nenabled = false\n' for name in servers)
        prompt = run([codex, "debug", "prompt-input", "hello"], project, env)
        assert prompt.returncode == 0, describe(prompt)
        assert proxy.requests == [], f"Codex tried to reach the network: {proxy.requests}"
    assert read_lines(shim_log) == [], f"Codex started MCP server commands: {read_lines(shim_log)}"

    (entry,) = [p for p in json.loads(listed.stdout)["installed"] if p["pluginId"] == plugin_id]
    assert entry["installed"] and entry["enabled"] and entry["version"] == manifest["version"], entry

    listed_servers = {s["name"]: s for s in json.loads(mcp.stdout)}
    assert sorted(listed_servers) == sorted(servers), describe(mcp)
    for name, conf in servers.items():
        transport = listed_servers[name]["transport"]
        assert listed_servers[name]["enabled"], listed_servers[name]
        if "url" in conf:
            assert transport["type"] == "streamable_http" and transport["url"] == conf["url"], transport
            assert transport["bearer_token_env_var"] == conf.get("bearer_token_env_var"), transport
        else:
            assert (transport["type"], transport["command"], transport["args"]) == (
                "stdio", conf["command"], conf.get("args", [])), transport
            assert (transport["env"] or {}) == conf.get("env", {}), transport

    text = "\n".join(c.get("text", "") for m in json.loads(prompt.stdout) for c in m.get("content", [])
                     if isinstance(c, dict))
    visible = re.findall(rf"^- {BUNDLE}:([\w-]+): .*?\(file: (\S+)\)", text, re.M)
    assert sorted(n for n, _ in visible) == sorted(set(skills) - set(explicit)), text
    assert all(f.endswith(f"{n}/SKILL.md") for n, f in visible), visible  # `rN/<name>/SKILL.md`: a roots table


def test_codex_parses_the_plugin_skills_and_hooks(codex: Path, codex_plugin):
    plugin, report = codex_plugin
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert list(hooks) == ["hooks"]
    written = _hook_entries(hooks["hooks"])
    assert len(written) == len(_generated(report, "codex", "hook")) == 2
    for _, _, command, _ in written:
        script = re.match(r'^"\$\{PLUGIN_ROOT\}/([^"]+)"', command)
        assert script and os.access(str(plugin / script.group(1)), os.X_OK), command

    base, home, tmp = isolated_dirs("agentrc-codex-plugin-parse-")
    project = empty_project(base / "project")
    shutil.copytree(str(plugin / "skills"), str(project / ".agents" / "skills"))
    (project / ".codex").mkdir()
    shutil.copy(str(plugin / "hooks" / "hooks.json"), str(project / ".codex" / "hooks.json"))
    codex_home = _codex_home(home, f'plugins = false\n\n[projects."{project}"]\ntrust_level = "trusted"\n')
    with LocalSink() as proxy:
        env = offline_env(home, tmp, proxy=proxy, extra={"CODEX_HOME": str(codex_home)})
        with JsonRpcSession([str(codex), "app-server"], project, env, base / "app-server.err", 60) as app:
            app.request("initialize", {"clientInfo": {"name": "agentrc-conformance", "version": "0"}})
            app.notify("initialized")
            skills = app.request("skills/list", {"cwds": [str(project)], "forceReload": True})["result"]["data"][0]
            listed = app.request("hooks/list", {"cwds": [str(project)]})["result"]["data"][0]
        assert proxy.requests == [], f"Codex tried to reach the network: {proxy.requests}"

    assert skills.get("errors", []) == [], skills["errors"]
    repo = {s["name"]: s for s in skills["skills"] if s["scope"] == "repo"}
    assert sorted(repo) == _skill_dirs(plugin), sorted(repo)
    for name, s in repo.items():
        assert s["description"] == read_frontmatter(project / ".agents" / "skills" / name / "SKILL.md")["description"]
    assert listed["errors"] == [] and listed["warnings"] == [], listed
    events = {"preToolUse": "PreToolUse", "postToolUse": "PostToolUse"}
    got = sorted((events[h["eventName"]], h["matcher"], h["command"], h["timeoutSec"]) for h in listed["hooks"]
                 if h["source"] == "project")
    assert got == written, (got, written)


# ---------------------------------------------------------------------------------------------
# Gemini CLI
# ---------------------------------------------------------------------------------------------

USAGE_STATS = "play.googleapis.com:443"


@pytest.fixture(scope="module")
def gemini() -> List[str]:
    check_npm_package("@google/gemini-cli")
    path = NPM_MODULES / ".bin" / "gemini"
    if not path.exists():
        tool_missing(f"{path} is missing")
    return cli_argv(path)


class LinkedExtension:
    """The extension built for gemini and linked into a private home."""

    def __init__(self, gemini: List[str]):
        self.dir, self.report = _build("gemini")
        self.manifest = json.loads((self.dir / "gemini-extension.json").read_text(encoding="utf-8"))
        self.servers: Dict[str, Any] = self.manifest.get("mcpServers") or {}
        self.base, self.home, self.tmp = isolated_dirs("agentrc-gemini-extension-")
        self.project = empty_project(self.base / "project")
        self.shim_log = self.base / "shims.log"
        self.shims = write_shims(self.base / "shims", stdio_commands(self.servers), self.shim_log)
        (self.home / ".gemini").mkdir()
        (self.home / ".gemini" / "settings.json").write_text(json.dumps({
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "mcp": {"excluded": sorted(self.servers)},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
        }, indent=2), encoding="utf-8")
        self.proxy = LocalSink()
        self.validated = self.run(gemini, "extensions", "validate", str(self.dir))
        self.linked = self.run(gemini, "extensions", "link", str(self.dir), "--consent")
        self.link_requests = list(self.proxy.requests)
        self.proxy.requests.clear()

    def run(self, gemini: List[str], *args: str, **extra: str) -> subprocess.CompletedProcess:
        env = offline_env(self.home, self.tmp, shims=self.shims, proxy=self.proxy, extra={
            "GEMINI_CLI_HOME": str(self.home), "GEMINI_CLI_TRUST_WORKSPACE": "true"})
        env.update(extra)
        return run([*gemini, *args], self.project, env, timeout=90)

    def assert_offline(self) -> None:
        assert self.proxy.requests == [], f"Gemini CLI tried to reach the network: {self.proxy.requests}"
        assert read_lines(self.shim_log) == [], f"Gemini CLI started MCP server commands: {read_lines(self.shim_log)}"


@pytest.fixture(scope="module")
def extension(gemini: List[str]):
    ext = LinkedExtension(gemini)
    yield ext
    ext.proxy.close()


def test_gemini_links_the_extension_and_lists_its_components(gemini: List[str], extension: LinkedExtension):
    ext = extension
    said = ext.validated.stdout + ext.validated.stderr
    assert ext.validated.returncode == 0 and "successfully validated" in said, describe(ext.validated)
    said = ext.linked.stdout + ext.linked.stderr
    assert ext.linked.returncode == 0 and f'Extension "{BUNDLE}" linked successfully' in said, describe(ext.linked)
    stray = [r for r in ext.link_requests if (r["method"], r["path"]) != ("CONNECT", USAGE_STATS)]
    assert stray == [], f"gemini extensions link tried to reach the network: {stray}"
    proc = ext.run(gemini, "extensions", "list", "-o", "json")
    ext.assert_offline()
    assert proc.returncode == 0, describe(proc)
    text = strip_ansi(proc.stderr)
    listed = json.loads(text[text.index("["):text.rindex("]") + 1])
    (entry,) = [e for e in listed if e["name"] == BUNDLE]
    report = ext.report

    assert entry["isActive"] and entry["version"] == ext.manifest["version"] == "0.8.0", entry
    assert entry["installMetadata"]["type"] == "link" and Path(entry["path"]) == ext.dir, entry
    assert ext.manifest["contextFileName"] == "GEMINI.md" and _generated(report, "gemini", "context")
    assert [Path(p) for p in entry["contextFiles"]] == [ext.dir / "GEMINI.md"], entry["contextFiles"]

    assert sorted(entry["mcpServers"]) == sorted(ext.servers) == _generated(report, "gemini", "mcp"), entry
    for name, conf in ext.servers.items():
        for key in ("command", "args", "url", "type"):
            assert entry["mcpServers"][name].get(key) == conf.get(key), (name, entry["mcpServers"][name])

    hooks = json.loads((ext.dir / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    hydrated = {"hooks": json.loads(json.dumps(hooks).replace("${extensionPath}", str(ext.dir)))}
    assert _hook_entries(entry["hooks"]) == _hook_entries(hydrated["hooks"]), (entry["hooks"], hooks)
    assert len(_hook_entries(hooks)) == len(_generated(report, "gemini", "hook")) == 2
    for _, _, command, _ in _hook_entries(entry["hooks"]):
        script = re.match(r'^"([^"]+)"', command)
        assert script and os.access(script.group(1), os.X_OK), command

    skills = {s["name"]: s for s in entry["skills"]}
    assert sorted(skills) == _skill_dirs(ext.dir), sorted(skills)
    assert sorted(skills) == sorted(_generated(report, "gemini", "skill") + _generated(report, "gemini", "rule"))
    for name, s in skills.items():
        assert Path(s["location"]) == ext.dir / "skills" / name / "SKILL.md", s
        assert s["description"] == read_frontmatter(ext.dir / "skills" / name / "SKILL.md")["description"], s
    agents = sorted(a["name"] for a in entry["agents"])
    assert agents == sorted(str(read_frontmatter(p)["name"]) for p in (ext.dir / "agents").glob("*.md"))
    assert agents == _generated(report, "gemini", "agent") == ["test-runner"]


def test_gemini_runs_the_extension_commands_with_its_agents_skills_and_context(gemini: List[str],
                                                                               extension: LinkedExtension):
    ext = extension
    commands = {p.stem: p for p in sorted((ext.dir / "commands").glob("*.toml"))}
    assert sorted(commands) == _generated(ext.report, "gemini", "command") and commands
    for i, (name, path) in enumerate(sorted(commands.items())):
        with LocalSink() as model:
            proc = ext.run(gemini, "--approval-mode", "yolo", "-p", f"/{name} {ARGS}", "-o", "json",
                           GEMINI_API_KEY="agentrc-dummy-not-a-key", GOOGLE_GEMINI_BASE_URL=model.url)
            requests = list(model.requests)
        ext.assert_offline()
        bodies = [r["body"] for r in requests if isinstance(r.get("body"), dict) and r["body"].get("tools")]
        assert bodies, f"no model request with tools reached the sink ({len(requests)} requests):\n" + describe(proc)
        body = bodies[0]
        users = [c for c in body.get("contents", []) if c.get("role") == "user"]
        got = (users[-1]["parts"][-1].get("text") or "").strip()
        prompt = str(load_toml(path)["prompt"]).strip()
        if "{{args}}" in prompt:
            assert got == prompt.replace("{{args}}", ARGS), f"/{name} expanded to:\n{got}\n" + describe(proc)
        else:
            assert got.startswith(prompt) and ARGS in got, f"/{name} expanded to:\n{got}\n" + describe(proc)
        if i:
            continue  # the session's registrations are the same on every run
        si = body.get("systemInstruction") or {}
        text = "\n".join(p.get("text", "") for p in si.get("parts", [])) if isinstance(si, dict) else str(si)
        subagents = re.findall(r"<subagent>\s*<name>(.*?)</name>", text)
        assert set(_generated(ext.report, "gemini", "agent")) <= set(subagents), subagents
        located = re.findall(r"<skill>\s*<name>(.*?)</name>.*?<location>(.*?)</location>", text, re.S)
        ours = sorted(n for n, loc in located if Path(loc).resolve().is_relative_to(ext.dir))
        assert ours == _skill_dirs(ext.dir), ours
        context = re.findall(r"Context from: (\S+) ---", json.dumps(body.get("contents")))
        assert str(ext.dir / "GEMINI.md") in context, context
