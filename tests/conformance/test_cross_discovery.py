"""Cross-discovery with the real clients (issue 10 point 16, issue 31 item 6): one tree built for
Claude Code, Copilot, opencode, Codex, Gemini CLI and OpenClaw, holding a skill with
`audience: [claude]`, a skill for everyone, a path-scoped rule (a skill in .agents/skills for
Codex and Gemini CLI) and a command (a skill there for Codex), and an agent (a skill there for
OpenClaw). Each client is asked, offline and with a private HOME, what it loads; every skill or
instruction it takes from another client's directory must be one the fidelity report names for
it (`also_loaded_by`), and every copy agentrc hides with the client's own switch must be out of
what the model is offered. The skill for everyone has the same bytes for every client, so it is
written once per directory the clients read (`shared-copies`, on by default): Copilot and
opencode load it once, from a copy the report lists among their outputs.

* opencode 1.18.33: `debug skill` (everything it discovers, with paths) and the model request
  of `opencode run` against a local provider (the skills offered: `permission.skill` deny
  applied).
* Copilot CLI 1.0.102: `skill list --json`, `instruction list --json`, and the model request of
  `copilot -p` against a local BYOK provider (COPILOT_OFFLINE).
* Gemini CLI 0.61.0: `skills list` and the model request of `gemini -p` against a local
  endpoint (the workspace setting `skills.disabled` that agentrc writes applied).
* Codex 0.171.0: the app server's `skills/list` (everything in .agents/skills, also the
  Gemini-only skill, which the report names for it).
* Claude Code: the init message; it reads .claude/skills only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

from .conformance_helpers import NPM_MODULES, ROOT, check_npm_package, describe, make_temp_dir, run, tool_missing
from .offline_clients import LocalSink, cli_argv, copy_project, isolated_dirs, offline_env

CLIENTS = ("claude", "copilot", "opencode", "codex", "gemini", "openclaw")
SOURCE = {
    "skills/deep/SKILL.md": "---\nschema: 1\ndescription: Use when thinking hard\naudience:\n  - claude\n---\n\n"
                            "Think hard.\n",
    "skills/plain/SKILL.md": "---\nschema: 1\ndescription: Use when planning\n---\n\nPlan the work.\n",
    "rules/style/RULE.md": "---\nschema: 1\ndescription: House style for Python files\nscope:\n  paths:\n"
                           "    - \"src/**/*.py\"\n---\n\nUse four spaces.\n",
    "commands/ship/COMMAND.md": "---\nschema: 1\ndescription: Ship the change\n---\n\nShip it.\n",
    # In the shared .agents/skills, for one of its two readers only.
    "skills/cdx/SKILL.md": "---\nschema: 1\ndescription: Codex only\naudience:\n  - codex\n---\n\nCodex.\n",
    "skills/gem/SKILL.md": "---\nschema: 1\ndescription: Gemini only\naudience:\n  - gemini\n---\n\nGemini.\n",
    # OpenClaw writes agents as skills into .agents/skills, which every other client but Claude reads.
    "agents/rev/AGENT.md": "---\nschema: 1\ndescription: Reviews the change\n---\n\nReview it.\n",
}


# ---------------------------------------------------------------------------------------------
# The build and what its report says
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tree() -> Tuple[Path, Dict[str, Any]]:
    base = make_temp_dir("agentrc-xdisc-")
    src = base / "src"
    for rel, text in SOURCE.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")
    out, report = base / "out", base / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRC_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", str(src), "--client", ",".join(CLIENTS),
                           "--out", str(out), "--report", str(report), "--no-cache"], cwd=str(ROOT), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, describe(proc)
    return out, json.loads(report.read_text(encoding="utf-8"))


def _named(report: Dict[str, Any], reader: str, hidden: bool) -> Set[str]:
    """The paths the report says `reader` also loads (hidden=False) or has hidden (True)."""
    found = set()
    for item in report["items"]:
        for entry in item.get("also_loaded_by", []):
            if entry["client"] == reader and entry["detail"].startswith("hidden from ") == hidden:
                found.add(entry["path"])
    return found


def _foreign(tree, client: str, project: Path, locations: List[str]) -> Set[str]:
    """The files among `locations` (skill files or directories, instruction files) that the
    client takes from other clients' output: inside the project, not among the outputs the
    report lists for the client itself, and not the same bytes as its own copy by that name
    (an identical copy changes nothing, and the report leaves it out)."""
    own_outputs = {p for item in tree[1]["items"] if item["client"] == client for p in item.get("outputs", [])}
    own_skills = {Path(p).parent.name: p for p in own_outputs if p.endswith("/SKILL.md")}
    out = set()
    for loc in locations:
        path = Path(loc)
        if not path.is_absolute():
            continue  # built-ins
        if path.is_dir():
            path = path / "SKILL.md"
        try:
            rel = path.resolve().relative_to(project.resolve()).as_posix()
        except ValueError:
            continue  # the client's own built-ins under its home
        if rel in own_outputs:
            continue
        twin = own_skills.get(path.parent.name) if rel.endswith("/SKILL.md") else None
        if twin and (project / twin).read_bytes() == path.read_bytes():
            continue
        out.add(rel)
    return out


# ---------------------------------------------------------------------------------------------
# opencode
# ---------------------------------------------------------------------------------------------


def _opencode_bin() -> Path:
    check_npm_package("opencode-ai")
    from .conformance_helpers import opencode_candidates  # the platform binary, as conftest finds it
    for cand in opencode_candidates():
        if cand.is_file() and os.access(str(cand), os.X_OK):
            return cand
    tool_missing("no opencode binary")
    raise AssertionError("unreachable")


def _opencode(project: Path, home: Path, tmp: Path, sink: LocalSink, *args: str,
              env_extra: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    # A user-level provider on the local sink: the model request shows what opencode offers.
    config.write_text(json.dumps({"provider": {"sink": {
        "npm": "@ai-sdk/openai-compatible", "name": "sink",
        "options": {"baseURL": sink.url + "/v1", "apiKey": "none"}, "models": {"m": {"name": "m"}}}},
        "model": "sink/m"}), encoding="utf-8")
    env = offline_env(home, tmp, proxy=sink, extra={
        "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", **(env_extra or {})})
    return run([_opencode_bin(), *args], project, env, timeout=120)


def _offered(requests: List[Dict[str, Any]]) -> Set[str]:
    """The skill names listed in <available_skills> of the model requests."""
    names: Set[str] = set()
    for r in requests:
        text = json.dumps(r.get("body"))
        for block in re.findall(r"<available_skills>(.*?)</available_skills>", text, re.S):
            names.update(re.findall(r"<name>(.*?)</name>", block))
    return names


def _check_named(tree, client: str, foreign: Set[str], loaded: Set[str]) -> None:
    """Every copy the client takes from other clients' output is named for it in the report;
    every copy the report names for it is one it finds, or one shadowed by another copy of
    the same name it loads (clients keep one skill per name)."""
    named = _named(tree[1], client, hidden=False) | _named(tree[1], client, hidden=True)
    assert foreign <= named, f"{client} loads copies the report does not name: {sorted(foreign - named)}"
    for path in named - foreign:
        if path.startswith(".claude/agents/"):
            continue  # custom agents are not among the skills and instructions listed here (their own tests)
        assert path.endswith("/SKILL.md") and Path(path).parent.name in loaded, (client, path)


def _opencode_view(tree, name: str, strip_switch: bool = False) -> Tuple[Path, Set[str], Set[str]]:
    """(project, files opencode discovers in other clients' output, skills it offers the model)."""
    base, home, tmp = isolated_dirs(f"agentrc-xdisc-opencode-{name}-")
    project = copy_project(tree[0], base / "project")
    if strip_switch:
        config = json.loads((project / "opencode.json").read_text(encoding="utf-8"))
        config.pop("permission")
        (project / "opencode.json").write_text(json.dumps(config), encoding="utf-8")
    with LocalSink() as sink:
        proc = _opencode(project, home, tmp, sink, "debug", "skill")
        assert proc.returncode == 0, describe(proc)
        discovered = json.loads(proc.stdout)
        _opencode(project, home, tmp, sink, "run", "hi")  # fails at the sink's 400; the request is what counts
        requests = [r for r in sink.requests if r["method"] == "POST" and r["path"].endswith("/chat/completions")]
    assert requests, "opencode run sent no model request"
    foreign = _foreign(tree, "opencode", project, [s["location"] for s in discovered])
    return project, foreign, _offered(requests)


def test_opencode_offers_no_skill_outside_its_audience_and_the_report_names_what_it_finds(tree):
    project, foreign, offered = _opencode_view(tree, "switch")
    # opencode still discovers .claude/skills/deep and the .agents/skills copies of the rule,
    # the command, the agent and the Codex- and Gemini-only skills; the report names each.
    names = {Path(p).parent.name for p in foreign}
    assert {"deep", "style", "ship", "cdx", "gem", "rev"} <= names, foreign
    _check_named(tree, "opencode", foreign, names | {"plain"})
    # ... and the model is offered none of them: its own skill (the shared copy) and its built-in only.
    assert offered - {"customize-opencode"} == {"plain"}, offered
    assert json.loads((project / "opencode.json").read_text(encoding="utf-8"))["permission"] == {
        "skill": {n: "deny" for n in ("cdx", "deep", "gem", "rev", "ship", "style")}}


def test_the_deny_leaves_opencodes_own_command_of_that_name_working(tree):
    base, home, tmp = isolated_dirs("agentrc-xdisc-opencode-command-")
    project = copy_project(tree[0], base / "project")
    assert json.loads((project / "opencode.json").read_text(encoding="utf-8"))["permission"]["skill"]["ship"] == "deny"
    with LocalSink() as sink:
        _opencode(project, home, tmp, sink, "run", "--command", "ship", "now")
        bodies = [json.dumps(r["body"]) for r in sink.requests if r["method"] == "POST"]
    assert any("Ship it." in b for b in bodies), "the ship command's text did not reach the model"


def test_without_the_switch_opencode_offers_the_foreign_skills(tree):
    """The control: the same tree without agentrc's `permission` key in opencode.json."""
    _, _, offered = _opencode_view(tree, "control", strip_switch=True)
    assert {"deep", "style", "ship", "cdx", "gem", "rev"} <= offered, offered


def test_the_opencode_switches_ar095_names_turn_off_what_it_says(tree):
    """AR095's hint for opencode names the environment variables that keep it out of
    .claude/skills and .agents/skills (`Opencode.discovery_off`): each does so."""
    from agentrc.clients.opencode import Opencode

    base, home, tmp = isolated_dirs("agentrc-xdisc-opencode-env-")
    project = copy_project(tree[0], base / "project")
    seen = {}
    for name in ("", "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS", "OPENCODE_DISABLE_EXTERNAL_SKILLS"):
        with LocalSink() as sink:
            proc = _opencode(project, home, tmp, sink, "debug", "skill", env_extra={name: "1"} if name else {})
        assert proc.returncode == 0, describe(proc)
        found = [Path(s["location"]).resolve() for s in json.loads(proc.stdout) if Path(s["location"]).is_absolute()]
        root = project.resolve()
        seen[name] = {p.relative_to(root).parent.parent.as_posix() for p in found if root in p.parents}
    assert {".claude/skills", ".agents/skills"} <= seen[""], seen
    assert ".claude/skills" not in seen["OPENCODE_DISABLE_CLAUDE_CODE_SKILLS"] and \
        ".agents/skills" in seen["OPENCODE_DISABLE_CLAUDE_CODE_SKILLS"], seen
    assert not {".claude/skills", ".agents/skills"} & seen["OPENCODE_DISABLE_EXTERNAL_SKILLS"], seen
    assert "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS=1" in Opencode.discovery_off[".claude/skills"]
    assert "OPENCODE_DISABLE_EXTERNAL_SKILLS=1" in Opencode.discovery_off[".agents/skills"]


# ---------------------------------------------------------------------------------------------
# Copilot CLI
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def copilot(tree):
    check_npm_package("@github/copilot")
    binary = NPM_MODULES / ".bin" / "copilot"
    if not binary.exists():
        tool_missing(f"{binary} is missing")
    base, home, tmp = isolated_dirs("agentrc-xdisc-copilot-")
    project = copy_project(tree[0], base / "project")
    (home / ".copilot").mkdir()
    (home / ".copilot" / "settings.json").write_text(json.dumps({"trustedFolders": [str(project)]}), encoding="utf-8")
    sink = LocalSink()

    def call(*args: str, **extra: str) -> subprocess.CompletedProcess:
        env = offline_env(home, tmp, proxy=sink, extra={"COPILOT_AUTO_UPDATE": "false", **extra})
        return run([*cli_argv(binary), *args], project, env, timeout=120)

    yield project, call, sink
    sink.close()


def _copilot_prompt(copilot) -> Set[str]:
    project, call, sink = copilot
    before = len(sink.requests)
    call("-p", "hi", "--allow-all-tools", "-s", COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=sink.url + "/v1",
         COPILOT_MODEL="gpt-4.1", COPILOT_PROVIDER_API_KEY="none")
    requests = [r for r in sink.requests[before:] if r["method"] == "POST"]
    assert requests, "copilot -p sent no model request"
    return _offered(requests)


def test_copilot_loads_only_foreign_skills_and_instructions_the_report_names(tree, copilot):
    project, call, _ = copilot
    proc = call("skill", "list", "--json")
    assert proc.returncode == 0, describe(proc)
    skills = [s for s in json.loads(proc.stdout) if s.get("source") == "project"]
    proc = call("instruction", "list", "--json")
    assert proc.returncode == 0, describe(proc)
    sources = [i["sourcePath"] for i in json.loads(proc.stdout) if i.get("sourcePath")]
    located = [str(project / p) if not Path(p).is_absolute() else p for p in sources]
    foreign = _foreign(tree, "copilot", project, [s["path"] for s in skills] + located)
    # Copilot reads .claude/skills (deep: audience claude), .claude/rules and .agents/skills
    # (the rule and command copies, the Codex- and Gemini-only skills). agentrc has no switch
    # that Copilot applies, so the report must name every one of them for copilot.
    assert {".claude/skills/deep/SKILL.md", ".agents/skills/style/SKILL.md", ".agents/skills/cdx/SKILL.md",
            ".agents/skills/rev/SKILL.md", ".claude/rules/style.md"} <= foreign, (foreign, proc.stdout)
    _check_named(tree, "copilot", foreign, {s["name"] for s in skills})
    assert _named(tree[1], "copilot", hidden=True) == set()
    # `plain` has the same bytes for every client: Copilot gets no .github/skills copy and
    # loads it once, from a copy its report lists as its output.
    assert not (project / ".github" / "skills" / "plain").exists()
    plain = [s["path"] for s in skills if s["name"] == "plain"]
    outputs = _outputs(tree, "copilot", "skill", "plain")
    # (It lists a skill's directory; .agents/skills comes before .claude/skills: the same bytes.)
    assert len(plain) == 1 and Path(plain[0]).resolve().relative_to(project.resolve()).as_posix() in (
        ".claude/skills/plain", ".agents/skills/plain"), plain
    assert outputs[0] in (".claude/skills/plain/SKILL.md", ".agents/skills/plain/SKILL.md"), outputs


def test_copilot_offers_the_model_what_skill_list_lists(copilot):
    project, call, _ = copilot
    proc = call("skill", "list", "--json")
    listed = {s["name"] for s in json.loads(proc.stdout) if s.get("enabled", True)}
    assert _copilot_prompt(copilot) == listed


def test_copilot_ignores_disabled_skills_of_the_repository_settings(copilot):
    """Why agentrc writes no `disabledSkills` into .github/copilot/settings.json: Copilot CLI
    1.0.102 accepts the key there (`copilot config --repo disabledSkills deep` writes it) but a
    session still offers the skill. If this starts failing, Copilot applies it now and the
    adapter can get a `skill_switch`."""
    project, call, _ = copilot
    settings = project / ".github" / "copilot" / "settings.json"
    assert not settings.exists()
    proc = call("config", "--repo", "disabledSkills", "deep")
    assert proc.returncode == 0 and settings.is_file(), describe(proc)
    try:
        assert json.loads(settings.read_text(encoding="utf-8")) == {"disabledSkills": ["deep"]}
        assert "deep" in _copilot_prompt(copilot)
    finally:
        settings.unlink()
        for extra in settings.parent.glob("settings.json.*"):
            extra.unlink()


# ---------------------------------------------------------------------------------------------
# Claude Code, Codex, Gemini CLI: their own directory only
# ---------------------------------------------------------------------------------------------


def test_claude_reads_no_other_clients_skills(tree):
    out, report = tree
    assert _named(report, "claude", hidden=False) == _named(report, "claude", hidden=True) == set()
    check_npm_package("@anthropic-ai/claude-code")
    base, home, tmp = isolated_dirs("agentrc-xdisc-claude-")
    project = copy_project(out, base / "project")
    with LocalSink() as sink:
        env = offline_env(home, tmp, proxy=sink, extra={"DISABLE_AUTOUPDATER": "1",
                                                         "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
        proc = run([NPM_MODULES / ".bin" / "claude", "-p", "x", "--output-format", "stream-json", "--verbose",
                    "--no-session-persistence"], project, env, timeout=90)
    init = next((m for m in (_json(line) for line in proc.stdout.splitlines())
                 if m.get("type") == "system" and m.get("subtype") == "init"), None)
    assert init is not None, describe(proc)
    # Its own skills (the command is one) are listed; none of .agents/skills alone is.
    assert {"deep", "plain", "ship"} <= set(init["skills"]), init["skills"]
    assert not {"style", "cdx", "gem"} & set(init["skills"]), init["skills"]


def _gemini(tree, name: str, *args: str, **extra: str) -> Tuple[Path, subprocess.CompletedProcess, List[Any]]:
    check_npm_package("@google/gemini-cli")
    base, home, tmp = isolated_dirs(f"agentrc-xdisc-gemini-{name}-")
    project = copy_project(tree[0], base / "project")
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8")
    if extra.pop("strip_switch", ""):
        settings = project / ".gemini" / "settings.json"
        data = json.loads(settings.read_text(encoding="utf-8"))
        data.pop("skills")
        settings.write_text(json.dumps(data), encoding="utf-8")
    with LocalSink() as proxy, LocalSink() as model:
        env = offline_env(home, tmp, proxy=proxy, extra={
            "GEMINI_CLI_HOME": str(home), "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_API_KEY": "agentrc-dummy", "GOOGLE_GEMINI_BASE_URL": model.url})
        proc = run([*cli_argv(NPM_MODULES / ".bin" / "gemini"), *args], project, env, timeout=90)
        requests = list(model.requests)
    return project, proc, requests


def _gemini_offered(requests: List[Any]) -> Set[str]:
    bodies = [r["body"] for r in requests if isinstance(r.get("body"), dict) and r["body"].get("tools")]
    assert bodies, f"no model request with tools ({len(requests)} requests)"
    text = json.dumps(bodies[0].get("systemInstruction"))
    return set(re.findall(r"<skill>(?:\\n|\s)*<name>(.*?)</name>", text))


def test_gemini_hides_with_its_own_setting_what_is_not_for_it_and_the_report_names_the_rest(tree):
    project, proc, _ = _gemini(tree, "list", "skills", "list")
    assert proc.returncode == 0, describe(proc)
    entries = re.findall(r"^(\S+) \[(Enabled|Disabled)\].*?Location:\s*(\S+)", proc.stdout, re.M | re.S)
    assert entries, proc.stdout
    loaded = {name for name, _, _ in entries}
    foreign = _foreign(tree, "gemini", project, [loc for _, _, loc in entries])
    # Codex's command and the Codex-only skill in .agents/skills: hidden by skills.disabled.
    # OpenClaw's agent there too: Gemini CLI has it as an agent of its own.
    assert {".agents/skills/ship/SKILL.md", ".agents/skills/cdx/SKILL.md", ".agents/skills/rev/SKILL.md"} <= foreign, \
        foreign
    _check_named(tree, "gemini", foreign, loaded)
    assert {n for n, state, _ in entries if state == "Disabled"} == {
        Path(p).parent.name for p in _named(tree[1], "gemini", hidden=True)} == {"ship", "cdx", "rev"}
    # The model is offered the enabled ones only; without the setting, all of them.
    _, _, requests = _gemini(tree, "request", "--approval-mode", "yolo", "-p", "hi", "-o", "json")
    offered = _gemini_offered(requests)
    assert {"plain", "style", "gem"} <= offered and not {"ship", "cdx", "rev"} & offered, offered
    _, _, requests = _gemini(tree, "control", "--approval-mode", "yolo", "-p", "hi", "-o", "json", strip_switch="1")
    assert {"ship", "cdx", "rev"} <= _gemini_offered(requests)


def test_codex_loads_what_the_report_names_for_it(tree):
    """Codex loads every skill of .agents/skills, also the Gemini-only one and the agent OpenClaw
    writes there; agentrc writes no switch for it, so the report names those copies for codex."""
    from .test_codex_discovery import AppServer  # the app-server client of the Codex tests
    check_npm_package("@openai/codex")
    base = make_temp_dir("agentrc-xdisc-codex-")
    project = copy_project(tree[0], base / "project")
    home = base / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        'check_for_update_on_startup = false\nmodel_provider = "agentrc-offline"\n\n[features]\nplugins = false\n\n'
        '[model_providers.agentrc-offline]\nname = "agentrc offline"\nbase_url = "http://127.0.0.1:1/v1"\n'
        f'wire_api = "responses"\n\n[projects."{project}"]\ntrust_level = "trusted"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
    env["CODEX_HOME"] = str(home)
    app = AppServer(NPM_MODULES / ".bin" / "codex", project, env)
    try:
        result = app.request("skills/list", {"cwds": [str(project)]})
    finally:
        app.close()
    paths = [s["path"] for entry in result["data"] for s in entry["skills"]]
    loaded = {Path(p).parent.name for p in paths}
    foreign = _foreign(tree, "codex", project, paths)
    assert foreign == {".agents/skills/gem/SKILL.md", ".agents/skills/rev/SKILL.md"}, foreign
    _check_named(tree, "codex", foreign, loaded)
    assert not any(p.startswith(".claude/") for p in foreign)


def _outputs(tree, client: str, kind: str, name: str) -> List[str]:
    return next(i["outputs"] for i in tree[1]["items"] if (i["client"], i["kind"], i["name"]) == (client, kind, name))


def test_each_item_loads_once_the_shared_copies_and_the_warnings(tree):
    """`plain` is written once per directory the clients read (.claude/skills for Claude Code,
    .agents/skills for Codex, Gemini CLI and OpenClaw): no .github/skills or .opencode/skills
    copy, and the report says Copilot and opencode load Claude Code's (the tests above saw
    each load it once)."""
    out, report = tree
    assert not (out / ".github" / "skills").exists() and not (out / ".opencode" / "skills" / "plain").exists()
    plain = next(i for i in report["items"] if (i["client"], i["kind"], i["name"]) == ("claude", "skill", "plain"))
    loaded = {(e["client"], e["path"]): e["detail"] for e in plain.get("also_loaded_by", [])}
    for reader in ("copilot", "opencode"):
        assert loaded[(reader, ".claude/skills/plain/SKILL.md")].endswith(
            "agentrc writes no second copy (shared-copies)")
        assert _outputs(tree, reader, "skill", "plain") == [".claude/skills/plain/SKILL.md"]


def _json(line: str) -> Dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
