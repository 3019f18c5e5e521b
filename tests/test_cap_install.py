"""`agentrc cap install | list | remove` (spec 003) on real directories and real git
repositories (bare repositories made here, fetched through file:// URLs)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentrc.capabilities.model import INSTALLATION_FILE
from agentrc.cli.main import main

STORE = Path(".agents") / "capabilities" / "installed"


def write_package(root: Path, pid="demo.pkg", caps=None, deps=None, version="1.0.0") -> Path:
    """A package with capabilities {dir: (id, layer)}; each has a skill, an injection and a
    spawn hook script."""
    caps = caps or {"capabilities/demo": ("demo.cap", "")}
    root.mkdir(parents=True, exist_ok=True)
    doc = {"package": pid, "version": version, "description": "Demo.", "compatibility": {"oas": ">=0.19.0"},
           "capabilities": list(caps)}
    if deps:
        doc["dependencies"] = deps
    (root / "oas-package.json").write_text(json.dumps(doc, indent=2) + "\n")
    for rel, (cid, layer) in caps.items():
        c = root / rel
        (c / "skills" / "hello").mkdir(parents=True, exist_ok=True)
        (c / "skills" / "hello" / "SKILL.md").write_text(f"---\nname: hello\ndescription: {cid}\n---\nHi.\n")
        (c / "bin").mkdir(exist_ok=True)
        (c / "bin" / "hook.sh").write_text("#!/bin/sh\necho '{}'\n")
        (c / "bin" / "hook.sh").chmod(0o755)
        (c / "injects").mkdir(exist_ok=True)
        (c / "injects" / "i.md").write_text(f"Use {cid}.\n")
        man = {"capability": cid, "version": "0.1.0", "description": "A capability.", "skills": ["skills"],
               "inject": "injects/i.md", "hooks": {"spawn": "bin/hook.sh spawn"}}
        if layer:
            man["layer"] = layer
        (c / "oas.json").write_text(json.dumps(man, indent=2) + "\n")
    return root


def git(*args, cwd=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def bare_repo(tmp: Path, name: str, files_at: str, package: Path, tag: str = "") -> str:
    """A bare repository whose one commit holds `package` at `files_at` ('.' the root) and a
    README beside it; its file:// URL."""
    work = tmp / f"{name}-work"
    bare = tmp / f"{name}.git"
    git("init", "-q", "-b", "main", str(work))
    target = work if files_at == "." else work / files_at
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", f"{package}/.", str(target)], check=True)
    (work / "README.md").write_text("not part of the package\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "one", cwd=work)
    if tag:
        git("tag", tag, cwd=work)
    git("clone", "-q", "--bare", str(work), str(bare))
    return f"file://{bare}"


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, *argv):
    code, out, _ = run(capsys, *argv, "--json")
    assert len(out.strip().splitlines()) == 1, out  # exactly one envelope
    return code, json.loads(out)


def snapshot(root: Path):
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
    return out


@pytest.fixture
def scope(tmp_path):
    s = tmp_path / "scope"
    s.mkdir()
    return s


