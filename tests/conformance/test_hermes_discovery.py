"""Hermes Agent (PyPI `hermes-agent`, the real CLI, offline) loads what agentrc generates for it.

agentrc writes Hermes two things: AGENTS.md and Agent Skills in the shared `.agents/skills`
(rules, agents and commands become skills). Hermes 0.19.0 has no project skill tier, so the
tests point `skills.external_dirs` of `$HOME/.hermes/config.yaml` at the project's
`.agents/skills`, as the client page tells users to. Hooks and MCP servers live only in that
user file: agentrc writes none and its report gives the snippet to paste; the last test
pastes those snippets and asks Hermes what it read.

Every run has a private HOME, no credentials and stdin closed, with a local sink as the HTTP(S)
proxy and, for `hermes -z`, as the model endpoint (`model.provider: custom`): the sink refuses
the request and the test reads what Hermes would have sent its model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest

from .conformance_helpers import describe, read_frontmatter, run, strip_ansi
from .offline_clients import LocalSink, client_build, copy_project, isolated_dirs, offline_env
from .pypi_clients import model_requests, pypi_client, snippet, system_text

# Hosts Hermes 0.19.0 reaches for on its own at `hermes -z`: its update check (PyPI) and the
# model metadata of OpenRouter. The sink refuses both; project content depends on neither.
OWN_TRAFFIC = {"pypi.org:443", "openrouter.ai:443"}


@pytest.fixture(scope="module")
def hermes() -> Path:
    return pypi_client("hermes", "hermes-agent", "hermes")


@pytest.fixture(scope="module")
def build():
    return client_build("registry", "hermes")


def _skills(build) -> Dict[str, str]:
    """{skill name: description} of every item agentrc generated as a skill in .agents/skills."""
    found = {}
    for item in build.report["items"]:
        if item["client"] != "hermes" or not item["generated"]:
            continue
        for out in item["outputs"]:
            if re.fullmatch(r"\.agents/skills/[^/]+/SKILL\.md", out):
                fm = read_frontmatter(build.out / out)
                found[str(fm["name"])] = str(fm["description"])
    assert found, "the build generated no skills for hermes"
    return found


def _home(home: Path, config: Dict[str, Any]) -> None:
    (home / ".hermes").mkdir(parents=True, exist_ok=True)
    (home / ".hermes" / "config.yaml").write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML


def _hermes(hermes: Path, project: Path, home: Path, tmp: Path, sink: LocalSink, *args: str):
    env = offline_env(home, tmp, proxy=sink, extra={"COLUMNS": "200", "OPENAI_API_KEY": "agentrc-conformance"})
    return run([str(hermes), *args], cwd=project, env=env)


def _listed(text: str) -> List[str]:
    """First column of every row of a rich table (`hermes skills list`)."""
    return [line.split("│")[1].strip() for line in strip_ansi(text).splitlines() if line.startswith("│ ")]


def test_hermes_skills_list_lists_every_generated_skill(hermes: Path, build):
    expected = _skills(build)
    base, home, tmp = isolated_dirs("agentrc-hermes-skills-")
    project = copy_project(build.out, base / "project")
    with LocalSink() as sink:
        _home(home, {})
        proc = _hermes(hermes, project, home, tmp, sink, "skills", "list")
        assert proc.returncode == 0, describe(proc)
        # 0.19.0 has no project tier: without external_dirs none of the project's skills load.
        assert not set(_listed(proc.stdout)) & set(expected), describe(proc)
        _home(home, {"skills": {"external_dirs": [str(project / ".agents" / "skills")]}})
        proc = _hermes(hermes, project, home, tmp, sink, "skills", "list")
    assert proc.returncode == 0, describe(proc)
    assert sorted(_listed(proc.stdout)) == sorted(expected), describe(proc)
    assert not sink.requests, sink.requests


def _index(system: str) -> Dict[str, str]:
    """{name: shown description} of the `<available_skills>` index of Hermes' system prompt."""
    m = re.search(r"<available_skills>\n(.*?)</available_skills>", system, re.S)
    assert m, "no <available_skills> in the system prompt"
    return dict(re.findall(r"^\s+- ([^:\n]+): (.*)$", m.group(1), re.M))


