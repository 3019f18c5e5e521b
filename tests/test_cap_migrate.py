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


def test_a_catalog_entry_keeps_the_scope_at_version_1(tmp_path, capsys, monkeypatch):
    """A marketplace entry the catalog does not hold is `manual` in both tools, and one
    `manual` entry keeps the whole scope at version 1."""
    (tmp_path / "catalog.json").write_text('{"packages": {}}')
    monkeypatch.setenv("OAS_PACKAGE_CATALOG", str(tmp_path / "catalog.json"))
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/demo": ("demo.cap", "")})
    a, k = twins(tmp_path)
    for s in (a, k):
        v1_scope(s, {"demo.cap": {"source": f"path:{pkg}", "version": "0.1.0", "integrity": ZERO},
                     "oas.okf": {"source": "marketplace:oas.okf", "version": "0.1.0", "integrity": ZERO}})
    before = scope_state(a)
    plan = agentrc(capsys, "migrate", "--dry-run", "--dir", str(a))
    assert plan == oas(tmp_path, "migrate", "--dry-run", "--dir", str(k))
    assert [s["action"] for s in plan["result"]["plan"]] == ["acquire", "manual"]
    ours = agentrc(capsys, "migrate", "--dir", str(a))
    theirs = oas(tmp_path, "migrate", "--dir", str(k))
    assert not ours["ok"] and ours["error"]["code"] == theirs["error"]["code"] == "legacy-lock"
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR178"
    assert scope_state(a) == before and scope_state(k)["oas-lock.json"] == before["oas-lock.json"]


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    """A catalog with acme.demo (a package exporting the capability of the same id, tagged
    v1.0.0) and acme.tools (exporting acme.legacy, a capability id of an earlier release,
    through the catalog's alias)."""
    demo = write_package(tmp_path / "demo-src", pid="acme.demo", caps={"capabilities/demo": ("acme.demo", "")})
    tools = write_package(tmp_path / "tools-src", pid="acme.tools", caps={"capabilities/l": ("acme.legacy", "")})
    demo_url = bare_repo(tmp_path, "demo", ".", demo, tag="v1.0.0")
    tools_url = bare_repo(tmp_path, "tools", "oas-package", tools, tag="v2.0.0")
    doc = {"packages": {"acme.demo": {"url": demo_url, "ref": "v1.0.0", "path": "."},
                        "acme.tools": {"url": tools_url, "ref": "v2.0.0"}},
           "capabilities": {"acme.legacy": "acme.tools"}}
    (tmp_path / "catalog.json").write_text(json.dumps(doc))
    monkeypatch.setenv("OAS_PACKAGE_CATALOG", str(tmp_path / "catalog.json"))
    return tmp_path


def test_marketplace_entries_migrate_through_the_catalog(catalog, capsys):
    """Without --official a marketplace:ID entry maps to the catalog's ID at v<version>."""
    a, k = twins(catalog)
    for s in (a, k):
        v1_scope(s, {"acme.demo": {"source": "marketplace:acme.demo", "version": "1.0.0", "integrity": ZERO}})
    ours = agentrc(capsys, "migrate", "--dry-run", "--dir", str(a))
    assert ours == oas(catalog, "migrate", "--dry-run", "--dir", str(k))
    assert [(s["action"], s["package"]["spec"]) for s in ours["result"]["plan"]] == [("acquire", "acme.demo@v1.0.0")]
    ours = agentrc(capsys, "migrate", "--dir", str(a))
    theirs = oas(catalog, "migrate", "--dir", str(k))
    assert ours["ok"] and theirs["ok"] and ours["result"]["migrated"] == theirs["result"]["migrated"]
    assert scope_state(a) == scope_state(k)
    assert json.loads((a / "oas-lock.json").read_text())["packages"]["acme.demo"]["source"] == \
        "catalog:acme.demo@v1.0.0"


def deployment(root):
    """A team workspace: repo1 holds an official capability (through an alias), repo2 only a
    custom one, repo3 an official one the catalog does not publish yet, repo4 a mix."""
    root.mkdir()
    (root / "oas-config.yaml").write_text("team:\n  name: acme\n")
    pkg = write_package(root.parent / f"{root.name}-custom", caps={"capabilities/demo": ("demo.cap", "")})
    official = {"source": "marketplace:acme.legacy", "version": "0.3.0", "integrity": ZERO}
    custom = {"source": f"path:{pkg}", "version": "0.1.0", "integrity": ZERO}
    for name, entries in (("repo1", {"acme.legacy": official}), ("repo2", {"demo.cap": custom}),
                          ("repo3", {"acme.unpublished": {**official, "source": "marketplace:acme.unpublished"}}),
                          ("repo4", {"acme.legacy": official, "demo.cap": custom})):
        (root / name).mkdir()
        git("init", "-q", str(root / name))
        v1_scope(root / name, entries)


