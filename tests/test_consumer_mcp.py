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
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude,copilot,opencode"]) == 0
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
    # No claude CLI on PATH here: its .mcp.json is written as the fallback.
    lock = json.loads((project / "agentrc.lock.json").read_text())
    got = set((m["name"], m["client"], m.get("config"), tuple(m.get("key", ())), m["status"], m["scope"],
                  m["bundle"]) for m in lock["mcps"])
    assert ("drawio", "claude", ".mcp.json", ("mcpServers", "drawio"), "config-written", "project", "tools") in got
    assert ("drawio", "vscode", ".vscode/mcp.json", ("servers", "drawio"), "config-written", "project",
            "tools") in got
    assert ("files", "opencode", "opencode.json", ("mcp", "files"), "config-written", "project", "tools") in got
    # The Copilot CLI reads the workspace .mcp.json (once the folder is trusted).
    assert ("drawio", "copilot", ".mcp.json", ("mcpServers", "drawio"), "config-written", "project", "tools") in got
    assert len(got) == 8
    # ${VAR} is passed through as written, never expanded nor stored as a value.
    assert "${FILES_TOKEN}" in (project / ".mcp.json").read_text()
    assert "FILES_TOKEN" not in json.dumps(lock["mcps"])
    capsys.readouterr()
    assert main(["list"]) == 0
    assert "mcp drawio from bundle tools for claude, copilot, opencode, vscode\n" in capsys.readouterr().out


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
    assert checks[("mcp", "drawio", "vscode", ".vscode/mcp.json")] == "config-missing"  # cannot verify: no failure
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
    code, checks = doctor(capsys)
    assert code == 1
    assert checks[("file", ".claude/skills/a/SKILL.md", "", ".claude/skills/a/SKILL.md")] == "edited"
    (project / ".claude" / "skills" / "a" / "SKILL.md").unlink()  # the one copy Copilot and opencode read too
    code, checks = doctor(capsys)
    assert code == 1
    assert checks[("file", ".claude/skills/a/SKILL.md", "", ".claude/skills/a/SKILL.md")] == "missing"
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
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude"]) == 0
    err = capsys.readouterr().err
    assert "warning[AR209] MCP server files requires the environment variable FILES_TOKEN" in err
    monkeypatch.setenv("FILES_TOKEN", "s3cr3t-value")
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--json"]) == 0
    out = capsys.readouterr().out
    assert "AR209" not in out and "s3cr3t-value" not in out
    assert "s3cr3t-value" not in (tmp_path / "p" / "agentrc.lock.json").read_text()
    assert "s3cr3t-value" not in (tmp_path / "p" / ".mcp.json").read_text()


def _cli(tool, *args, cwd):
    import subprocess
    return subprocess.run([str(CLAUDE_BIN / tool)] + list(args), cwd=str(cwd), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


@pytest.fixture
def cli_project(tmp_path, monkeypatch):
    """A project whose bundle was added with the real claude CLI on PATH (isolated HOME)."""
    isolated_home(monkeypatch, tmp_path)
    _claude_on_path(monkeypatch)
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "tools.bundle.yaml": bundle("tools", "  skills:\n    - a\n") + MCPS}, tag="v1")
    proj = tmp_path / "project"
    proj.mkdir()
    monkeypatch.chdir(proj)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude,copilot,opencode"]) == 0
    return proj


def test_claude_servers_are_registered_with_claude_mcp(cli_project, capsys, monkeypatch, tmp_path):
    project = cli_project
    lock = json.loads((project / "agentrc.lock.json").read_text())
    got = {(m["name"], m["client"], m.get("config"), m["status"]) for m in lock["mcps"]}
    assert ("drawio", "claude", None, "installed") in got and ("files", "claude", None, "installed") in got
    assert ("drawio", "copilot", ".mcp.json", "installed") in got  # the entry claude wrote; Copilot reads it
    assert ("files", "opencode", "opencode.json", "config-written") in got
    assert ".mcp.json" not in {f["path"] for f in lock["files"]}  # the CLI owns it, not agentrc's writer
    # What the real CLI wrote: the rendering, ${VAR} verbatim.
    mcp = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert mcp["drawio"] == {"type": "http", "url": "https://mcp.example.com/mcp"}
    assert mcp["files"]["env"] == {"TOKEN": "${FILES_TOKEN}"}
    got_claude = _cli("claude", "mcp", "get", "files", cwd=project)
    assert got_claude.returncode == 0 and b"files-mcp" in got_claude.stdout
    # The real Copilot CLI sees the same servers as workspace servers once the folder is trusted.
    home = tmp_path / "home"
    (home / ".copilot").mkdir(exist_ok=True)
    (home / ".copilot" / "config.json").write_text(json.dumps({"trusted_folders": [str(project)]}))
    listed = _cli("copilot", "mcp", "list", "--json", cwd=project)
    servers = json.loads(listed.stdout)["mcpServers"]
    assert servers["drawio"]["source"] == "workspace" and servers["files"]["source"] == "workspace"
    code, checks = doctor(capsys)
    assert code == 0, checks
    assert checks[("mcp", "drawio", "claude", "claude mcp list")] == "registered"
    assert checks[("mcp", "drawio", "copilot", ".mcp.json")] == "registered"
    # Idempotent: installing again leaves the CLI's file alone.
    before = (project / ".mcp.json").read_bytes()
    assert main(["install"]) == 0
    assert "AR216" not in capsys.readouterr().err
    assert (project / ".mcp.json").read_bytes() == before
    assert main(["install", "--frozen"]) == 0
    # A server unregistered by hand: claude itself reports it gone.
    assert _cli("claude", "mcp", "remove", "files", "--scope", "project", cwd=project).returncode == 0
    code, checks = doctor(capsys)
    assert code == 1
    assert checks[("mcp", "files", "claude", "claude mcp list")] == "not-registered"
    assert checks[("mcp", "files", "copilot", ".mcp.json")] == "not-registered"
    assert main(["install"]) == 0  # registers it again
    code, _ = doctor(capsys)
    assert code == 0


