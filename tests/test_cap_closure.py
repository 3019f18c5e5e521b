"""Runtime closures (spec 003: a capability's checked-in package-lock.json is materialized
with `npm ci --ignore-scripts` only), judged by the OAS kernel: the same package, whose
closure is a local file: dependency so npm runs offline, is installed by both tools into twin
scopes; the locks, integrity values and every installed byte (node_modules included) agree,
each tool restores the other's lock, and the refusals carry the kernel's codes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from test_cap_judge import STORE, agentrc, oas, pytestmark, scope_state, twins  # noqa: F401

pytestmark = [pytestmark, pytest.mark.skipif(not shutil.which("npm"), reason="npm is needed")]

LOCK = {
    "name": "acme-closure", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
    "packages": {
        "": {"name": "acme-closure", "version": "1.0.0", "dependencies": {"dep": "file:vendor/dep"}},
        "node_modules/dep": {"resolved": "vendor/dep", "link": True},
        "vendor/dep": {"version": "1.0.0"},
    },
}


@pytest.fixture(autouse=True)
def quiet_npm(monkeypatch):
    monkeypatch.setenv("npm_config_update_notifier", "false")
    monkeypatch.setenv("npm_config_offline", "true")


def closure_package(tmp_path: Path, dep_path="vendor/dep", lock=None) -> Path:
    """A package with one capability whose skills come from its npm dependency: the declared
    skill tree `node_modules/dep/skills` exists only once npm ci has run."""
    pkg = tmp_path / "pkg"
    cap = pkg / "capabilities" / "closure"
    skill = cap / "vendor" / "dep" / "skills" / "dep-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: dep-skill\ndescription: from the dependency\n---\nBody.\n")
    (cap / "vendor" / "dep" / "package.json").write_text(json.dumps({"name": "dep", "version": "1.0.0"}))
    (cap / "package.json").write_text(json.dumps({"name": "acme-closure", "version": "1.0.0", "private": True,
                                                  "dependencies": {"dep": f"file:{dep_path}"}}))
    (cap / "package-lock.json").write_text(json.dumps(lock or LOCK, indent=2))
    (cap / "oas.json").write_text(json.dumps({"capability": "acme.closure", "version": "1.0.0",
                                              "description": "Skills from an npm dependency.",
                                              "skills": ["node_modules/dep/skills"]}, indent=2))
    (pkg / "oas-package.json").write_text(json.dumps({"package": "acme.pkg", "version": "1.0.0",
                                                      "description": "A closure.", "compatibility": {"oas": ">=0.20.0"},
                                                      "capabilities": ["capabilities/closure"]}, indent=2))
    return pkg


def test_a_closure_installs_and_restores_as_the_kernels(tmp_path, capsys):
    pkg = closure_package(tmp_path)
    a, k = twins(tmp_path)
    ours = agentrc(capsys, "install", str(pkg), "--dir", str(a))
    theirs = oas(tmp_path, "install", str(pkg), "--dir", str(k))
    assert ours["ok"] and theirs["ok"], (ours, theirs)
    assert (a / "oas-lock.json").read_bytes() == (k / "oas-lock.json").read_bytes()
    assert scope_state(a) == scope_state(k)
    art = a / STORE / "acme.closure"
    assert os.readlink(art / "node_modules" / "dep") == "../vendor/dep"
    assert (art / "node_modules" / ".package-lock.json").is_file()
    assert not (pkg / "capabilities" / "closure" / "node_modules").exists()  # the source is left as it was
    lock = json.loads((a / "oas-lock.json").read_text())
    assert lock["capabilities"]["acme.closure"]["integrity"] == \
        json.loads((k / "oas-lock.json").read_text())["capabilities"]["acme.closure"]["integrity"]
    # Each tool restores the other's lock to the same bytes.
    expected = scope_state(k)
    shutil.rmtree(a / STORE / "acme.closure")
    env = oas(tmp_path, "install", "--dir", str(a), "--no-requirements")
    assert env["ok"] and scope_state(a) == expected, env
    shutil.rmtree(k / STORE / "acme.closure" / "node_modules")  # a changed copy is replaced
    env = agentrc(capsys, "install", "--dir", str(k))
    assert env["ok"] and [x["status"] for x in env["result"]["scopes"][0]["artifacts"]] == ["restored"], env
    assert scope_state(k) == expected


@pytest.mark.parametrize("broken,code,ar", [
    ("optional", "invalid-package-manifest", "AR255"),
    ("lockfile-v1", "invalid-package-manifest", "AR255"),
    ("out-of-sync", "invalid-package-manifest", "AR256"),
    ("outside", "path-escape", "AR257"),
])
def test_closure_refusals_carry_the_kernels_codes(tmp_path, capsys, broken, code, ar):
    lock = json.loads(json.dumps(LOCK))
    dep_path = "vendor/dep"
    if broken == "optional":
        lock["packages"]["vendor/dep"]["optional"] = True
    elif broken == "lockfile-v1":
        lock = {"name": "acme-closure", "version": "1.0.0", "lockfileVersion": 1, "dependencies": {}}
    elif broken == "out-of-sync":
        lock["packages"][""]["dependencies"] = {}
        del lock["packages"]["node_modules/dep"]
    pkg = closure_package(tmp_path, dep_path, lock)
    if broken == "outside":
        # The dependency lives outside the capability root (still inside the package).
        cap = pkg / "capabilities" / "closure"
        shutil.move(str(cap / "vendor"), str(pkg / "vendor"))
        (cap / "package.json").write_text(json.dumps({"name": "acme-closure", "version": "1.0.0", "private": True,
                                                      "dependencies": {"dep": "file:../../vendor/dep"}}))
        lock["packages"][""]["dependencies"] = {"dep": "file:../../vendor/dep"}
        lock["packages"]["node_modules/dep"]["resolved"] = "../../vendor/dep"
        lock["packages"]["../../vendor/dep"] = lock["packages"].pop("vendor/dep")
        (cap / "package-lock.json").write_text(json.dumps(lock, indent=2))
        shutil.copytree(pkg / "vendor" / "dep" / "skills", cap / "skills")
        manifest = json.loads((cap / "oas.json").read_text())
        (cap / "oas.json").write_text(json.dumps(dict(manifest, skills=["skills"])))
    a, k = twins(tmp_path, git_scopes=False)
    ours = agentrc(capsys, "install", str(pkg), "--dir", str(a))
    theirs = oas(tmp_path, "install", str(pkg), "--dir", str(k))
    assert not ours["ok"] and not theirs["ok"]
    assert ours["error"]["code"] == theirs["error"]["code"] == code, (ours, theirs)
    assert ar in [x["code"] for x in ours["error"]["details"]["diagnostics"]], ours
    assert scope_state(a) == scope_state(k) == {"oas-lock.json": None}


def test_pack_validates_the_closure_and_leaves_node_modules_out(tmp_path, capsys):
    pkg = closure_package(tmp_path)
    out = tmp_path / "out"
    packed = agentrc(capsys, "pack", str(pkg), "--out", str(out))
    assert packed["ok"], packed
    assert not list(out.rglob("node_modules")) and not list(pkg.rglob("node_modules"))
    a, _k = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(a))["ok"]
    assert packed["result"]["integrity"] == json.loads((a / "oas-lock.json").read_text())["packages"]["acme.pkg"][
        "integrity"]