def neutral(doc, root):
    return json.loads(json.dumps(doc).replace(str(root), "<root>"))


def test_official_recursive_migration_matches_the_kernel(catalog, capsys):
    a, k = catalog / "ws-a", catalog / "ws-k"
    for s in (a, k):
        deployment(s)
    before = {s: {r: scope_state(s / r) for r in ("repo1", "repo2", "repo3", "repo4")} for s in (a, k)}
    # The plan of every lock-owning scope under the team boundary, the same in both tools.
    ours = agentrc(capsys, "migrate", "--official", "--recursive", "--dry-run", "--dir", str(a))
    theirs = oas(catalog, "migrate", "--official", "--recursive", "--dry-run", "--dir", str(k))
    assert not ours["ok"] and ours["error"]["code"] == theirs["error"]["code"] == "E_MIGRATE_FAILED"
    mine, kernel = ours["error"]["details"], theirs["error"]["details"]
    assert [(r["status"], r["levelKind"]) for r in mine["scopes"]] == [(r["status"], r["levelKind"])
                                                                       for r in kernel["scopes"]] == [
        ("ready", "repo"), ("nothing", "repo"), ("held", "repo"), ("blocked", "repo")]
    for m, t in zip(mine["scopes"], kernel["scopes"]):
        assert neutral(m["plan"], a) == neutral(t["plan"], k)
        assert neutral(m["level"], a) == neutral(t["level"], k)
    assert mine["scopes"][0]["plan"][0]["via"] == "alias" and mine["scopes"][0]["plan"][0]["package"] == "acme.tools"
    assert {s: {r: scope_state(s / r) for r in before[s]} for s in (a, k)} == before  # a dry run writes nothing
    # Apply: repo1 converts, repo2 is skipped, repo3 (held) and repo4 (blocked) stay as they were.
    ours = agentrc(capsys, "migrate", "--official", "--recursive", "--dir", str(a))
    theirs = oas(catalog, "migrate", "--official", "--recursive", "--dir", str(k))
    assert not ours["ok"] and ours["error"]["code"] == theirs["error"]["code"] == "E_MIGRATE_FAILED"
    mine, kernel = ours["error"]["details"], theirs["error"]["details"]
    assert [r["status"] for r in mine["scopes"]] == [r["status"] for r in kernel["scopes"]] == [
        "migrated", "skipped", "held", "failed"]
    assert mine["scopes"][0]["migrated"] == kernel["scopes"][0]["migrated"] == [
        {"capability": "acme.legacy", "package": "acme.tools", "version": "1.0.0"}]
    assert mine["scopes"][1]["retained"] == kernel["scopes"][1]["retained"] == ["demo.cap"]
    assert [t["capability"] for t in mine["trust"]] == [t["capability"] for t in kernel["trust"]] == ["acme.legacy"]
    assert scope_state(a / "repo1") == scope_state(k / "repo1")
    assert json.loads((a / "repo1" / "oas-lock.json").read_text())["packages"]["acme.tools"]["source"] == \
        "catalog:acme.tools"
    for s in (a, k):
        for r in ("repo2", "repo3", "repo4"):
            assert scope_state(s / r) == before[s][r], (s, r)
    # Without --recursive only the named scope is planned.
    ours = agentrc(capsys, "migrate", "--official", "--dry-run", "--dir", str(a / "repo2"))
    theirs = oas(catalog, "migrate", "--official", "--dry-run", "--dir", str(k / "repo2"))
    assert ours["ok"] and theirs["ok"]
    assert [r["status"] for r in ours["result"]["scopes"]] == [r["status"] for r in theirs["result"]["scopes"]] == [
        "nothing"]
    # Without --official, repo4's marketplace entry is looked up by its own id, which the
    # catalog does not publish (only its alias): the scope stays at version 1 in both tools.
    ours = agentrc(capsys, "migrate", "--dir", str(a / "repo4"))
    theirs = oas(catalog, "migrate", "--dir", str(k / "repo4"))
    assert ours["error"]["code"] == theirs["error"]["code"] == "legacy-lock"
    assert scope_state(a / "repo4") == before[a]["repo4"]


def test_migrate_holds_the_scope(tmp_path, capsys, monkeypatch):
    from agentrc.capops.install import ScopeLock

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
