"""A bundle's plugins installed through the real client CLIs (claude, copilot) with an isolated
HOME: a local marketplace made here, `agentrc add` / `install` / `remove`, the lock's records,
the warn-skip of a missing CLI and a failing install that never fails the rest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from helpers import ROOT
from sourcerepos import Repo, bundle, isolated_home, skill, write

from agentrc.cli.main import main

BIN = ROOT / ".tools" / "npm" / "node_modules" / ".bin"


def _clis(monkeypatch):
    for tool in ("claude", "copilot"):
        if not (BIN / tool).exists():
            if os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1":
                pytest.fail(f"AGENTRC_REQUIRE_TOOLS=1: the {tool} CLI is not in .tools/; run tools/install.sh")
            pytest.skip(f"the {tool} CLI is not in .tools/ (tools/install.sh)")
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")


def _logging_clis(tmp, monkeypatch):
    """claude and copilot on PATH as wrappers of the real CLIs that log their arguments;
    returns a function giving the calls so far."""
    shims, log = tmp / "shims", tmp / "calls.log"
    shims.mkdir(exist_ok=True)
    for tool in ("claude", "copilot"):
        shim = shims / tool
        shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{BIN / tool}" "$@"\n')
        shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    return lambda: [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def _marketplace(root):
    write(root, {
        ".claude-plugin/marketplace.json": json.dumps({"name": "local-market", "owner": {"name": "t"}, "plugins": [
            {"name": "hello", "source": "./plugins/hello", "description": "Says hello"}]}),
        "plugins/hello/.claude-plugin/plugin.json": json.dumps({"name": "hello", "description": "Says hello",
                                                                "version": "1.0.0"}),
        "plugins/hello/skills/hi/SKILL.md": "---\nname: hi\ndescription: Say hi.\n---\n\nSay hi.\n",
    })
    return root


def _plugins(market: str) -> str:
    auto = f"{{ source: \"{market}\", marketplace: local-market, plugin: hello, install_url: https://example.com/hello }}"
    return (f"plugins:\n  hello:\n    claude: {auto}\n    copilot: {auto}\n"
            "    opencode: { instructions_url: https://example.com/oc, summary: Add hello to opencode.json }\n")


@pytest.fixture
def env(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    market = _marketplace(tmp_path / "market")
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "kit.bundle.yaml": bundle("kit", "  skills:\n    - a\n") + _plugins(str(market)),
                 "broken.bundle.yaml": bundle("broken", "  skills:\n    - a\n")
                 + _plugins(str(tmp_path / "no-such-market"))}, tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return {"repo": repo, "project": project, "tmp": tmp_path}


def _records(project):
    lock = json.loads((project / "agentrc.lock.json").read_text())
    return {(p["client"], p["identifier"], p["scope"], p["status"]) for p in lock["plugins"]}


def _enabled(project):
    settings = project / ".claude" / "settings.json"
    return json.loads(settings.read_text()).get("enabledPlugins", {}) if settings.exists() else {}


def test_plugins_install_through_the_clients_and_are_locked(env, capsys, monkeypatch):
    _clis(monkeypatch)
    repo, project = env["repo"], env["project"]
    code = main(["add", "--trust", f"{repo.url}@v1", "--bundle", "kit", "--client", "claude,copilot,opencode"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "warning[AR212] plugin hello for opencode is not installed automatically: Add hello to opencode.json" in err
    assert _records(project) == {("claude", "hello@local-market", "project", "installed"),
                                 ("copilot", "hello@local-market", "user", "installed"),
                                 ("opencode", "hello", "project", "instructions-shown")}
    assert _enabled(project) == {"hello@local-market": True}  # what the claude CLI wrote
    listed = subprocess.run([str(BIN / "copilot"), "plugin", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=str(project), timeout=120).stdout.decode()
    assert [line for line in listed.splitlines() if "hello@local-market" in line and "(enabled)" in line]
    # Idempotent: installing again is a no-op for the clients and leaves the lock as it is.
    # The clients' CLIs are only asked what they have (wrappers log every call): the lock
    # says installed and `plugin list --json` confirms it, so nothing is installed again.
    calls = _logging_clis(env["tmp"], monkeypatch)
    before = (project / "agentrc.lock.json").read_bytes()
    assert main(["install"]) == 0
    assert (project / "agentrc.lock.json").read_bytes() == before
    assert [c for c in calls() if c[:2] == ["plugin", "install"] or c[:3] == ["plugin", "marketplace", "add"]] == []
    assert ["plugin", "list", "--json"] in calls()
    # Uninstalled behind agentrc's back: the client's list says so, and install restores it.
    assert subprocess.run([str(BIN / "claude"), "plugin", "uninstall", "hello@local-market", "--scope", "project"],
                          cwd=str(project), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120).returncode == 0
    assert _enabled(project) == {}
    assert main(["install"]) == 0
    assert _enabled(project) == {"hello@local-market": True}
    assert ["plugin", "install", "--scope", "project", "--", "hello@local-market"] in calls()
    # Removing the bundle uninstalls its plugins.
    assert main(["remove", "kit"]) == 0
    assert _enabled(project) == {} and _records(project) == set()
    listed = subprocess.run([str(BIN / "copilot"), "plugin", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=str(project), timeout=120).stdout.decode()
    # A plugin of a local marketplace is loaded live: copilot keeps listing it, disabled.
    assert not [line for line in listed.splitlines() if "hello@local-market" in line and "(enabled)" in line]


def test_a_missing_cli_is_warned_about_and_skipped(env, capsys, monkeypatch, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(shutil.which("git"), str(bare / "git"))
    monkeypatch.setenv("PATH", str(bare))
    code = main(["add", "--trust", f"{env['repo'].url}@v1", "--bundle", "kit", "--client", "claude"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert ("warning[AR210] plugin hello for claude skipped: the claude CLI is not on PATH; install it by hand: "
            "https://example.com/hello") in err
    assert ("claude", "hello@local-market", "project", "skipped-cli-missing") in _records(env["project"])
    assert (env["project"] / ".claude" / "skills" / "a" / "SKILL.md").exists()  # the rest is installed


def test_a_failing_plugin_install_is_not_recorded_and_fails_nothing(env, capsys, monkeypatch):
    _clis(monkeypatch)
    code = main(["add", "--trust", f"{env['repo'].url}@v1", "--bundle", "broken", "--client", "claude"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "warning[AR211] claude plugin marketplace add" in err
    records = _records(env["project"])
    assert not any(r[0] in ("claude", "copilot") for r in records)
    assert (env["project"] / ".claude" / "skills" / "a" / "SKILL.md").exists()


def test_opencodes_config_write_form_merges_into_opencode_json(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"), "kit.bundle.yaml": bundle("kit", "  skills:\n    - a\n") + (
        "plugins:\n  hello:\n    opencode: { plugin_uri: \"hello@git+https://example.com/hello.git\" }\n"
        "    copilot: { source: acme/market, marketplace: acme, plugin: hello }\n")}, tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    (project / "opencode.json").write_text('{\n  // mine\n  "plugin": ["mine@1.0.0"]\n}\n')
    monkeypatch.chdir(project)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "kit", "--client", "opencode"]) == 0, capsys.readouterr().err
    text = (project / "opencode.json").read_text()
    assert '"mine@1.0.0"' in text and '"hello@git+https://example.com/hello.git"' in text and "// mine" in text
    # Only the project's clients: the copilot descriptor is not acted on.
    assert _records(project) == {("opencode", "hello", "project", "config-written")}
    assert main(["remove", "kit"]) == 0
    text = (project / "opencode.json").read_text()
    assert "hello@git" not in text and '"mine@1.0.0"' in text
