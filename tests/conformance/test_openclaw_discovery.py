"""OpenClaw (npm `openclaw`, the real CLI, offline) loads what agentrc generates for it.

agentrc writes OpenClaw two things: AGENTS.md and Agent Skills in the shared `.agents/skills`
(rules, agents and commands become skills). OpenClaw reads them from its agent workspace,
which the tests set with `OPENCLAW_WORKSPACE_DIR` (the skills listing) or
`agents.defaults.workspace` (the model run) to a copy of the build. MCP servers live only in
`~/.openclaw/openclaw.json`: agentrc writes none and its report gives the `openclaw mcp set`
command to run; the last test runs those commands and asks OpenClaw what it saved.

OpenClaw 2026.9.6 needs Node >= 24.16 (26 here), which it gets from the npm package `node`:
both are pinned in tools/openclaw-package.json and installed into .tools/openclaw (node
first, then openclaw with that node on PATH: openclaw's preinstall refuses an older Node).
Every run has a private HOME, no credentials and stdin closed, with a local sink as the
HTTP(S) proxy and, for `openclaw agent --local`, as the model endpoint (an OpenAI-compatible
provider in openclaw.json): the sink refuses the request and the test reads what OpenClaw
would have sent its model.
"""

from __future__ import annotations

import html
import json
import re
import shlex
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from .conformance_helpers import ROOT, TOOLS_DIR, describe, read_frontmatter, run, tool_missing
from .offline_clients import LocalSink, client_build, copy_project, isolated_dirs, offline_env

PINS = ROOT / "tools" / "openclaw-package.json"
PREFIX = TOOLS_DIR / "openclaw"
PROJECT_SOURCE = "agents-skills-project"  # `source` of a workspace .agents/skills skill


def _pins() -> Dict[str, str]:
    deps: Dict[str, str] = json.loads(PINS.read_text(encoding="utf-8"))["devDependencies"]
    return deps


def _installed(package: str) -> str:
    manifest = PREFIX / "node_modules" / package / "package.json"
    if not manifest.exists():
        return ""
    return str(json.loads(manifest.read_text(encoding="utf-8")).get("version", ""))


@pytest.fixture(scope="module")
def openclaw() -> List[str]:
    """argv prefix that runs the pinned OpenClaw with the pinned Node."""
    pins = _pins()
    for package in ("node", "openclaw"):
        have = _installed(package)
        if have != pins[package]:
            tool_missing(f"{package} {pins[package]} (tools/openclaw-package.json) is not installed in "
                         f"{PREFIX.relative_to(ROOT)}" + (f" ({have} is)" if have else ""))
    node = PREFIX / "node_modules" / ".bin" / "node"
    proc = run([str(node), "--version"], cwd=ROOT)
    assert proc.stdout.strip() == f"v{pins['node']}", describe(proc)
    return [str(node), str(PREFIX / "node_modules" / "openclaw" / "openclaw.mjs")]


@pytest.fixture(scope="module")
def build():
    return client_build("registry", "openclaw")


def _skills(build) -> Dict[str, str]:
    """{skill name: description} of every item agentrc generated as a skill in .agents/skills."""
    found = {}
    for item in build.report["items"]:
        if item["client"] != "openclaw" or not item["generated"]:
            continue
        for out in item["outputs"]:
            if re.fullmatch(r"\.agents/skills/[^/]+/SKILL\.md", out):
                fm = read_frontmatter(build.out / out)
                found[str(fm["name"])] = str(fm["description"])
    assert found, "the build generated no skills for openclaw"
    return found


def _openclaw(argv: List[str], project: Path, home: Path, tmp: Path, sink: LocalSink, *args: str,
              workspace: bool = True):
    extra = {"OPENCLAW_WORKSPACE_DIR": str(project)} if workspace else {}
    return run(argv + list(args), cwd=project, env=offline_env(home, tmp, proxy=sink, extra=extra))


def _json(proc) -> Any:
    """The JSON document of a `--json` run (OpenClaw may print config warnings before it)."""
    text = proc.stdout
    start = min(i for i in (text.find("{"), text.find("[")) if i >= 0)
    return json.loads(text[start:])


def test_openclaw_skills_list_lists_every_generated_skill(openclaw: List[str], build):
    expected = _skills(build)
    base, home, tmp = isolated_dirs("agentrc-openclaw-skills-")
    project = copy_project(build.out, base / "project")
    with LocalSink() as sink:
        proc = _openclaw(openclaw, project, home, tmp, sink, "skills", "list", "--json")
    assert proc.returncode == 0, describe(proc)
    listing = _json(proc)
    assert listing["workspaceDir"] == str(project), listing["workspaceDir"]
    ours = {s["name"]: s for s in listing["skills"] if s["source"] == PROJECT_SOURCE}
    assert sorted(ours) == sorted(expected), describe(proc)
    for name, skill in ours.items():
        assert skill["description"] == expected[name], name
        # Ready for the model and as /<name>: nothing agentrc wrote gates it.
        assert skill["eligible"] and skill["modelVisible"] and skill["userInvocable"], skill
    assert not sink.connects(), sink.connects()


