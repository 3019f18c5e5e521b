"""`agentrc cap doctor` judged by `oas doctor` on twin scopes (issue 34, items 2 and 3): the
`packages` section (an artifact edited after install is integrity drift, an unapproved
executable surface is reported), each active capability's `trust` (integrity, package, lock),
the text report (trust, skills, hooks, the composed AGENTS.md), and the legacy
kernel-marketplace exception: a lockfileVersion 1 `marketplace:oas.authoring@1.0.0` entry
whose skills are `../../skills/*` resolves through an installed kernel (`oas root`), and
without one is reported as needing it (AR270), never as a path escape."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentrc.capops import legacy
from agentrc.cli.main import main
from agentrc.inputs import captree
from test_cap_config import _deployment, oas_doctor
from test_cap_install import git, write_package
from test_cap_judge import KERNEL, OAS, STORE, agentrc, oas, twins

pytestmark = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"),
                                reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")
AUTHORING = ["integration-authoring", "skill-craft", "soul-craft"]


def doctor_json(capsys, scope: Path, *args) -> dict:
    capsys.readouterr()
    assert main(["cap", "doctor", str(scope), *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def doctor_text(capsys, scope: Path, *args):
    capsys.readouterr()
    rc = main(["cap", "doctor", str(scope), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def neutral(value, scope: Path):
    """A doctor row with the scope's path and each tool's own command name taken out."""
    text = json.dumps(value).replace(str(scope), "<scope>").replace("agentrc cap trust", "oas trust")
    return json.loads(text)


@pytest.fixture
def kernel_on_path(tmp_path, monkeypatch):
    """The judge's kernel installed as `oas` on PATH (a wrapper running its bin/oas.mjs)."""
    bindir = tmp_path / "kernel-bin"
    bindir.mkdir()
    (bindir / "oas").write_text(f'#!/bin/sh\nexec node "{OAS}" "$@"\n')
    (bindir / "oas").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(legacy, "_roots", {})
    return bindir


@pytest.fixture
def no_kernel(tmp_path, monkeypatch):
    """PATH without any `oas`: only the tools the tests need, linked into one directory."""
    bindir = tmp_path / "plain-bin"
    bindir.mkdir()
    for tool in ("node", "git", "sh", "claude"):
        found = shutil.which(tool)
        if found:
            (bindir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setattr(legacy, "_roots", {})
    return bindir


# --- packages and trust ------------------------------------------------------------------


def test_an_artifact_edited_after_install_is_integrity_drift_in_both(tmp_path, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/demo": ("demo.cap", ""),
                                                "capabilities/k": ("demo.k", "knowledge")})
    a, k = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(a))["ok"]
    assert oas(tmp_path, "install", str(pkg), "--dir", str(k))["ok"]
    clean_ours, clean_theirs = doctor_json(capsys, a), oas_doctor(tmp_path, str(k))
    assert neutral(clean_ours["packages"], a) == neutral(clean_theirs["packages"], k)
    assert [p["code"] for p in clean_ours["packages"][0]["problems"]] == ["untrusted-surface", "untrusted-surface"]
    for s in (a, k):
        with open(s / STORE / "demo.cap" / "injects" / "i.md", "a") as fh:
            fh.write("x\n")
    ours, theirs = doctor_json(capsys, a), oas_doctor(tmp_path, str(k))
    assert neutral(ours["packages"], a) == neutral(theirs["packages"], k)
    assert ours["packages"][0]["status"] == "broken"
    assert [p["code"] for p in ours["packages"][0]["problems"]] == ["integrity-drift", "untrusted-surface"]
    assert ours["legacyLockFiles"] == theirs["legacyLockFiles"] == [] and ours["lockError"] is None
    rc, out, _err = doctor_text(capsys, a)
    assert rc == 0 and "artifact integrity drift" in out and "[integrity-drift]" in out
    assert f"demo.pkg@1.0.0  [{a}]" in out


