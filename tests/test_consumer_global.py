"""`agentrc add --global`: a registry installed into the user's locations (isolated HOME), its
lock in ~/.config/agentrc, checked with the real claude and copilot CLIs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from helpers import ROOT
from sourcerepos import Repo, isolated_home

from agentrc.cli.main import main

BIN = ROOT / ".tools" / "npm" / "node_modules" / ".bin"
EXAMPLE = ROOT / "examples" / "registry"
BUNDLE = ("schema: 1\nname: everyday\ndescription: Everyday tools\nlicense: proprietary\nitems:\n"
          "  rules:\n    - license-awareness\n  skills:\n    - pr-summary\n  agents:\n    - docs-writer\n"
          "  commands:\n    - fix-issue\n  hooks:\n    - block-secrets\n  contexts:\n    - project\nrequires: []\n"
          "mcps:\n  drawio:\n    remote:\n      type: http\n      url: https://mcp.example.com/mcp\n"
          "  files:\n    local:\n      command: npx\n      args: [\"-y\", \"files-mcp\"]\n      env:\n"
          "        TOKEN: \"${FILES_TOKEN}\"\n")


def _registry_files():
    files = {}
    for dirpath, _, names in os.walk(EXAMPLE):
        for n in names:
            if n == "BUILD":
                continue
            full = os.path.join(dirpath, n)
            rel = os.path.relpath(full, EXAMPLE).replace(os.sep, "/")
            if rel.startswith("bundles/"):
                continue
            with open(full, encoding="utf-8") as f:
                files[rel] = f.read()
    files["everyday.bundle.yaml"] = BUNDLE
    return files


def _tools(monkeypatch, with_claude=True):
    if not (BIN / "claude").exists():
        if os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1":
            pytest.fail("AGENTRC_REQUIRE_TOOLS=1: the client CLIs are not in .tools/")
        pytest.skip("the client CLIs are not in .tools/ (tools/install.sh)")
    if with_claude:
        monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")


def _cli(tool, *args, cwd):
    return subprocess.run([str(BIN / tool)] + list(args), cwd=str(cwd), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


@pytest.fixture
def home(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    _tools(monkeypatch)
    repo = Repo(tmp_path)
    repo.commit(_registry_files(), tag="v1")
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code = main(["add", "--trust", f"{repo.url}@v1", "--bundle", "everyday", "--client", "claude,copilot,opencode", "--global"])
    err = capsys.readouterr().err
    assert code == 0, err
    home = tmp_path / "home"
    home.joinpath("err.txt").write_text(err)
    return home


def test_global_install_writes_the_user_locations_and_the_user_lock(home, capsys):
    err = (home / "err.txt").read_text()
    for path in (".claude/skills/pr-summary/SKILL.md", ".claude/agents/docs-writer.md",
                 ".claude/rules/license-awareness.md", ".claude/skills/fix-issue/SKILL.md",
                 ".copilot/skills/pr-summary/SKILL.md",
                 ".copilot/agents/docs-writer.agent.md", ".copilot/instructions/license-awareness.instructions.md",
                 ".config/opencode/skills/pr-summary/SKILL.md", ".config/opencode/agents/docs-writer.md",
                 ".config/opencode/commands/fix-issue.md", ".claude/agentrc/hooks/block-secrets/check-command.sh"):
        assert (home / path).is_file(), path
    # Relative links inside a client directory still resolve (the directory moved as a whole).
    rule = (home / ".claude" / "rules" / "license-awareness.md").read_text()
    assert "../agentrc/rules/license-awareness/allowed-licenses.txt" in rule
    assert (home / ".claude" / "agentrc" / "rules" / "license-awareness" / "allowed-licenses.txt").is_file()
    # Hooks run the script installed for the user, not one in whatever project Claude runs in.
    settings = (home / ".claude" / "settings.json").read_text()
    assert "${HOME}/.claude/agentrc/hooks/block-secrets/check-command.sh" in settings
    assert "CLAUDE_PROJECT_DIR" not in settings
    # Nothing at project paths under HOME; no user form: reported, not written.
    for path in (".github", "CLAUDE.md", "AGENTS.md", ".vscode", ".mcp.json", "opencode.json", ".opencode"):
        assert not (home / path).exists(), path
    assert "warning[AR217] no user-level location for" in err and ".github/prompts/fix-issue.prompt.md" in err
    assert "opencode.json#instructions" in err
    # Reported once: the user lock keeps what had no user location, and installing again
    # does not repeat it.
    locked = json.loads((home / ".config" / "agentrc" / "agentrc.lock.json").read_text())
    assert ".github/prompts/fix-issue.prompt.md" in locked["user_skipped"]
    assert main(["install", "--global"]) == 0
    assert "AR217" not in capsys.readouterr().err
    lock = json.loads((home / ".config" / "agentrc" / "agentrc.lock.json").read_text())
    assert [b["name"] for b in lock["bundles"]] == ["everyday"]
    mcps = {(m["name"], m["client"], m["scope"], m["status"], m.get("config")) for m in lock["mcps"]}
    assert ("drawio", "claude", "user", "installed", None) in mcps
    assert ("files", "copilot", "user", "installed", None) in mcps  # copilot mcp add
    assert ("files", "opencode", "user", "config-written", ".config/opencode/opencode.json") in mcps
    assert all(m["scope"] == "user" for m in lock["mcps"])
    oc = json.loads((home / ".config" / "opencode" / "opencode.json").read_text())
    assert "instructions" not in oc and set(oc["mcp"]) == {"drawio", "files"}


def test_the_real_clis_see_the_global_installation(home, tmp_path, capsys):
    project = tmp_path / "some-project"
    project.mkdir()
    # Claude Code: the user-scope servers, from any directory.
    got = _cli("claude", "mcp", "get", "files", cwd=project)
    assert got.returncode == 0 and b"files-mcp" in got.stdout and b"User" in got.stdout
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["files"]["env"] == {"TOKEN": "${FILES_TOKEN}"}
    # Copilot CLI: its user config holds the servers agentrc registered with 'copilot mcp add'.
    listed = json.loads(_cli("copilot", "mcp", "list", "--json", cwd=project).stdout)["mcpServers"]
    assert listed["drawio"]["source"] == "user" and listed["files"]["env"] == {"TOKEN": "${FILES_TOKEN}"}
    skills = _cli("copilot", "skill", "list", cwd=project)
    text = (skills.stdout + skills.stderr).decode()
    assert skills.returncode == 0 and "Personal skills:" in text, text
    assert text.index("pr-summary") > text.index("Personal skills:")
    code = main(["doctor", "--global", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    checks = {(c["kind"], c["name"], c["client"]): c["status"] for c in doc["checks"]}
    assert checks[("mcp", "drawio", "claude")] == "registered"
    assert checks[("mcp", "files", "copilot")] == "registered"
    assert checks[("file", ".claude/skills/pr-summary/SKILL.md", "")] == "ok"
    # Removed behind agentrc's back: each CLI reports it gone.
    assert _cli("copilot", "mcp", "remove", "files", cwd=project).returncode == 0
    assert _cli("claude", "mcp", "remove", "drawio", "--scope", "user", cwd=project).returncode == 0
    code = main(["doctor", "--global", "--json"])
    checks = {(c["kind"], c["name"], c["client"]): c["status"] for c in json.loads(capsys.readouterr().out)["checks"]}
    assert code == 1
    assert checks[("mcp", "files", "copilot")] == "not-registered"
    assert checks[("mcp", "drawio", "claude")] == "not-registered"
    assert main(["install", "--global"]) == 0  # registers them again
    assert main(["doctor", "--global"]) == 0


def test_global_remove_mcp_remove_and_list(home, capsys, tmp_path):
    assert main(["list", "--global"]) == 0
    assert "bundle everyday from file://" in capsys.readouterr().out
    assert main(["remove-mcp", "drawio", "--global"]) == 0
    assert "drawio" not in json.loads((home / ".claude.json").read_text()).get("mcpServers", {})
    assert "drawio" not in json.loads((home / ".copilot" / "mcp-config.json").read_text())["mcpServers"]
    assert main(["install", "--global", "--frozen"]) == 0
    assert main(["remove", "everyday", "--global"]) == 0
    assert not (home / ".claude" / "skills" / "pr-summary").exists()
    assert "files" not in json.loads((home / ".claude.json").read_text()).get("mcpServers", {})
    capsys.readouterr()
    assert main(["install", "--global", "--dir", str(tmp_path)]) == 2


def test_global_refuses_config_that_names_the_project(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    files = _registry_files()
    files["everyday.bundle.yaml"] = BUNDLE.replace("https://mcp.example.com/mcp", "${workspaceFolder}/mcp")
    repo = Repo(tmp_path)
    repo.commit(files, tag="v1")
    monkeypatch.chdir(tmp_path)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "everyday", "--client", "opencode", "--global"]) == 1
    err = capsys.readouterr().err
    assert "error[AR218] opencode.json refers to the project directory (${workspaceFolder})" in err
    assert not (tmp_path / "home" / ".config" / "agentrc" / "agentrc.lock.json").exists()
    assert not (tmp_path / "home" / ".config" / "opencode").exists()


def test_without_the_copilot_cli_its_user_config_is_written(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    _tools(monkeypatch, with_claude=False)
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("git", "node"):
        found = shutil.which(tool)
        if found:
            os.symlink(found, str(bare / tool))
    monkeypatch.setenv("PATH", str(bare))
    repo = Repo(tmp_path)
    repo.commit(_registry_files(), tag="v1")
    monkeypatch.chdir(tmp_path)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "everyday", "--client", "claude,copilot", "--global"]) == 0
    home = tmp_path / "home"
    lock = json.loads((home / ".config" / "agentrc" / "agentrc.lock.json").read_text())
    mcps = {(m["name"], m["client"], m["status"], m.get("config")) for m in lock["mcps"]}
    assert ("files", "copilot", "config-written", ".copilot/mcp-config.json") in mcps
    assert ("files", "claude", "skipped-cli-missing", None) in mcps  # ~/.claude.json is Claude's own state
    assert not (home / ".claude.json").exists()
    # The real Copilot CLI reads what agentrc wrote as user servers.
    listed = json.loads(_cli("copilot", "mcp", "list", "--json", cwd=tmp_path).stdout)["mcpServers"]
    assert listed["files"]["source"] == "user" and listed["files"]["env"] == {"TOKEN": "${FILES_TOKEN}"}
    code = main(["doctor", "--global", "--json"])
    doc = json.loads(capsys.readouterr().out)
    checks = {(c["kind"], c["name"], c["client"]): c["status"] for c in doc["checks"]}
    assert code == 0 and checks[("mcp", "files", "copilot")] == "registered"
    assert checks[("mcp", "files", "claude")] == "skipped-cli-missing"
