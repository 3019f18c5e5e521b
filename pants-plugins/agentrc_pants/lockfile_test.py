"""`agentrc_lock` targets: `pants package` fetches the locked sources (a real git, a bare
repository served over file://) in a Process and builds exactly what `agentrc add` installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from pants.core.goals.package import BuiltPackage
from pants.engine.addresses import Address
from pants.engine.fs import Digest, DigestContents
from pants.testutil.rule_runner import QueryRule

from agentrc.consumer import consume
from agentrc_pants.target_types import AgentrcLockFieldSet
from agentrc_pants.testutil import make_rule_runner

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
SKILL = "---\nschema: 1\nname: {0}\ndescription: Use when {0}.\n{1}---\n\n## Steps\n\nDo {0}.\n"


def _git(cwd, *args):
    subprocess.run(("git",) + args, cwd=str(cwd), env=dict(os.environ, **GIT_ENV), check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def locked(tmp_path, monkeypatch):
    """A registry pushed to a bare repository, and a project `agentrc add` installed it into."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AGENTRC_CACHE_DIR", raising=False)
    work, bare = tmp_path / "work", tmp_path / "reg.git"
    files = {
        "reg/skills/fix/SKILL.md": SKILL.format("fix", "requires:\n  rules:\n    - style\n"),
        "reg/skills/fix/notes.md": "# Notes\n",
        "reg/rules/style/RULE.md": "---\nschema: 1\nname: style\ndescription: Style.\n---\n\n## Style\n\nShort.\n",
        "reg/core.bundle.yaml": "schema: 1\nname: core\ndescription: Core\nitems:\n  skills:\n    - fix\n",
        "reg/other/SKILL.md": SKILL.format("other", ""),
    }
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "one")
    _git(work, "tag", "v1")
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    _git(work, "push", "-q", str(bare), "main", "--tags")
    project = tmp_path / "project"
    project.mkdir()
    result = consume.add(str(project), f"file://{bare}@v1#reg", bundles=("core",), clients=("claude", "opencode"))
    assert result.ok, result.diagnostics
    return {"project": project, "work": work, "bare": bare}


def _package(locked, lock_text=None):
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcLockFieldSet]), QueryRule(DigestContents, [Digest]))
    lock = lock_text or (locked["project"] / "agentrc.lock.json").read_text()
    runner.write_files({"consumer/agentrc.lock.json": lock, "consumer/BUILD": "agentrc_lock(name='lock')\n"})
    tgt = runner.get_target(Address("consumer", target_name="lock"))
    built = runner.request(BuiltPackage, [AgentrcLockFieldSet.create(tgt)])
    contents = runner.request(DigestContents, [built.digest])
    prefix = built.artifacts[0].relpath
    return {fc.path[len(prefix) + 1:]: fc.content for fc in contents}


def test_package_builds_what_the_cli_installed(locked):
    tree = _package(locked)
    report = json.loads(tree.pop(".agentrc/report.json"))
    lock = json.loads((locked["project"] / "agentrc.lock.json").read_text())
    assert set(tree) == {f["path"] for f in lock["files"]}
    for path, content in tree.items():
        assert content == (locked["project"] / path).read_bytes(), path
    assert {(i["kind"], i["name"]) for i in report["items"]} == {("skill", "fix"), ("rule", "style")}
    assert not any("other" in p for p in tree)


def test_package_refuses_content_that_differs_from_the_lock(locked):
    lock = json.loads((locked["project"] / "agentrc.lock.json").read_text())
    for item in lock["items"]:
        if item["name"] == "style":
            item["sha256"] = "0" * 64
    with pytest.raises(Exception) as info:
        _package(locked, json.dumps(lock))
    assert "AR204" in str(info.value) and "rule style" in str(info.value)


def test_package_reports_an_unreachable_locked_commit(locked):
    lock = json.loads((locked["project"] / "agentrc.lock.json").read_text())
    shutil.rmtree(locked["bare"])
    with pytest.raises(Exception) as info:
        _package(locked, json.dumps(lock))
    assert "AR201" in str(info.value)


def test_package_of_an_invalid_lock_is_AR153(locked):
    with pytest.raises(Exception) as info:
        _package(locked, "{}")
    assert "AR203" in str(info.value)


