"""The write shared with a forked child (agentrc.output.forked, `writer.PARALLEL_MIN`).

A large write stages, and then links into place, the second half of its files in a child
process. What must hold: the same tree, manifest and diagnostics as one process gives; a
failure in either half is reported as one process reports it, and nothing is written
before the commit; a failure after the commit is completed by the next run; a killed
build leaves nothing the next run cannot recover, child included."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.output import forked, writer
from helpers import ROOT
from test_output_safety import _tree, _without_stat, assert_rebuilds_to, clean_build, killed_build

REGISTRY = ROOT / "examples" / "registry"
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))


# --- forked.run itself ----------------------------------------------------------------------


def test_both_shares_run_and_the_childs_records_come_back():
    seen = []

    def parent(start, end):
        seen.append((start, end, os.getpid()))

    def child(start, end, records):
        for k in range(end - start):
            records[k] = (start + k) % 256

    records = forked.run(10, 4, 1, parent, child)
    assert seen == [(0, 4, os.getpid())]
    assert records is not None and bytes(records[:6]) == bytes(range(4, 10))


def test_no_child_when_the_cut_leaves_it_nothing():
    seen = []
    assert forked.run(5, 5, 8, lambda s, e: seen.append((s, e)), lambda s, e, r: None) is None
    assert seen == [(0, 5)]


def test_a_failure_of_the_child_comes_back_as_it_was_raised(tmp_path):
    def child(start, end, records):
        raise forked.Failed(FileExistsError(errno.EEXIST, "taken"), 7)

    with pytest.raises(forked.Failed) as caught:
        forked.run(10, 5, 1, lambda s, e: None, child)
    assert caught.value.index == 7
    assert isinstance(caught.value.original, FileExistsError)
    assert caught.value.original.errno == errno.EEXIST and caught.value.original.strerror == "taken"


def test_an_exception_that_cannot_be_pickled_is_an_oserror_naming_it():
    class Local(Exception):  # a local class: pickle cannot find it
        pass

    def child(start, end, records):
        raise Local("odd")

    with pytest.raises(forked.Failed) as caught:
        forked.run(4, 2, 1, lambda s, e: None, child)
    assert caught.value.index == -1
    assert isinstance(caught.value.original, OSError) and "Local: odd" in str(caught.value.original)


def test_a_child_killed_by_a_signal_is_an_oserror():
    def child(start, end, records):
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(forked.Failed) as caught:
        forked.run(4, 2, 1, lambda s, e: None, child)
    assert caught.value.original.errno == errno.EIO and "signal 9" in str(caught.value.original)


def test_a_failure_of_the_parent_ends_the_child_before_it_is_raised(tmp_path):
    flag = tmp_path / "child-finished"

    def child(start, end, records):
        time.sleep(20)
        flag.write_text("late")

    def parent(start, end):
        time.sleep(0.2)
        raise ValueError("parent failed")

    began = time.monotonic()
    with pytest.raises(ValueError):
        forked.run(4, 2, 1, parent, child)
    assert time.monotonic() - began < 10
    time.sleep(0.1)
    assert not flag.exists()


# --- the writer's two halves ------------------------------------------------------------------


def _registry(tmp_path: Path, rules: int = 30) -> Path:
    reg = tmp_path / "reg"
    shutil.copytree(REGISTRY, reg)
    for i in range(rules):
        d = reg / "rules" / f"bulk-{i:02d}"
        d.mkdir()
        (d / "RULE.md").write_text(f"---\nschema: 1\nname: bulk-{i:02d}\ndescription: Use when testing {i}\n"
                                   f"---\n\n## Body\n\nText {i}.\n")
    return reg


def _build(reg: Path, out: Path, jobs: int, clients: str = "claude,copilot,opencode") -> int:
    return main(["build", str(reg), "--client", clients, "--out", str(out), "--no-cache", "--jobs", str(jobs)])


def _manifest(out: Path) -> dict:
    data = json.loads((out / ".agentrc" / "manifest.json").read_text())
    data["stat"] = {k: [v[0], v[2]] for k, v in data["stat"].items()}  # sizes and modes; not mtimes
    return data


@pytest.fixture
def forking(monkeypatch):
    """Every write of more than 4 files shared with a child; the forks counted."""
    monkeypatch.setattr(writer, "PARALLEL_MIN", 4)
    forks = []
    real = forked.run

    def run(count, cut, record, parent, child):
        if cut < count:
            forks.append(count - cut)
        return real(count, cut, record, parent, child)

    monkeypatch.setattr(forked, "run", run)
    return forks


def test_two_processes_write_what_one_writes(tmp_path, capsys, forking):
    reg = _registry(tmp_path)
    one, two = tmp_path / "one", tmp_path / "two"
    assert _build(reg, one, 1) == 0
    assert forking == []
    err_one = capsys.readouterr().err.replace(str(one), "OUT")
    assert _build(reg, two, 2) == 0
    assert len(forking) == 2 and forking[0] > 50  # staged, then linked, half each
    err_two = capsys.readouterr().err.replace(str(two), "OUT")
    assert err_two == err_one
    assert _without_stat(_tree(two)) == _without_stat(_tree(one))
    assert _manifest(two) == _manifest(one)
    # The next build finds every file as the manifest records it (the child's statuses too).
    assert _build(reg, two, 2) == 0
    assert "0 created, 0 updated, 0 deleted" in capsys.readouterr().err
    # Updates, a merged file's mode kept, deletions: a build of other content and clients.
    for out in (one, two):
        (out / "opencode.json").chmod(0o600)
    for i in range(0, 30, 3):
        (reg / "rules" / f"bulk-{i:02d}" / "RULE.md").write_text(
            f"---\nschema: 1\nname: bulk-{i:02d}\ndescription: Use when changed {i}\n---\n\n## Body\n\nNew {i}.\n")
    shutil.rmtree(reg / "rules" / "bulk-29")
    assert _build(reg, one, 1, "claude,opencode") == 0
    err_one = capsys.readouterr().err.replace(str(one), "OUT")
    assert _build(reg, two, 2, "claude,opencode") == 0
    err_two = capsys.readouterr().err.replace(str(two), "OUT")
    assert err_two == err_one and "deleted" in err_two
    assert _without_stat(_tree(two)) == _without_stat(_tree(one))
    assert _manifest(two) == _manifest(one)
    assert (two / "opencode.json").stat().st_mode & 0o777 == 0o600


def _fail_last(monkeypatch, method: str) -> list:
    """Wrap `writer.Output.<method>` so that the name of the last file it stages or links
    (in the child's half, when there is a child) is noted before it runs: the file to fail.
    Staged, the name and the bytes: a file in a staged tree has its own name there."""
    real = getattr(writer.Output, method)
    last: list = [""]

    def wrapped(self, *args, **kwargs):
        if method == "_stage_files":
            todo = args[1]
            path, f, _, _, sdir = todo[-1]
            last[0] = (f"{len(todo) - 1}.new" if sdir is None else path.rpartition("/")[2], f.content)
        else:
            last[0] = f"{len(args[0]['put']) - 1}.new"
        return real(self, *args, **kwargs)

    monkeypatch.setattr(writer.Output, method, wrapped)
    return last


def test_a_staging_failure_in_the_childs_half_writes_nothing(tmp_path, capsys, forking, monkeypatch):
    reg = _registry(tmp_path)
    real = writer._Tree.create
    armed = [False]
    last = _fail_last(monkeypatch, "_stage_files")

    def create(dfd, name, data, mode, exact):
        if armed[0] and (name, data) == last[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(dfd, name, data, mode, exact)

    monkeypatch.setattr(writer._Tree, "create", staticmethod(create))
    errs = []
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        armed[0] = False
        assert _build(reg, out, jobs, "claude") == 0
        before = _tree(out)
        armed[0] = True
        capsys.readouterr()
        assert _build(reg, out, jobs, "claude,copilot") == 1
        errs.append(capsys.readouterr().err.replace(str(out), "OUT"))
        assert _tree(out) == before
        assert not (out / ".agentrc" / "txn").exists()
    assert "No space left on device" in errs[1] and "nothing written" in errs[1] and "Traceback" not in errs[1]
    assert errs[1] == errs[0]
    # jobs 2's cold write (staged on two processes; its new directories renamed into place,
    # too few files linked for a child) and the failed stage
    assert len(forking) == 2


def _grown(reg: Path, out: Path, jobs: int) -> None:
    """`out` built from `reg` without its last 15 rules, which are back when this returns:
    the next build creates their files in directories that are there (each linked into
    place, not renamed with a new directory)."""
    held = reg.parent / "held"
    held.mkdir(exist_ok=True)
    bulk = [f"bulk-{i:02d}" for i in range(15, 30)]
    for name in bulk:
        (reg / "rules" / name).rename(held / name)
    assert _build(reg, out, jobs) == 0
    for name in bulk:
        (held / name).rename(reg / "rules" / name)


def test_a_link_failure_in_the_childs_half_is_completed_by_the_next_run(tmp_path, capsys, forking, monkeypatch):
    reg = _registry(tmp_path)
    out, clean = tmp_path / "out", tmp_path / "clean"
    assert _build(reg, clean, 1) == 0
    _grown(reg, out, 2)
    forking.clear()
    real = os.link
    last = _fail_last(monkeypatch, "_roll_forward")

    def link(src, dst, **kwargs):
        if src == last[0]:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", link)
    capsys.readouterr()
    assert _build(reg, out, 2) == 1
    err = capsys.readouterr().err
    assert "Input/output error" in err and "error[AR142]" in err and "completes it" in err
    assert "Traceback" not in err
    assert len(forking) == 2
    monkeypatch.setattr(os, "link", real)
    assert _build(reg, out, 2) == 0
    assert "completed a write an earlier agentrc run was interrupted in" in capsys.readouterr().err
    assert _without_stat(_tree(out)) == _without_stat(_tree(clean))


def test_a_file_appearing_in_the_childs_half_is_kept_as_in_one_process(tmp_path, capsys, forking, monkeypatch):
    reg = _registry(tmp_path)
    real = writer.Output._roll_forward
    results = []

    def roll_forward(self, journal, fresh=False):
        last = [p for p in journal["put"] if p["create"]][-1]["path"]  # the child's half
        target = Path(self.root) / last
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("the user's\n")
        return real(self, journal, fresh)

    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        _grown(reg, out, jobs)
        monkeypatch.setattr(writer.Output, "_roll_forward", roll_forward)
        capsys.readouterr()
        assert _build(reg, out, jobs) == 1
        err = capsys.readouterr().err.replace(str(out), "OUT")
        assert "error[AR091]" in err
        results.append((err, _without_stat(_tree(out))))
        monkeypatch.setattr(writer.Output, "_roll_forward", real)
    assert results[1] == results[0]


def test_kill_9_during_a_shared_write_then_a_rebuild_gives_the_clean_tree(tmp_path):
    """The parent killed at moments spread over its build: the child goes with it (or
    finishes its share under the lock) and the next run completes or undoes the write."""
    reg = _registry(tmp_path, rules=150)
    script = ("import sys; import agentrc.output.writer as w; w.PARALLEL_MIN = 4; "
              "from agentrc.cli.main import main; sys.exit(main(sys.argv[1:]))")
    cmd = [sys.executable, "-c", script, "build", str(reg), "--client", "claude,copilot,opencode", "--out",
           "{out}", "--no-cache", "--jobs", "2"]
    clean, out = tmp_path / "clean", tmp_path / "out"
    expected, duration = clean_build(cmd, clean)
    for i in range(6):
        killed_build(cmd, out, duration * (0.5 + 0.5 * i / 6))
    assert_rebuilds_to(cmd, out, expected)
