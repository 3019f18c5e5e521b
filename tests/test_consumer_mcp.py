"""MCP servers of installed bundles: the lock's records, `agentrc doctor` (checked against the
real `claude mcp list` with an isolated HOME, and the config files) and `agentrc remove-mcp`."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from helpers import ROOT
from sourcerepos import Repo, bundle, isolated_home, skill

from agentrc.cli.main import main

CLAUDE_BIN = ROOT / ".tools" / "npm" / "node_modules" / ".bin"
MCPS = ("mcps:\n  drawio:\n    remote:\n      type: http\n      url: https://mcp.example.com/mcp\n"
        "  files:\n    local:\n      command: npx\n      args: [\"-y\", \"files-mcp\"]\n      env:\n"
        "        TOKEN: \"${FILES_TOKEN}\"\n    requires-env: [FILES_TOKEN]\n")


@pytest.fixture
def project(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "tools.bundle.yaml": bundle("tools", "  skills:\n    - a\n") + MCPS}, tag="v1")
    proj = tmp_path / "project"
    proj.mkdir()
    monkeypatch.chdir(proj)
    assert main(["add", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude,copilot,opencode"]) == 0
    return proj


def _claude_on_path(monkeypatch):
    if not (CLAUDE_BIN / "claude").exists():
        if os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1":
            pytest.fail("AGENTRC_REQUIRE_TOOLS=1: the claude CLI is not in .tools/; run tools/install.sh")
        pytest.skip("the claude CLI is not in .tools/ (tools/install.sh)")
    monkeypatch.setenv("PATH", f"{CLAUDE_BIN}{os.pathsep}{os.environ['PATH']}")


def doctor(capsys):
    code = main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    return code, {(c["kind"], c["name"], c["client"], c["target"]): c["status"] for c in doc["checks"]}


def test_the_lock_records_each_server_per_client_and_config_file(project, capsys):
    lock = json.loads((project / "agentrc.lock.json").read_text())
    got = sorted((m["name"], m["client"], m["config"], tuple(m["key"]), m["status"], m["scope"], m["bundle"])
                 for m in lock["mcps"])
    assert ("drawio", "claude", ".mcp.json", ("mcpServers", "drawio"), "config-written", "project", "tools") in got
    assert ("drawio", "copilot", ".vscode/mcp.json", ("servers", "drawio"), "config-written", "project",
            "tools") in got
    assert ("files", "opencode", "opencode.json", ("mcp", "files"), "config-written", "project", "tools") in got
    # ${VAR} is passed through as written, never expanded nor stored as a value.
    assert "${FILES_TOKEN}" in (project / ".mcp.json").read_text()
    assert "FILES_TOKEN" not in json.dumps(lock["mcps"])
    capsys.readouterr()
    assert main(["list"]) == 0
    assert "mcp drawio from bundle tools for claude, copilot, opencode\n" in capsys.readouterr().out


def test_doctor_is_clean_against_the_real_claude_cli(project, capsys, monkeypatch):
    _claude_on_path(monkeypatch)
    code, checks = doctor(capsys)
    assert code == 0, checks
    assert checks[("mcp", "drawio", "claude", "claude mcp list")] == "registered"
    assert checks[("mcp", "files", "opencode", "opencode.json")] == "registered"
    assert checks[("file", ".claude/skills/a/SKILL.md", "", ".claude/skills/a/SKILL.md")] == "ok"


def test_doctor_reports_servers_gone_from_claude_and_from_config_files(project, capsys, monkeypatch):
    _claude_on_path(monkeypatch)
    mcp = json.loads((project / ".mcp.json").read_text())
    del mcp["mcpServers"]["drawio"]
    (project / ".mcp.json").write_text(json.dumps(mcp))
    oc = json.loads((project / "opencode.json").read_text())
    del oc["mcp"]["files"]
    (project / "opencode.json").write_text(json.dumps(oc))
    (project / ".vscode" / "mcp.json").unlink()
    code, checks = doctor(capsys)
    assert code == 1
    assert checks[("mcp", "drawio", "claude", "claude mcp list")] == "not-registered"  # claude itself says so
    assert checks[("mcp", "files", "claude", "claude mcp list")] == "registered"
    assert checks[("mcp", "files", "opencode", "opencode.json")] == "not-registered"
    assert checks[("mcp", "drawio", "copilot", ".vscode/mcp.json")] == "config-missing"  # cannot verify: no failure
    main(["doctor"])
    err = capsys.readouterr().err
    assert "error: mcp drawio (claude, claude mcp list): not-registered" in err and "not clean" in err


def test_doctor_without_the_cli_or_with_edited_files(project, capsys, monkeypatch, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("git", "node"):
        found = shutil.which(tool)
        if found:
            os.symlink(found, str(bare / tool))
    monkeypatch.setenv("PATH", str(bare))
    code, checks = doctor(capsys)
    assert code == 0 and checks[("mcp", "drawio", "claude", "claude mcp list")] == "cli-not-found"
    (project / ".claude" / "skills" / "a" / "SKILL.md").write_text("edited\n")
    (project / ".github" / "skills" / "a" / "SKILL.md").unlink()
    code, checks = doctor(capsys)
    assert code == 1
    assert checks[("file", ".claude/skills/a/SKILL.md", "", ".claude/skills/a/SKILL.md")] == "edited"
    assert checks[("file", ".github/skills/a/SKILL.md", "", ".github/skills/a/SKILL.md")] == "missing"
    (project / "opencode.json").write_text("{ not json")
    _, checks = doctor(capsys)
    assert checks[("mcp", "files", "opencode", "opencode.json")] == "config-unreadable"


def test_remove_mcp_unregisters_the_server_everywhere_and_keeps_it_out(project, capsys, monkeypatch):
    code = main(["remove-mcp", "drawio"])
    err = capsys.readouterr().err
    assert code == 0, err
    lock = json.loads((project / "agentrc.lock.json").read_text())
    assert {m["name"] for m in lock["mcps"]} == {"files"} and lock["mcps_removed"] == ["drawio"]
    assert "drawio" not in (project / ".mcp.json").read_text()
    assert "drawio" not in (project / "opencode.json").read_text()
    assert "files" in (project / ".mcp.json").read_text()
    assert main(["install"]) == 0  # the bundle is still installed; the server stays out
    assert "drawio" not in (project / ".mcp.json").read_text()
    assert main(["install", "--frozen"]) == 0
    capsys.readouterr()
    assert main(["remove-mcp", "nope"]) == 1
    assert "AR207" in capsys.readouterr().err


def test_add_warns_about_unset_required_variables(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    monkeypatch.delenv("FILES_TOKEN", raising=False)
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "tools.bundle.yaml": bundle("tools", "  skills:\n    - a\n") + MCPS}, tag="v1")
    (tmp_path / "p").mkdir()
    monkeypatch.chdir(tmp_path / "p")
    assert main(["add", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude"]) == 0
    err = capsys.readouterr().err
    assert "warning[AR209] MCP server files requires the environment variable FILES_TOKEN" in err
    monkeypatch.setenv("FILES_TOKEN", "s3cr3t-value")
    assert main(["add", f"{repo.url}@v1", "--bundle", "tools", "--json"]) == 0
    out = capsys.readouterr().out
    assert "AR209" not in out and "s3cr3t-value" not in out
    assert "s3cr3t-value" not in (tmp_path / "p" / "agentrc.lock.json").read_text()
    assert "s3cr3t-value" not in (tmp_path / "p" / ".mcp.json").read_text()
