"""The OAS kernel judges `agentrc cap`: the same packages installed by both tools into twin
scopes give the same lock (byte for byte), the same .gitignore and the same installed trees,
and each tool restores and verifies what the other wrote.

Packages: the kernel's own bundled `capabilities/` wrapped in an oas-package.json, and
packages written here, from directories and from bare git repositories reached by file://.
The kernel runs as a separate program (`node bin/oas.mjs`, HOME isolated); agentrc does not
depend on it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentrc.cli.main import main
from helpers import ROOT
from test_cap_install import bare_repo, git, snapshot, write_package

KERNEL = (ROOT.parent / "shared" / "judges" / "oas-kernel").resolve()  # as the kernel names its own files
OAS = KERNEL / "bin" / "oas.mjs"
pytestmark = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"),
                                reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")
STORE = Path(".agents") / "capabilities" / "installed"
# The bundled capabilities a package can export as they are (self-contained), and the two
# that reach outside their directory (oas.authoring: ../../skills; oas.aweb: node_modules).
SELF_CONTAINED = ("oas-jira", "oas-linear", "oas-okf", "oas-review")


def oas(tmp_path: Path, *args) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home), NO_COLOR="1")
    proc = subprocess.run(["node", str(OAS), *args, "--json"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def agentrc(capsys, *args) -> dict:
    main(["cap", *args, "--json"])
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return json.loads(out)


def twins(tmp_path: Path, git_scopes: bool = True):
    a, k = tmp_path / "scope-agentrc", tmp_path / "scope-kernel"
    for s in (a, k):
        s.mkdir()
        if git_scopes:
            git("init", "-q", str(s))
    return a, k


def scope_state(scope: Path):
    """What both tools write: the lock, the ignore file and every installed byte."""
    state = snapshot(scope / ".agents") if (scope / ".agents").exists() else {}
    state["oas-lock.json"] = (scope / "oas-lock.json").read_bytes() if (scope / "oas-lock.json").exists() else None
    return state


def bundled_package(tmp_path: Path, names=SELF_CONTAINED) -> Path:
    pkg = tmp_path / "bundled"
    (pkg / "capabilities").mkdir(parents=True)
    for name in names:
        shutil.copytree(KERNEL / "capabilities" / name, pkg / "capabilities" / name, symlinks=True)
    for p in [pkg, *pkg.rglob("*")]:
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)
    (pkg / "oas-package.json").write_text(json.dumps({
        "package": "oas.bundled", "version": "0.20.0", "description": "The kernel's bundled capabilities.",
        "compatibility": {"oas": ">=0.20.0"}, "capabilities": [f"capabilities/{n}" for n in names]}, indent=2))
    return pkg


def test_the_kernels_bundled_capabilities_install_identically(tmp_path, capsys):
    pkg = bundled_package(tmp_path)
    a, k = twins(tmp_path)
    ours = agentrc(capsys, "install", str(pkg), "--dir", str(a))
    theirs = oas(tmp_path, "install", str(pkg), "--dir", str(k))
    assert ours["ok"] and theirs["ok"], (ours, theirs)
    assert (a / "oas-lock.json").read_bytes() == (k / "oas-lock.json").read_bytes()
    assert scope_state(a) == scope_state(k)
    assert sorted(c["capability"] for c in ours["result"]["capabilities"]) == \
        ["oas.jira", "oas.linear", "oas.okf", "oas.review"]
    assert [(c["capability"], c["integrity"], c["layer"]) for c in ours["result"]["capabilities"]] == \
        [(c["capability"], c["integrity"], c["layer"]) for c in theirs["result"]["capabilities"]]
    assert ours["result"]["installed"] == [{k2: v for k2, v in p.items()} for p in theirs["result"]["installed"]]


def test_each_tool_restores_the_others_lock(tmp_path, capsys):
    pkg = bundled_package(tmp_path)
    a, k = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(a))["ok"]
    assert oas(tmp_path, "install", str(pkg), "--dir", str(k))["ok"]
    expected = scope_state(k)
    # The kernel restores agentrc's scope; agentrc restores the kernel's.
    shutil.rmtree(a / STORE)
    env = oas(tmp_path, "install", "--dir", str(a), "--no-requirements")
    assert env["ok"] and {x["status"] for x in env["result"]["scopes"][0]["artifacts"]} == {"restored"}
    assert scope_state(a) == expected
    shutil.rmtree(k / STORE / "oas.okf")
    (k / STORE / "oas.jira" / "oas.json").write_text("{}")  # a changed copy is replaced
    env = agentrc(capsys, "install", "--dir", str(k))
    assert env["ok"] and sorted(x["status"] for x in env["result"]["scopes"][0]["artifacts"]) == \
        ["present", "present", "restored", "restored"]
    assert scope_state(k) == expected
    # And each verifies the other's artifacts as they are: nothing left to restore.
    for env in (oas(tmp_path, "install", "--dir", str(k), "--no-requirements"), agentrc(capsys, "install", "--dir",
                                                                                         str(a))):
        assert {x["status"] for x in env["result"]["scopes"][0]["artifacts"]} == {"present"}


def test_lists_agree(tmp_path, capsys):
    pkg = bundled_package(tmp_path, names=("oas-okf", "oas-review"))
    a, _ = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(a))["ok"]
    ours, theirs = agentrc(capsys, "list", "--dir", str(a)), oas(tmp_path, "list", "--dir", str(a))
    assert ours["result"]["packages"] == theirs["result"]["packages"]
    fields = ("capability", "version", "package", "path", "integrity", "installedIntegrity", "trusted", "installed")
    assert [{f: c[f] for f in fields} for c in ours["result"]["capabilities"]] == \
        [{f: c[f] for f in fields} for c in theirs["result"]["capabilities"]]


def test_capabilities_reaching_outside_are_refused_by_both(tmp_path, capsys):
    for name, code in (("oas-authoring", "path-escape"), ("oas-aweb", "capability-not-self-contained")):
        pkg = bundled_package(tmp_path / name, names=(name,))
        a, k = twins(tmp_path / name, git_scopes=False)
        ours = agentrc(capsys, "install", str(pkg), "--dir", str(a))
        theirs = oas(tmp_path, "install", str(pkg), "--dir", str(k))
        assert (ours["ok"], ours["error"]["code"]) == (theirs["ok"], theirs["error"]["code"]) == (False, code)
        assert scope_state(a) == scope_state(k) == {"oas-lock.json": None}


@pytest.mark.parametrize("where,fragment,ref", [("oas-package", "", "v1.0.0"), ("dist/oas", "#dist/oas", ""),
                                                (".", "#.", "main")])
def test_git_packages_install_identically(tmp_path, capsys, where, fragment, ref):
    pkg = write_package(tmp_path / "src", caps={"capabilities/chat": ("example.chat", "messaging"),
                                                "capabilities/review": ("example.review", "")})
    os.symlink("SKILL.md", pkg / "capabilities" / "chat" / "skills" / "hello" / "README.md")  # a link, hashed as one
    url = bare_repo(tmp_path, "repo", where, pkg, tag="v1.0.0")
    spec = url + (f"@{ref}" if ref else "") + fragment
    a, k = twins(tmp_path)
    ours = agentrc(capsys, "install", spec, "--dir", str(a))
    theirs = oas(tmp_path, "install", spec, "--dir", str(k))
    assert ours["ok"] and theirs["ok"], (ours, theirs)
    assert (a / "oas-lock.json").read_bytes() == (k / "oas-lock.json").read_bytes()
    assert scope_state(a) == scope_state(k)
    row = json.loads((a / "oas-lock.json").read_text())["packages"]["demo.pkg"]
    assert row["path"] == (where if where != "." else ".") and len(row["commit"]) == 40
    # Cross restore from git: agentrc's scope by the kernel, the kernel's by agentrc.
    shutil.rmtree(a / STORE)
    shutil.rmtree(k / STORE)
    assert oas(tmp_path, "install", "--dir", str(a), "--no-requirements")["ok"]
    assert agentrc(capsys, "install", "--dir", str(k))["ok"]
    assert scope_state(a) == scope_state(k)


def test_dependencies_and_removal_agree(tmp_path, capsys):
    write_package(tmp_path / "base", pid="base.pkg", caps={"capabilities/k": ("base.knowledge", "knowledge")})
    app = write_package(tmp_path / "app", pid="app.pkg", deps=["../base"])
    a, k = twins(tmp_path)
    assert agentrc(capsys, "install", str(app), "--dir", str(a))["ok"]
    assert oas(tmp_path, "install", str(app), "--dir", str(k))["ok"]
    assert scope_state(a) == scope_state(k)
    ours = agentrc(capsys, "remove", "base.pkg", "--dir", str(a))
    theirs = oas(tmp_path, "remove", "base.pkg", "--dir", str(k))
    assert ours["error"]["code"] == theirs["error"]["code"] == "remove-blocked"
    for s in (a, k):
        (s / "oas-config.yaml").write_text("capabilities:\n  additive:\n    demo.cap:\n      from: installed\n")
    assert agentrc(capsys, "remove", "app.pkg", "--dir", str(a))["error"]["code"] == \
        oas(tmp_path, "remove", "app.pkg", "--dir", str(k))["error"]["code"] == "remove-blocked"
    for s in (a, k):
        (s / "oas-config.yaml").unlink()
    ours = agentrc(capsys, "remove", "app.pkg", "--dir", str(a))
    theirs = oas(tmp_path, "remove", "app.pkg", "--dir", str(k))
    assert ours["ok"] and theirs["ok"] and ours["result"]["capabilities"] == theirs["result"]["capabilities"]
    assert scope_state(a) == scope_state(k)


def test_trust_survives_the_other_tools_reinstall(tmp_path, capsys):
    pkg = bundled_package(tmp_path, names=("oas-okf",))
    a, _ = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(a))["ok"]
    env = oas(tmp_path, "trust", "oas.okf", "--dir", str(a))
    assert env["ok"], env
    lock = (a / "oas-lock.json").read_bytes()
    assert json.loads(lock)["capabilities"]["oas.okf"]["trusted"] is True
    env = agentrc(capsys, "install", str(pkg), "--dir", str(a))
    assert env["result"]["capabilities"][0]["status"] == "kept" and env["result"]["capabilities"][0]["trusted"]
    assert (a / "oas-lock.json").read_bytes() == lock


@pytest.mark.parametrize("broken,code", [
    ("missing-skill", "capability-not-self-contained"),
    ("escaping-link", "capability-not-self-contained"),
    ("no-capabilities", "invalid-package-manifest"),
    ("incompatible", "incompatible-oas"),
    ("duplicate-ids", "duplicate-capability-id"),
    ("legacy-lock", "legacy-lock"),
    ("root-link", "path-escape"),
])
def test_refusals_carry_the_kernels_codes(tmp_path, capsys, broken, code):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/a": ("x.a", ""), "capabilities/b": ("x.b", "")})
    manifest = json.loads((pkg / "oas-package.json").read_text())
    a, k = twins(tmp_path, git_scopes=False)
    if broken == "missing-skill":
        shutil.rmtree(pkg / "capabilities" / "a" / "skills")
    elif broken == "escaping-link":
        os.symlink(str(tmp_path), pkg / "capabilities" / "a" / "skills" / "hello" / "up")
    elif broken == "no-capabilities":
        manifest["capabilities"] = ["capabilities/none"]
    elif broken == "incompatible":
        manifest["compatibility"] = {"oas": "^9.0.0"}
    elif broken == "root-link":
        shutil.move(str(pkg / "capabilities" / "b"), str(tmp_path / "b-outside"))
        os.symlink(str(tmp_path / "b-outside"), pkg / "capabilities" / "b")
    elif broken == "duplicate-ids":
        (pkg / "capabilities" / "b" / "oas.json").write_text((pkg / "capabilities" / "a" / "oas.json").read_text())
    else:
        for s in (a, k):
            (s / "oas-lock.json").write_text('{"lockfileVersion": 1, "capabilities": {}}\n')
    (pkg / "oas-package.json").write_text(json.dumps(manifest))
    before = scope_state(a)
    ours = agentrc(capsys, "install", str(pkg), "--dir", str(a))
    theirs = oas(tmp_path, "install", str(pkg), "--dir", str(k))
    assert not ours["ok"] and not theirs["ok"]
    assert ours["error"]["code"] == theirs["error"]["code"] == code, (ours, theirs)
    assert scope_state(a) == scope_state(k) == before


def test_trust_writes_what_the_kernels_trust_writes(tmp_path, capsys):
    pkg = bundled_package(tmp_path, names=("oas-okf", "oas-review", "oas-linear"))
    a, k = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(a))["ok"]
    assert oas(tmp_path, "install", str(pkg), "--dir", str(k))["ok"]
    ours = agentrc(capsys, "trust", "oas.okf", "--dir", str(a))
    theirs = oas(tmp_path, "trust", "oas.okf", "--dir", str(k))
    assert ours["result"]["approved"] == theirs["result"]["approved"] == ["oas.okf"]
    assert ours["result"]["approvedIntegrity"] == theirs["result"]["approvedIntegrity"]
    assert scope_state(a) == scope_state(k)
    ours = agentrc(capsys, "trust", "oas.bundled", "--all-capabilities", "--dir", str(a))
    theirs = oas(tmp_path, "trust", "oas.bundled", "--all-capabilities", "--dir", str(k))
    for key in ("package", "approved", "skipped", "approvedIntegrity", "executableSurface"):
        assert ours["result"][key] == theirs["result"][key], key
    assert scope_state(a) == scope_state(k)
    # Both refuse to trust a changed artifact, with the same code.
    for s in (a, k):
        (s / STORE / "oas.linear" / "bin" / "oas-linear.mjs").write_text("changed\n")
    assert agentrc(capsys, "trust", "oas.linear", "--dir", str(a))["error"]["code"] == \
        oas(tmp_path, "trust", "oas.linear", "--dir", str(k))["error"]["code"] == "integrity-drift"


def test_update_agrees_with_oas_update(tmp_path, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/a": ("demo.a", ""), "capabilities/b": ("demo.b", "")})
    url = bare_repo(tmp_path, "r", "oas-package", pkg)
    a, k = twins(tmp_path)
    assert agentrc(capsys, "install", f"{url}@main", "--dir", str(a))["ok"]
    assert oas(tmp_path, "install", f"{url}@main", "--dir", str(k))["ok"]
    assert agentrc(capsys, "trust", "demo.pkg", "--all-capabilities", "--dir", str(a))["ok"]
    assert oas(tmp_path, "trust", "demo.pkg", "--all-capabilities", "--dir", str(k))["ok"]
    work = tmp_path / "next"
    git("clone", "-q", url, str(work))
    (work / "oas-package" / "capabilities" / "a" / "injects" / "i.md").write_text("v2\n")
    manifest = json.loads((work / "oas-package" / "oas-package.json").read_text())
    manifest["version"] = "1.1.0"
    (work / "oas-package" / "oas-package.json").write_text(json.dumps(manifest, indent=2))
    git("commit", "-qam", "two", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    ours = agentrc(capsys, "update", "demo.pkg", "--dir", str(a))
    theirs = oas(tmp_path, "update", "demo.pkg", "--dir", str(k))
    assert ours["ok"] and theirs["ok"], (ours, theirs)
    for key in ("changed", "pathChanged", "before", "after", "addedCapabilities", "removedCapabilities",
                "invalidatedApprovals"):
        assert ours["result"][key] == theirs["result"][key], key
    # Both reset both: each artifact's .oas-installation.json names the package's commit and
    # version, so a new commit changes every capability's integrity, edited or not.
    assert ours["result"]["invalidatedApprovals"] == ["demo.a", "demo.b"]
    assert scope_state(a) == scope_state(k)
