"""Claude Code (the real CLI, offline, isolated HOME) reads what agentrc generates for it.

Offline, Claude Code can list MCP servers (`claude mcp list`/`get`: project servers show as
"Pending approval" until a person trusts them, which is the expected state) and can install
a plugin from a local marketplace and print its component inventory (`claude plugin
details`). Skills, agents and hooks of a *project* have no offline listing command; the
plugin inventory is how this suite checks that Claude Code parses them.

Added since: the `claude -p` stream-json init message does list a project's skills, slash
commands, agents and MCP servers offline (no login needed; the run stops at "Not logged in"
before any model call), and `claude plugin validate --json` on a throwaway plugin holding
.claude/settings.json's hooks is Claude's own parse of them. Both run for examples/registry and
examples/project; see OFFLINE_LIMITS.md for what remains unobservable offline. The same
init message lists the user's ~/.claude/skills and ~/.claude/agents, which is how a global
installation (`agentrc add --global`) is checked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from agentrc.inputs.tree import read_tree
from agentrc.model import Kind
from agentrc.portable.load import load_registry

from .conformance_helpers import (
    NPM_MODULES,
    REGISTRY,
    ROOT,
    check_npm_package,
    describe,
    make_temp_dir,
    read_frontmatter,
    run,
    strip_ansi,
)
from .offline_clients import (
    LocalSink,
    client_build,
    copy_project,
    empty_project,
    flatten_hooks,
    http_hosts,
    isolated_dirs,
    offline_env,
    read_lines,
    stdio_commands,
    write_shims,
)

PACKAGE = "@anthropic-ai/claude-code"


@pytest.fixture(scope="module")
def claude() -> Path:
    check_npm_package(PACKAGE)
    return NPM_MODULES / ".bin" / "claude"


def _env(home: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update({"HOME": str(home), "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    return env


def _agentrc(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "agentrc", *args], cwd=str(ROOT), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)


def _registry():
    tree = read_tree([REGISTRY.relative_to(ROOT).as_posix()]).tree
    from agentrc.clients import registry as client_registry

    registry, _ = load_registry(tree, client_registry.client_names())
    return registry


def test_claude_lists_every_mcp_server_of_the_bundles(claude: Path):
    out = make_temp_dir("agentrc-claude-mcp-") / "project"
    proc = _agentrc("build", REGISTRY.relative_to(ROOT).as_posix(), "--client", "claude", "--out", str(out),
                    "--no-cache")
    assert proc.returncode == 0, proc.stderr
    expected = sorted({s.name for b in _registry().bundles for s in b.servers})
    assert expected, "examples/registry declares no MCP servers"
    home = make_temp_dir("agentrc-claude-home-")
    listed = run([claude, "mcp", "list"], out, _env(home))
    assert listed.returncode == 0, describe(listed)
    names = sorted(re.findall(r"^([\w.-]+): .* - ", strip_ansi(listed.stdout), re.M))
    assert names == expected, describe(listed)
    for name in expected:
        got = run([claude, "mcp", "get", name], out, _env(home))
        assert got.returncode == 0, describe(got)
        assert "Project config (shared via .mcp.json)" in got.stdout, describe(got)


def test_claude_installs_the_plugin_and_inventories_it(claude: Path):
    bundle = "platform-baseline"
    plugin = make_temp_dir("agentrc-claude-plugin-") / bundle
    proc = _agentrc("build", REGISTRY.relative_to(ROOT).as_posix(), "--layout", "plugin", "--client", "claude",
                    "--bundle", bundle, "--out", str(plugin), "--no-cache")
    assert proc.returncode == 0, proc.stderr
    home = make_temp_dir("agentrc-claude-home-")
    env = _env(home)
    added = run([claude, "plugin", "marketplace", "add", plugin], plugin, env)
    assert added.returncode == 0, describe(added)
    installed = run([claude, "plugin", "install", f"{bundle}@{bundle}-marketplace"], plugin, env)
    assert installed.returncode == 0, describe(installed)
    details = run([claude, "plugin", "details", f"{bundle}@{bundle}-marketplace"], plugin, env)
    assert details.returncode == 0, describe(details)
    text = strip_ansi(details.stdout)

    def inventory(label: str) -> List[str]:
        m = re.search(rf"^\s*{label} \((\d+)\)\s*(.*)$", text, re.M)
        assert m, f"no {label} line in:\n{text}"
        names = [n.strip() for n in m.group(2).split(",") if n.strip()]
        return names if names and "(" not in m.group(2) else [m.group(1)]

    # What the plugin holds, from the files agentrc wrote (skills and commands are skills).
    skills = sorted(p.parent.name for p in (plugin / "skills").glob("*/SKILL.md"))
    agents = sorted(p.stem for p in (plugin / "agents").glob("*.md"))
    assert skills and agents
    assert sorted(inventory("Skills")) == skills, text
    assert sorted(inventory("Agents")) == agents, text
    events = sorted(__import__("json").loads((plugin / "hooks" / "hooks.json").read_text())["hooks"])
    m = re.search(r"^\s*Hooks \((\d+)\)\s*(.*)$", text, re.M)
    assert m and int(m.group(1)) == len(events) and all(e in m.group(2) for e in events), text
    # Every command of the bundle's closure became a user-invoked skill.
    commands = {i.name for i in _registry().items if i.kind is Kind.COMMAND}
    assert commands & set(skills), (commands, skills)


# ---------------------------------------------------------------------------------------------
# The `claude -p` stream-json init message (examples/registry and examples/project)
#
# `claude -p x --output-format stream-json --verbose` prints a `system/init` message listing
# the session's skills, slash commands, agents and MCP servers, then stops with "Not logged
# in" before any model call. `-p` skips the workspace-trust dialog, so the project's
# .claude/ and .mcp.json load in a fresh HOME. The project's MCP servers are started: their
# commands are shims (exit 127) and the HTTP(S) proxy is a local sink, so nothing leaves
# the machine. An InstructionsLoaded probe hook passed with --settings (merged with the
# project's settings) records the CLAUDE.md and rule files Claude loads at session start.
# ---------------------------------------------------------------------------------------------

CLAUDE_SOURCES = ("registry", "project")

# Records the InstructionsLoaded payload (JSON on stdin) in a file of its own per event.
_INSTRUCTIONS_PROBE = json.dumps({"hooks": {"InstructionsLoaded": [{"hooks": [{
    "type": "command",
    "command": 'cat > "$(mktemp "$AGENTRC_PROBE_DIR/loaded.XXXXXX")"',
}]}]}})


def _claude_offline_env(home: Path, tmp: Path, shims: Path = None, proxy: LocalSink = None, **extra: str) -> Dict[str, str]:
    env = offline_env(home, tmp, shims=shims, proxy=proxy, extra={
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "MCP_TIMEOUT": "2000",
    })
    env.update(extra)
    return env


def _claude_init(claude: Path, project: Path, env: Dict[str, str], *extra_args: str) -> Dict[str, object]:
    proc = run([claude, "-p", "x", "--output-format", "stream-json", "--verbose", "--no-session-persistence",
                *extra_args], project, env, timeout=60)
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("type") == "system" and msg.get("subtype") == "init":
            return msg
    pytest.fail("no system/init message in the stream-json output:\n" + describe(proc), pytrace=False)
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def claude_builtins(claude: Path) -> Dict[str, object]:
    """The init message of an empty project: Claude Code's own skills, commands and agents."""
    base, home, tmp = isolated_dirs("agentrc-claude-empty-")
    with LocalSink() as proxy:
        init = _claude_init(claude, empty_project(base / "project"), _claude_offline_env(home, tmp, proxy=proxy))
        assert proxy.requests == [], f"Claude Code tried to reach the network: {proxy.requests}"
    return init


