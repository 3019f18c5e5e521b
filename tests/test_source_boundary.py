"""Issue 30's consumer-side boundary: where a source may lead (by its origin), what a lock
may say (validated as a whole before anything runs), and what may be shown of credentials."""

from __future__ import annotations

import json
import os

import pytest

from sourcerepos import Repo, isolated_home, rule, skill
from test_consumer_cli import LOCK, files, run

from agentrc.consumer.consume import _required_source
from agentrc.sources.dsl import SourceError, parse


@pytest.fixture
def env(tmp_path, monkeypatch):
    cache = isolated_home(monkeypatch, tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return {"project": project, "cache": cache, "tmp": tmp_path}


def _cross(name: str, source: str, kind: str = "rules") -> str:
    return f"requires:\n  {kind}:\n    - {{ name: {name}, source: \"{source}\" }}\n"


@pytest.mark.parametrize("child", ["file:///srv/secrets.git", "/home/me/registry", "~/registry", "../../../etc"])
def test_a_network_source_cannot_require_the_consumers_disk(child):
    parent = parse("https://example.com/team/registry.git@v1#skills")
    with pytest.raises(SourceError) as err:
        _required_source(parent, child, "a" * 40)
    assert err.value.code == "AR226"


def test_a_network_source_may_require_network_sources_and_its_own_tree():
    parent = parse("https://example.com/team/registry.git@v1#skills")
    assert _required_source(parent, "git@example.com:other/repo@v2", None).location == "git@example.com:other/repo"
    same = _required_source(parent, "../rules", "a" * 40)
    assert (same.location, same.subpath, same.ref) == (parent.location, "rules", "a" * 40)
    assert _required_source(parent, ".", "b" * 40).subpath == "skills"
    top = _required_source(parent, "..", "b" * 40)
    assert top.subpath == "" and top.label == f"https://example.com/team/registry.git@{'b' * 40}"


def test_a_local_origin_may_require_local_sources():
    parent = parse("file:///srv/registry.git@v1")
    assert _required_source(parent, "file:///srv/other.git@v1", None).location == "file:///srv/other.git"
    assert _required_source(parent, "/srv/dir", None).location == "/srv/dir"
    local = parse("./vendor/reg")
    assert _required_source(local, "../shared", None).location == "./vendor/shared"


def test_a_relative_path_in_a_git_source_is_its_own_tree_at_the_same_commit(env, capsys):
    repo = Repo(env["tmp"], "mono")
    commit = repo.commit({"a/skills/x/SKILL.md": skill("x", requires=_cross("y", "../b")),
                          "b/rules/y/RULE.md": rule("y")}, tag="v1")
    code, _, err = run(capsys, "add", f"{repo.url}@v1#a", "--item", "skill:x", "--client", "claude")
    assert code == 0, err
    assert files(env["project"]) == [".claude/rules/y.md", ".claude/skills/x/SKILL.md", LOCK]
    lock = json.loads((env["project"] / LOCK).read_text())
    (y,) = [i for i in lock["items"] if i["name"] == "y"]
    assert (y["source"], y["commit"], y["required_by"]) == (f"{repo.url}#b", commit, ["skill:x"])
    assert run(capsys, "install", "--frozen")[0] == 0


def _lock(**over):
    data = {"version": 1, "clients": ["claude"], "bundles": [], "items": [], "files": [], "plugins": [], "mcps": [],
            "mcps_removed": []}
    data.update(over)
    return json.dumps(data)


def _item(source="file:///srv/r.git", ref="v1", commit="a" * 40, name="x"):
    return {"kind": "rule", "name": name, "source": source, "ref": ref, "commit": commit, "sha256": "b" * 64,
            "direct": True, "required_by": []}


@pytest.mark.parametrize("command", [["install"], ["install", "--frozen"], ["remove", "x"],
                                     ["update", "--dry-run"], ["remove-mcp", "srv"], ["list"]])
def test_a_hostile_lock_is_refused_whole_before_anything_runs(env, capsys, command):
    """An unknown client (a KeyError before), a credential, option-shaped names and paths
    outside the project: every problem at once, as AR203 (AR225), no traceback, nothing written."""
    project = env["project"]
    keep = project / "keep.txt"
    keep.write_text("mine\n")
    hostile = _lock(
        clients=["claude", "nonesuch"],
        items=[_item(source="https://user:hunter2@example.com/r.git"), _item(name="y", ref="--upload-pack=x")],
        files=[{"path": "../outside.txt", "sha256": "c" * 64}, {"path": ".git/config", "sha256": "c" * 64}],
        mcps=[{"name": "--scope=user", "client": "claude", "scope": "project", "bundle": "b", "status": "installed"}],
        plugins=[{"name": "p", "identifier": "--dangerously-skip-permissions@x", "client": "claude", "scope": "project",
                  "bundle": "b", "status": "installed"}],
        mcps_removed=["-h"])
    (project / LOCK).write_text(hostile)
    code, out, err = run(capsys, *command)
    assert code == 1, (out, err)
    assert "Traceback" not in err and "hunter2" not in out + err
    for needle in ("unknown client 'nonesuch'", "AR225", "@--upload-pack=x:", "'../outside.txt'", "'.git/config'",
                   "'--scope=user' starts with '-'", "'--dangerously-skip-permissions@x'", "'-h'"):
        assert needle in err, needle
    assert sorted(p.name for p in project.iterdir()) == ["agentrc.lock.json", "keep.txt"]
    assert (project / LOCK).read_text() == hostile and keep.read_text() == "mine\n"


def test_a_locks_local_source_outside_the_project_is_not_read(env, capsys):
    """A committed lock naming `/` (which walked the disk) or a directory beside the
    project: AR226 before anything is read, unless the consumer names it."""
    project, tmp = env["project"], env["tmp"]
    secret = tmp / "secrets" / "rules" / "key"
    secret.mkdir(parents=True)
    (secret / "RULE.md").write_text(rule("key"))
    for source in ("/", "../secrets", "~/"):
        (project / LOCK).write_text(_lock(items=[_item(source=source, ref=None, commit=None, name="key")]))
        code, out, err = run(capsys, "install")
        assert code == 1 and "AR226" in err and "lies outside the project" in err, err
        assert sorted(p.name for p in project.iterdir()) == [LOCK]
    # Inside the project, a local source is read as before.
    inside = project / "vendor" / "rules" / "key"
    inside.mkdir(parents=True)
    (inside / "RULE.md").write_text(rule("key"))
    (project / LOCK).unlink()
    code, _, err = run(capsys, "add", "./vendor", "--item", "rule:key", "--client", "claude")
    assert code == 0, err
    assert run(capsys, "install", "--frozen")[0] == 0


def test_a_hand_edited_lock_cannot_delete_a_users_file(env, capsys):
    """A `files` entry naming the user's keep.txt with its digest: in a clone without
    `.agentrc/`, no locked source gives it, so it is an error and the file stays; with the
    manifest there, the manifest decides."""
    import hashlib
    import shutil

    project, tmp = env["project"], env["tmp"]
    repo = Repo(tmp, "reg")
    repo.commit({"rules/style/RULE.md": rule("style")}, tag="v1")
    assert run(capsys, "add", f"{repo.url}@v1", "--client", "claude")[0] == 0
    keep = project / "keep.txt"
    keep.write_text("mine\n")
    lock = json.loads((project / LOCK).read_text())
    lock["files"].append({"path": "keep.txt", "sha256": hashlib.sha256(b"mine\n").hexdigest()})
    (project / LOCK).write_text(json.dumps(lock))
    shutil.rmtree(project / ".agentrc")  # a fresh clone
    for argv in (("install",), ("install", "--frozen"), ("remove", "style")):
        code, _, err = run(capsys, *argv)
        assert code == 1 and "'keep.txt' is recorded, but no locked source gives it" in err, (argv, err)
        assert keep.read_text() == "mine\n"
    lock["files"] = [f for f in lock["files"] if f["path"] != "keep.txt"]
    (project / LOCK).write_text(json.dumps(lock))
    # The clone's own files are still adopted and removed with their entry.
    code, _, err = run(capsys, "remove", "style")
    assert code == 0, err
    assert not (project / ".claude" / "rules" / "style.md").exists() and keep.read_text() == "mine\n"


@pytest.mark.parametrize("planted", ["agentrc.lock.json", ".agentrc.lock.json.agentrc-tmp"])
def test_a_link_planted_at_the_lock_or_its_temporary_name_is_never_written_through(env, capsys, planted):
    """A fresh clone holding a committed link: `add` and `install` write no byte through it
    (AR224 for the lock itself, nothing written at all), the link's target untouched."""
    project, tmp = env["project"], env["tmp"]
    victim = tmp / "victim.txt"
    victim.write_text("precious\n")
    repo = Repo(tmp, "reg")
    repo.commit({"rules/style/RULE.md": rule("style")}, tag="v1")
    (project / planted).symlink_to(victim)
    code, _, err = run(capsys, "add", f"{repo.url}@v1", "--client", "claude")
    assert victim.read_text() == "precious\n"
    if planted == LOCK:
        assert code == 1 and "AR050" in err  # read as a lock first: a link out of the project is never read
        assert sorted(p.name for p in project.iterdir() if p.name != ".agentrc") == [LOCK]
        assert os.path.islink(project / LOCK)
    else:
        assert code == 0, err
        assert json.loads((project / LOCK).read_text())["clients"] == ["claude"]
        assert os.path.islink(project / planted)
        assert run(capsys, "install")[0] == 0 and victim.read_text() == "precious\n"


def test_a_lock_linked_inside_the_project_is_still_not_written_through(env, capsys):
    project, tmp = env["project"], env["tmp"]
    repo = Repo(tmp, "reg")
    repo.commit({"rules/style/RULE.md": rule("style")}, tag="v1")
    assert run(capsys, "add", f"{repo.url}@v1", "--client", "claude")[0] == 0
    (project / "team.json").write_bytes((project / LOCK).read_bytes())
    (project / LOCK).unlink()
    (project / LOCK).symlink_to("team.json")
    before = (project / "team.json").read_bytes()
    code, _, err = run(capsys, "add", f"{repo.url}@v1", "--client", "claude,copilot", "--set-clients")
    assert code == 1 and "AR224" in err and "is a symbolic link" in err
    assert (project / "team.json").read_bytes() == before and not (project / ".github").exists()
