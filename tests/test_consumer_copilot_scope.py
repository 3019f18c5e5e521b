"""Copilot's MCP scope (spec 001 §3.7, issue 34 item 8): a global installation's Copilot
servers go to the user-scope `~/.copilot/mcp-config.json` (HOME in tmp_path), through the
real `copilot mcp add` when it is on PATH and written there without it, the user's own
servers kept; a project installation writes only the workspace `.mcp.json`, which the
pinned Copilot CLI reads, and leaves the user's file alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from sourcerepos import Repo, bundle, isolated_home, skill
from test_consumer_plugins import BIN, _clis

from agentrc.cli.main import main

MCPS = ("mcps:\n  drawio:\n    remote:\n      type: http\n      url: https://mcp.example.com/mcp\n"
        "  files:\n    local:\n      command: npx\n      args: [\"-y\", \"files-mcp\"]\n      env:\n"
        "        TOKEN: \"${FILES_TOKEN}\"\n")
MINE = {"mcpServers": {"mine": {"type": "local", "command": "my-mcp", "args": [], "tools": ["*"]}}}


@pytest.fixture
def setup(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("COPILOT_HOME", raising=False)  # the CLI's own override of ~/.copilot
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"), "tools.bundle.yaml": bundle("tools", "  skills:\n    - a\n") + MCPS},
                tag="v1")
    home = tmp_path / "home"
    (home / ".copilot").mkdir(parents=True)
    (home / ".copilot" / "mcp-config.json").write_text(json.dumps(MINE))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return repo, home, work


def _bare_path(tmp_path, monkeypatch):
    bare = tmp_path / "bare"
    bare.mkdir()
    for tool in ("git", "node"):
        found = shutil.which(tool)
        if found:
            os.symlink(found, str(bare / tool))
    monkeypatch.setenv("PATH", str(bare))


def _user_config(home):
    return json.loads((home / ".copilot" / "mcp-config.json").read_text())["mcpServers"]


def _listed(home, cwd):
    out = subprocess.run([str(BIN / "copilot"), "mcp", "list", "--json"], cwd=str(cwd), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, env=dict(os.environ, HOME=str(home)))
    return json.loads(out.stdout)["mcpServers"]


def _records(home):
    lock = json.loads((home / ".config" / "agentrc" / "agentrc.lock.json").read_text())
    return {(m["name"], m["client"], m["scope"], m["status"], m.get("config")) for m in lock["mcps"]}


def test_global_copilot_servers_go_to_the_user_mcp_config_through_the_cli(setup, monkeypatch, capsys):
    repo, home, work = setup
    _clis(monkeypatch)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "copilot", "--global"]) == 0, \
        capsys.readouterr().err
    servers = _user_config(home)  # written by `copilot mcp add`, in ~/.copilot/mcp-config.json
    assert set(servers) == {"mine", "drawio", "files"}
    assert servers["files"]["env"] == {"TOKEN": "${FILES_TOKEN}"} and servers["drawio"]["url"] == \
        "https://mcp.example.com/mcp"
    assert {r for r in _records(home) if r[1] == "copilot"} == {("drawio", "copilot", "user", "installed", None),
                                                               ("files", "copilot", "user", "installed", None)}
    # Nothing at a project-scope location: not .github/mcp.json, .mcp.json or .vscode/mcp.json.
    for path in (".github", ".mcp.json", ".vscode"):
        assert not (home / path).exists() and not (work / path).exists(), path
    listed = _listed(home, work)
    assert {n for n, s in listed.items() if s.get("source") == "user"} == {"mine", "drawio", "files"}
    capsys.readouterr()
    assert main(["doctor", "--global"]) == 0
    # Removing them takes out agentrc's servers only.
    assert main(["remove", "tools", "--global"]) == 0
    assert set(_user_config(home)) == {"mine"}


def test_global_copilot_servers_are_written_there_without_the_cli(setup, tmp_path, monkeypatch, capsys):
    repo, home, work = setup
    _bare_path(tmp_path, monkeypatch)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "copilot", "--global"]) == 0, \
        capsys.readouterr().err
    servers = _user_config(home)
    assert set(servers) == {"mine", "drawio", "files"} and servers["mine"] == MINE["mcpServers"]["mine"]
    assert _records(home) == {("drawio", "copilot", "user", "config-written", ".copilot/mcp-config.json"),
                              ("files", "copilot", "user", "config-written", ".copilot/mcp-config.json")}
    if (BIN / "copilot").exists():  # the real CLI reads what agentrc wrote as the user's servers
        listed = _listed(home, work)
        assert listed["files"]["source"] == "user" and listed["files"]["env"] == {"TOKEN": "${FILES_TOKEN}"}
    capsys.readouterr()
    code = main(["doctor", "--global", "--json"])
    checks = {(c["name"], c["client"]): c for c in json.loads(capsys.readouterr().out)["checks"] if c["kind"] == "mcp"}
    assert code == 0 and checks[("files", "copilot")]["target"] == ".copilot/mcp-config.json"
    assert checks[("files", "copilot")]["status"] == "registered"


def test_a_project_installation_leaves_the_user_config_alone(setup, monkeypatch, capsys):
    repo, home, work = setup
    _clis(monkeypatch)
    before = (home / ".copilot" / "mcp-config.json").read_bytes()
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "copilot"]) == 0, \
        capsys.readouterr().err
    assert (home / ".copilot" / "mcp-config.json").read_bytes() == before
    assert set(json.loads((work / ".mcp.json").read_text())["mcpServers"]) == {"drawio", "files"}
    lock = json.loads((work / "agentrc.lock.json").read_text())
    copilot = {(m["name"], m["scope"], m.get("config")) for m in lock["mcps"] if m["client"] == "copilot"}
    assert copilot == {("drawio", "project", ".mcp.json"), ("files", "project", ".mcp.json")}
    # The pinned Copilot CLI reads the workspace .mcp.json once the folder is trusted.
    (home / ".copilot" / "config.json").write_text(json.dumps({"trusted_folders": [str(work)]}))
    listed = _listed(home, work)
    assert listed["files"]["source"] == "workspace" and listed["mine"]["source"] == "user"