def test_remove_mcp_and_remove_unregister_through_claude_mcp(cli_project, capsys):
    project = cli_project
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": dict(
        json.loads((project / ".mcp.json").read_text())["mcpServers"], mine={"command": "mine"})}))
    assert main(["remove-mcp", "drawio"]) == 0, capsys.readouterr().err
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert set(servers) == {"files", "mine"}
    assert _cli("claude", "mcp", "get", "drawio", cwd=project).returncode != 0
    lock = json.loads((project / "agentrc.lock.json").read_text())
    assert {m["name"] for m in lock["mcps"]} == {"files"}
    code, _ = doctor(capsys)
    assert code == 0
    assert main(["remove", "tools"]) == 0
    assert set(json.loads((project / ".mcp.json").read_text())["mcpServers"]) == {"mine"}  # the user's stays


def test_a_failing_claude_cli_is_a_warning_and_the_rest_installs(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    _claude_on_path(monkeypatch)
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "tools.bundle.yaml": bundle("tools", "  skills:\n    - a\n") + MCPS}, tag="v1")
    proj = tmp_path / "project"
    proj.mkdir()
    (proj / ".mcp.json").write_text("{ not json")  # the real claude refuses to add to it
    monkeypatch.chdir(proj)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude"]) == 0
    err = capsys.readouterr().err
    # Both servers' failures, each listed: what concerns this install is never only counted
    assert err.count("warning[AR216] claude mcp add-json") == 2 and "(--verbose lists them)" not in err
    assert (proj / ".claude" / "skills" / "a" / "SKILL.md").exists()
    lock = json.loads((proj / "agentrc.lock.json").read_text())
    assert {(m["name"], m["status"]) for m in lock["mcps"]} == {("drawio", "cli-failed"), ("files", "cli-failed")}
    code, checks = doctor(capsys)
    assert checks[("mcp", "drawio", "claude", "")] == "cli-failed" and code == 0


def test_moving_between_the_cli_and_the_config_write(project, capsys, monkeypatch, tmp_path):
    # Installed without claude (config write); claude appears: its CLI takes the servers over.
    real_path = os.environ["PATH"]
    _claude_on_path(monkeypatch)
    assert main(["install"]) == 0, capsys.readouterr().err
    lock = json.loads((project / "agentrc.lock.json").read_text())
    assert ("drawio", "installed") in {(m["name"], m["status"]) for m in lock["mcps"]
                                       if m["client"] == "claude" and "config" not in m}
    assert ".mcp.json" not in {f["path"] for f in lock["files"]}
    assert set(json.loads((project / ".mcp.json").read_text())["mcpServers"]) == {"drawio", "files"}
    assert main(["doctor"]) == 0
    # claude goes away again: agentrc writes the file itself once more.
    monkeypatch.setenv("PATH", real_path)
    code = main(["install"])
    assert code == 0, capsys.readouterr().err
    lock = json.loads((project / "agentrc.lock.json").read_text())
    assert {m["status"] for m in lock["mcps"] if m["client"] == "claude"} == {"config-written"}
    assert set(json.loads((project / ".mcp.json").read_text())["mcpServers"]) == {"drawio", "files"}
    assert main(["install", "--frozen"]) == 0


def test_a_fresh_clone_adopts_merged_mcp_keys_from_the_lock(project, capsys):
    """Without `.agentrc/` (a fresh clone), the entries the lock records in shared files are
    agentrc's: `remove` takes them out and leaves the user's own keys."""
    config = json.loads((project / "opencode.json").read_text())
    config["theme"] = "dark"  # the user's own key: the file is shared
    (project / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")
    mcp = json.loads((project / ".mcp.json").read_text())
    mcp["mcpServers"]["mine"] = {"command": "my-server"}
    (project / ".mcp.json").write_text(json.dumps(mcp, indent=2) + "\n")
    shutil.rmtree(project / ".agentrc")
    capsys.readouterr()
    assert main(["remove", "tools"]) == 0, capsys.readouterr().err
    assert json.loads((project / "opencode.json").read_text()) == {"theme": "dark"}
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {"mine": {"command": "my-server"}}}
    # .vscode/mcp.json held only agentrc's entries: it goes with them.
    assert not (project / ".vscode" / "mcp.json").exists()
