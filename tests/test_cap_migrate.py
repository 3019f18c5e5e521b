"""`agentrc cap migrate [--dry-run]` (lockfileVersion 1 to 2, all or nothing per scope),
judged by `oas migrate` on twin scopes: the same plan, the same lock bytes and installed
trees after it, and a failure that leaves both scopes exactly as they were."""

from __future__ import annotations

import json
import shutil

import pytest

from test_cap_install import bare_repo, git, write_package
from test_cap_judge import OAS, agentrc, oas, scope_state, twins

pytestmark = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"),
                                reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")
ZERO = "sha256-" + "0" * 64


def v1_scope(scope, entries, artifacts=()):
    """A version 1 scope: its lock and, for each (id, source dir), a v1 artifact copy."""
    store = scope / ".agents" / "capabilities" / "installed"
    store.mkdir(parents=True)
    for cid, src in artifacts:
        shutil.copytree(src, store / cid)
    (scope / "oas-lock.json").write_text(json.dumps({"lockfileVersion": 1, "capabilities": entries}, indent=2) + "\n")


def test_a_path_and_a_git_scope_migrate_as_the_kernel_migrates_them(tmp_path, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/demo": ("demo.cap", "")})
    repo = write_package(tmp_path / "repo-src", pid="git.pkg", caps={"capabilities/g": ("git.cap", "")})
    url = bare_repo(tmp_path, "gitpkg", ".", repo)
    commit = git("ls-remote", url, "HEAD").split()[0]
    a, k = twins(tmp_path)
    for s in (a, k):
        v1_scope(s, {"demo.cap": {"source": f"path:{pkg}", "version": "0.1.0", "integrity": ZERO},
                     "git.cap": {"source": f"git:{url}", "version": "0.1.0", "integrity": ZERO, "commit": commit}},
                 [("demo.cap", pkg / "capabilities" / "demo")])
    ours = agentrc(capsys, "migrate", "--dry-run", "--dir", str(a))
    theirs = oas(tmp_path, "migrate", "--dry-run", "--dir", str(k))
    assert ours == theirs and [s["action"] for s in ours["result"]["plan"]] == ["acquire", "acquire"]
    assert (a / "oas-lock.json").read_bytes() == (k / "oas-lock.json").read_bytes()  # a dry run writes nothing
    ours = agentrc(capsys, "migrate", "--dir", str(a))
    theirs = oas(tmp_path, "migrate", "--dir", str(k))
    assert ours["ok"] and theirs["ok"], (ours, theirs)
    assert ours["result"]["migrated"] == theirs["result"]["migrated"]
    assert [t["capability"] for t in ours["result"]["trust"]] == [t["capability"] for t in theirs["result"]["trust"]] \
        == ["demo.cap", "git.cap"]
    assert json.loads((a / "oas-lock.json").read_text())["lockfileVersion"] == 2
    assert scope_state(a) == scope_state(k)
    # Each verifies the other's result, and a second run has nothing to do.
    assert {x["status"] for x in oas(tmp_path, "install", "--dir", str(a), "--no-requirements")["result"]["scopes"][0][
        "artifacts"]} == {"present"}
    again = agentrc(capsys, "migrate", "--dir", str(k))
    assert again["ok"] and again["result"]["migrated"] == []


def test_an_empty_v1_lock_converts_its_format(tmp_path, capsys):
    a, k = twins(tmp_path)
    for s in (a, k):
        (s / "oas-lock.json").write_text('{"lockfileVersion": 1, "capabilities": {}}\n')
    ours = agentrc(capsys, "migrate", "--dir", str(a))
    theirs = oas(tmp_path, "migrate", "--dir", str(k))
    assert ours["result"]["formatConverted"] and theirs["result"]["formatConverted"]
    assert (a / "oas-lock.json").read_bytes() == (k / "oas-lock.json").read_bytes()


def test_a_failing_entry_rolls_the_whole_scope_back(tmp_path, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/demo": ("demo.cap", "")})
    a, k = twins(tmp_path)
    for s in (a, k):
        v1_scope(s, {"demo.cap": {"source": f"path:{pkg}", "version": "0.1.0", "integrity": ZERO},
                     "gone.cap": {"source": f"path:{tmp_path / 'missing'}", "version": "0.1.0", "integrity": ZERO}},
                 [("demo.cap", pkg / "capabilities" / "demo")])
    before_a, before_k = scope_state(a), scope_state(k)
    ours = agentrc(capsys, "migrate", "--dir", str(a))
    theirs = oas(tmp_path, "migrate", "--dir", str(k))
    assert not ours["ok"] and not theirs["ok"]
    assert "rolled back" in theirs["error"]["message"]
    assert {d["code"] for d in ours["error"]["details"]["diagnostics"]} == {"AR178", "AR160"}
    # Both restore the version 1 lock byte for byte. agentrc leaves the scope exactly as it
    # was; the kernel (0.20.0) removes the v1 artifact of the entry it had converted
    # (acquisition replaced it in place, and the rollback deletes what it created there).
    assert (k / "oas-lock.json").read_bytes() == (a / "oas-lock.json").read_bytes()
    assert scope_state(a) == before_a
    assert "capabilities/installed/demo.cap" in before_k and "capabilities/installed/demo.cap" not in scope_state(k)


def test_a_catalog_entry_keeps_the_scope_at_version_1(tmp_path, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/demo": ("demo.cap", "")})
    a, _k = twins(tmp_path)
    v1_scope(a, {"demo.cap": {"source": f"path:{pkg}", "version": "0.1.0", "integrity": ZERO},
                 "oas.okf": {"source": "marketplace:oas.okf", "version": "0.1.0", "integrity": ZERO}})
    before = scope_state(a)
    plan = agentrc(capsys, "migrate", "--dry-run", "--dir", str(a))
    assert [s["action"] for s in plan["result"]["plan"]] == ["acquire", "manual"]
    ours = agentrc(capsys, "migrate", "--dir", str(a))
    assert not ours["ok"] and ours["error"]["code"] == "legacy-lock"
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR178"
    assert scope_state(a) == before


def test_migrate_holds_the_scope(tmp_path, capsys, monkeypatch):
    from agentrc.pipeline.capinstall import ScopeLock

    pkg = write_package(tmp_path / "pkg", caps={"capabilities/demo": ("demo.cap", "")})
    a, _k = twins(tmp_path)
    v1_scope(a, {"demo.cap": {"source": f"path:{pkg}", "version": "0.1.0", "integrity": ZERO}})
    before = scope_state(a)
    held = ScopeLock(str(a))  # another run (not lent): migrate waits, then changes nothing
    try:
        monkeypatch.setenv("AGENTRC_LOCK_TIMEOUT", "0.3")
        out = agentrc(capsys, "migrate", "--dir", str(a))
        assert not out["ok"] and out["error"]["code"] == "E_SCOPE_LOCKED"
    finally:
        held.release()
    assert scope_state(a) == before
    assert agentrc(capsys, "migrate", "--dir", str(a))["ok"]