@pytest.mark.parametrize("source", CLAUDE_SOURCES)
def test_claude_init_lists_exactly_the_generated_skills_agents_and_mcp_servers(
    claude: Path, claude_builtins: Dict[str, object], source: str
):
    build = client_build(source, "claude")
    base, home, tmp = isolated_dirs(f"agentrc-claude-init-{source}-")
    project = copy_project(build.out, base / "project")
    mcp_file = project / ".mcp.json"
    servers = json.loads(mcp_file.read_text(encoding="utf-8"))["mcpServers"] if mcp_file.exists() else {}
    shims = write_shims(base / "shims", stdio_commands(servers), base / "shims.log")
    probe_dir = base / "instructions"
    probe_dir.mkdir()
    debug_log = base / "debug.log"

    # What agentrc says it generated (the fidelity report), checked against the files written.
    skills = build.generated_skills(".claude/skills")
    written_skills = sorted(p.parent.name for p in (project / ".claude" / "skills").glob("*/SKILL.md"))
    assert sorted(skills) == written_skills, (skills, written_skills)
    assert all(skills[name] == f".claude/skills/{name}" for name in skills), skills
    agents = {}
    for name, outputs in build.generated("agent").items():
        md = [o for o in outputs if o.startswith(".claude/agents/") and o.endswith(".md")]
        assert len(md) == 1, (name, outputs)
        agents[str(read_frontmatter(project / md[0]).get("name"))] = md[0]
    assert sorted(agents) == sorted(build.generated("agent")), "agent frontmatter names != item names"
    assert sorted(p.name for p in (project / ".claude" / "agents").glob("*.md")) == sorted(Path(a).name for a in agents.values())
    assert sorted(servers) == sorted(build.generated("mcp")), (sorted(servers), build.generated("mcp"))
    assert skills and agents and servers, f"examples/{source} should exercise skills, agents and MCP servers"

    # Claude lists a skill in `skills` only with a description and unless user-invocable is false;
    # slash_commands holds every user-invocable one (see the probe report, 2.1).
    frontmatter = {name: read_frontmatter(project / path / "SKILL.md") for name, path in skills.items()}
    invocable = {n for n, fm in frontmatter.items() if fm.get("user-invocable") is not False}
    model_visible = {n for n in invocable if fm_description(frontmatter[n])}

    with LocalSink() as proxy:
        env = _claude_offline_env(home, tmp, shims=shims, proxy=proxy, AGENTRC_PROBE_DIR=str(probe_dir))
        init = _claude_init(claude, project, env, "--debug-file", str(debug_log), "--settings", _INSTRUCTIONS_PROBE)
        requests = list(proxy.requests)

    seen_skills, seen_commands = set(init.get("skills") or []), set(init.get("slash_commands") or [])
    seen_agents = set(init.get("agents") or [])
    builtin_skills = set(claude_builtins.get("skills") or [])
    builtin_commands = set(claude_builtins.get("slash_commands") or [])
    builtin_agents = set(claude_builtins.get("agents") or [])

    assert model_visible <= seen_skills, f"skills missing from init: {sorted(model_visible - seen_skills)}"
    assert seen_skills - model_visible <= builtin_skills, f"unexpected skills: {sorted(seen_skills - model_visible - builtin_skills)}"
    assert invocable <= seen_commands, f"slash commands missing from init: {sorted(invocable - seen_commands)}"
    assert seen_commands - invocable <= builtin_commands, f"unexpected commands: {sorted(seen_commands - invocable - builtin_commands)}"
    assert set(agents) <= seen_agents, f"agents missing from init: {sorted(set(agents) - seen_agents)}"
    assert seen_agents - set(agents) <= builtin_agents, f"unexpected agents: {sorted(seen_agents - set(agents) - builtin_agents)}"
    project_servers = sorted(s["name"] for s in init.get("mcp_servers") or [] if s.get("source") == "project")
    assert project_servers == sorted(servers), init.get("mcp_servers")

    # Every generated skill was loaded from the project, invisible ones included (debug log).
    loaded = [l for l in read_lines(debug_log) if "unique skills" in l]
    m = re.search(r"Loaded (\d+) unique skills \(.*\bproject: (\d+),.*legacy commands: (\d+)\)", "\n".join(loaded))
    assert m, "no `Loaded N unique skills (...)` line in the debug log:\n" + "\n".join(loaded)
    assert (int(m.group(2)), int(m.group(3))) == (len(skills), 0), loaded

    # CLAUDE.md, what it imports, and every rule without `paths:` load at session start;
    # `paths:` rules load only when a matching file is read (not observable offline).
    events = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(probe_dir.iterdir())]
    files = {Path(e["file_path"]).resolve().relative_to(project).as_posix(): e.get("load_reason") for e in events}
    rules = sorted(p for p in (project / ".claude" / "rules").glob("*.md"))
    always = {p.relative_to(project).as_posix() for p in rules if not read_frontmatter(p).get("paths")}
    scoped = {p.relative_to(project).as_posix() for p in rules} - always
    assert files.get("CLAUDE.md") == "session_start", events
    if "@AGENTS.md" in (project / "CLAUDE.md").read_text(encoding="utf-8"):
        assert files.get("AGENTS.md") == "include", events
    assert {f for f, why in files.items() if f.startswith(".claude/rules/") and why == "session_start"} == always, events
    assert not scoped & set(files), events

    # Offline: the only network attempts are the generated HTTP MCP servers, through the sink.
    unexpected = [r for r in requests if not (r["method"] == "CONNECT" and r["path"] in http_hosts(servers))]
    assert unexpected == [], f"Claude Code tried to reach the network: {unexpected}"