def test_package_reads_a_local_source_from_the_build_root(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    reg = {"vendor/reg/skills/local/SKILL.md": SKILL.format("local", ""),
           "vendor/reg/skills/local/refs/more.md": "# More\n",
           "vendor/reg/skills/local/BUILD": "# not content\n"}
    project = tmp_path / "project"
    for rel, text in reg.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    result = consume.add(str(project), "./vendor/reg", clients=("claude",), cwd=str(project))
    assert result.ok, result.diagnostics
    lock = (project / "agentrc.lock.json").read_text()
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcLockFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.write_files({"consumer/agentrc.lock.json": lock, "consumer/BUILD": "agentrc_lock(name='lock')\n",
                        **{f"consumer/{rel}": text for rel, text in reg.items()}})
    tgt = runner.get_target(Address("consumer", target_name="lock"))
    built = runner.request(BuiltPackage, [AgentrcLockFieldSet.create(tgt)])
    prefix = built.artifacts[0].relpath
    tree = {fc.path[len(prefix) + 1:]: fc.content for fc in runner.request(DigestContents, [built.digest])}
    tree.pop(".agentrc/report.json")
    assert tree == {p: (project / p).read_bytes() for p in (f["path"] for f in json.loads(lock)["files"])}
    # The local registry changed since it was locked: the build refuses it, as install --frozen and --check do.
    runner.write_files({"consumer/vendor/reg/skills/local/refs/more.md": "# Changed\n"})
    with pytest.raises(Exception) as info:
        runner.request(BuiltPackage, [AgentrcLockFieldSet.create(runner.get_target(Address("consumer",
                                                                                           target_name="lock")))])
    assert "AR204" in str(info.value)


def test_package_reads_the_build_root_itself_as_a_local_source(tmp_path, monkeypatch):
    """A lock at the build root whose local source is the build root (`agentrc add .`)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    reg = {"skills/local/SKILL.md": SKILL.format("local", ""), "skills/local/refs/more.md": "# More\n"}
    project = tmp_path / "project"
    for rel, text in reg.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    result = consume.add(str(project), ".", clients=("claude",), cwd=str(project))
    assert result.ok, result.diagnostics
    lock = (project / "agentrc.lock.json").read_text()
    assert [i["source"] for i in json.loads(lock)["items"]] == ["."]
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcLockFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.write_files({"agentrc.lock.json": lock, "BUILD": "agentrc_lock(name='lock')\n", **reg})
    tgt = runner.get_target(Address("", target_name="lock"))
    built = runner.request(BuiltPackage, [AgentrcLockFieldSet.create(tgt)])
    prefix = built.artifacts[0].relpath
    tree = {fc.path[len(prefix) + 1:]: fc.content for fc in runner.request(DigestContents, [built.digest])}
    tree.pop(".agentrc/report.json")
    assert tree == {p: (project / p).read_bytes() for p in (f["path"] for f in json.loads(lock)["files"])}


def test_package_reads_the_build_root_as_the_source_of_a_lock_below_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    reg = {"skills/local/SKILL.md": SKILL.format("local", ""), "skills/local/refs/more.md": "# More\n"}
    root = tmp_path / "root"
    for rel, text in reg.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "consumer").mkdir()
    result = consume.add(str(root / "consumer"), "..", clients=("claude",), cwd=str(root / "consumer"))
    assert result.ok, result.diagnostics
    lock = (root / "consumer" / "agentrc.lock.json").read_text()
    assert [i["source"] for i in json.loads(lock)["items"]] == [".."]
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcLockFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.write_files({"consumer/agentrc.lock.json": lock, "consumer/BUILD": "agentrc_lock(name='lock')\n", **reg})
    tgt = runner.get_target(Address("consumer", target_name="lock"))
    built = runner.request(BuiltPackage, [AgentrcLockFieldSet.create(tgt)])
    prefix = built.artifacts[0].relpath
    tree = {fc.path[len(prefix) + 1:]: fc.content for fc in runner.request(DigestContents, [built.digest])}
    tree.pop(".agentrc/report.json")
    assert tree == {p: (root / "consumer" / p).read_bytes() for p in (f["path"] for f in json.loads(lock)["files"])}
