"""Factory's droid (the real CLI, offline) loads what agentrc generates for it.

droid sends its model requests to a bring-your-own-key model (`customModels` in the isolated
home's ~/.factory/settings.json, an OpenAI-compatible endpoint on the local sink, which
refuses it): the first request's system reminders list AGENTS.md, the available skills and
the custom droids; `/<command> ARGS` sends the command's text as the user message. Its calls
to Factory's own services go to the sink as the proxy and are refused. `droid mcp list`
lists the project's servers (the stdio commands are shims that exit at once).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import yaml

from .conformance_helpers import NPM_MODULES, describe, pinned_npm_versions, run, tool_missing
from .offline_clients import (
    LocalSink,
    client_build,
    copy_project,
    empty_project,
    isolated_dirs,
    offline_env,
    stdio_commands,
    write_shims,
)

PACKAGE = "@factory/cli-linux-x64"
MODEL = "custom:sink-model"


def _droid() -> Path:
    want = pinned_npm_versions().get(PACKAGE)
    binary = NPM_MODULES / PACKAGE / "bin" / "droid"
    if want is None or not binary.is_file():
        tool_missing(f"{PACKAGE} is not installed in {NPM_MODULES} (droid's binary for linux-x64)")
    have = json.loads((NPM_MODULES / PACKAGE / "package.json").read_text(encoding="utf-8"))["version"]
    if have != want:
        tool_missing(f"{PACKAGE} {have} is installed, but tools/package.json pins {want}")
    return binary


def _env(sink: LocalSink, project: Path) -> Dict[str, str]:
    base, home, tmp = isolated_dirs("agentrc-droid-")
    (home / ".factory").mkdir()
    settings = {"customModels": [{"model": "sink-model", "displayName": "Sink", "baseUrl": f"{sink.url}/v1",
                                  "apiKey": "agentrc-dummy", "provider": "generic-chat-completion-api"}]}
    (home / ".factory" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    mcp = project / ".factory" / "mcp.json"
    servers = json.loads(mcp.read_text(encoding="utf-8"))["mcpServers"] if mcp.is_file() else {}
    shims = write_shims(base / "shims", stdio_commands(servers), base / "shims.log")
    return offline_env(home, tmp, shims=shims, proxy=sink)


def _text(message: Dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or () if isinstance(part, dict))


@lru_cache(maxsize=None)
def _request(project: str, prompt: str) -> Tuple[str, str]:
    """(system and first user turns, last user turn) of droid's first model request."""
    with LocalSink() as sink:
        proc = run([str(_droid()), "exec", "-m", MODEL, prompt], cwd=Path(project), env=_env(sink, Path(project)))
        chats = [r for r in sink.requests if r["method"] == "POST" and r["path"].endswith("/chat/completions")]
    assert chats, f"droid sent no model request to the sink:\n{describe(proc)}"
    messages = chats[0]["body"]["messages"]
    return "\n".join(_text(m) for m in messages[:-1]), _text(messages[-1])


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("---\n", 2)[2].strip()


def _frontmatter(path: Path) -> Dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n", 2)[1])


def _section(text: str, head: str) -> List[str]:
    """The lines of the system reminder that starts with `head`, up to the blank line."""
    start = text.index(head)
    lines = text[start:].split("\n")[1:]
    return lines[:lines.index("")] if "" in lines else lines


@pytest.fixture(scope="module")
def droid_project(tmp_path_factory) -> Path:
    _droid()
    return copy_project(client_build("registry", "droid").out, tmp_path_factory.mktemp("droid") / "project")


@pytest.fixture(scope="module")
def droid_empty(tmp_path_factory) -> Path:
    return empty_project(tmp_path_factory.mktemp("droid-empty") / "project")


def test_droid_model_request_has_agents_md_every_skill_and_every_droid(droid_project: Path, droid_empty: Path):
    build = client_build("registry", "droid")
    context, _ = _request(str(droid_project), "hello")
    agents_md = (droid_project / "AGENTS.md").read_text(encoding="utf-8").strip()
    assert f"% cat {droid_project}/AGENTS.md\n<coding_guidelines>\n{agents_md}\n</coding_guidelines>" in context

    builtins = set(_section(_request(str(droid_empty), "hello")[0], "Available skills"))
    listed = [line for line in _section(context, "Available skills") if line not in builtins]
    expected = {}
    for kind in ("skill", "rule"):
        for name, outputs in build.generated(kind).items():
            entry = next(o for o in outputs if o.startswith(".factory/skills/") and o.endswith("/SKILL.md"))
            fm = _frontmatter(droid_project / entry)
            if not fm.get("disable-model-invocation"):  # those are the user's to invoke only
                expected[fm["name"]] = f"{fm['name']}: {fm['description']}"
    assert sorted(listed) == sorted(expected.values()), "droid's skills != the generated .factory/skills"

    droids = [line for line in _section(context, "Custom droids available") if line.startswith("- ")]
    want = []
    for name, outputs in build.generated("agent").items():
        fm = _frontmatter(droid_project / f".factory/droids/{name}.md")
        want.append(f"- {fm['name']}: {fm['description']} (location: project)")
    assert want and sorted(droids) == sorted(want), "droid's custom droids != the generated .factory/droids"


def test_droid_runs_every_generated_command_with_its_arguments(droid_project: Path):
    commands = client_build("registry", "droid").generated("command")
    assert commands, "the build generated no command"
    for name in commands:
        _, turn = _request(str(droid_project), f"/{name} AGENTRC-4242")
        text = _body(droid_project / f".factory/commands/{name}.md").replace("$ARGUMENTS", "AGENTRC-4242")
        assert text in turn, (name, turn[:2000])


def test_droid_mcp_list_lists_every_generated_server(droid_project: Path):
    servers = json.loads((droid_project / ".factory" / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers, "the build wrote no MCP server"
    with LocalSink() as sink:
        proc = run([str(_droid()), "mcp", "list"], cwd=droid_project, env=_env(sink, droid_project))
    assert proc.returncode == 0, describe(proc)
    listed = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s+(\S+)\s+(stdio|http|sse)\s+.*\[project\]\s*$", line)
        if m:
            listed[m.group(1)] = m.group(2)
    assert listed == {name: entry["type"] for name, entry in servers.items()}, describe(proc)