def fm_description(frontmatter: Dict[str, object]) -> bool:
    return bool(str(frontmatter.get("description") or "").strip())


# ---------------------------------------------------------------------------------------------
# Hooks: Claude Code's own validator on a throwaway plugin holding .claude/settings.json's hooks
#
# Settings hooks never show up in the init message and PreToolUse/PostToolUse only fire in a
# model turn. `claude plugin validate --json` runs Claude's hook schema on hooks/hooks.json of a
# plugin and lists what it would register (`provides.hooks`); unknown events and hook types
# are warnings, malformed entries errors. The same `hooks` object is what settings.json holds.
# ---------------------------------------------------------------------------------------------

_PROBE_PLUGIN = {"name": "agentrc-hooks-probe", "version": "0.0.0", "description": "agentrc conformance probe",
                 "author": {"name": "agentrc"}}


def _validate_hooks(claude: Path, hooks: Dict[str, object], prefix: str) -> Tuple[subprocess.CompletedProcess, Dict[str, object]]:
    base, home, tmp = isolated_dirs(prefix)
    plugin = base / "agentrc-hooks-probe"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(_PROBE_PLUGIN), encoding="utf-8")
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=2), encoding="utf-8")
    with LocalSink() as proxy:
        proc = run([claude, "plugin", "validate", plugin, "--json"], base, _claude_offline_env(home, tmp, proxy=proxy))
        assert proxy.requests == [], f"claude plugin validate tried to reach the network: {proxy.requests}"
    try:
        return proc, json.loads(proc.stdout)
    except ValueError:
        pytest.fail("claude plugin validate --json printed no JSON:\n" + describe(proc), pytrace=False)
        raise


