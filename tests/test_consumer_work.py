"""The work a consumer command does, counted (issue 36): a source at a commit is read once
per command however many steps ask for it, and an entry's content digest does not walk the
whole source."""

from __future__ import annotations

import pytest

from agentrc.consumer import reading, unchanged
from agentrc.model import SourceFile, SourceTree
from agentrc.sources import closure
from test_consumer_cli import run
from test_consumer_frozen import consumer_env


@pytest.fixture
def env(tmp_path, monkeypatch):
    return consumer_env(tmp_path, monkeypatch, "v1")


@pytest.mark.parametrize("verb", [("update",), ("install",)])
def test_a_source_at_a_commit_is_read_once_per_command(env, capsys, monkeypatch, verb):
    """The closure across sources and the render both need the source at its locked commit:
    it is read (published layout, style, the registry) once, not once per step."""
    repo = env["repo"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")[0] == 0
    monkeypatch.setattr(unchanged, "installed", lambda *a: None)  # the command in full, not its no-change answer
    reads = []
    real = reading._read
    monkeypatch.setattr(reading, "_read", lambda fetched, *a: reads.append(fetched.commit) or real(fetched, *a))
    code, out, err = run(capsys, *verb)
    assert code == 0, err
    assert len(reads) == 1 and reads[0] == repo.v1


def test_content_digests_sort_the_source_once(monkeypatch):
    """A digest per entry used to sort and scan every file of the source: 1,000 entries,
    a million path comparisons. The files are sorted once and found by bisection."""
    tree = SourceTree(tuple(SourceFile(f"skills/s{i:04d}/SKILL.md", b"x") for i in range(500))
                      + tuple(SourceFile(f"skills/s{i:04d}/ref/a.md", b"y") for i in range(500)))
    sorts = []
    real = closure._by_path

    def counting(t):
        sorts.append(id(t) in closure._SORTED)
        return real(t)

    monkeypatch.setattr(closure, "_by_path", counting)
    closure._SORTED.clear()
    digests = {closure.content_sha(tree, "", f"skills/s{i:04d}") for i in range(500)}
    assert len(digests) == 500 and sorts.count(False) == 1  # sorted at the first digest only
    alone = SourceTree((SourceFile("skills/s0001/SKILL.md", b"x"), SourceFile("skills/s0001/ref/a.md", b"y")))
    assert closure.content_sha(alone, "", "skills/s0001") == closure.content_sha(tree, "", "skills/s0001")


def test_a_fetched_sources_digests_name_paths_without_resolving_them(monkeypatch):
    """A fetched source's files are named below its locator (`file:///.../src@v1/...`), which
    `normpath` would change: each file's path past it is taken as it is, not by `relpath`
    (two `abspath`s a file, a tenth of an `add` of 1,000 items), and gives what it gave."""
    import posixpath

    root = "file:///tmp/src@v1"
    files = [f"{root}/skills/s{i}/SKILL.md" for i in range(3)] + [f"{root}/skills/s1/ref/a.md"]
    tree = SourceTree(tuple(SourceFile(p, p.encode()) for p in files))
    with monkeypatch.context() as m:  # each path through `relpath`, as before
        m.setattr(closure, "_plain_relative", lambda rest: False)
        closure._SORTED.clear()
        expected = {d: closure.content_sha(tree, root, f"{root}/skills/{d}") for d in ("s0", "s1")}
    calls = []
    real = posixpath.relpath
    monkeypatch.setattr(posixpath, "relpath", lambda *a: calls.append(a) or real(*a))
    closure._SORTED.clear()
    assert {d: closure.content_sha(tree, root, f"{root}/skills/{d}") for d in ("s0", "s1")} == expected
    assert calls == []
    odd = SourceTree((SourceFile(f"{root}/skills/s0/../s0/SKILL.md", b"x"),))  # not plain: as relpath says
    closure._SORTED.clear()
    closure.content_sha(odd, root, f"{root}/skills")
    assert len(calls) == 1


def test_an_installed_project_is_installed_again_without_parsing_or_rendering(env, capsys, monkeypatch):
    """The consumer keeps a memo of its own (parsed item directories, renderings by content
    digest, in the user's cache), as the build does: `install` of an installed project and
    `update` with nothing new parse and render nothing, and produce no file's bytes to hash
    them (the lock records digests the memo knows)."""

    repo = env["repo"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude,copilot")[0] == 0
    work = _count_parses_and_renders(monkeypatch)
    for verb in ("install", "update"):
        code, out, err = run(capsys, verb)
        assert code == 0, err
    assert work == {"parse": 0, "render": 0}
    (env["project"] / ".claude" / "skills" / "summary" / "SKILL.md").unlink()
    assert run(capsys, "install")[0] == 0  # a file gone: its item rendered again, the file back
    assert (env["project"] / ".claude" / "skills" / "summary" / "SKILL.md").is_file() and work["render"] >= 1


def test_a_cold_read_parses_and_renders_on_the_build_s_workers(tmp_path, monkeypatch, capsys):
    """A source read into an empty memo (a new project, a fresh clone) is parsed and rendered
    by the build's forked workers too (`pipeline.warm`), as a cold `agentrc build` is: the
    command's own process parses and renders only its share. Issue 36: one core did it all,
    1.2 s of a 2.3 s `add` at 1,000 items. The files are the same either way."""
    from agentrc.pipeline import warm
    from sourcerepos import Repo, isolated_home, skill

    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    repo.commit({f"reg/skills/s{i:02d}/SKILL.md": skill(f"s{i:02d}", body=f"Step {i}.\n" * 40) for i in range(40)},
                tag="v1")
    monkeypatch.setattr(warm, "MIN_ITEMS", 8)
    monkeypatch.setattr(warm, "cpus", lambda: 2)
    work = _count_parses_and_renders(monkeypatch)
    outs = []
    for name, jobs in (("forked", 2), ("alone", 1)):
        monkeypatch.setattr(warm, "cpus", lambda jobs=jobs: jobs)
        project = tmp_path / name
        project.mkdir()
        monkeypatch.chdir(project)
        work.update(parse=0, render=0)
        code, out, err = run(capsys, "add", f"{repo.url}@v1#reg", "--client", "claude,copilot")
        assert code == 0, err
        outs.append((dict(work), {p.relative_to(project).as_posix(): p.read_bytes()
                                  for p in project.rglob("*") if p.is_file() and ".agentrc" not in p.parts}))
    (forked, forked_files), (alone, alone_files) = outs
    assert alone == {"parse": 40, "render": 80}  # one process: every directory, every client
    assert 0 < forked["parse"] < 40 and forked["render"] < 80  # the rest came from the worker
    assert forked_files == alone_files


def test_nothing_to_do_reads_no_source_and_update_asks_the_remote_once(env, capsys, monkeypatch):
    """Issue 36: `install` of an installed project and `update` with nothing new answer from
    the last command's stamp (`consumer.unchanged`), as a no-change build does: no source is
    read, and `install` runs no git, `update` one `git ls-remote`. At 1,000 items they took
    0.95 s and 1.5 s; a no-op build 0.16 s. Anything the stamp vouches for that changed (an
    installed file, the lock, a cached checkout, the tag) makes the command a full one again."""
    from agentrc.inputs.checkout import Checkouts
    from sourcerepos import git, rule

    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")[0] == 0
    reads, gits = [], []
    real_read, real_run = reading._read, Checkouts.run
    monkeypatch.setattr(reading, "_read", lambda fetched, *a: reads.append(fetched.commit) or real_read(fetched, *a))
    monkeypatch.setattr(Checkouts, "run", lambda self, source, argv, *a, **k: gits.append(
        argv[0] if argv[0] != "-C" else argv[2]) or real_run(self, source, argv, *a, **k))

    def counted(*argv):
        reads.clear()
        gits.clear()
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        return len(reads), list(gits), err

    full = counted("install")
    assert counted("install") == (0, [], full[2])  # the same result, from the stamp
    # An add into a lock with no entries resolved every entry, as an update would: the update
    # after it answers from the stamp too (it took the full path, 1.5-2 s at 1,000 items).
    first = counted("update")
    assert first[:2] == (0, ["ls-remote"])
    assert counted("update") == first
    target = project / ".claude" / "skills" / "summary" / "SKILL.md"
    target.unlink()
    assert counted("install")[0] == 1 and target.is_file()  # a file gone: installed again
    assert counted("install")[:2] == (0, [])
    next(env["cache"].rglob("summary/SKILL.md")).touch()  # the cached checkout is not as it was
    assert counted("install")[0] == 1
    repo.commit({"reg/rules/style/RULE.md": rule("style") + "\nVersion two.\n"})
    git(repo.work, "tag", "-f", "-a", "v1", "-m", "v1")
    git(repo.work, "push", "-q", "--force", "--tags", "origin")
    moved = counted("update")  # the tag moved: the source is fetched again
    assert moved[0] >= 1 and "fetch" in moved[1]
    assert "Version two." in (project / ".claude" / "rules" / "style.md").read_text()


def _count_parses_and_renders(monkeypatch) -> dict:
    """Counters of the items parsed and the renderings made from now on in this process."""
    from agentrc.clients.base import ClientAdapter
    from agentrc.portable import load

    work = {"parse": 0, "render": 0}
    real_parse, real_render = load.parse_item, ClientAdapter.render

    def parse(*a, **k):
        work["parse"] += 1
        return real_parse(*a, **k)

    def render(self, *a, **k):
        work["render"] += 1
        return real_render(self, *a, **k)

    monkeypatch.setattr(load, "parse_item", parse)
    monkeypatch.setattr(ClientAdapter, "render", render)
    return work


def test_an_update_after_an_add_into_a_lock_with_entries_is_a_full_one(env, capsys, monkeypatch):
    """An add into a lock that already had entries resolved only its own source: whether the
    lock's other entries are what resolving them gives is not known, so the next update
    resolves everything (and vouches for the stamp from then on); into an empty lock, the
    update after the add answers from the stamp, with what a full update says."""
    repo = env["repo"]
    reads = []
    real = reading._read
    monkeypatch.setattr(reading, "_read", lambda fetched, *a: reads.append(fetched.commit) or real(fetched, *a))

    def update():
        reads.clear()
        code, out, err = run(capsys, "update")
        assert code == 0, err
        return len(reads), out, err

    assert run(capsys, "add", f"{repo.url}@v1#reg", "--item", "rule:style", "--client", "claude")[0] == 0
    quick = update()
    assert quick[0] == 0
    with monkeypatch.context() as m:
        m.setattr(unchanged, "installed", lambda *a: None)  # the command in full, not its no-change answer
        whole = update()
    assert whole[0] == 1 and whole[1:] == quick[1:]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core")[0] == 0
    full = update()
    assert full[0] == 1
    again = update()
    assert again[0] == 0 and again[1:] == full[1:]