def test_a_provenance_file_that_disagrees_is_reported_as_the_kernel_reports_it(tmp_path, capsys):
    pkg = write_package(tmp_path / "pkg")
    a, k = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(a))["ok"]
    assert oas(tmp_path, "install", str(pkg), "--dir", str(k))["ok"]
    for s in (a, k):  # the bytes are re-locked, the provenance no longer names the package
        rec = s / STORE / "demo.cap" / ".oas-installation.json"
        rec.write_text(rec.read_text().replace('"demo.pkg"', '"other.pkg"'))
        lock = json.loads((s / "oas-lock.json").read_text())
        lock["capabilities"]["demo.cap"]["integrity"] = _hash(s / STORE / "demo.cap")
        (s / "oas-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    ours, theirs = doctor_json(capsys, a), oas_doctor(tmp_path, str(k))
    assert [p["code"] for p in ours["packages"][0]["problems"]] == \
        [p["code"] for p in theirs["packages"][0]["problems"]] == ["invalid-lock"]


def _hash(path: Path) -> str:
    return captree.tree_hash(str(path))


def test_trust_carries_integrity_package_and_lock_as_oas_doctor(tmp_path, capsys):
    repo = _deployment(tmp_path)
    ours = doctor_json(capsys, repo, "--soul", "dev")
    theirs = oas_doctor(tmp_path, str(repo), "--soul", "dev")
    assert [c["id"] for c in ours["capabilities"]] == [c["id"] for c in theirs["capabilities"]]
    for mine, kernel in zip(ours["capabilities"], theirs["capabilities"]):
        t = {key: v for key, v in mine["trust"].items() if key != "reason"}
        assert t == {key: v for key, v in kernel["trust"].items() if key != "reason"}, mine["id"]
        assert ("reason" in mine["trust"]) == ("reason" in kernel["trust"])
    installed = [c for c in ours["capabilities"] if c["origin"].startswith("installed:")]
    assert installed and all(c["trust"]["integrity"].startswith("sha256-") and c["trust"]["lock"]["package"]
                             for c in installed)
    assert ours["packages"] and [p["id"] for p in ours["packages"]] == [p["id"] for p in theirs["packages"]]
    # The skills the instance composes, by name.
    composed = {s["name"] for s in ours["composedSkills"]}
    assert composed == {"hello"}


def test_the_text_report_shows_trust_skills_hooks_and_the_composed_agents_md(tmp_path, capsys):
    repo = _deployment(tmp_path)
    rc, out, _err = doctor_text(capsys, repo, "--soul", "sec")
    assert rc == 0
    assert "  trust: approved" in out and "  trust: BLOCKED (" in out
    assert "  skills: " in out and "  hooks: spawn" in out
    assert "skills: hello" in out
    assert "composed AGENTS.md:" in out and "  # sec" in out and "<!-- oas:capability:ex.review" in out
    assert "installed packages:" in out and "inner.pkg@1.0.0" in out


def test_an_unreadable_lock_is_a_lock_error_not_a_traceback(tmp_path, capsys):
    a = tmp_path / "s"
    a.mkdir()
    (a / "oas-lock.json").write_text('{"lockfileVersion": 2, "packages": {"x": 1}, "capabilities": {}}\n')
    doc = doctor_json(capsys, a)
    assert doc["lockError"]["code"] == "invalid-lock" and doc["packages"] == []


# --- the legacy kernel-marketplace exception -----------------------------------------------


def legacy_scope(root: Path, soul: bool = True) -> Path:
    """A version 1 scope holding the kernel's oas.authoring as a marketplace entry, active
    for every soul, with a soul `dev`."""
    root.mkdir()
    git("init", "-q", str(root))
    git("-C", str(root), "commit", "-q", "--allow-empty", "-m", "init")
    shutil.copytree(KERNEL / "capabilities" / "oas-authoring", root / STORE / "oas.authoring")
    lock = {"lockfileVersion": 1, "capabilities": {"oas.authoring": {
        "source": "marketplace:oas.authoring@1.0.0", "version": "1.0.0", "integrity": _hash(root / STORE /
                                                                                           "oas.authoring")}}}
    (root / "oas-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    (root / "oas-config.yaml").write_text("capabilities:\n  additive:\n    oas.authoring:\n      global: true\n")
    if soul:
        s = root / "agents" / "dev" / "soul"
        s.mkdir(parents=True)
        (s / "soul.yaml").write_text("name: dev\nrepo: .\nwork: checkout\nruntime: claude\n")
        (s / "AGENTS.md").write_text("# Dev\n")
    return root


def test_a_legacy_marketplace_entry_resolves_through_the_installed_kernel(tmp_path, capsys, kernel_on_path):
    a, k = legacy_scope(tmp_path / "a"), legacy_scope(tmp_path / "k")
    ours = doctor_json(capsys, a, "--soul", "dev")
    theirs = oas_doctor(tmp_path, str(k), "--soul", "dev")
    mine, kernel = ours["capabilities"][0], theirs["capabilities"][0]
    assert mine["skills"] == kernel["skills"] == [str(KERNEL / "skills" / n) for n in AUTHORING]
    assert neutral(mine["trust"], a) == neutral(kernel["trust"], k)
    assert [s["name"] for s in ours["composedSkills"]] == AUTHORING
    assert "needsKernel" not in ours
    assert neutral(ours["legacyLockFiles"], a)[0]["status"] == theirs["legacyLockFiles"][0]["status"]


def test_without_a_kernel_the_entry_needs_it_and_is_never_a_path_escape(tmp_path, capsys, no_kernel):
    a = legacy_scope(tmp_path / "a")
    doc = doctor_json(capsys, a, "--soul", "dev")
    assert doc["capabilities"][0]["skills"] == [] and doc["composedSkills"] == []
    assert doc["needsKernel"][0]["command"] == "oas root"
    assert doc["needsKernel"][0]["skills"] == [f"../../skills/{n}" for n in AUTHORING]
    rc, out, err = doctor_text(capsys, a, "--soul", "dev")
    assert rc == 0 and "warning[AR270]" in err and "oas root" in err
    assert "AR156" not in err + out and "path-escape" not in err + out


def test_a_legacy_skill_present_beside_the_artifact_is_still_a_path_escape(tmp_path, capsys, kernel_on_path):
    a = legacy_scope(tmp_path / "a")
    planted = a / ".agents" / "capabilities" / "skills" / "skill-craft"
    planted.mkdir(parents=True)
    (planted / "SKILL.md").write_text("---\nname: skill-craft\ndescription: planted\n---\nx\n")
    capsys.readouterr()
    assert main(["cap", "doctor", str(a), "--soul", "dev"]) == 1
    assert "error[AR156]" in capsys.readouterr().err


@pytest.mark.parametrize("source", ["git:https://example.com/oas-authoring.git", "path:../elsewhere"])
def test_only_a_marketplace_entry_gets_the_exception(tmp_path, capsys, kernel_on_path, source):
    a = legacy_scope(tmp_path / "a")
    lock = json.loads((a / "oas-lock.json").read_text())
    lock["capabilities"]["oas.authoring"]["source"] = source
    (a / "oas-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    capsys.readouterr()
    assert main(["cap", "doctor", str(a), "--soul", "dev"]) == 1
    assert capsys.readouterr().err.count("error[AR156]") == 3


@pytest.mark.parametrize("script", [
    "#!/bin/sh\necho relative/path\n",
    "#!/bin/sh\necho /nonexistent-kernel-dir\n",
    "#!/bin/sh\nwhile :; do echo /; done\n",
    "#!/bin/sh\necho /\n",  # a directory, but not a kernel
    "#!/bin/sh\nexit 3\n",
    "#!/bin/sh\nsleep 30\n",
])
def test_a_hostile_oas_root_answer_is_no_kernel(tmp_path, capsys, monkeypatch, script):
    bindir = tmp_path / "evil-bin"
    bindir.mkdir()
    (bindir / "oas").write_text(script)
    (bindir / "oas").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(legacy, "_roots", {})
    monkeypatch.setattr(legacy, "ROOT_TIMEOUT", 1.0)
    assert legacy.kernel_root() is None
    a = legacy_scope(tmp_path / "a")
    doc = doctor_json(capsys, a, "--soul", "dev")
    assert doc["needsKernel"][0]["capability"] == "oas.authoring"


def test_the_oas_root_answer_is_read_when_descriptors_run_past_1024():
    """select() refuses a descriptor numbered 1024 or more (ValueError, a traceback); a process
    with many files open (a host program, a long test run) still reads `oas root`'s answer."""
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1100:
        if hard != resource.RLIM_INFINITY and hard < 1100:
            pytest.skip(f"this process may open only {hard} files")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1100, hard))
    held = []
    try:
        while not held or held[-1] < 1030:  # the low numbers taken: the pipe's ends come above 1024
            held.append(os.open(os.devnull, os.O_RDONLY))
        proc = subprocess.Popen(["echo", "/a/kernel"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.fileno() >= 1024
        assert legacy._read_bounded(proc) == b"/a/kernel\n"
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# --- spawn composes the legacy skills ------------------------------------------------------


def spawn_json(capsys, scope: Path):
    rc = main(["cap", "spawn", "dev", "--task", "Do it.", "--dir", str(scope), "--json"])
    return rc, json.loads(capsys.readouterr().out.strip())


def test_spawn_composes_the_kernels_legacy_skills(tmp_path, capsys, kernel_on_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (kernel_on_path / "claude").write_text("#!/bin/sh\nexit 0\n")
    (kernel_on_path / "claude").chmod(0o755)
    a, k = legacy_scope(tmp_path / "a"), legacy_scope(tmp_path / "k")
    rc, ours = spawn_json(capsys, a)
    proc = subprocess.run(["node", str(OAS), "spawn", "dev", "--no-launch", "--json", "--task", "Do it."], cwd=k,
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert rc == 0 and ours["ok"], ours
    assert proc.returncode == 0, proc.stderr
    skills = lambda s: sorted(os.listdir(s / "agents" / "dev" / "instances" / "dev-1" / ".agents" / "skills"))  # noqa: E731
    assert set(AUTHORING) <= set(skills(a)) and set(AUTHORING) <= set(skills(k))
    for n in AUTHORING:
        assert (a / "agents/dev/instances/dev-1/.agents/skills" / n / "SKILL.md").read_bytes() == \
            (KERNEL / "skills" / n / "SKILL.md").read_bytes()


def test_spawn_without_a_kernel_names_the_command(tmp_path, capsys, no_kernel, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    a = legacy_scope(tmp_path / "a")
    rc, env = spawn_json(capsys, a)
    assert rc == 1 and not env["ok"]
    assert [d["code"] for d in env["error"]["details"]["diagnostics"]] == ["AR270"] * 3
    assert "oas root" in env["error"]["message"]
