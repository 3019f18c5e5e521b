"""Aider (PyPI `aider-chat`, the real CLI, offline) reads what agentrc generates for it.

agentrc writes Aider AGENTS.md and one markdown file per rule, all named in `read:` of
`.aider.conf.yml` (Aider has no skills, agents, commands, hooks or MCP servers). The test
runs `aider --message` in a git copy of the build with a private HOME, no credentials, stdin
closed and a local sink as the HTTP(S) proxy and as the model endpoint (`--openai-api-base`):
the sink refuses the request, and the test reads the read-only files Aider sent its model.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict

import pytest

from .conformance_helpers import describe, run
from .offline_clients import LocalSink, client_build, copy_project, isolated_dirs, offline_env
from .pypi_clients import model_requests, pypi_client

# Aider 0.86.2 fetches litellm's model price list at start; the sink refuses it (project
# content does not depend on it).
OWN_TRAFFIC = {"raw.githubusercontent.com:443"}
READ_ONLY = "Here are some READ ONLY files, provided for your reference.\nDo not edit these files!\n\n"
FLAGS = ("--model", "openai/agentrc-test", "--yes-always", "--no-auto-commits", "--no-gitignore",
         "--map-tokens", "0", "--no-check-update", "--no-show-release-notes", "--no-analytics",
         "--no-show-model-warnings", "--no-pretty", "--no-stream")


@pytest.fixture(scope="module")
def aider() -> Path:
    return pypi_client("aider", "aider-chat", "aider")


def _read_only_files(text: str) -> Dict[str, str]:
    """{path: text} of the read-only files in Aider's message (each a path line and a fence)."""
    assert text.startswith(READ_ONLY), text[:300]
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\S[^\n]*)\n```\n(.*?)```\n", text[len(READ_ONLY):],
                                                        re.S | re.M)}


def _sent(aider: Path, project: Path) -> Dict[str, str]:
    base, home, tmp = isolated_dirs("agentrc-aider-")
    with LocalSink() as sink:
        env = offline_env(home, tmp, proxy=sink, extra={"OPENAI_API_KEY": "agentrc-conformance",
                                                       "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        proc = run([str(aider), *FLAGS, "--openai-api-base", f"{sink.url}/v1", "--message", "hello"], cwd=project,
                   env=env)
    bodies = model_requests(sink.requests)
    assert bodies, describe(proc)
    assert set(sink.connects()) <= OWN_TRAFFIC, sink.connects()
    texts = [str(m.get("content")) for m in bodies[0]["messages"] if m.get("role") == "user"]
    found = [t for t in texts if t.startswith(READ_ONLY)]
    return _read_only_files(found[0]) if found else {}


def test_aider_model_request_has_agents_md_and_every_generated_rule(aider: Path):
    build = client_build("registry", "aider")
    rules = {out for outs in build.generated("rule").values() for out in outs if out.startswith(".aider/rules/")}
    assert rules, "the build generated no rules for aider"
    assert not any(build.generated(k) for k in ("skill", "agent", "command", "hook")), "aider has none of these"
    project = copy_project(build.out, Path(isolated_dirs("agentrc-aider-project-")[0]) / "project")
    sent = _sent(aider, project)
    assert sorted(sent) == sorted(rules | {"AGENTS.md"})
    for path, text in sent.items():
        assert text == (project / path).read_text(encoding="utf-8"), path
    # A control: without agentrc's .aider.conf.yml Aider sends none of them.
    (project / ".aider.conf.yml").unlink()
    assert _sent(aider, project) == {}