def test_install_from_a_directory(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 0 and env["ok"] and env["schemaVersion"] == 1
    result = env["result"]
    assert result["root"] == "demo.pkg" and result["installed"][0]["source"] == f"path:{pkg}"
    assert result["installed"][0]["commit"] == "local" and result["installed"][0]["path"] == "."
    cap = result["capabilities"][0]
    assert cap["status"] == "installed" and not cap["trusted"] and cap["executableSurface"]["hooks"] == ["spawn"]
    art = scope / STORE / "demo.cap"
    assert (art / "skills" / "hello" / "SKILL.md").exists() and os.access(art / "bin" / "hook.sh", os.X_OK)
    assert json.loads((art / INSTALLATION_FILE).read_text()) == {
        "schemaVersion": 1, "capability": "demo.cap", "version": "0.1.0", "package": "demo.pkg",
        "packageVersion": "1.0.0", "source": f"path:{pkg}", "commit": "local", "packagePath": ".",
        "capabilityPath": "capabilities/demo"}
    lock = json.loads((scope / "oas-lock.json").read_text())
    assert list(lock) == ["lockfileVersion", "packages", "capabilities"]
    assert lock["capabilities"]["demo.cap"]["integrity"] == cap["integrity"]
    assert [p.name for p in (scope / STORE).iterdir()] == ["demo.cap"]  # no staging left behind
    assert not (scope / ".agents" / "capabilities" / ".gitignore").exists()  # not a git scope


def test_installing_again_keeps_everything_and_its_trust(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    lock = scope / "oas-lock.json"
    doc = json.loads(lock.read_text())
    doc["capabilities"]["demo.cap"]["trusted"] = True
    lock.write_text(json.dumps(doc, indent=2) + "\n")
    before = snapshot(scope)
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 0 and env["result"]["capabilities"][0]["status"] == "kept"
    assert env["result"]["capabilities"][0]["trusted"] is True and env["result"]["installed"][0]["kept"]
    assert snapshot(scope) == before


def test_a_locked_package_never_changes_on_install(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    before = snapshot(scope)
    (pkg / "capabilities" / "demo" / "injects" / "i.md").write_text("changed\n")
    code, _, err = run(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and "error[AR161]" in err and snapshot(scope) == before


def test_a_failed_install_leaves_the_scope_as_it_was(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/a": ("demo.a", ""), "capabilities/b": ("demo.b", "")})
    (pkg / "capabilities" / "b" / "oas.json").write_text('{"capability": "demo.b", "version": "1", '
                                                       '"description": "d", "skills": ["missing"]}')
    git("init", "-q", str(scope))
    before = snapshot(scope)
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and not env["ok"] and env["error"]["code"] == "capability-not-self-contained"
    assert env["error"]["details"]["diagnostics"][0]["code"] == "AR157"
    assert snapshot(scope) == before  # no .agents, no ignore file, no lock


def test_git_sources_select_the_package_root(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    url = bare_repo(tmp_path, "default", "oas-package", pkg, tag="v1.0.0")
    git("init", "-q", str(scope))
    code, env = run_json(capsys, "cap", "install", f"{url}@v1.0.0", "--dir", str(scope))
    assert code == 0, env
    row = json.loads((scope / "oas-lock.json").read_text())["packages"]["demo.pkg"]
    commit = git("--git-dir", url[len("file://"):], "rev-parse", "v1.0.0^{commit}")
    assert row == {"source": f"{url}@v1.0.0".replace("file://", "git:file://", 1), "path": "oas-package",
                   "version": "1.0.0", "commit": commit, "integrity": row["integrity"], "dependencies": []}
    assert (scope / ".agents" / "capabilities" / ".gitignore").read_text().splitlines()[-1] == "installed/"
    assert not (scope / STORE / "demo.cap" / "README.md").exists()  # only the selected subtree

    root_url = bare_repo(tmp_path, "root", ".", write_package(tmp_path / "pkg2", pid="other.pkg",
                                                              caps={"c": ("other.cap", "")}))
    other = tmp_path / "other"
    other.mkdir()
    code, env = run_json(capsys, "cap", "install", f"{root_url}#.", "--dir", str(other))
    assert code == 0, env
    row = env["result"]["installed"][0]
    assert row["path"] == "." and row["source"] == f"git:{root_url}@{row['commit']}"  # unpinned: the commit
    code, env = run_json(capsys, "cap", "install", root_url, "--dir", str(tmp_path / "other"))
    assert code == 1 and env["error"]["code"] == "invalid-source" and "oas-package" in env["error"]["message"]
    code, env = run_json(capsys, "cap", "install", f"{url}@no-such-tag", "--dir", str(other))
    assert code == 1 and env["error"]["code"] == "invalid-source"


def test_a_package_path_linking_out_of_the_repository_is_refused(tmp_path, scope, capsys):
    work = tmp_path / "w"
    git("init", "-q", "-b", "main", str(work))
    write_package(tmp_path / "outside")
    os.symlink(str(tmp_path / "outside"), work / "oas-package")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "x", cwd=work)
    code, env = run_json(capsys, "cap", "install", f"file://{work}", "--dir", str(scope))
    assert code == 1 and env["error"]["code"] == "path-escape"
    assert snapshot(scope) == {}


def test_dependencies_are_installed_and_locked_by_package_id(tmp_path, scope, capsys):
    write_package(tmp_path / "base", pid="base.pkg", caps={"capabilities/k": ("base.knowledge", "knowledge")})
    app = write_package(tmp_path / "app", pid="app.pkg", deps=["../base"])
    code, env = run_json(capsys, "cap", "install", str(app), "--dir", str(scope))
    assert code == 0, env
    lock = json.loads((scope / "oas-lock.json").read_text())
    assert list(lock["packages"]) == ["app.pkg", "base.pkg"] and lock["packages"]["app.pkg"]["dependencies"] == \
        ["base.pkg"]
    assert {c["capability"]: c["layer"] for c in env["result"]["capabilities"]} == {
        "demo.cap": None, "base.knowledge": "knowledge"}
    code, env = run_json(capsys, "cap", "remove", "base.pkg", "--dir", str(scope))
    assert code == 1 and env["error"]["code"] == "remove-blocked" and "app.pkg" in env["error"]["message"]


def test_one_capability_id_from_two_packages_is_refused(tmp_path, scope, capsys):
    assert run(capsys, "cap", "install", str(write_package(tmp_path / "a", pid="a")), "--dir", str(scope))[0] == 0
    before = snapshot(scope)
    code, env = run_json(capsys, "cap", "install", str(write_package(tmp_path / "b", pid="b")), "--dir", str(scope))
    assert code == 1 and env["error"]["code"] == "duplicate-capability-id" and snapshot(scope) == before


def test_bare_install_restores_exactly(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    installed = snapshot(scope)
    art = scope / STORE / "demo.cap"
    subprocess.run(["rm", "-rf", str(scope / ".agents")], check=True)
    code, env = run_json(capsys, "cap", "install", "--dir", str(scope))
    assert code == 0 and env["result"]["scopes"][0]["artifacts"][0]["status"] == "restored"
    assert snapshot(scope) == installed
    (art / "injects" / "i.md").write_text("edited\n")  # a copy that no longer matches is replaced
    code, env = run_json(capsys, "cap", "install", "--dir", str(scope))
    assert code == 0 and snapshot(scope) == installed
    code, env = run_json(capsys, "cap", "install", "--dir", str(scope))
    assert env["result"]["scopes"][0]["artifacts"][0]["status"] == "present"


def test_restore_refuses_a_source_that_changed(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    subprocess.run(["rm", "-rf", str(scope / STORE / "demo.cap")], check=True)
    (pkg / "capabilities" / "demo" / "injects" / "i.md").write_text("changed upstream\n")
    lock_before = (scope / "oas-lock.json").read_bytes()
    code, env = run_json(capsys, "cap", "install", "--dir", str(scope))
    assert code == 1 and env["error"]["code"] == "E_RECONCILE_FAILED"
    failure = env["error"]["details"]["failures"][0]
    assert failure["code"] == "integrity-drift" and failure["capability"] == "demo.cap"
    assert not (scope / STORE / "demo.cap").exists() and os.listdir(scope / STORE) == []  # fetched copy removed
    assert (scope / "oas-lock.json").read_bytes() == lock_before  # a restore never advances the lock


def test_list_and_remove(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    code, env = run_json(capsys, "cap", "list", "--dir", str(scope))
    assert code == 0 and [p["package"] for p in env["result"]["packages"]] == ["demo.pkg"]
    # Its spawn hook is blocked until trusted: the row says so, with the command that approves it.
    row = env["result"]["capabilities"][0]
    assert (row["status"], row["code"], row["executableSurface"]) == \
        ("untrusted", "untrusted-surface", {"commands": [], "hooks": ["spawn"]})
    assert "agentrc cap trust demo.cap" in row["detail"]
    assert "[executable — needs agentrc cap trust]" in run(capsys, "cap", "list", "--dir", str(scope))[1]
    assert run(capsys, "cap", "trust", "demo.cap", "--dir", str(scope))[0] == 0
    code, env = run_json(capsys, "cap", "list", "--dir", str(scope))
    assert env["result"]["capabilities"][0]["status"] == "ok" and env["result"]["capabilities"][0]["trusted"]
    (scope / STORE / "demo.cap" / "oas.json").write_text("{}")
    code, env = run_json(capsys, "cap", "list", "--dir", str(scope))
    row = env["result"]["capabilities"][0]
    assert (row["status"], row["code"]) == ("drifted", "integrity-drift") and "drift" in row["detail"]
    (scope / "oas-config.yaml").write_text("capabilities:\n  additive:\n    demo.cap:\n      from: installed\n")
    code, _, err = run(capsys, "cap", "remove", "demo.pkg", "--dir", str(scope))
    assert code == 1 and "error[AR162]" in err and (scope / STORE / "demo.cap").exists()
    (scope / "oas-config.yaml").unlink()
    code, env = run_json(capsys, "cap", "remove", "demo.pkg", "--dir", str(scope))
    assert code == 0 and env["result"]["capabilities"] == ["demo.cap"]
    assert not (scope / STORE / "demo.cap").exists()
    assert json.loads((scope / "oas-lock.json").read_text()) == {"lockfileVersion": 2, "packages": {},
                                                                 "capabilities": {}}


def test_bad_arguments_in_json_mode_are_one_envelope(tmp_path, capsys):
    code, env = run_json(capsys, "cap", "list", "--dir", str(tmp_path / "missing"))
    assert code == 1 and env["error"]["code"] == "E_BAD_ARGS"


def test_trust_binds_to_the_installed_integrity(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/a": ("demo.a", ""), "capabilities/b": ("demo.b", "")})
    (pkg / "capabilities" / "b" / "oas.json").write_text('{"capability": "demo.b", "version": "1", '
                                                       '"description": "skills only", "skills": ["skills"]}')
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    code, env = run_json(capsys, "cap", "trust", "demo.a", "--dir", str(scope))
    assert code == 0 and env["result"]["approved"] == ["demo.a"] and env["result"]["skipped"] == []
    lock = json.loads((scope / "oas-lock.json").read_text())
    assert lock["capabilities"]["demo.a"]["trusted"] and not lock["capabilities"]["demo.b"]["trusted"]
    code, env = run_json(capsys, "cap", "trust", "demo.b", "--dir", str(scope))
    assert code == 0 and env["result"]["approved"] == [] and env["result"]["skipped"] == ["demo.b"]
    code, env = run_json(capsys, "cap", "trust", "demo.pkg", "--dir", str(scope))
    assert code == 1 and env["error"]["code"] == "unknown-capability"  # a package needs --all-capabilities
    code, out, err = run(capsys, "cap", "trust", "demo.pkg", "--all-capabilities", "--dir", str(scope))
    assert code == 0 and "demo.a: commands [none], hooks [spawn]" in out and "demo.b: commands [none]" in out


def test_trust_refuses_a_changed_artifact_or_a_disputed_origin(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    art = scope / STORE / "demo.cap"
    lock_before = (scope / "oas-lock.json").read_bytes()
    (art / "bin" / "hook.sh").write_text("#!/bin/sh\ncurl evil\n")
    code, env = run_json(capsys, "cap", "trust", "demo.cap", "--dir", str(scope))
    assert code == 1 and env["error"]["code"] == "integrity-drift"
    assert run(capsys, "cap", "install", "--dir", str(scope))[0] == 0  # restored
    # An edited provenance file whose new hash is written into the lock: every byte matches
    # its digest, only the origin disagrees.
    record = json.loads((art / INSTALLATION_FILE).read_text())
    record["source"] = "path:/somewhere/else"
    (art / INSTALLATION_FILE).write_text(json.dumps(record, indent=2) + "\n")
    from agentrc.inputs.captree import tree_hash
    doc = json.loads(lock_before)
    doc["capabilities"]["demo.cap"]["integrity"] = tree_hash(str(art))
    (scope / "oas-lock.json").write_text(json.dumps(doc, indent=2) + "\n")
    code, env = run_json(capsys, "cap", "trust", "demo.cap", "--dir", str(scope))
    assert code == 1 and env["error"]["code"] == "invalid-lock"
    assert json.loads((scope / "oas-lock.json").read_text())["capabilities"]["demo.cap"]["trusted"] is False


def test_a_link_planted_as_an_artifact_is_replaced_not_followed(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    art = scope / STORE / "demo.cap"
    elsewhere = tmp_path / "elsewhere"
    subprocess.run(["cp", "-a", str(art), str(elsewhere)], check=True)  # identical bytes, outside the scope
    subprocess.run(["rm", "-rf", str(art)], check=True)
    os.symlink(str(elsewhere), art)
    code, env = run_json(capsys, "cap", "install", "--dir", str(scope))
    assert code == 0 and env["result"]["scopes"][0]["artifacts"][0]["status"] == "restored"
    assert art.is_dir() and not art.is_symlink() and (elsewhere / "oas.json").exists()
    code, env = run_json(capsys, "cap", "trust", "demo.cap", "--dir", str(scope))
    assert code == 0


def test_update_replaces_a_package_and_resets_changed_trust(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/a": ("demo.a", ""), "capabilities/b": ("demo.b", "")})
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    assert run(capsys, "cap", "trust", "demo.pkg", "--all-capabilities", "--dir", str(scope))[0] == 0
    code, env = run_json(capsys, "cap", "update", "demo.pkg", "--dir", str(scope))
    assert code == 0 and env["result"]["changed"] is False and env["result"]["invalidatedApprovals"] == []
    (pkg / "capabilities" / "a" / "injects" / "i.md").write_text("new wording\n")  # a changes, b does not
    code, env = run_json(capsys, "cap", "update", "demo.pkg", "--dir", str(scope))
    result = env["result"]
    assert code == 0 and result["changed"] and result["invalidatedApprovals"] == ["demo.a"]
    lock = json.loads((scope / "oas-lock.json").read_text())
    assert lock["capabilities"]["demo.a"]["trusted"] is False and lock["capabilities"]["demo.b"]["trusted"] is True
    assert (scope / STORE / "demo.a" / "injects" / "i.md").read_text() == "new wording\n"
    # Dropping an export the config names is refused, and changes nothing.
    manifest = json.loads((pkg / "oas-package.json").read_text())
    manifest["capabilities"] = ["capabilities/a"]
    (pkg / "oas-package.json").write_text(json.dumps(manifest))
    (scope / "oas-config.yaml").write_text("capabilities:\n  additive:\n    demo.b:\n      from: installed\n")
    before = snapshot(scope)
    code, env = run_json(capsys, "cap", "update", "demo.pkg", "--dir", str(scope))
    assert code == 1 and env["error"]["code"] == "remove-blocked" and snapshot(scope) == before
    (scope / "oas-config.yaml").unlink()
    code, env = run_json(capsys, "cap", "update", "demo.pkg", "--dir", str(scope))
    assert code == 0 and env["result"]["removedCapabilities"] == ["demo.b"]
    assert not (scope / STORE / "demo.b").exists() and "demo.b" not in json.loads(
        (scope / "oas-lock.json").read_text())["capabilities"]


def test_update_follows_a_branch_but_not_a_commit(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    url = bare_repo(tmp_path, "r", "oas-package", pkg)
    assert run(capsys, "cap", "install", f"{url}@main", "--dir", str(scope))[0] == 0
    work = tmp_path / "next"
    git("clone", "-q", url, str(work))
    (work / "oas-package" / "capabilities" / "demo" / "injects" / "i.md").write_text("v2\n")
    git("commit", "-qam", "two", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    code, env = run_json(capsys, "cap", "update", "demo.pkg", "--dir", str(scope))
    assert code == 0 and env["result"]["changed"] and env["result"]["after"]["commit"] == git("rev-parse", "HEAD",
                                                                                             cwd=work)
    assert env["result"]["after"]["source"] == f"git:{url}@main"


def test_pack_gives_the_integrity_an_install_locks(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    code, env = run_json(capsys, "cap", "pack", str(pkg), "--out", str(tmp_path / "dist"))
    assert code == 0 and env["result"]["capabilities"] == {"demo.cap": {"version": "0.1.0",
                                                                       "path": "capabilities/demo"}}
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    locked = json.loads((scope / "oas-lock.json").read_text())["packages"]["demo.pkg"]["integrity"]
    assert json.loads((tmp_path / "dist" / "integrity.json").read_text())["integrity"] == locked == \
        env["result"]["integrity"]
    assert (tmp_path / "dist" / "payload" / "oas-package.json").exists()
    code, env = run_json(capsys, "cap", "pack", str(pkg), "--out", str(tmp_path / "dist"))
    assert code == 1 and env["error"]["details"]["diagnostics"][0]["code"] == "AR091"  # never over a tree
    (pkg / "capabilities" / "demo" / "injects" / "i.md").unlink()
    code, env = run_json(capsys, "cap", "pack", str(pkg), "--out", str(tmp_path / "dist2"))
    assert code == 1 and env["error"]["code"] == "capability-not-self-contained"
    assert not (tmp_path / "dist2").exists()


def test_list_reports_an_artifact_without_a_lock_row(tmp_path, scope, capsys):
    pkg = write_package(tmp_path / "pkg")
    assert run(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    stray = scope / STORE / "planted.cap"
    stray.mkdir()
    (stray / "oas.json").write_text('{"capability": "planted.cap", "version": "1", "description": "d"}')
    code, out, err = run(capsys, "cap", "list", "--dir", str(scope))
    assert code == 0 and "warning[AR161]" in err and "planted.cap" in err and "demo.cap" in out


def test_one_cap_run_at_a_time_per_scope(tmp_path, scope, capsys, monkeypatch):
    from agentrc.capops.install import ScopeLock

    pkg = write_package(tmp_path / "pkg")
    held = ScopeLock(str(scope))
    try:
        monkeypatch.setenv("AGENTRC_LOCK_TIMEOUT", "0.3")
        code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
        assert code == 1 and env["error"]["code"] == "E_SCOPE_LOCKED"
        assert not (scope / "oas-lock.json").exists()
    finally:
        held.release()
    assert not (scope / STORE / ScopeLock.NAME).exists()


def test_concurrent_installs_both_land_in_the_lock(tmp_path, scope):
    import sys

    from helpers import ROOT

    pkgs = [write_package(tmp_path / f"p{i}", pid=f"p{i}.pkg", caps={"c": (f"p{i}.cap", "")}) for i in range(4)]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    procs = [subprocess.Popen([sys.executable, "-m", "agentrc", "cap", "install", str(p), "--dir", str(scope),
                               "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for p in pkgs]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    lock = json.loads((scope / "oas-lock.json").read_text())
    assert sorted(lock["packages"]) == [f"p{i}.pkg" for i in range(4)]
    assert sorted(os.listdir(scope / STORE)) == [f"p{i}.cap" for i in range(4)]  # no staging, no lock file left
