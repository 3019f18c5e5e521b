"""`agentrc cap status` and `agentrc cap init` (spec 003), judged by the OAS kernel's
`oas status --json` and `oas init --json`: the same roster of souls and instance homes (live,
retained without instance.json, quarantined by an incomplete rollback, a capability agent's),
and the same oas-config.yaml, byte for byte, with the same result; refusals leave nothing."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cap_twins import home  # noqa: F401  (the fixture, used by name)
from cap_twins import CAP, command_capability, envelope, needs_kernel, neutral, oas, ours, package
from test_cap_install import git
from test_cap_spawn import deployment

pytestmark = needs_kernel


def roster(scope: Path) -> None:
    """Souls and homes of every kind, written by hand."""
    dev = scope / "agents" / "dev"
    (dev / "soul").mkdir(parents=True)
    (dev / "soul" / "soul.yaml").write_text('name: dev\nrepo: .  # here\nwork: "worktree"\ntype: devs\n')
    for name, files in {"dev-1": {"instance.json": {"instance": "dev-1", "agent": "dev", "work": "checkout"}},
                        "dev-2": {},
                        "dev-3": {".oas-rollback-incomplete.json": {"reason": "retire hook failed"}},
                        "dev-4": {".oas-rollback-incomplete.json": "not json"}}.items():
        h = dev / "instances" / name
        h.mkdir(parents=True)
        for f, doc in files.items():
            (h / f).write_text(doc if isinstance(doc, str) else json.dumps(doc))
    (scope / "local-agents" / "loc" / "soul").mkdir(parents=True)
    (scope / "local-agents" / "loc" / "soul" / "soul.yaml").write_text("kind: tmp\ndescription: 'Local one'\n")
    svc = scope / "local-agents" / "svc" / "instances" / "svc-1"
    svc.mkdir(parents=True)
    (svc / "instance.json").write_text(json.dumps({"instance": "svc-1", "capability": "acme.svc"}))
    (scope / "agents" / "bin").mkdir()  # reserved: never an agent


def test_status_lists_what_the_kernels_status_lists(tmp_path, home, capfd):
    scope = tmp_path / "w"
    roster(scope)
    rc, out, _err = ours(capfd, "cap", "status", "--dir", str(scope), "--json")
    krc, kout, _kerr = oas(scope, "status", "--json")
    assert rc == krc == 0
    mine, theirs = json.loads(out), json.loads(kout)
    assert mine == theirs
    dev = mine["agents"][0]
    assert [i["instance"] for i in dev["instances"]] == ["dev-1", "dev-2", "dev-3", "dev-4"]
    assert dev["instances"][2]["rollbackIncomplete"] == {"reason": "retire hook failed"}
    assert dev["instances"][3]["rollbackIncomplete"] == {"reason": "rollback incomplete"}
    assert [a["kind"] for a in mine["agents"]] == ["persistent", "local", "capability"]
    rc, _out, err = ours(capfd, "cap", "status", "--dir", str(scope))
    assert rc == 0 and "dev-3  QUARANTINED" in err + _out


def test_status_shows_the_homes_a_failed_spawn_kept(tmp_path, home, capfd, monkeypatch):
    """A real quarantine (a required hook and its compensation fail), by each tool: both
    statuses list the kept home with its marker; a staged home (a name starting with a dot) is
    not an instance."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "claude").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    a, k = tmp_path / "a", tmp_path / "k"
    for s in (a, k):
        deployment(s)
        (s / "fail-spawn").write_text("")
        (s / "fail-retire").write_text("")
    assert ours(capfd, "cap", "spawn", "dev", "--dir", str(a), "--json")[0] == 1
    assert oas(k, "spawn", "dev", "--no-launch", "--json")[0] == 1
    (a / "agents" / "dev" / "instances" / ".dev-2.agentrc-staged").mkdir()
    docs = []
    for s in (a, k):
        rc, out, _err = ours(capfd, "cap", "status", "--dir", str(s), "--json")
        krc, kout, _kerr = oas(s, "status", "--json")
        assert rc == krc == 0
        mine, theirs = json.loads(neutral(out, s)), json.loads(neutral(kout, s))
        if s == a:  # the kernel lists the staged directory too
            theirs["agents"][0]["instances"] = [i for i in theirs["agents"][0]["instances"]
                                                if not i["instance"].startswith(".")]
        assert mine == theirs
        docs.append(mine)
    for doc in docs:
        (home_row,) = doc["agents"][0]["instances"]
        assert home_row["instance"] == "dev-1" and home_row["rollbackIncomplete"]["cleanup"]["version"] == 1


def test_status_without_an_agents_root_is_a_diagnostic(tmp_path, home, capfd):
    bare = tmp_path / "bare"
    bare.mkdir()
    rc, out, _err = ours(capfd, "cap", "status", "--dir", str(bare), "--json")
    krc, _kout, kerr = oas(bare, "status", "--json")
    assert rc == krc == 1 and "no agents/ or local-agents/" in kerr
    doc = envelope(out)
    assert doc["error"]["code"] == "E_NO_DEPLOYMENT"
    assert doc["error"]["details"]["diagnostics"][0]["code"] == "AR265"


def twin_dirs(tmp_path: Path, repo: bool):
    """Twin scopes with the same name (the config's `name:` is the directory's)."""
    a, k = tmp_path / "a" / "team", tmp_path / "k" / "team"
    for s in (a, k):
        s.mkdir(parents=True)
        if repo:
            git("init", "-q", str(s))
    return a, k


