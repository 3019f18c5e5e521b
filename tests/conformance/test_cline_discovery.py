"""Cline (the real CLI, `cline` 3.x, offline, isolated home) loads what agentrc generates for it.

examples/registry is built for `--client cline` and copied into a git project. Cline has no
listing command that works without a terminal (`cline config` wants a TTY), so the judge is
its first model request: `cline auth -p openai-compatible -b URL` (in the isolated home)
names an OpenAI-compatible provider at a local sink, which records the request and refuses it (`--retries 1`: one request, about 5 s).
The sink is also the HTTP(S) proxy; besides the model request, only Cline's telemetry reaches it
(CONNECTs to otel.cline.bot and data.cline.bot, refused).

What that request shows (cline 3.0.65):

* The system prompt's `# Rules` section: each `.clinerules/*.md` file as `## <file name>`
  and its text without frontmatter (a rule with `paths:` too: the CLI loads it always), then
  `## Workspace AGENTS.md` and AGENTS.md's text.
* The `skills` tool: `Available skills: a, b.` (names only).
* One tool per `.cline/agents/*.yaml` subagent, `subagent_<name>`, described
  `Use the "<name>" subagent: <description>`.
* `/<workflow> ARGS` as the prompt: the user message is the workflow's text without
  frontmatter, then ` ARGS` (one run per workflow).
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from .conformance_helpers import NPM_MODULES, check_npm_package, describe, run, split_frontmatter
from .offline_clients import LocalSink, cli_argv, client_build, copy_project, isolated_dirs, offline_env

PACKAGE = "cline"
MODEL = "agentrc-test-model"
# Cline's telemetry, which it sends whatever the provider: the sink refuses the CONNECTs.
TELEMETRY = {"otel.cline.bot:443", "data.cline.bot:443"}


@pytest.fixture(scope="module")
def cline() -> List[str]:
    check_npm_package(PACKAGE)
    return cli_argv(NPM_MODULES / ".bin" / "cline")


@pytest.fixture(scope="module")
def build():
    return client_build("registry", "cline")


def _ask(cline: List[str], project: Path, prompt: str) -> Tuple[Dict[str, Any], LocalSink]:
    """The one model request `cline --json PROMPT` sends from `project`, and the sink."""
    base, home, tmp = isolated_dirs("agentrc-cline-")
    sink = LocalSink()
    env = offline_env(home, tmp, proxy=sink)
    auth = run(cline + ["auth", "-p", "openai-compatible", "-k", "agentrc-dummy", "-m", MODEL, "-b", f"{sink.url}/v1"],
               cwd=project, env=env)
    assert auth.returncode == 0, describe(auth)
    try:
        proc = run(cline + ["--json", "--retries", "1", prompt], cwd=project, env=env)
    finally:
        sink.close()
        _stop_daemons(home)
    posts = [r for r in sink.requests if r["method"] == "POST" and r["path"] == "/v1/chat/completions"]
    assert posts, f"cline sent no model request to the sink:\n{describe(proc)}"
    others = [r for r in sink.requests if r not in posts]
    assert all(r["method"] == "CONNECT" and r["path"] in TELEMETRY for r in others), others
    return posts[0]["body"], sink


def _stop_daemons(home: Path) -> None:
    """Cline leaves a hub daemon running (`cline --cline-hub-daemon`, detached from the run's
    process group): every process that runs with this test's HOME is stopped, so none
    outlives the test."""
    marker = f"HOME={home}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


@pytest.fixture(scope="module")
def request_body(cline, build, tmp_path_factory) -> Dict[str, Any]:
    project = copy_project(build.out, tmp_path_factory.mktemp("cline") / "project")
    body, _ = _ask(cline, project, "say hello")
    return body


def _system(body: Dict[str, Any]) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def _tools(body: Dict[str, Any]) -> Dict[str, str]:
    return {t["function"]["name"]: t["function"].get("description", "") for t in body.get("tools", [])}


def test_cline_model_request_has_every_generated_rule_and_agents_md(request_body, build):
    rules = sorted((build.out / ".clinerules").glob("*.md"))
    assert sorted(build.generated("rule")) == sorted(p.stem for p in rules) and rules
    system = _system(request_body)
    section = system[system.index("# Rules\n"):]
    rest = section
    for path in rules:  # in file-name order, each `## <name>` and its text without frontmatter
        _, text = split_frontmatter(path.read_text(encoding="utf-8"))
        block = f"## {path.stem}\n{text.strip()}\n\n"
        assert rest.startswith("# Rules\n" + block), path.name
        rest = "# Rules\n" + rest[len("# Rules\n" + block):]
    agents_md = (build.out / "AGENTS.md").read_text(encoding="utf-8").strip()
    assert rest == f"# Rules\n## Workspace AGENTS.md\n{agents_md}"  # nothing else


def test_cline_model_request_lists_every_generated_skill(request_body, build):
    generated = build.generated_skills(".cline/skills")
    assert generated and sorted(generated) == sorted(build.generated("skill"))
    described = _tools(request_body)["skills"]
    listed = re.search(r"Available skills: (.*?)\.$", described, re.M)
    assert listed, described
    assert sorted(s.strip() for s in listed.group(1).split(",")) == sorted(generated)


def test_cline_model_request_has_every_generated_subagent(request_body, build):
    files = sorted((build.out / ".cline" / "agents").glob("*.yaml"))
    assert files and sorted(p.stem for p in files) == sorted(build.generated("agent"))
    subagents = {n: d for n, d in _tools(request_body).items() if n.startswith("subagent_")}
    expected = {}
    for f in files:
        fm, _ = split_frontmatter(f.read_text(encoding="utf-8"))
        expected["subagent_" + re.sub(r"[^a-z0-9_]+", "_", str(fm["name"]).lower())] = (
            f'Use the "{fm["name"]}" subagent: {fm["description"]}')
    assert subagents == expected


def test_cline_runs_every_generated_workflow_with_its_arguments(cline, build, tmp_path_factory):
    files = sorted((build.out / ".clinerules" / "workflows").glob("*.md"))
    assert files and sorted(p.stem for p in files) == sorted(build.generated("command"))
    project = copy_project(build.out, tmp_path_factory.mktemp("cline") / "project")
    for f in files:
        body, _ = _ask(cline, project, f"/{f.stem} 1234")
        _, text = split_frontmatter(f.read_text(encoding="utf-8"))
        user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        assert user == f"{text.strip()} 1234", f.name