def _findings(result: Dict[str, object]) -> List[Tuple[str, str, str]]:
    found = []
    for part in [result.get("manifest") or {}] + list(result.get("contents") or []):
        for level in ("errors", "warnings"):
            for f in part.get(level) or []:
                found.append((level, str(part.get("file")), f"{f.get('path')}: {f.get('message')}"))
    return found


@pytest.mark.parametrize("source", CLAUDE_SOURCES)
def test_claude_validates_every_generated_hook(claude: Path, source: str):
    build = client_build(source, "claude")
    settings = json.loads((build.out / ".claude" / "settings.json").read_text(encoding="utf-8"))
    hooks = settings.get("hooks") or {}
    expected = flatten_hooks(hooks)
    assert expected and build.generated("hook"), f"examples/{source} should exercise hooks"

    proc, result = _validate_hooks(claude, hooks, f"agentrc-claude-hooks-{source}-")

    assert proc.returncode == 0 and result.get("success") is True, describe(proc)
    assert _findings(result) == [], describe(proc)
    provided = [(h.get("event"), h.get("matcher"), h.get("type"), h.get("command")) for h in (result.get("provides") or {}).get("hooks") or []]
    assert sorted(provided, key=repr) == sorted(((e["event"], e["matcher"], e["type"], e["command"]) for e in expected), key=repr), describe(proc)


