"""Arguments are data (issue 30, point 7): values from a fetched bundle or a lock that reach a
client's CLI. The validators of `agentrc.sources.arguments` on hostile values, then the real
`claude` and `copilot` (tools/install.sh, isolated HOME) behind shims that log every argv
agentrc passes: an option-shaped name never reaches them, `--` ends the options, and no
literal secret is ever on a command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from helpers import ROOT
from sourcerepos import Repo, bundle, isolated_home, skill

from agentrc.cli.main import main
from agentrc.diagnostics import Diagnostics
from agentrc.consumer import consume, mcpcli
from agentrc.consumer import plugins as plugin_cli
from agentrc.sources import arguments
from agentrc.sources.plugins import INSTALL, PluginAction

BIN = ROOT / ".tools" / "npm" / "node_modules" / ".bin"
SECRET = "literal-secret-123"

# --- the validators ---------------------------------------------------------------------------

HOSTILE = ["--scope=user", "-h", "-", "--", "a b", "a\tb", "a\nb", "x\x1b[2K\rall good", "a\x00b", "a\u202eb",
           "a\u200bb", "", "\x7f"]


@pytest.mark.parametrize("value", HOSTILE)
def test_every_validator_refuses_options_whitespace_and_controls(value):
    for check in (arguments.name, arguments.server_name, arguments.plugin_part, arguments.plugin_identifier,
                  arguments.marketplace_source, arguments.ref, arguments.env_name, arguments.header_name,
                  arguments.argument):
        assert check(value) is not None, (check.__name__, value)


def test_names_follow_the_item_name_grammar():
    for good in ("drawio", "files-mcp", "a", "a1-b2", "x" * 64):
        assert arguments.name(good) is None, good
    for bad in ("Drawio", "my_server", "a.b", "a-", "x" * 65, "a/b", "a@b", 7, None):
        assert arguments.name(bad) is not None, bad
    assert "starts with '-'" in arguments.name("--scope=user")


def test_plugin_identifiers_are_plugin_at_marketplace():
    for good in ("hello@local-market", "Feature.Dev_2@claude-code-plugins"):
        assert arguments.plugin_identifier(good) is None, good
    for bad in ("--dangerously-skip-permissions@x", "x@--market", "hello", "a@b@c", "@m", "p@", "a..b@m",
                "-p@m", "p@m-", "p @m", "p@m\n"):
        assert arguments.plugin_identifier(bad) is not None, bad
    assert "starts with '-'" in arguments.plugin_identifier("--dangerously-skip-permissions@x")


def test_marketplace_sources():
    for good in ("acme/market", "/abs/market", "./market", "../market", "~/market", "https://github.com/a/b.git",
                 "ssh://git@github.com/a/b.git", "git@github.com:a/b.git", "https://host:8443/x/marketplace.json"):
        assert arguments.marketplace_source(good) is None, good
    for bad in ("ext::sh -c touch% /tmp/x", "ext::sh", "fd::3", "http://host/x", "git://host/x", "file:///x",
                "https://ghp_token@github.com/a/b", "https://user:pass@github.com/a/b", "https://", "https:///x",
                "ssh://u:pw@host/x", "--upload-pack=x", "acme", "a b/c"):
        assert arguments.marketplace_source(bad) is not None, bad
    assert "credentials" in arguments.marketplace_source("https://ghp_token@github.com/a/b")


def test_refs_by_gits_rules_and_shown_values():
    for good in ("v1", "main", "release/1.2", "a" * 40):
        assert arguments.ref(good) is None, good
    for bad in ("-x", "--upload-pack=x", "a..b", "a.lock", "a@{1}", "/a", "a/", "a b", "a~1", "a:b", "@"):
        assert arguments.ref(bad) is not None, bad
    assert arguments.shown("x\x1b[2K\rall good") == "'x\\x1b[2K\\rall good'"
    assert arguments.shown("a\u202eb") == "'a\\u202eb'"
    assert "ghp_token" not in arguments.shown("https://ghp_token@github.com/a/b")
    assert len(arguments.shown("x" * 5000)) < 220
    assert arguments.scope("project") is None and arguments.scope("--user") is not None


# --- the real CLIs behind logging shims ----------------------------------------------------------

def _shims(tmp: Path, monkeypatch):
    """`claude` and `copilot` on PATH as shims of the real CLIs that log each call's argv (one
    JSON list a line) before running it; returns a function giving the calls so far."""
    for tool in ("claude", "copilot"):
        if not (BIN / tool).exists():
            if os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1":
                pytest.fail(f"AGENTRC_REQUIRE_TOOLS=1: the {tool} CLI is not in .tools/; run tools/install.sh")
            pytest.skip(f"the {tool} CLI is not in .tools/ (tools/install.sh)")
    shims, log = tmp / "shims", tmp / "argv.log"
    shims.mkdir(exist_ok=True)
    for tool in ("claude", "copilot"):
        shim = shims / tool
        shim.write_text("#!/bin/sh\n"
                        f"{json.dumps(str(Path(sys.executable)))} -c 'import json,sys; "
                        f"open(sys.argv[1], \"a\").write(json.dumps(sys.argv[2:]) + \"\\n\")' "
                        f"'{log}' \"$@\"\n"
                        f'exec "{BIN / tool}" "$@"\n')
        shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{BIN}{os.pathsep}{os.environ['PATH']}")
    return lambda: [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _project(tmp_path, monkeypatch, mcps: str, plugins: str = ""):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "tools.bundle.yaml": bundle("tools", "  skills:\n    - a\n") + mcps + plugins}, tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return repo, project


HOSTILE_MCPS = ("mcps:\n  \"--scope=user\":\n    remote:\n      type: http\n      url: https://evil.example/mcp\n"
                "  \"-h\":\n    local:\n      command: npx\n      args: [evil]\n"
                "  fine:\n    local:\n      command: npx\n      args: [\"-y\", \"fine-mcp\"]\n")


def test_an_option_shaped_server_name_never_reaches_claude(tmp_path, monkeypatch, capsys):
    calls = _shims(tmp_path, monkeypatch)
    repo, project = _project(tmp_path, monkeypatch, HOSTILE_MCPS)
    code = main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude"])
    err = capsys.readouterr().err
    assert code == 1, err
    # The bundle schema refuses such names when the source is read (AR006), before anything is written.
    assert "error[AR006]" in err and "'--scope=user' does not match" in err and "'-h' does not match" in err
    assert "add failed: nothing written" in err and not (project / "agentrc.lock.json").exists()
    argv = [a for call in calls() for a in call]
    assert "--scope=user" not in argv and "-h" not in argv and "evil" not in json.dumps(calls())
    # Nothing went to the user's configuration, nor to the project's.
    user = tmp_path / "home" / ".claude.json"
    assert "evil.example" not in (user.read_text() if user.exists() else "")
    mcp = project / ".mcp.json"
    assert "evil" not in (mcp.read_text() if mcp.exists() else "")
    # Never recorded as installed.
    lock = project / "agentrc.lock.json"
    records = json.loads(lock.read_text())["mcps"] if lock.exists() else []
    assert not [m for m in records if m["name"] in ("--scope=user", "-h") and m["status"] == "installed"]


def test_a_locks_records_reach_no_cli_as_options(tmp_path, monkeypatch):
    calls = _shims(tmp_path, monkeypatch)
    project = tmp_path / "project"
    project.mkdir()
    isolated_home(monkeypatch, tmp_path)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"--scope=user": {"command": "x"}}}))
    diags = Diagnostics()
    status = mcpcli.sync_claude(str(project), {}, ["--scope=user", "-h"], diags)
    assert status == {}
    status = mcpcli.sync_copilot(str(tmp_path / "home"), {"-h": json.dumps({"command": "x"})}, ["--help"], diags)
    assert status == {"-h": "cli-failed"}  # refused, never installed
    bad = PluginAction("p", "claude", "gone", INSTALL, "", "x", "--dangerously-skip-permissions")
    plugin_cli.uninstall(str(project), [bad, PluginAction("p", "copilot", "gone", INSTALL, "", "-h", "p")], diags)
    records = plugin_cli.install(str(project), [PluginAction("p", "claude", "b", INSTALL, "--upload-pack=x", "m",
                                                             "p")], diags, previous=())
    assert records == ()
    assert calls() == []  # not one command ran
    got = [d for d in diags.sorted() if d.code == "AR241"]
    assert len(got) == 7 and all(d.severity == "error" for d in got)
    text = "\n".join(d.message for d in got)
    assert "the lock's mcps record '--scope=user' starts with '-'" in text
    assert "identifier '--dangerously-skip-permissions@x' starts with '-'" in text
    assert "source '--upload-pack=x' starts with '-'" in text


def test_a_hand_edited_lock_runs_nothing_for_its_bad_records(tmp_path, monkeypatch, capsys):
    calls = _shims(tmp_path, monkeypatch)
    repo, project = _project(tmp_path, monkeypatch, "mcps:\n  fine:\n    local:\n      command: npx\n")
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude"]) == 0, capsys.readouterr().err
    lock = json.loads((project / "agentrc.lock.json").read_text())
    lock["mcps"].append({"name": "--scope=user", "client": "claude", "scope": "project", "bundle": "tools",
                         "status": "installed"})
    lock["plugins"].append({"name": "p", "client": "claude", "identifier": "--dangerously-skip-permissions@x",
                            "scope": "project", "bundle": "gone", "status": "installed"})
    (project / "agentrc.lock.json").write_text(json.dumps(lock))
    before = len(calls())
    for argv in (["install"], ["remove", "tools"]):
        capsys.readouterr()
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "AR241" in err or "AR203" in err, err  # AR203: the lock's own validation, before anything runs
    assert not [a for call in calls()[before:] for a in call if a.startswith("--scope=") or "dangerously" in a]


SECRET_MCPS = ("mcps:\n  vault:\n    local:\n      command: npx\n      args: [\"-y\", \"vault-mcp\"]\n"
               f"      env:\n        TOKEN: {SECRET}\n"
               "  web:\n    remote:\n      type: http\n      url: https://mcp.example.com/mcp\n"
               f"      headers:\n        Authorization: \"Bearer {SECRET}\"\n"
               "  files:\n    local:\n      command: npx\n      args: [\"-y\", \"files-mcp\"]\n      env:\n"
               "        TOKEN: \"${FILES_TOKEN}\"\n")


def test_no_literal_secret_on_a_claude_command_line(tmp_path, monkeypatch, capsys):
    calls = _shims(tmp_path, monkeypatch)
    repo, project = _project(tmp_path, monkeypatch, SECRET_MCPS)
    code = main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude"])
    assert code == 0, capsys.readouterr().err
    assert SECRET not in json.dumps(calls())
    # Every server went through the CLI, `${VAR}` ones as before; the entries on stdin.
    for name in ("vault", "web", "files"):
        assert ["mcp", "add-json", "--scope", "project", "--", name, "-"] in calls()
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["vault"]["env"] == {"TOKEN": SECRET}  # where the client reads it from
    assert servers["files"]["env"] == {"TOKEN": "${FILES_TOKEN}"}
    lock = (project / "agentrc.lock.json").read_text()
    assert SECRET not in lock
    assert {(m["name"], m["status"]) for m in json.loads(lock)["mcps"]} == {
        ("vault", "installed"), ("web", "installed"), ("files", "installed")}
    assert main(["install"]) == 0  # idempotent: nothing registered again
    assert SECRET not in json.dumps(calls())


def test_no_literal_secret_on_a_copilot_command_line(tmp_path, monkeypatch, capsys):
    calls = _shims(tmp_path, monkeypatch)
    repo, _ = _project(tmp_path, monkeypatch, SECRET_MCPS)
    code = main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude,copilot", "--global"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert SECRET not in json.dumps(calls()) and SECRET not in err
    assert "copilot mcp add cannot be given MCP server vault: its env or headers hold literal values" in err
    assert "copilot mcp add cannot be given MCP server web" in err
    # The `${VAR}` server went to copilot with its options as --opt=value, the name before `--`.
    assert ["mcp", "add", "--env=TOKEN=${FILES_TOKEN}", "files", "--", "npx", "-y", "files-mcp"] in calls()
    home = tmp_path / "home"
    servers = json.loads((home / ".copilot" / "mcp-config.json").read_text())["mcpServers"]
    assert set(servers) == {"files"}
    lock = Path(consume.lock_path(str(home), user=True)).read_text()
    assert SECRET not in lock
    got = {(m["name"], m["status"]) for m in json.loads(lock)["mcps"] if m["client"] == "copilot"}
    assert got == {("vault", "cli-failed"), ("web", "cli-failed"), ("files", "installed")}


def test_copilot_args_never_carry_a_literal_or_an_option():
    assert mcpcli.copilot_args("vault", json.dumps({"command": "npx", "env": {"T": SECRET}})) is None
    assert mcpcli.copilot_args("web", json.dumps({"type": "http", "url": "https://x.example/m",
                                                  "headers": {"A": "Bearer x"}})) is None
    assert mcpcli.copilot_args("-h", json.dumps({"command": "npx"})) is None
    assert mcpcli.copilot_args("ok", json.dumps({"command": "npx", "env": {"--x": "${A}"}})) is None
    assert mcpcli.copilot_args("ok", json.dumps({"type": "http", "url": "--upload-pack=x"})) is None
    assert mcpcli.copilot_args("ok", json.dumps({"type": "http", "url": "https://x.example/m",
                                                 "headers": {"Authorization": "Bearer ${T}"}})) == [
        "mcp", "add", "--transport=http", "--header=Authorization: Bearer ${T}", "--", "ok", "https://x.example/m"]
    assert mcpcli.literal_values({"env": {"A": "${A}"}, "headers": {"B": "Bearer ${B}"}}) is False
    assert mcpcli.literal_values({"env": {"A": "x${A}"}}) is True


def test_ar241_comes_before_any_cli_is_looked_for(tmp_path, monkeypatch):
    """No CLI on PATH: a bad value is still AR241 (an error), and is not even recorded as
    skipped, so a later run with the CLI present cannot take it from the lock."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    diags = Diagnostics()
    assert mcpcli.sync_claude(str(tmp_path), {"-h": "{}", "ok": "{}"}, ["--scope=user"], diags)["-h"] == "cli-failed"
    action = PluginAction("p", "claude", "b", INSTALL, "ext::sh -c touch% /tmp/x", "m", "p")
    assert plugin_cli.install(str(tmp_path), [action], diags) == ()
    found = sorted(d.message for d in diags.sorted() if d.code == "AR241" and d.severity == "error")
    assert len(found) == 3, found
    assert any("plugin 'p' of bundle 'b': source 'ext::sh -c touch% /tmp/x' holds whitespace" in m for m in found)


def test_doctor_gives_no_lock_value_to_a_cli(tmp_path, monkeypatch, capsys):
    calls = _shims(tmp_path, monkeypatch)
    repo, project = _project(tmp_path, monkeypatch, "mcps:\n  fine:\n    local:\n      command: npx\n")
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "tools", "--client", "claude"]) == 0, capsys.readouterr().err
    lock = json.loads((project / "agentrc.lock.json").read_text())
    lock["mcps"].append({"name": "--scope=user", "client": "claude", "scope": "project", "bundle": "tools",
                         "status": "installed"})
    (project / "agentrc.lock.json").write_text(json.dumps(lock))
    before = len(calls())
    main(["doctor"])
    assert all(call in (["mcp", "list"], ["mcp", "list", "--json"]) for call in calls()[before:]), calls()[before:]
