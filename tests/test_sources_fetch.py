"""Fetching sources with the real git (agentrc.inputs.fetch): bare repositories made here,
served over file://, with HOME and the cache isolated."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sourcerepos import Repo, git, isolated_home, rule, skill

from agentrc.inputs.fetch import Fetcher, cache_dir
from agentrc.sources.dsl import SourceError, parse


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    r = Repo(tmp_path)
    r.v1 = r.commit({"reg/skills/a/SKILL.md": skill("a"), "other/rules/o/RULE.md": rule("o")}, tag="v1")
    git(r.work, "checkout", "-q", "-b", "next")
    r.next = r.commit({"reg/skills/b/SKILL.md": skill("b")})
    git(r.work, "checkout", "-q", "main")
    r.main = r.commit({"reg/skills/a/SKILL.md": skill("a", "Changed on main.")})
    return r


def _paths(fetched):
    return sorted(os.path.relpath(f.path, fetched.root) for f in fetched.tree.files)


def test_the_cache_follows_xdg_cache_home(repo, tmp_path):
    assert cache_dir() == str(tmp_path / "cache" / "agentrc" / "sources")


def test_a_tag_a_branch_and_head_resolve_to_their_commits(repo):
    f = Fetcher()
    tag = f.fetch(parse(f"{repo.url}@v1"))
    assert tag.ok, tag.diagnostics
    assert tag.commit == repo.v1
    assert _paths(tag) == ["other/rules/o/RULE.md", "reg/skills/a/SKILL.md"]
    assert f.fetch(parse(f"{repo.url}@next")).commit == repo.next
    head = f.fetch(parse(repo.url))
    assert head.commit == repo.main
    assert b"Changed on main." in next(x.content for x in head.tree.files if x.path.endswith("a/SKILL.md"))
    # Every file read lies in the user cache, and is shown as the source's, the same on
    # every machine: SOURCE@REF/PATH (the commit's first digits without a ref).
    assert head.directory.startswith(cache_dir())
    assert all((Path(head.directory) / os.path.relpath(x.path, head.root)).is_file() for x in head.tree.files)
    assert sorted(x.path for x in tag.tree.files) == [f"{repo.url}@v1/other/rules/o/RULE.md",
                                                      f"{repo.url}@v1/reg/skills/a/SKILL.md"]
    assert head.root == f"{repo.url}@{repo.main[:12]}"


def test_each_source_is_fetched_once_per_resolution(repo):
    f = Fetcher()
    f.fetch(parse(f"{repo.url}@v1"))
    runs = f.git_runs
    again = f.fetch(parse(f"{repo.url}@v1"))
    assert f.git_runs == runs and again.commit == repo.v1


def test_a_pinned_commit_in_the_cache_is_never_fetched_again(repo):
    first = Fetcher().fetch(parse(f"{repo.url}@v1"))
    assert first.ok
    shutil.rmtree(repo.bare)  # the remote is gone: only the cache can answer
    later = Fetcher()
    pinned = later.fetch(parse(f"{repo.url}@v1"), commit=repo.v1)
    assert pinned.ok, pinned.diagnostics
    assert later.git_runs == 0
    assert _paths(pinned) == _paths(first)
    # A ref (not a commit) needs the remote, which is gone: AR201 with git's message.
    moving = Fetcher().fetch(parse(f"{repo.url}@v1"))
    assert not moving.ok and moving.diagnostics[0].code == "AR201"


def test_a_commit_ref_is_fetched_by_id_and_then_cached(repo):
    f = Fetcher()
    got = f.fetch(parse(f"{repo.url}@{repo.next}"))
    assert got.ok and got.commit == repo.next
    assert "reg/skills/b/SKILL.md" in _paths(got)
    again = Fetcher()
    assert again.fetch(parse(f"{repo.url}@{repo.next}")).ok and again.git_runs == 0


def test_a_subpath_is_checked_out_sparsely(repo):
    got = Fetcher().fetch(parse(f"{repo.url}@v1#reg"))
    assert got.ok
    assert _paths(got) == ["skills/a/SKILL.md"]
    entry = Path(got.directory).parent  # the checkout in the cache (got.root is how it is shown)
    assert (entry / "reg" / "skills" / "a" / "SKILL.md").is_file()
    assert not (entry / "other").exists()  # the sparse checkout left the rest of the tree out


def test_unknown_refs_unreachable_remotes_and_missing_subpaths(repo, tmp_path):
    nope = Fetcher().fetch(parse(f"{repo.url}@no-such-tag"))
    assert [d.code for d in nope.diagnostics] == ["AR201"] and "no-such-tag" in nope.diagnostics[0].message
    gone = Fetcher().fetch(parse(f"file://{tmp_path}/missing.git@v1"))
    assert [d.code for d in gone.diagnostics] == ["AR201"]
    sub = Fetcher().fetch(parse(f"{repo.url}@v1#not/here"))
    assert [d.code for d in sub.diagnostics] == ["AR208"]


def test_git_missing_is_AR202(repo, monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    got = Fetcher().fetch(parse(f"{repo.url}@v1"))
    assert [d.code for d in got.diagnostics] == ["AR202"]


def test_a_symlink_out_of_the_repository_is_not_followed(repo, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    skills = repo.work / "reg" / "skills" / "a"
    os.symlink(str(secret), str(skills / "leak.md"))
    os.symlink("../../../../../../../../../../../../etc/passwd", str(skills / "passwd.md"))
    os.symlink(str(tmp_path), str(repo.work / "reg-out"))
    commit = repo.commit({}, "hostile links")
    got = Fetcher().fetch(parse(f"{repo.url}@{commit}#reg"))
    codes = sorted({d.code for d in got.diagnostics})
    assert "AR050" in codes
    assert not any(b"TOP SECRET" in f.content or b"root:" in f.content for f in got.tree.files)
    # A subpath that is itself a link out of the repository is refused before anything is read.
    out = Fetcher().fetch(parse(f"{repo.url}@{commit}#reg-out"))
    assert [d.code for d in out.diagnostics] == ["AR050"] and out.tree.files == ()


def test_path_traversal_in_a_subpath_never_reaches_git(repo):
    for text in (f"{repo.url}@v1#../../etc", f"{repo.url}@v1#reg/../../x", f"{repo.url}@-x"):
        with pytest.raises(SourceError):
            parse(text)


def test_a_local_directory_is_read_in_place(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    reg = tmp_path / "project" / "vendor" / "reg"
    (reg / "skills" / "a").mkdir(parents=True)
    (reg / "skills" / "a" / "SKILL.md").write_text(skill("a"))
    f = Fetcher(base=str(tmp_path / "project"))
    got = f.fetch(parse("./vendor/reg#skills"))
    assert got.ok and got.commit is None and _paths(got) == ["a/SKILL.md"] and f.git_runs == 0
    assert [d.code for d in f.fetch(parse("./nowhere")).diagnostics] == ["AR208"]


def test_a_repository_on_this_machine_is_packed_without_compression(repo, monkeypatch):
    """A `file://` source's fetch tells the packing git to neither delta nor deflate (the
    pack goes through a pipe into a checkout removed once read); the files are the same. A
    remote's fetch leaves the command on the server alone (ssh runs `git-upload-pack`)."""
    from agentrc.inputs import checkout

    calls = []
    real = checkout.Checkouts.run
    monkeypatch.setattr(checkout.Checkouts, "run",
                        lambda self, source, args, diags, data=None: (calls.append(args),
                                                                      real(self, source, args, diags, data))[1])
    fetched = Fetcher().fetch(parse(f"{repo.url}@v1"))
    assert fetched.ok and _paths(fetched) == ["other/rules/o/RULE.md", "reg/skills/a/SKILL.md"]
    [fetch] = [args for args in calls if "fetch" in args]
    assert repo.url.startswith("file://")
    assert any(a.startswith("--upload-pack=") and a.endswith(" -c pack.window=0 -c pack.compression=0 upload-pack")
               for a in fetch)
    assert fetch.index(next(a for a in fetch if a.startswith("--upload-pack="))) < fetch.index("origin")
    for remote in ("https://github.com/owner/repo", "git@github.com:owner/repo.git"):
        assert checkout._local_pack(parse(remote)) == ()