def test_claude_hook_validation_flags_an_unknown_event(claude: Path):
    """The control for the test above: the same probe reports an event Claude does not know."""
    build = client_build("registry", "claude")
    hooks = json.loads((build.out / ".claude" / "settings.json").read_text(encoding="utf-8"))["hooks"]
    broken = dict(hooks, NotAHookEvent=next(iter(hooks.values())))

    proc, result = _validate_hooks(claude, broken, "agentrc-claude-hooks-control-")

    assert any("NotAHookEvent" in message for _, _, message in _findings(result)), describe(proc)


# ---------------------------------------------------------------------------------------------
# `claude mcp list` config diagnostics (examples/registry and examples/project)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", CLAUDE_SOURCES)
def test_claude_mcp_list_reports_no_config_problems(claude: Path, source: str):
    """`claude mcp list` prints an "MCP config diagnostics" section for entries it skips or
    doubts (a `url` without `type`, invalid JSON, unset variables). With every `${VAR}` the
    generated .mcp.json references set (to a dummy: the source declares them), there must be
    none, and every generated server is listed as a project server awaiting approval (an
    untrusted project: nothing is started)."""
    build = client_build(source, "claude")
    base, home, tmp = isolated_dirs(f"agentrc-claude-mcp-list-{source}-")
    project = copy_project(build.out, base / "project")
    text = (project / ".mcp.json").read_text(encoding="utf-8")
    servers = json.loads(text)["mcpServers"]
    variables = sorted(set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}", text)))

    with LocalSink() as proxy:
        env = _claude_offline_env(home, tmp, shims=write_shims(base / "shims", stdio_commands(servers), base / "shims.log"),
                                  proxy=proxy, **{v: "agentrc-dummy" for v in variables})
        proc = run([claude, "mcp", "list"], project, env)
        assert proxy.requests == [], f"claude mcp list tried to reach the network: {proxy.requests}"
    assert read_lines(base / "shims.log") == [], "claude mcp list started a server of an untrusted project"

    assert proc.returncode == 0, describe(proc)
    out = strip_ansi(proc.stdout)
    assert "MCP config diagnostics" not in out, describe(proc)
    listed = dict(re.findall(r"^([\w.-]+): .* - (.*)$", out, re.M))
    assert sorted(listed) == sorted(servers), describe(proc)
    assert all("Pending approval" in status for status in listed.values()), describe(proc)


# ---------------------------------------------------------------------------------------------
# A global installation (`agentrc add --global`): Claude Code's view of the user's skills and
# agents. The same init message lists what ~/.claude/skills and ~/.claude/agents hold, in a
# project that has none of its own.
# ---------------------------------------------------------------------------------------------

def test_claude_init_lists_the_globally_installed_skills_and_agents(claude: Path, claude_builtins):
    base, home, tmp = isolated_dirs("agentrc-claude-global-")
    registry = base / "registry"
    files = {
        "skills/global-notes/SKILL.md": "---\nschema: 1\nname: global-notes\ndescription: Use when taking notes "
                                        "for the user.\n---\n\n## Steps\n\nWrite the note.\n",
        "agents/global-helper/AGENT.md": "---\nschema: 1\nname: global-helper\ndescription: Use when the user "
                                         "needs a helper.\nmode: subagent\n---\n\n## Role\n\nHelp.\n",
    }
    for rel, text in files.items():
        (registry / rel).parent.mkdir(parents=True, exist_ok=True)
        (registry / rel).write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), HOME=str(home), XDG_CACHE_HOME=str(base / "cache"))
    env.pop("XDG_CONFIG_HOME", None)
    added = subprocess.run([sys.executable, "-m", "agentrc", "add", str(registry), "--client", "claude", "--global"],
                           cwd=str(base), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120)
    assert added.returncode == 0, added.stderr
    assert (home / ".claude" / "skills" / "global-notes" / "SKILL.md").is_file()
    assert (home / ".claude" / "agents" / "global-helper.md").is_file()
    with LocalSink() as proxy:
        init = _claude_init(claude, empty_project(base / "elsewhere"), _claude_offline_env(home, tmp, proxy=proxy))
        assert proxy.requests == [], f"Claude Code tried to reach the network: {proxy.requests}"
    assert "global-notes" in (init.get("skills") or []) and "global-notes" not in (claude_builtins.get("skills") or [])
    assert "global-helper" in (init.get("agents") or [])
    assert "global-helper" not in (claude_builtins.get("agents") or [])