def test_hermes_model_request_has_every_generated_skill_and_agents_md(hermes: Path, build):
    expected = _skills(build)
    base, home, tmp = isolated_dirs("agentrc-hermes-model-")
    project = copy_project(build.out, base / "project")
    with LocalSink() as sink:
        _home(home, {"model": {"provider": "custom", "base_url": f"{sink.url}/v1", "default": "agentrc-test"},
                     "skills": {"external_dirs": [str(project / ".agents" / "skills")]}})
        proc = _hermes(hermes, project, home, tmp, sink, "-z", "hello")
    bodies = model_requests(sink.requests)
    assert bodies, describe(proc)
    system = system_text(bodies[0])
    index = _index(system)
    assert sorted(index) == sorted(expected), system
    for name, shown in index.items():
        desc = expected[name]
        # The index shows the first 60 characters (57 and "..." when longer).
        assert shown == desc if len(desc) <= 60 else (shown.endswith("...") and desc.startswith(shown[:-3])), name
    agents_md = (project / "AGENTS.md").read_text(encoding="utf-8").strip()
    assert f"## AGENTS.md\n\n{agents_md}" in system, system
    assert set(sink.connects()) <= OWN_TRAFFIC, sink.connects()


def _snippets(build, kind: str) -> Dict[str, Any]:
    """The config.yaml keys the report tells users to add for the items of `kind`, merged."""
    merged: Dict[str, Any] = {}
    for item in build.report["items"]:
        if item["client"] != "hermes" or item["kind"] != kind:
            continue
        details = [f["detail"] for f in item["fields"] if "add: `" in f.get("detail", "")]
        assert len(details) == 1, item
        key, value = snippet(details[0])
        for sub, entry in value.items():
            if key == "hooks":
                merged.setdefault(key, {}).setdefault(sub, []).extend(entry)
            else:
                merged.setdefault(key, {})[sub] = entry
    assert merged, f"the report holds no snippet for a {kind}"
    return merged


def test_hermes_lists_the_hooks_and_mcp_servers_the_report_says_to_add(hermes: Path, build):
    """agentrc writes no hooks or MCP servers for Hermes (they live in the user's config.yaml);
    the snippets its report gives are what `hermes hooks list` and `hermes mcp list` read."""
    hooks = _snippets(build, "hook")
    servers = _snippets(build, "mcp")
    base, home, tmp = isolated_dirs("agentrc-hermes-config-")
    project = copy_project(build.out, base / "project")
    with LocalSink() as sink:
        _home(home, dict(hooks, **servers))
        listed_hooks = _hermes(hermes, project, home, tmp, sink, "hooks", "list")
        listed_servers = _hermes(hermes, project, home, tmp, sink, "mcp", "list")
    assert listed_hooks.returncode == 0, describe(listed_hooks)
    text = strip_ansi(listed_hooks.stdout)
    count = sum(len(v) for v in hooks["hooks"].values())
    assert f"Configured shell hooks ({count} total)" in text, text
    for event, entries in hooks["hooks"].items():
        assert f"[{event}]" in text, text
        for entry in entries:
            line = f"- {entry['command']} matcher={entry['matcher']!r}" if "matcher" in entry else f"- {entry['command']}"
            assert line in text, (entry, text)
            assert f"timeout={entry.get('timeout', 60)}s" in text, (entry, text)
    assert listed_servers.returncode == 0, describe(listed_servers)
    table = strip_ansi(listed_servers.stdout).split("──\n", 1)[-1]  # the rows, after the rule under the header
    rows = {line.split()[0]: line for line in table.splitlines() if line.strip()}
    assert sorted(rows) == sorted(servers["mcp_servers"]), listed_servers.stdout
    for name, entry in servers["mcp_servers"].items():
        shown = entry.get("url") or " ".join([entry["command"]] + list(entry.get("args", [])))
        assert shown in rows[name] and "enabled" in rows[name], rows[name]
    assert not sink.requests, sink.requests
