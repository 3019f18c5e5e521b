"""Claude Code (the real CLI, offline, isolated HOME) reads what agentrc generates for it.

Offline, Claude Code can list MCP servers (`claude mcp list`/`get`: project servers show as
"Pending approval" until a person trusts them, which is the expected state) and can install
a plugin from a local marketplace and print its component inventory (`claude plugin
details`). Skills, agents and hooks of a *project* have no offline listing command; the
plugin inventory is how this suite checks that Claude Code parses them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from agentrc.load import load_registry
from agentrc.model import Kind
from agentrc.sourceio import read_tree

from .conformance_helpers import NPM_MODULES, REGISTRY, ROOT, check_npm_package, describe, make_temp_dir, run, strip_ansi

PACKAGE = "@anthropic-ai/claude-code"


@pytest.fixture(scope="module")
def claude() -> Path:
    check_npm_package(PACKAGE)
    return NPM_MODULES / ".bin" / "claude"


def _env(home: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update({"HOME": str(home), "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    return env


def _agentrc(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "agentrc", *args], cwd=str(ROOT), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)


def _registry():
    tree, _ = read_tree([REGISTRY.relative_to(ROOT).as_posix()])
    from agentrc.clients import registry as client_registry

    registry, _ = load_registry(tree, client_registry.families(), client_registry.passthrough_blocks())
    return registry


def test_claude_lists_every_mcp_server_of_the_bundles(claude: Path):
    out = make_temp_dir("agentrc-claude-mcp-") / "project"
    proc = _agentrc("build", REGISTRY.relative_to(ROOT).as_posix(), "--client", "claude", "--out", str(out),
                    "--no-cache")
    assert proc.returncode == 0, proc.stderr
    expected = sorted({s.name for b in _registry().bundles for s in b.servers})
    assert expected, "examples/registry declares no MCP servers"
    home = make_temp_dir("agentrc-claude-home-")
    listed = run([claude, "mcp", "list"], out, _env(home))
    assert listed.returncode == 0, describe(listed)
    names = sorted(re.findall(r"^([\w.-]+): .* - ", strip_ansi(listed.stdout), re.M))
    assert names == expected, describe(listed)
    for name in expected:
        got = run([claude, "mcp", "get", name], out, _env(home))
        assert got.returncode == 0, describe(got)
        assert "Project config (shared via .mcp.json)" in got.stdout, describe(got)


def test_claude_installs_the_plugin_and_inventories_it(claude: Path):
    bundle = "platform-baseline"
    plugin = make_temp_dir("agentrc-claude-plugin-") / bundle
    proc = _agentrc("build", REGISTRY.relative_to(ROOT).as_posix(), "--layout", "plugin", "--client", "claude",
                    "--bundle", bundle, "--out", str(plugin), "--no-cache")
    assert proc.returncode == 0, proc.stderr
    home = make_temp_dir("agentrc-claude-home-")
    env = _env(home)
    added = run([claude, "plugin", "marketplace", "add", plugin], plugin, env)
    assert added.returncode == 0, describe(added)
    installed = run([claude, "plugin", "install", f"{bundle}@{bundle}-marketplace"], plugin, env)
    assert installed.returncode == 0, describe(installed)
    details = run([claude, "plugin", "details", f"{bundle}@{bundle}-marketplace"], plugin, env)
    assert details.returncode == 0, describe(details)
    text = strip_ansi(details.stdout)

    def inventory(label: str) -> List[str]:
        m = re.search(rf"^\s*{label} \((\d+)\)\s*(.*)$", text, re.M)
        assert m, f"no {label} line in:\n{text}"
        names = [n.strip() for n in m.group(2).split(",") if n.strip()]
        return names if names and "(" not in m.group(2) else [m.group(1)]

    # What the plugin holds, from the files agentrc wrote (skills and commands are skills).
    skills = sorted(p.parent.name for p in (plugin / "skills").glob("*/SKILL.md"))
    agents = sorted(p.stem for p in (plugin / "agents").glob("*.md"))
    assert skills and agents
    assert sorted(inventory("Skills")) == skills, text
    assert sorted(inventory("Agents")) == agents, text
    events = sorted(__import__("json").loads((plugin / "hooks" / "hooks.json").read_text())["hooks"])
    m = re.search(r"^\s*Hooks \((\d+)\)\s*(.*)$", text, re.M)
    assert m and int(m.group(1)) == len(events) and all(e in m.group(2) for e in events), text
    # Every command of the bundle's closure became a user-invoked skill.
    commands = {i.name for i in _registry().items if i.kind is Kind.COMMAND}
    assert commands & set(skills), (commands, skills)
