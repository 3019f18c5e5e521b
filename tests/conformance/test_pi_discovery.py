"""pi (the real CLI, offline, isolated home) loads what agentrc generates for it.

examples/registry and examples/project are built for `--client pi` and each copied into a git
project; the `--layout plugin` build of examples/registry is installed as a pi package into an
empty git project with `pi install <dir> -l`. pi has no listing command for skills, prompt
templates or context files, so each run is `pi -p "/<command> AGENTRC-4242"` with
`--offline` (no update checks), no session file, HOME in the test's temp dir, and a model
provider in ~/.pi/agent/models.json whose OpenAI-compatible endpoint is a local sink (also the
HTTP(S) proxy). Its first model request is the account of what pi loaded:

* the system prompt's "# Project Context" holds AGENTS.md as written;
* its `<available_skills>` names every skill pi discovered, with its SKILL.md location;
* the user message is the prompt template expanded by pi ($ARGUMENTS substituted).

About 3 s per run, one run per command (one run when a build has none).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import weakref
from functools import lru_cache
from html import unescape
from pathlib import Path
from typing import Any, Dict, List, Optional

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
    tool_missing,
)
from .offline_clients import LocalSink, cli_argv, client_build, copy_project, empty_project, isolated_dirs, offline_env

PACKAGE = "@mariozechner/pi-coding-agent"
ARGS = "AGENTRC-4242"
_SKILL = re.compile(r"<skill>\s*<name>(.*?)</name>\s*<description>(.*?)</description>\s*"
                    r"<location>(.*?)</location>\s*</skill>", re.S)


@pytest.fixture(scope="module")
def pi() -> List[str]:
    check_npm_package(PACKAGE)
    path = NPM_MODULES / ".bin" / "pi"
    if not path.exists():
        tool_missing(f"{path} is missing")
    return cli_argv(path)


class PiProject:
    """A project with its own home, whose model provider is the local sink."""

    def __init__(self, project: Path, base: Path, home: Path, tmp: Path):
        self.project, self.home, self.tmp = project, home, tmp
        self.sink = LocalSink()
        weakref.finalize(self, self.sink.close)
        agent = home / ".pi" / "agent"
        agent.mkdir(parents=True)
        (agent / "models.json").write_text(json.dumps({"providers": {"sink": {
            "baseUrl": f"{self.sink.url}/v1", "api": "openai-completions", "apiKey": "agentrc-conformance",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "m1"}]}}}), encoding="utf-8")

    def run(self, pi: List[str], *args: str) -> subprocess.CompletedProcess:
        env = offline_env(self.home, self.tmp, proxy=self.sink, extra={"PI_OFFLINE": "1"})
        return run([*pi, *args], self.project, env, timeout=60)

    def ask(self, pi: List[str], prompt: str) -> Dict[str, Any]:
        """(system prompt, user message) of pi's first model request for `prompt`."""
        before = len(self.sink.requests)
        proc = self.run(pi, "--offline", "--no-session", "-p", "--provider", "sink", "--model", "m1", prompt)
        posts = [r for r in self.sink.requests[before:] if r["method"] == "POST"]
        assert posts, f"pi sent no model request:\n{describe(proc)}"
        assert all(r["path"] == "/v1/chat/completions" for r in posts), self.sink.requests
        assert not self.sink.connects(), f"pi tried to reach the network: {self.sink.connects()}"
        messages = posts[0]["body"]["messages"]
        user = messages[-1]["content"]
        text = user if isinstance(user, str) else "".join(p.get("text", "") for p in user)
        return {"system": messages[0]["content"], "user": text}


def _project(build_out: Optional[Path], name: str) -> PiProject:
    base, home, tmp = isolated_dirs(f"agentrc-pi-{name}-")
    project = empty_project(base / "project") if build_out is None else copy_project(build_out, base / "project")
    return PiProject(project, base, home, tmp)


def _skills(system: str) -> Dict[str, Dict[str, str]]:
    return {unescape(n): {"description": unescape(d), "location": unescape(loc)}
            for n, d, loc in _SKILL.findall(system)}


def _expanded(template: Path) -> str:
    """The prompt template's text as pi expands it with ARGS (no frontmatter)."""
    body = split_frontmatter(template.read_text(encoding="utf-8"))[1]
    return body.strip().replace("$ARGUMENTS", ARGS).replace("$@", ARGS).replace("$1", ARGS)


def _check_skills(found: Dict[str, Dict[str, str]], root: Path, where: str) -> None:
    expected = {}
    for skill in sorted(root.glob("*/SKILL.md")):
        fm = split_frontmatter(skill.read_text(encoding="utf-8"))[0]
        if fm.get("disable-model-invocation") is True:
            continue  # pi keeps it out of the system prompt (run as /skill:<name> only)
        expected[str(fm["name"])] = (str(fm["description"]), skill.resolve())
    assert sorted(found) == sorted(expected), f"skills pi lists != generated {where}"
    for name, (description, path) in expected.items():
        assert found[name]["description"] == description, name
        assert Path(found[name]["location"]).resolve() == path, name


@pytest.mark.parametrize("source", ("registry", "project"))
def test_pi_loads_the_generated_context_skills_and_prompt_templates(pi: List[str], source: str):
    build = client_build(source, "pi")
    pp = _project(build.out, source)
    prompts = sorted((pp.project / ".pi" / "prompts").glob("*.md"))
    assert sorted(p.stem for p in prompts) == sorted(build.generated("command")), "commands != .pi/prompts"
    runs = [(p.stem, pp.ask(pi, f"/{p.stem} {ARGS}")) for p in prompts] or [("", pp.ask(pi, "hello"))]
    for name, seen in runs:
        agents_md = pp.project / "AGENTS.md"
        if agents_md.exists():
            assert agents_md.read_text(encoding="utf-8").strip() in seen["system"], "AGENTS.md not in the prompt"
        _check_skills(_skills(seen["system"]), pp.project / ".agents" / "skills", ".agents/skills")
        if name:
            assert seen["user"] == _expanded(pp.project / ".pi" / "prompts" / f"{name}.md"), name
    generated = build.generated("skill")
    assert generated and set(generated) <= set(_skills(runs[0][1]["system"]))


@lru_cache(maxsize=None)
def _package_build() -> Path:
    """examples/registry built with --layout plugin for pi, once per session."""
    out = make_temp_dir("agentrc-pi-package-") / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRC_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", "examples/registry", "--client", "pi", "--layout",
                           "plugin", "--out", str(out), "--no-cache"], cwd=str(ROOT), env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    assert proc.returncode == 0, describe(proc)
    return out


def test_the_pi_package_installs_and_pi_loads_its_skills_and_prompts(pi: List[str]):
    package = _package_build()
    pp = _project(None, "package")
    proc = pp.run(pi, "install", str(package), "-l")
    assert proc.returncode == 0, describe(proc)
    listed = pp.run(pi, "list")
    assert listed.returncode == 0 and str(package) in listed.stdout, describe(listed)
    prompts = sorted((package / "prompts").glob("*.md"))
    assert prompts, "the package has no prompts/"
    for p in prompts:
        seen = pp.ask(pi, f"/{p.stem} {ARGS}")
        assert seen["user"] == _expanded(p), p.stem
        _check_skills(_skills(seen["system"]), package / "skills", "skills/ of the package")
