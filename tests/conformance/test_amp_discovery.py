"""Amp (the real CLI, offline) lists what agentrc generates for it.

`amp skill list --json` and `amp mcp list --json` read the workspace without a login once an
API key is set (a dummy one here; `AMP_URL` and the proxy point at the local sink, so nothing
leaves the machine). Amp starts no MCP server to list it.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any, Dict, List

import pytest

from .conformance_helpers import NPM_MODULES, check_npm_package, describe, run, tool_missing
from .offline_clients import LocalSink, client_build, copy_project, isolated_dirs, offline_env

PACKAGE = "@ampcode/cli"
ROOT = ".agents/skills"


def _amp() -> Path:
    check_npm_package(PACKAGE)
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), "")
    for cand in (NPM_MODULES / f"@ampcode/cli-linux-{arch}" / "amp", NPM_MODULES / "@ampcode/cli" / "bin" / "amp.exe"):
        if cand.is_file() and cand.stat().st_size > 1_000_000:  # the wrapper's placeholder is a few bytes
            return cand
    tool_missing(f"no amp binary for this platform under {NPM_MODULES}")
    raise AssertionError  # unreachable


def _amp_json(project: Path, *args: str) -> Any:
    amp = _amp()
    _, home, tmp = isolated_dirs("agentrc-amp-")
    with LocalSink() as sink:
        env = offline_env(home, tmp, proxy=sink, extra={"AMP_API_KEY": "agentrc-dummy", "AMP_URL": sink.url})
        proc = run([str(amp), *args, "--json"], cwd=project, env=env)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)


def _workspace_skills(project: Path) -> Dict[str, Dict[str, Any]]:
    data = _amp_json(project, "skill", "list")
    assert data.get("errors") == [], data.get("errors")
    found = [s for s in data["skills"] if s.get("source") != "builtin"]
    names = [s["name"] for s in found]
    assert len(names) == len(set(names)), f"a name listed twice: {names}"
    return {s["name"]: s for s in found}


def _frontmatter(path: Path) -> Dict[str, Any]:
    import yaml

    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n", 2)[1])


@pytest.fixture(scope="module")
def amp_project(tmp_path_factory) -> Path:
    _amp()
    return copy_project(client_build("registry", "amp").out, tmp_path_factory.mktemp("amp") / "project")


def test_amp_skill_list_lists_every_generated_skill_rule_command_and_agent(amp_project: Path):
    build = client_build("registry", "amp")
    expected = {}
    for kind in ("skill", "rule", "command", "agent"):
        for name, outputs in build.generated(kind).items():
            entry = next(o for o in outputs if o.startswith(ROOT + "/") and o.endswith("/SKILL.md"))
            expected[entry[len(ROOT) + 1:-len("/SKILL.md")]] = entry
    assert expected, "the build generated nothing under .agents/skills"
    found = _workspace_skills(amp_project)
    assert sorted(found) == sorted(expected), "amp skill list != the generated .agents/skills"
    for name, skill in found.items():
        assert skill["source"] == "workspace-agents", skill
        assert skill["baseDir"] == (amp_project / ROOT / name).as_uri(), skill
        assert skill["description"] == _frontmatter(amp_project / expected[name])["description"], name


def test_amp_mcp_list_lists_every_generated_server(amp_project: Path):
    settings = json.loads((amp_project / ".amp" / "settings.json").read_text(encoding="utf-8"))
    written: Dict[str, Any] = settings["amp.mcpServers"]
    assert written, "the build wrote no MCP server"
    listed: List[Dict[str, Any]] = _amp_json(amp_project, "mcp", "list")
    workspace = {s["name"]: s for s in listed if s.get("source") == "workspace"}
    assert sorted(workspace) == sorted(written)
    for name, entry in written.items():
        assert workspace[name]["spec"] == entry, name
        assert workspace[name]["type"] == ("command" if "command" in entry else "url"), name


def test_amp_in_a_claude_and_amp_tree_loads_what_ar095_warns_about(tmp_path: Path):
    """Amp also lists .claude/skills (skills and Claude's commands-as-skills); its own
    .agents/skills copy wins a name clash, as also_reads and prefers_own say."""
    build = client_build("registry", "claude,amp")
    project = copy_project(build.out, tmp_path / "project")
    found = _workspace_skills(project)
    claude = set(build.generated_skills(".claude/skills", "claude"))
    ours = {n for n, s in found.items() if s["source"] == "workspace-agents"}
    theirs = {n for n, s in found.items() if s["source"] == "workspace-claude"}
    assert claude and theirs == {n for n in claude if n not in ours}
    notes = {i["name"]: a["detail"] for i in build.report["items"] if i.get("client") == "claude"
             for a in i.get("also_loaded_by") or () if a["client"] == "amp"}
    assert set(notes) == claude, "the report names every .claude/skills copy Amp loads"
    for name, detail in notes.items():
        assert name in (ours if "its own copy wins" in detail else theirs), (name, detail)
