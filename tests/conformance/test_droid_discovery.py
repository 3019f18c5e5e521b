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
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
import yaml

from .conformance_helpers import NPM_MODULES, ROOT, describe, pinned_npm_versions, run, tool_missing
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


def _env(sink: LocalSink, project: Path, mcp: Optional[Path] = None) -> Dict[str, str]:
    base, home, tmp = isolated_dirs("agentrc-droid-")
    (home / ".factory").mkdir()
    settings = {"customModels": [{"model": "sink-model", "displayName": "Sink", "baseUrl": f"{sink.url}/v1",
                                  "apiKey": "agentrc-dummy", "provider": "generic-chat-completion-api"}]}
    (home / ".factory" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    mcp = mcp or project / ".factory" / "mcp.json"
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
    assert _listed(proc, "project") == {name: entry["type"] for name, entry in servers.items()}, describe(proc)


def _listed(proc, scope: str) -> Dict[str, str]:
    """{server: transport} of the `droid mcp list` lines of `scope` (project, or user for a plugin's)."""
    listed = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s+(\S+)\s+(stdio|http|sse)\s+.*\[" + scope + r"\]\s*$", line)
        if m:
            listed[m.group(1)] = m.group(2)
    return listed


def _plugin_build(tmp: Path) -> Path:
    """examples/registry built with `--layout plugin` for droid (the documented command)."""
    out = tmp / "plugin"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRC_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", "examples/registry", "--client", "droid",
                           "--layout", "plugin", "--out", str(out), "--no-cache"], cwd=str(ROOT), env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, describe(proc)
    return out


def test_droid_installs_the_plugin_and_loads_its_skills_droids_and_commands(tmp_path: Path, droid_empty: Path):
    droid = _droid()
    plugin = _plugin_build(tmp_path)
    market = json.loads((plugin / ".factory-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    name = market["plugins"][0]["name"]
    commands = sorted(p.stem for p in (plugin / "commands").glob("*.md"))
    assert commands, "the plugin has no commands"
    with LocalSink() as sink:
        env = _env(sink, droid_empty, plugin / "mcp.json")
        for args in (["plugin", "marketplace", "add", str(plugin)], ["plugin", "install", f"{name}@plugin"]):
            proc = run([str(droid), *args], cwd=droid_empty, env=env)
            assert proc.returncode == 0 and "Successfully" in proc.stdout, describe(proc)
        servers = run([str(droid), "mcp", "list"], cwd=droid_empty, env=env)
        proc = run([str(droid), "exec", "-m", MODEL, f"/{commands[0]} AGENTRC-4242"], cwd=droid_empty, env=env)
        chats = [r for r in sink.requests if r["method"] == "POST" and r["path"].endswith("/chat/completions")]
    assert chats, describe(proc)
    messages = chats[0]["body"]["messages"]
    context, turn = "\n".join(_text(m) for m in messages[:-1]), _text(messages[-1])
    builtins = set(_section(_request(str(droid_empty), "hello")[0], "Available skills"))
    listed = sorted(line for line in _section(context, "Available skills") if line not in builtins)
    want = []
    for skill in sorted((plugin / "skills").glob("*/SKILL.md")):
        fm = _frontmatter(skill)
        if not fm.get("disable-model-invocation"):
            want.append(f"{fm['name']}: {fm['description']}")
    assert listed == sorted(want), "droid's skills != the plugin's skills/"
    droids = sorted(line for line in _section(context, "Custom droids available") if line.startswith("- "))
    assert droids == sorted(f"- {_frontmatter(p)['name']}: {_frontmatter(p)['description']} (location: personal)"
                            for p in (plugin / "droids").glob("*.md"))
    assert _body(plugin / "commands" / f"{commands[0]}.md").replace("$ARGUMENTS", "AGENTRC-4242") in turn
    written = json.loads((plugin / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert written and _listed(servers, "user") == {n: e["type"] for n, e in written.items()}, describe(servers)