def init_twins(capfd, a: Path, k: Path, *flags: str):
    rc, out, _err = ours(capfd, "cap", "init", "--dir", str(a), "--json", *flags)
    krc, kout, _kerr = oas(k, "init", "--json", *flags)
    return rc, krc, envelope(neutral(out, a)), envelope(neutral(kout, k))


@pytest.mark.parametrize("repo", [False, True])
def test_init_raw_writes_the_kernels_config(tmp_path, home, capfd, repo):
    a, k = twin_dirs(tmp_path, repo)
    rc, krc, mine, theirs = init_twins(capfd, a, k, "--raw")
    assert rc == krc == 0 and mine == theirs
    assert mine["result"]["level"] == ("repo" if repo else "workspace")
    assert (a / "oas-config.yaml").read_bytes() == (k / "oas-config.yaml").read_bytes()
    assert sorted(os.listdir(a)) == sorted(os.listdir(k))  # nothing else written (no store, no lock)
    # The scope resolves: a capability installed next can be activated with cap use.
    assert ours(capfd, "cap", "doctor", "--dir", str(a), "--json")[0] == 0


def test_init_fills_layers_from_what_the_scope_acquired(tmp_path, home, capfd):
    caps = {"capabilities/k": command_capability(tmp_path / "src" / "k", cid="acme.know", namespace="know",
                                                 layer="knowledge")}
    owned_src = tmp_path / "src" / "t"
    command_capability(owned_src, cid="acme.tasks", namespace="tasks", layer="tasks")
    pkg = package(tmp_path / "pkg", caps)
    a, k = twin_dirs(tmp_path, repo=True)
    assert ours(capfd, "cap", "install", str(pkg), "--dir", str(a), "--json")[0] == 0
    assert oas(k, "install", str(pkg), "--json")[0] == 0
    for s in (a, k):
        shutil.copytree(owned_src, s / CAP / "owned" / "acme.tasks")
    rc, krc, mine, theirs = init_twins(capfd, a, k, "--knowledge", "acme.know", "--messaging", "none",
                                       "--tasks", "acme.tasks")
    assert rc == krc == 0, (mine, theirs)
    assert mine == theirs
    assert mine["result"]["activated"] == [{"capability": "acme.know", "layer": "knowledge"},
                                           {"capability": "acme.tasks", "layer": "tasks"}]
    text = (a / "oas-config.yaml").read_text()
    assert text == (k / "oas-config.yaml").read_text()
    assert "      capability: acme.know\n      from: installed\n" in text and "      from: owned\n" in text


@pytest.mark.parametrize("case,code", [
    ("exists", "E_CONFIG_EXISTS"),
    ("unknown", "E_UNKNOWN_CAPABILITY"),
    ("wrong-layer", "E_LAYER_MISMATCH"),
])
def test_init_refusals_leave_the_scope_as_it_was(tmp_path, home, capfd, case, code):
    a, k = twin_dirs(tmp_path, repo=False)
    flags = ["--raw"]
    for s in (a, k):
        if case == "exists":
            (s / "oas-config.yaml").write_text("name: mine\n# my own\n")
        elif case == "wrong-layer":
            command_capability(s / CAP / "owned" / "acme.know", cid="acme.know", namespace="know", layer="knowledge")
    if case == "unknown":
        flags = ["--knowledge", "no.such-capability"]
    elif case == "wrong-layer":
        flags = ["--tasks", "acme.know", "--knowledge", "none", "--messaging", "none"]
    before = {s: sorted(str(p.relative_to(s)) for p in s.rglob("*")) for s in (a, k)}
    rc, krc, mine, theirs = init_twins(capfd, a, k, *flags)
    assert rc == krc == 1
    assert mine["error"]["code"] == theirs["error"]["code"] == code, (mine, theirs)
    for s in (a, k):
        assert sorted(str(p.relative_to(s)) for p in s.rglob("*")) == before[s]
    if case == "exists":
        assert (a / "oas-config.yaml").read_text() == "name: mine\n# my own\n"


def test_init_never_writes_through_a_planted_link(tmp_path, home, capfd):
    """A dangling link where the config goes: the kernel writes through it (its target
    appears outside the scope); agentrc refuses and writes nothing."""
    a, k = twin_dirs(tmp_path, repo=False)
    for s in (a, k):
        (s / "oas-config.yaml").symlink_to(s.parent / "victim.yaml")
    rc, krc, mine, _theirs = init_twins(capfd, a, k, "--raw")
    assert rc == 1 and mine["error"]["code"] == "E_CONFIG_EXISTS"
    assert not (a.parent / "victim.yaml").exists()
    assert krc == 0 and (k.parent / "victim.yaml").exists()


def test_team_status_lists_every_root_of_the_team_scope(tmp_path, home, capfd):
    team = tmp_path / "team"
    for repo in ("api", "web"):
        roster(team / repo)
    (team / "oas-config.yaml").write_text("name: team\nteam:\n  name: crew\n  id: crew-1\n")
    rc, out, _err = ours(capfd, "cap", "status", "--team", "--dir", str(team / "api"), "--json")
    krc, kout, _kerr = oas(team / "api", "status", "--team", "--json")
    assert rc == krc == 0
    mine, theirs = json.loads(out), json.loads(kout)
    assert mine == theirs
    assert [r["root"] for r in mine["roots"]] == [str(team / "api" / "agents"), str(team / "web" / "agents")]
    (team / "oas-config.yaml").write_text("name: team\n")
    rc, out, _err = ours(capfd, "cap", "status", "--team", "--dir", str(team / "api"), "--json")
    krc, _kout, _kerr = oas(team / "api", "status", "--team", "--json")
    assert rc == krc == 1 and envelope(out)["error"]["code"] == "E_NO_TEAM"
