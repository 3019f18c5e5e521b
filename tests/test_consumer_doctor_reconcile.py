"""`agentrc doctor` reconciles what the lock records beyond files and MCP servers (spec 001
§3.7, issue 34 items 9 and 10): each plugin record against the real client CLIs' own lists
(`claude plugin list --json`, `copilot plugin list --json`, isolated HOME, a local
marketplace made here), a record without `status` read as `installed` (by doctor and by
`install`, which does not install it again), and the lock's capability records against
what the project's capability references resolve to now (real git repositories over
file://, a local directory reference)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from sourcerepos import Repo, bundle, isolated_home, skill
from test_capability_refs import SKILL
from test_capability_refs import project as canonical_project
from test_consumer_plugins import BIN, _clis, _logging_clis, _marketplace, _plugins

from agentrc.cli.main import main
from agentrc.sources.lock import LOCK_FILE


def _doctor(capsys, *args):
    code = main(["doctor", "--json"] + list(args))
    doc = json.loads(capsys.readouterr().out)
    return code, doc, {(c["kind"], c["name"], c["client"]): c for c in doc["checks"]}


@pytest.fixture
def kit(tmp_path, monkeypatch, capsys):
    """A project with bundle `kit`, whose plugin `hello` the real claude and copilot CLIs
    installed (opencode: instructions only)."""
    isolated_home(monkeypatch, tmp_path)
    _clis(monkeypatch)
    market = _marketplace(tmp_path / "market")
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "kit.bundle.yaml": bundle("kit", "  skills:\n    - a\n") + _plugins(str(market))}, tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    code = main(["add", "--trust", f"{repo.url}@v1", "--bundle", "kit", "--client", "claude,copilot,opencode"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    return project


def _cli(tool, *args, cwd):
    return subprocess.run([str(BIN / tool)] + list(args), cwd=str(cwd), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


def test_doctor_checks_each_plugin_against_its_clients_list(kit, capsys):
    code, doc, checks = _doctor(capsys)
    assert code == 0 and doc["clean"], doc
    assert checks[("plugin", "hello", "claude")]["status"] == "ok"
    assert checks[("plugin", "hello", "claude")]["target"] == "claude plugin list --json"
    assert checks[("plugin", "hello", "copilot")]["status"] == "ok"
    shown = checks[("plugin", "hello", "opencode")]
    assert (shown["status"], shown["failing"]) == ("instructions-shown", False)
    # Uninstalled behind agentrc's back, in each client: each list says so, and doctor fails.
    assert _cli("claude", "plugin", "uninstall", "hello@local-market", "--scope", "project", cwd=kit).returncode == 0
    assert _cli("copilot", "plugin", "uninstall", "hello@local-market", cwd=kit).returncode == 0
    code, doc, checks = _doctor(capsys)
    assert code == 1 and not doc["clean"]
    for client in ("claude", "copilot"):
        check = checks[("plugin", "hello", client)]
        assert (check["status"], check["failing"]) == ("not-installed", True), check
        assert f"{client} does not list hello@local-market as installed and enabled" in check["detail"]
    assert main(["doctor"]) == 1
    err = capsys.readouterr().err
    assert "error: plugin hello: not-installed: claude does not list hello@local-market" in err
    assert "not clean" in err
    # `agentrc install` installs them again; doctor is clean.
    assert main(["install"]) == 0
    capsys.readouterr()
    code, doc, checks = _doctor(capsys)
    assert code == 0 and checks[("plugin", "hello", "claude")]["status"] == "ok", doc


def test_a_plugin_record_without_status_reads_as_installed(kit, capsys, monkeypatch, tmp_path):
    lock_path = kit / "agentrc.lock.json"
    lock = json.loads(lock_path.read_text())
    for rec in lock["plugins"]:
        if rec["status"] == "installed":
            del rec["status"]
    lock_path.write_text(json.dumps(lock, indent=2))
    code, doc, checks = _doctor(capsys)
    assert code == 0, doc
    assert checks[("plugin", "hello", "claude")]["status"] == "ok"
    assert checks[("plugin", "hello", "copilot")]["status"] == "ok"
    # install does not install it again: the clients are only asked what they list.
    calls = _logging_clis(tmp_path, monkeypatch)
    assert main(["install"]) == 0, capsys.readouterr().err
    assert [c for c in calls() if c[:2] == ["plugin", "install"] or c[:3] == ["plugin", "marketplace", "add"]] == []
    assert ["plugin", "list", "--json"] in calls()
    written = {(p["client"], p.get("status")) for p in json.loads(lock_path.read_text())["plugins"]}
    assert written == {("claude", "installed"), ("copilot", "installed"), ("opencode", "instructions-shown")}


def test_plugins_that_cannot_be_verified_do_not_fail(kit, capsys, monkeypatch, tmp_path):
    # No client CLI on PATH: cli-not-found, shown, not failing.
    bare = tmp_path / "bare"
    bare.mkdir()
    os.symlink(shutil.which("git"), str(bare / "git"))
    monkeypatch.setenv("PATH", str(bare))
    code, doc, checks = _doctor(capsys)
    assert code == 0, doc
    check = checks[("plugin", "hello", "claude")]
    assert (check["status"], check["detail"], check["failing"]) == ("cli-not-found", "claude is not on PATH", False)
    # A CLI whose list fails (exit 3): query-failed, shown, not failing; asked once per client.
    log = tmp_path / "calls.log"
    for tool in ("claude", "copilot"):
        (bare / tool).write_text(f'#!/bin/sh\necho "$*" >> "{log}"\necho broken >&2\nexit 3\n')
        (bare / tool).chmod(0o755)
    code, doc, checks = _doctor(capsys)
    assert code == 0, doc
    assert checks[("plugin", "hello", "copilot")]["status"] == "query-failed"
    assert "exit 3" in checks[("plugin", "hello", "copilot")]["detail"]
    assert log.read_text().splitlines().count("plugin list --json") == 2
    # A CLI that prints something other than a list is no list either.
    (bare / "claude").write_text('#!/bin/sh\necho \'{"not": "a list"}\'\n')
    code, doc, checks = _doctor(capsys)
    assert code == 0 and checks[("plugin", "hello", "claude")]["status"] == "query-failed"


def test_a_skipped_plugin_is_shown_with_what_to_do(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    _clis(monkeypatch)
    market = _marketplace(tmp_path / "market")
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "kit.bundle.yaml": bundle("kit", "  skills:\n    - a\n") + _plugins(str(market))}, tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    with_clis = os.environ["PATH"]
    bare = tmp_path / "bare"
    bare.mkdir()
    os.symlink(shutil.which("git"), str(bare / "git"))
    monkeypatch.setenv("PATH", str(bare))
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "kit", "--client", "claude"]) == 0
    capsys.readouterr()
    code, doc, checks = _doctor(capsys)
    check = checks[("plugin", "hello", "claude")]
    assert code == 0 and (check["status"], check["failing"]) == ("skipped-cli-missing", False)
    assert check["detail"] == "as recorded by the install"
    monkeypatch.setenv("PATH", with_clis)
    code, doc, checks = _doctor(capsys)
    assert code == 0
    assert checks[("plugin", "hello", "claude")]["detail"] == ("claude is on PATH now: 'agentrc install' installs "
                                                               "hello@local-market")


# Capability references


@pytest.fixture
def caps(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    r = Repo(tmp_path, "caps")
    r.v1 = r.commit({"skills/review/SKILL.md": SKILL.format("once"),
                     "rules/style/prompt.md": "---\ndescription: Style\n---\n\nWrap at 100.\n"}, tag="v1")
    r.v2 = r.commit({"skills/review/SKILL.md": SKILL.format("twice")}, tag="v2")
    return r


def _build(p, out, capsys):
    code = main(["build", str(p), "--client", "claude", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()


def _set_caps(p, preset_caps):
    pkg = p / "presets" / "team" / "package.json"
    pkg.write_text(json.dumps({"name": "team", "ai": {"capabilities": preset_caps}}))


def test_doctor_reports_drift_of_capability_references(caps, tmp_path, capsys):
    review = {"source": caps.url, "ref": "v1", "path": "skills/review", "type": "skill"}
    local = {"source": "file:./caps/x", "type": "rule"}
    p = canonical_project(tmp_path, caps, preset_caps={"review": review, "x": local},
                          preset_files={"caps/x/prompt.md": "---\ndescription: Local\n---\n\nLocal rule.\n"})
    _build(p, tmp_path / "out", capsys)
    layer = "preset ./presets/team"
    code, doc, checks = _doctor(capsys, "--dir", str(p))
    assert code == 0 and doc["clean"], doc
    assert {k: c["status"] for k, c in checks.items() if k[0] == "capability"} == {
        ("capability", "review", ""): "ok", ("capability", "x", ""): "ok"}
    assert checks[("capability", "review", "")]["target"] == layer
    # The reference moves to another ref, and the local directory's content changes.
    _set_caps(p, {"review": dict(review, ref="v2"), "x": local})
    (p / "presets" / "team" / "caps" / "x" / "prompt.md").write_text("---\ndescription: Local\n---\n\nEdited.\n")
    code, doc, checks = _doctor(capsys, "--dir", str(p))
    assert code == 1 and not doc["clean"]
    moved = checks[("capability", "review", "")]
    assert moved["status"] == "changed" and moved["failing"]
    assert "ref v1 -> v2" in moved["detail"] and f"commit {caps.v1} -> {caps.v2}" in moved["detail"]
    edited = checks[("capability", "x", "")]
    assert edited["status"] == "changed" and edited["detail"].startswith("content sha256 ")
    assert main(["doctor", "--dir", str(p)]) == 1
    assert "error: capability review: changed: ref v1 -> v2" in capsys.readouterr().err
    # A reference dropped and one added.
    style = {"source": caps.url, "ref": "v1", "path": "rules/style", "type": "rule"}
    _set_caps(p, {"review": dict(review, ref="v2"), "style": style})
    _build(p, tmp_path / "out2", capsys)
    _set_caps(p, {"review": dict(review, ref="v2"), "x": local})
    code, doc, checks = _doctor(capsys, "--dir", str(p))
    assert code == 1
    assert checks[("capability", "style", "")]["status"] == "not-declared"
    assert checks[("capability", "x", "")]["status"] == "not-locked"
    assert checks[("capability", "review", "")]["status"] == "ok"
    # A build records what the references give now: clean again.
    _build(p, tmp_path / "out3", capsys)
    code, doc, _ = _doctor(capsys, "--dir", str(p))
    assert code == 0 and doc["clean"], doc


def test_a_locked_capability_whose_content_moved_is_unresolved(caps, tmp_path, capsys):
    p = canonical_project(tmp_path, caps, preset_caps={
        "review": {"source": caps.url, "ref": "v1", "path": "skills/review", "type": "skill"}})
    _build(p, tmp_path / "out", capsys)
    lock = json.loads((p / LOCK_FILE).read_text())
    lock["capabilities"][0]["sha256"] = "0" * 64
    (p / LOCK_FILE).write_text(json.dumps(lock))
    code, doc, checks = _doctor(capsys, "--dir", str(p))
    assert code == 1 and not doc["clean"]
    assert checks[("capability", "review", "")]["status"] == "unresolved"
    assert [d["code"] for d in doc["diagnostics"]] == ["AR222"]


def test_a_consumer_project_without_references_has_no_capability_checks(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"), "kit.bundle.yaml": bundle("kit", "  skills:\n    - a\n")},
                tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "kit", "--client", "claude"]) == 0
    capsys.readouterr()
    code, doc, checks = _doctor(capsys)
    assert code == 0 and {k[0] for k in checks} == {"file"}, doc
    # A lock holding capability records in a project that declares none: each is not-declared.
    lock = json.loads((project / LOCK_FILE).read_text())
    lock["capabilities"] = [{"layer": "ai.config.json", "name": "gone", "type": "skill", "source": "file:./x",
                             "ref": None, "commit": None, "sha256": "0" * 64}]
    (project / LOCK_FILE).write_text(json.dumps(lock))
    code, doc, checks = _doctor(capsys)
    assert code == 1 and checks[("capability", "gone", "")]["status"] == "not-declared"


def test_global_doctor_checks_the_users_plugins(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    _clis(monkeypatch)
    market = _marketplace(tmp_path / "market")
    repo = Repo(tmp_path)
    repo.commit({"skills/a/SKILL.md": skill("a"),
                 "kit.bundle.yaml": bundle("kit", "  skills:\n    - a\n") + _plugins(str(market))}, tag="v1")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "kit", "--client", "claude", "--global"]) == 0, \
        capsys.readouterr().err
    capsys.readouterr()
    code, doc, checks = _doctor(capsys, "--global")
    assert code == 0, doc
    assert checks[("plugin", "hello", "claude")]["status"] == "ok"
    assert _cli("claude", "plugin", "uninstall", "hello@local-market", "--scope", "user", cwd=work).returncode == 0
    code, doc, checks = _doctor(capsys, "--global")
    assert code == 1 and checks[("plugin", "hello", "claude")]["status"] == "not-installed"
    assert "for this project" not in checks[("plugin", "hello", "claude")]["detail"]
