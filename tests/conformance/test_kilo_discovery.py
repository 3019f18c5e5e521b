"""Kilo Code (the real `kilo` CLI 7.7.7, offline, isolated home) discovers what agentrc generates.

examples/registry is built for `--client kilo` and copied into a git project; every run has an
isolated HOME and XDG dirs, no credentials, stdin closed and a local sink as the HTTP(S)
proxy. Kilo is a fork of opencode and keeps its debug commands (about 5 s each):

* `kilo debug skill`: every skill with its location (`.kilo/skills`, `.claude/skills`,
  `.agents/skills`, and the built-in `kilo-config`).
* `kilo debug config`: the merged configuration: `instructions` (each `.kilo/rules/*.md` file,
  registered by Kilo itself), `command` (each `.kilo/commands/*.md`, its frontmatter and body as
  `template`), `agent` (each `.kilo/agents/*.md`, parsed) and `mcp` (kilo.json's servers).
* `kilo run` with a model provider in the user's kilo.json whose OpenAI-compatible endpoint is
  the sink: its first model request carries each instruction file (`Instructions from: <path>`
  and the text), the `<available_skills>` and the subagents in the `task` tool (about 20 s; the
  stdio servers' commands are shims that exit at once).

A kilo.json may not reference the environment (`{env:VAR}`): Kilo skips such a server, so
agentrc leaves a header with a variable out, for the user's own config; the MCP test checks
both that Kilo skips the other form and that the user's entry fills in the header.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import pytest

from .conformance_helpers import NPM_MODULES, check_npm_package, describe, run, split_frontmatter
from .offline_clients import (
    LocalSink,
    cli_argv,
    client_build,
    copy_project,
    isolated_dirs,
    offline_env,
    write_shims,
)

PACKAGE = "@kilocode/cli"
# Kilo's own traffic off: the models.dev catalog, telemetry, update checks, its default plugins
# (installed from npm), LSP downloads, indexing and session upload. What is left reaches
# api.kilo.ai (refused by the sink) and the generated remote server's host.
QUIET = {"KILO_DISABLE_MODELS_FETCH": "1", "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_AUTOUPDATE": "1",
         "KILO_DISABLE_DEFAULT_PLUGINS": "1", "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_CODEBASE_INDEXING": "1",
         "KILO_DISABLE_SESSION_INGEST": "1", "KILO_DISABLE_SHARE": "1"}
BUILTIN_SKILLS = {"kilo-config"}
BUILTIN_AGENTS = {"explore", "general"}
_SKILL = re.compile(r"<skill>\s*<name>(.*?)</name>\s*<description>.*?</description>\s*"
                    r"<location>(.*?)</location>\s*</skill>", re.S)


@pytest.fixture(scope="module")
def kilo() -> List[str]:
    check_npm_package(PACKAGE)
    binary = NPM_MODULES / "@kilocode" / "cli-linux-x64" / "bin" / "kilo"
    return cli_argv(binary if binary.exists() else NPM_MODULES / ".bin" / "kilo")


@pytest.fixture(scope="module")
def build():
    return client_build("registry", "kilo")


@pytest.fixture(scope="module")
def project(build, tmp_path_factory) -> Path:
    return copy_project(build.out, tmp_path_factory.mktemp("kilo") / "project")


def _json(kilo: List[str], project: Path, *args: str, user_config: Optional[Mapping[str, Any]] = None,
          extra: Optional[Dict[str, str]] = None) -> Any:
    _, home, tmp = isolated_dirs("agentrc-kilo-")
    if user_config is not None:
        (home / ".config" / "kilo").mkdir(parents=True)
        (home / ".config" / "kilo" / "kilo.json").write_text(json.dumps(user_config), encoding="utf-8")
    with LocalSink() as sink:
        env = offline_env(home, tmp, proxy=sink, extra={**QUIET, **(extra or {})})
        proc = run(kilo + list(args), cwd=project, env=env)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout[proc.stdout.index("{" if args[-1] == "config" else "["):])


@pytest.fixture(scope="module")
def config(kilo, project) -> Dict[str, Any]:
    return _json(kilo, project, "debug", "config")


@pytest.fixture(scope="module")
def model_request(kilo, project, build) -> Dict[str, Any]:
    """The first model request of `kilo run hello`, the model at the local sink."""
    base, home, tmp = isolated_dirs("agentrc-kilo-run-")
    servers = json.loads((build.out / "kilo.json").read_text(encoding="utf-8"))["mcp"]
    shims = write_shims(base / "shims", [s["command"][0] for s in servers.values() if s.get("command")],
                        base / "shims.log")  # the stdio servers Kilo starts exit at once
    with LocalSink() as sink:
        (home / ".config" / "kilo").mkdir(parents=True)
        (home / ".config" / "kilo" / "kilo.json").write_text(json.dumps({
            "provider": {"sink": {"npm": "@ai-sdk/openai-compatible", "name": "sink",
                                  "options": {"baseURL": f"{sink.url}/v1", "apiKey": "agentrc-conformance"},
                                  "models": {"m": {"name": "m"}}}},
            "model": "sink/m", "autoupdate": False, "share": "disabled"}), encoding="utf-8")
        proc = run(kilo + ["run", "--model", "sink/m", "hello"], cwd=project,
                   env=offline_env(home, tmp, shims=shims, proxy=sink, extra=QUIET), timeout=90)
        posts = [r for r in sink.requests if r["method"] == "POST" and r["path"].endswith("/chat/completions")]
        hosts = {c.rsplit(":", 1)[0] for c in sink.connects()}
    assert posts, describe(proc)
    remote = {s["url"].split("/")[2] for s in servers.values() if s.get("url")}
    assert hosts <= {"api.kilo.ai"} | remote, hosts
    return posts[0]["body"]


def test_kilo_debug_skill_lists_exactly_the_generated_skills(kilo, project, build):
    generated = build.generated_skills(".kilo/skills")
    assert generated
    found = {s["name"]: s.get("location") for s in _json(kilo, project, "debug", "skill")
             if s["name"] not in BUILTIN_SKILLS}
    assert sorted(found) == sorted(generated)
    for name, location in found.items():
        assert Path(location).resolve() == (project / generated[name] / "SKILL.md").resolve(), name


def test_kilo_config_has_every_generated_rule_as_an_instruction(config, project, build):
    rules = sorted((build.out / ".kilo" / "rules").glob("*.md"))
    assert rules and sorted(p.stem for p in rules) == sorted(build.generated("rule"))
    assert sorted(Path(p).resolve() for p in config.get("instructions") or []) == sorted(
        (project / ".kilo" / "rules" / p.name).resolve() for p in rules)


def test_kilo_config_has_every_generated_command_and_agent(config, build):
    commands = sorted((build.out / ".kilo" / "commands").glob("*.md"))
    assert commands and sorted(config.get("command") or {}) == sorted(p.stem for p in commands)
    for f in commands:
        fm, body = split_frontmatter(f.read_text(encoding="utf-8"))
        parsed = config["command"][f.stem]
        assert (parsed.get("template") or "").strip() == body.strip(), f.name
        for key, value in fm.items():
            assert parsed.get(key) == value, f"{f.name}: kilo parsed {key}={parsed.get(key)!r}, generated {value!r}"
    agents = sorted((build.out / ".kilo" / "agents").glob("*.md"))
    assert agents and sorted(config.get("agent") or {}) == sorted(p.stem for p in agents)
    for f in agents:
        fm, body = split_frontmatter(f.read_text(encoding="utf-8"))
        parsed = config["agent"][f.stem]
        for key, value in fm.items():
            assert parsed.get(key) == value, f"{f.name}: kilo parsed {key}={parsed.get(key)!r}, generated {value!r}"
        assert (parsed.get("prompt") or "").strip() == body.strip(), f.name


def test_kilo_config_has_every_generated_mcp_server_and_the_users_header(kilo, config, project, build, tmp_path):
    generated = json.loads((build.out / "kilo.json").read_text(encoding="utf-8"))["mcp"]
    assert generated and config.get("mcp") == generated
    assert "{env:" not in (build.out / "kilo.json").read_text(encoding="utf-8")
    # The header agentrc leaves out (its report says so), in the user's config as the report
    # says: Kilo merges it into the project's entry and expands the variable there.
    remote = generated["api-docs"]
    assert "headers" not in remote
    [report] = [i for i in build.report["items"] if i["kind"] == "mcp" and i["name"] == "api-docs"]
    [outcome] = [f for f in report["fields"] if f["field"] == "remote"]
    assert outcome["status"] == "degraded" and "Authorization" in outcome["detail"], outcome
    assert "~/.config/kilo/kilo.json" in outcome["detail"], outcome
    user = {"mcp": {"api-docs": dict(remote, headers={"Authorization": "Bearer {env:API_DOCS_TOKEN}"})}}
    merged = _json(kilo, project, "debug", "config", user_config=user, extra={"API_DOCS_TOKEN": "tok-4242"})
    assert merged["mcp"]["api-docs"] == dict(remote, headers={"Authorization": "Bearer tok-4242"})
    # The control: the same entry in the project's kilo.json is skipped (so agentrc writes none).
    control = copy_project(build.out, tmp_path / "control")
    (control / "kilo.json").write_text(json.dumps({"mcp": dict(generated, **user["mcp"])}), encoding="utf-8")
    skipped = _json(kilo, control, "debug", "config", extra={"API_DOCS_TOKEN": "tok-4242"})
    assert sorted(skipped.get("mcp") or {}) == sorted(set(generated) - {"api-docs"})


def test_kilo_model_request_has_agents_md_every_rule_skill_and_subagent(model_request, project, build):
    system = model_request["messages"][0]["content"]
    assert isinstance(system, str)
    sources = re.findall(r"^Instructions from: (\S+)$", system, re.M)
    rules = sorted((build.out / ".kilo" / "rules").glob("*.md"))
    assert sorted(Path(p).resolve() for p in sources) == sorted(
        [(project / "AGENTS.md").resolve()] + [(project / ".kilo" / "rules" / p.name).resolve() for p in rules])
    for path in [build.out / "AGENTS.md"] + rules:
        text = path.read_text(encoding="utf-8").strip()
        assert f"Instructions from: {project / path.relative_to(build.out)}\n{text}" in system, path.name
    skills = {name: location for name, location in _SKILL.findall(system) if name not in BUILTIN_SKILLS}
    generated = build.generated_skills(".kilo/skills")
    assert sorted(skills) == sorted(generated)
    for name, location in skills.items():
        assert Path(location).resolve() == (project / generated[name] / "SKILL.md").resolve(), name
    task = next(t["function"] for t in model_request["tools"] if t["function"]["name"] == "task")
    listed = set(re.findall(r"^- ([\w.-]+): ", task["description"], re.M)) - BUILTIN_AGENTS
    subagents = sorted(f.stem for f in (build.out / ".kilo" / "agents").glob("*.md")
                       if split_frontmatter(f.read_text(encoding="utf-8"))[0].get("mode") == "subagent")
    assert subagents and sorted(listed) == subagents


def test_kilo_in_an_opencode_and_kilo_tree_loads_the_rules_the_report_names(kilo, tmp_path):
    """Kilo reads opencode.json's `instructions` too: built with opencode, it loads each rule
    opencode registers there beside its own, exactly the copies the report's also_loaded_by
    names (AR095)."""
    build = client_build("registry", "opencode,kilo")
    both = copy_project(build.out, tmp_path / "both")
    named = sorted(f"{(both / by['path']).resolve()}" for i in build.report["items"]
                   if i["client"] == "opencode" for by in i.get("also_loaded_by", []) if by["client"] == "kilo")
    assert named and all(p.endswith("/RULE.md") for p in named)
    own = [str((both / ".kilo" / "rules" / p.name).resolve()) for p in (build.out / ".kilo" / "rules").glob("*.md")]
    loaded = _json(kilo, both, "debug", "config")["instructions"]
    assert sorted(str((both / p).resolve()) for p in loaded) == sorted(own + named)
