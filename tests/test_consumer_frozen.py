"""`agentrc install --frozen` as npm ci, pnpm --frozen-lockfile and uv sync --frozen: it installs
exactly what the lock records (a fresh clone holding only the lock gets its files) and fails,
writing nothing, when the lock would have to change; `install --check` is the write-nothing
drift check. The real CLI, real git repositories served over file://, real files."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from sourcerepos import Repo, bundle, isolated_home, rule, skill
from test_consumer_cli import LOCK, files, run

from agentrc.consumer import consume


def consumer_env(tmp_path, monkeypatch, tag: str):
    """A registry repository (a skill requiring a rule, a bundle of the skill) tagged `tag`,
    and an empty project as the working directory; HOME and the cache in tmp_path."""
    cache = isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    repo.v1 = repo.commit({
        "reg/skills/summary/SKILL.md": skill("summary", requires="requires:\n  rules:\n    - style\n"),
        "reg/rules/style/RULE.md": rule("style"),
        "reg/core.bundle.yaml": bundle("core", "  skills:\n    - summary\n"),
    }, tag=tag)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return {"repo": repo, "project": project, "cache": cache, "tmp": tmp_path}


@pytest.fixture
def env(tmp_path, monkeypatch):
    return consumer_env(tmp_path, monkeypatch, "v1")


def snapshot(project):
    return {name: (project / name).read_bytes() for name in files(project)}


def test_a_fresh_clone_holding_only_the_lock_gets_its_files(env, capsys):
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude,copilot")[0] == 0
    installed = snapshot(project)
    lock = (project / LOCK).read_bytes()
    # The clone: the lock alone (no installed files, no .agentrc/), and a cold cache.
    for name in list(installed):
        if name != LOCK:
            (project / name).unlink()
    shutil.rmtree(project / ".agentrc")
    shutil.rmtree(env["cache"])
    code, _, err = run(capsys, "install", "--check")
    assert code == 1 and "AR204" in err and "missing" in err
    assert files(project) == [LOCK]  # --check writes nothing
    stat = os.stat(project / LOCK)
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 0, err
    assert snapshot(project) == installed
    after = os.stat(project / LOCK)
    assert (project / LOCK).read_bytes() == lock and (after.st_ino, after.st_mtime_ns) == (stat.st_ino,
                                                                                        stat.st_mtime_ns)
    assert run(capsys, "install", "--check")[0] == 0
    assert run(capsys, "install", "--frozen")[0] == 0  # again: nothing to do


def test_frozen_and_check_together_is_a_usage_error(env, capsys):
    assert run(capsys, "install", "--frozen", "--check")[0] == 2


def test_a_local_source_whose_content_moved_fails_frozen_and_writes_nothing(env, capsys):
    project = env["project"]
    reg = project / "vendor" / "reg"
    (reg / "skills" / "local").mkdir(parents=True)
    (reg / "skills" / "local" / "SKILL.md").write_text(skill("local"))
    assert run(capsys, "add", "./vendor/reg", "--client", "claude")[0] == 0
    (reg / "skills" / "local" / "SKILL.md").write_text(skill("local", "Edited upstream."))
    before = snapshot(project)
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "AR204" in err and "does not have the content the lock records" in err, err
    assert "install failed: nothing written" in err
    assert snapshot(project) == before
    # install (not frozen) takes the new content and records it; then frozen holds again.
    assert run(capsys, "install")[0] == 0
    assert "Edited upstream." in (project / ".claude" / "skills" / "local" / "SKILL.md").read_text()
    assert run(capsys, "install", "--frozen")[0] == 0


def test_an_entry_the_locked_sources_resolve_otherwise_fails_frozen(env, capsys):
    """A lock that lost an entry its locked sources require (a bad merge), or records one
    as required by what does not require it: installing would have to re-resolve and
    rewrite it."""
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")[0] == 0
    good = (project / LOCK).read_text()
    lock = json.loads(good)
    lock["items"] = [i for i in lock["items"] if i["name"] != "style"]
    (project / LOCK).write_text(json.dumps(lock))
    before = snapshot(project)
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "rule:style: the locked sources require it (skill:summary); the lock does not record it" \
        in err, err
    assert "the lock would have to change" in err and snapshot(project) == before
    lock = json.loads(good)
    for i in lock["items"]:
        if i["name"] == "style":
            i["required_by"] = ["bundle:core"]
    (project / LOCK).write_text(json.dumps(lock))
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "rule:style: resolving the locked sources records it otherwise" in err, err
    # update resolves again and writes the lock the sources give; frozen holds then.
    assert run(capsys, "update")[0] == 0 and (project / LOCK).read_text() == good
    assert run(capsys, "install", "--frozen")[0] == 0


def test_a_lock_recording_files_the_sources_do_not_give_fails_frozen(env, capsys):
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")[0] == 0
    lock = json.loads((project / LOCK).read_text())
    lock["files"].append({"path": ".claude/rules/planted.md", "sha256": "0" * 64})
    (project / LOCK).write_text(json.dumps(lock))
    (project / ".claude" / "skills" / "summary" / "SKILL.md").unlink()
    before = snapshot(project)
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and ".claude/rules/planted.md: the lock records a file the locked sources do not give" in err
    assert snapshot(project) == before  # not even the missing skill is restored
    code, _, err = run(capsys, "install", "--check")
    assert code == 1 and "planted.md" in err and snapshot(project) == before


def test_a_lock_whose_file_digest_is_not_what_the_sources_give_fails_frozen_in_a_clone(env, capsys):
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")[0] == 0
    shutil.rmtree(project / ".agentrc")
    lock = json.loads((project / LOCK).read_text())
    lock["files"][0]["sha256"] = "1" * 64
    (project / LOCK).write_text(json.dumps(lock))
    before = snapshot(project)
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "AR204" in err and snapshot(project) == before


def test_frozen_keeps_a_users_edit_as_install_does(env, capsys):
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")[0] == 0
    target = project / ".claude" / "rules" / "style.md"
    target.write_text("my own edit\n")
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "AR094" in err and target.read_text() == "my own edit\n"
    assert run(capsys, "install", "--frozen", "--force")[0] == 0 and "Always style." in target.read_text()


def test_the_project_file_seam_stops_frozen_and_check(env, capsys):
    """`declared`: what the project file (agentrc.yaml) finds the lock does not match; under
    --frozen and --check each is AR204 and nothing is written; a plain install is not asked."""
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")[0] == 0
    (project / ".claude" / "rules" / "style.md").unlink()
    before = snapshot(project)
    asked = []

    def declared(lock):
        asked.append(lock.clients)
        return ["source x is declared, the lock does not install it"]

    for kw in ({"frozen": True}, {"check": True}):
        result = consume.install(str(project), declared=declared, **kw)
        assert not result.ok and snapshot(project) == before
        assert [d.code for d in result.diagnostics] == ["AR204"]
        assert "the lock does not match the project file: source x is declared" in result.diagnostics[0].message
    assert asked == [("claude",), ("claude",)]
    assert consume.install(str(project), declared=declared).ok and asked == [("claude",), ("claude",)]
    assert (project / ".claude" / "rules" / "style.md").exists()