def _model_config(sink: LocalSink, project: Path) -> Dict[str, Any]:
    """openclaw.json: an OpenAI-compatible provider at the sink, the project as the workspace."""
    return {"models": {"providers": {"sink": {"baseUrl": f"{sink.url}/v1", "apiKey": "agentrc-conformance",
                                              "api": "openai-completions", "models": [{"id": "m", "name": "m"}]}}},
            "agents": {"defaults": {"workspace": str(project), "model": {"primary": "sink/m"}}}}


def _available(system: str) -> Dict[str, Tuple[str, str]]:
    """{name: (description, location)} of the `<available_skills>` of OpenClaw's system prompt."""
    m = re.search(r"<available_skills>\n(.*?)</available_skills>", system, re.S)
    assert m, "no <available_skills> in the system prompt"
    found = {}
    for block in re.findall(r"<skill>(.*?)</skill>", m.group(1), re.S):
        fields = dict(re.findall(r"<(name|description|location)>(.*?)</\1>", block, re.S))
        # The index is XML: descriptions are escaped (`&apos;`).
        found[html.unescape(fields["name"])] = (html.unescape(fields.get("description", "")),
                                                html.unescape(fields.get("location", "")))
    return found


def test_openclaw_model_request_has_every_generated_skill_and_agents_md(openclaw: List[str], build):
    expected = _skills(build)
    base, home, tmp = isolated_dirs("agentrc-openclaw-model-")
    project = copy_project(build.out, base / "project")
    agents_md = (project / "AGENTS.md").read_text(encoding="utf-8").strip()
    with LocalSink() as sink:
        (home / ".openclaw").mkdir()
        (home / ".openclaw" / "openclaw.json").write_text(json.dumps(_model_config(sink, project)), encoding="utf-8")
        proc = _openclaw(openclaw, project, home, tmp, sink, "agent", "--local", "--agent", "main", "-m", "hello",
                         "--json", "--timeout", "60", workspace=False)
    bodies = [r["body"] for r in sink.requests
              if r["method"] == "POST" and r["path"].endswith("/chat/completions") and isinstance(r["body"], dict)]
    assert bodies, describe(proc)
    system = bodies[0]["messages"][0]["content"]
    system = system if isinstance(system, str) else "".join(part.get("text", "") for part in system)
    available = _available(system)
    ours = {n: d for n, (d, where) in available.items() if where.startswith(f"{project}/.agents/skills/")}
    assert sorted(ours) == sorted(expected), system
    for name, shown in ours.items():
        assert shown == expected[name], name
        assert available[name][1] == f"{project}/.agents/skills/{name}/SKILL.md", available[name]
    # AGENTS.md under the workspace's Project Context, verbatim.
    assert f"## {project}/AGENTS.md\n{agents_md}\n" in system, system
    assert not sink.connects(), sink.connects()


def _set_commands(build) -> Dict[str, str]:
    """{server: the `openclaw mcp set` command line} the report gives for each MCP server."""
    found = {}
    for item in build.report["items"]:
        if item["client"] != "openclaw" or item["kind"] != "mcp":
            continue
        assert not item["outputs"], item  # nothing is written for OpenClaw
        commands = {m for f in item["fields"] for m in re.findall(r"run: `(openclaw mcp set [^`]+)`", f["detail"])}
        assert len(commands) == 1, item
        found[item["name"]] = commands.pop()
    assert found, "the report holds no MCP server for openclaw"
    return found


def test_openclaw_saves_the_mcp_servers_the_report_says_to_set(openclaw: List[str], build):
    """agentrc writes no MCP server for OpenClaw (it reads mcp.servers of ~/.openclaw/openclaw.json
    only); the commands its report gives are accepted, and `openclaw mcp list` shows each server
    as the command gives it (transport, URL or command line)."""
    commands = _set_commands(build)
    base, home, tmp = isolated_dirs("agentrc-openclaw-mcp-")
    project = copy_project(build.out, base / "project")
    given = {}
    with LocalSink() as sink:
        for name, line in commands.items():
            args = shlex.split(line)
            assert args[:4] == ["openclaw", "mcp", "set", name], line
            given[name] = json.loads(args[4])
            proc = _openclaw(openclaw, project, home, tmp, sink, *args[1:])
            assert proc.returncode == 0, describe(proc)
        listed = _openclaw(openclaw, project, home, tmp, sink, "mcp", "list", "--json")
    assert listed.returncode == 0, describe(listed)
    assert _json(listed) == given, describe(listed)
    assert not sink.requests, sink.requests
