"""Interrupted capability transactions (issue 30): `cap install`, `update` and `remove` fail,
or are killed, at every file-system call, and the next run rolls the scope back or forward
through the transaction's journal (`capops.txn`) to exactly what a clean run leaves.
Also real SIGKILLs at spread moments, and the leftovers of a killed `cap migrate` and `cap
spawn`. Real packages, real git scopes, real files; only the `os` the transaction's modules
see is replaced, to fail at the k-th call (`_FaultyOS` of test_output_safety)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from agentrc.capops import install as capinstall
from agentrc.capops import migrate as capmigrate
from agentrc.capops import safe as capsafe
from agentrc.capops import txn as captxn
from agentrc.inputs import captree
from agentrc.output import atomic, steps, writer
from test_cap_install import STORE, git, run, run_json, write_package
from test_output_safety import _FaultyOS, _Killed

SRC = str(Path(__file__).resolve().parent.parent / "src")
# The modules whose file-system calls a transaction makes: fetch and validation
# (capinstall, captree), the transaction's steps (captxn, writer's shared helpers), the
# executor and its journal (steps), the safe writer.
MODULES = (capinstall, captxn, steps, capsafe, atomic, writer, captree)
# Faults before the journal's commit all end in the same roll back (fetch, validation,
# staging), and those after the journal is deleted in the same clean-up: one in SAMPLE of
# them is tried; from the journal's first write to the staging's removal, every call is.
SAMPLE = 6


class _CapFaultyOS(_FaultyOS):
    CALLS = _FaultyOS.CALLS + ("lstat", "chmod", "symlink", "scandir", "readlink")


def _tree(scope: Path) -> dict:
    """The scope as a clean run leaves it: every file's bytes and mode, every link's target,
    every directory (git's own directory left out)."""
    out = {}
    for p in sorted(scope.rglob("*")):
        rel = p.relative_to(scope)
        if rel.parts[0] == ".git":
            continue
        if p.is_symlink():
            out[str(rel)] = ("link", os.readlink(p))
        elif p.is_file():
            out[str(rel)] = ("file", p.read_bytes(), p.stat().st_mode & 0o777)
        else:
            out[str(rel)] = ("dir",)
    return out


def _files(tree: dict) -> dict:
    """A scope's files and links: a killed run may leave the empty directories it made on
    the way to the store (it cannot know they were not the user's), nothing else."""
    return {k: v for k, v in tree.items() if v[0] != "dir"}


def _patch(monkeypatch, fake) -> None:
    for m in MODULES:
        monkeypatch.setattr(m, "os", fake)


def _unpatch(monkeypatch) -> None:
    for m in MODULES:
        monkeypatch.setattr(m, "os", os)


@pytest.fixture
def fast_tmp(tmp_path):
    """In memory when it can be: each step copies and removes a scope."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        path = Path(tempfile.mkdtemp(prefix="agentrc-capfaults-", dir="/dev/shm"))
        yield path
        shutil.rmtree(path, ignore_errors=True)
    else:
        yield tmp_path


def _scenario(tmp: Path, verb: str):
    """(scope before, the operation, the clean scope after) for `verb`: a real package in a
    git scope. Update changes a file, adds a capability and drops one (a retire); remove
    takes one of two packages away."""
    pkg = write_package(tmp / "pkg", caps={"capabilities/demo": ("demo.cap", ""), "capabilities/old": ("old.cap", "")})
    other = write_package(tmp / "pkg-other", pid="other.pkg", caps={"c": ("other.cap", "")})
    before = tmp / "before"
    before.mkdir()
    git("init", "-q", str(before))
    if verb != "install":
        capinstall.install(str(before), str(pkg))
        capinstall.install(str(before), str(other))
    if verb == "update":
        (pkg / "capabilities" / "demo" / "injects" / "i.md").write_text("Changed.\n")
        shutil.rmtree(pkg / "capabilities" / "old")
        write_package(pkg, caps={"capabilities/demo": ("demo.cap", ""), "capabilities/new": ("new.cap", "")})
        (pkg / "capabilities" / "demo" / "injects" / "i.md").write_text("Changed.\n")
    ops = {"install": lambda s: capinstall.install(s, str(pkg)),
           "update": lambda s: capinstall.update(s, "demo.pkg"),
           "remove": lambda s: capinstall.remove(s, "demo.pkg")}
    clean = tmp / "clean"
    shutil.copytree(before, clean, symlinks=True)
    ops[verb](str(clean))
    return before, ops[verb], _tree(clean), _tree(before)


def _phases(monkeypatch, op, scope: Path) -> tuple:
    """(all calls, the first of the journal's commit, the first of the staging's removal) of
    a run without faults."""
    counter = _CapFaultyOS(0, errno.EIO)
    marks = {}

    def mark(name, real):
        def call(*args, **kwargs):
            marks.setdefault(name, counter.count + 1)
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(captxn.Txn, "commit", mark("commit", captxn.Txn.commit))
    monkeypatch.setattr(captxn, "finish", mark("finish", captxn.finish))
    _patch(monkeypatch, counter)
    op(str(scope))
    _unpatch(monkeypatch)
    monkeypatch.undo()
    return counter.count, marks["commit"], marks["finish"]


def _committed(scope: Path) -> bool:
    """Whether the executor's journal left in the scope records the commit point done (the
    journal is written before the point too: its existence alone no longer says committed)."""
    path = scope / STORE / captxn.TXN / captxn.JOURNAL
    if not path.exists():
        return False
    first = json.loads(path.read_text())["steps"][0]
    return first["point"] and first["state"] == "done"


def _faulty(monkeypatch, op, scope: Path, k: int, fault) -> bool:
    """The operation, failing at call k: whether it reported the failure."""
    faulty = _CapFaultyOS(k, fault)
    _patch(monkeypatch, faulty)
    try:
        op(str(scope))
        return False
    except capinstall.Failure as exc:
        assert exc.diagnostics
        return True
    except _Killed:
        return True
    finally:
        _unpatch(monkeypatch)
        faulty.close_leaked()
        capinstall.ScopeLock._held.clear()


@pytest.mark.parametrize("fault", [errno.EIO, _Killed], ids=["EIO", "kill"])
@pytest.mark.parametrize("verb", ["install", "update", "remove"])
def test_a_fault_at_any_step_then_a_bare_install_gives_the_clean_scope(fast_tmp, monkeypatch, verb, fault):
    before, op, after, initial = _scenario(fast_tmp, verb)
    scope = fast_tmp / "scope"
    shutil.copytree(before, scope, symlinks=True)
    total, commit, finish = _phases(monkeypatch, op, scope)
    assert _tree(scope) == after and total > 50 and commit < finish < total, (total, commit, finish)
    steps = sorted(set(range(1, total + 1, SAMPLE)) | set(range(commit - 2, finish + 8)) | {total})
    print(f"{verb}: {total} calls, the commit at {commit}, the staging removed from {finish}: {len(steps)} tried")
    for k in steps:
        shutil.rmtree(scope)
        shutil.copytree(before, scope, symlinks=True)
        reported = _faulty(monkeypatch, op, scope, k, fault)
        committed = _committed(scope)
        # Unreported only when it hit the release of the scope's lock, after all was done.
        left = {p: v for p, v in _tree(scope).items() if not p.endswith(capinstall.ScopeLock.NAME)}
        assert reported or left == after, f"step {k}: the fault was not reported"
        outcome = capinstall.restore(str(scope))  # the bare `cap install`: recovers, then restores
        assert not outcome.failed, (k, outcome.lines)
        now = _tree(scope)
        assert now == (after if committed else now), f"step {k} ({verb}): a committed journal was not completed"
        assert now == after or _files(now) == _files(initial), f"step {k} ({verb}): neither before nor after"
        if now != after:
            op(str(scope))
        assert _tree(scope) == after, f"step {k} ({verb}): the run after the recovery differs from a clean one"


# --- real SIGKILLs --------------------------------------------------------------------------------


def _proc(*argv, prelude=""):
    code = textwrap.dedent(prelude) + "\nimport sys\nfrom agentrc.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=SRC))


# Each renames slowly (a sleep before every rename and replace of the transaction), so a
# SIGKILL sent at a spread moment lands anywhere from the fetch to the last step.
SLOW = """
import os, time
from agentrc.capops import txn as captxn
class Slow:
    def __getattr__(self, name):
        real = getattr(os, name)
        if name in ("rename", "replace", "fsync", "unlink"):
            def slow(*a, **k):
                time.sleep(0.02)
                return real(*a, **k)
            return slow
        return real
captxn.os = Slow()
"""


@pytest.mark.parametrize("verb", ["install", "update", "remove"])
def test_sigkill_at_spread_moments_then_a_bare_install_gives_the_clean_scope(tmp_path, capsys, verb):
    before, _op, after, initial = _scenario(tmp_path, verb)
    argv = {"install": ("install", str(tmp_path / "pkg")), "update": ("update", "demo.pkg"),
            "remove": ("remove", "demo.pkg")}[verb]
    outcomes = set()
    for delay in (0.05, 0.15, 0.25, 0.35, 0.45, 0.6):
        scope = tmp_path / f"scope-{delay}"
        shutil.copytree(before, scope, symlinks=True)
        proc = _proc("cap", *argv, "--dir", str(scope), prelude=SLOW)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        rc = proc.wait(60)
        outcomes.add("finished" if rc == 0 else "killed")
        code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
        assert code == 0, out + err
        now = _tree(scope)
        assert now == after or _files(now) == _files(initial), f"killed after {delay} s: neither before nor after"
        if now != after:
            assert run(capsys, "cap", *argv, "--dir", str(scope))[0] == 0
        assert _tree(scope) == after
    assert "killed" in outcomes


# --- cap migrate and cap spawn leftovers ----------------------------------------------------------


def _v1_scope(tmp: Path) -> tuple:
    """A scope with a version 1 lock whose one entry maps to a local package, its artifact
    installed as version 1 left it."""
    pkg = write_package(tmp / "pkg")
    scope = tmp / "scope"
    (scope / STORE).mkdir(parents=True)
    shutil.copytree(pkg / "capabilities" / "demo", scope / STORE / "demo.cap")
    entry = {"source": f"path:{pkg}", "version": "0.1.0", "integrity": "sha256-" + "0" * 64}
    lock = {"lockfileVersion": 1, "capabilities": {"demo.cap": entry}}
    (scope / "oas-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    return scope, pkg


KILL_IN_MIGRATE = """
import os, signal
from agentrc.capops import install as capinstall
def install(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
capinstall.install = install
"""


def test_a_killed_migrate_is_rolled_back_by_the_next_run(tmp_path, capsys):
    scope, _pkg = _v1_scope(tmp_path)
    start = _tree(scope)
    assert run(capsys, "cap", "migrate", "--dry-run", "--dir", str(scope))[0] == 0
    proc = _proc("cap", "migrate", "--dir", str(scope), prelude=KILL_IN_MIGRATE)
    assert proc.wait(60) == -signal.SIGKILL, proc.stderr.read()
    left = [n for n in os.listdir(scope / STORE) if n.startswith(capmigrate.MIGRATE_PREFIX)]
    assert left and json.loads((scope / "oas-lock.json").read_text())["lockfileVersion"] == 2  # half done
    assert not (scope / STORE / "demo.cap").exists()  # the v1 artifact set aside
    code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
    assert "rolled back a `cap migrate`" in err, err
    assert _tree(scope) == start  # the version 1 lock and its artifact, as they were
    code, out, err = run(capsys, "cap", "migrate", "--dir", str(scope))
    assert code == 0, out + err
    assert json.loads((scope / "oas-lock.json").read_text())["lockfileVersion"] == 2
    assert not [n for n in os.listdir(scope / STORE) if n.startswith(".")]


def test_a_migrate_whose_journal_is_gone_left_nothing_to_undo(tmp_path):
    """A `.migrate-*` without its journal (killed before it was written, or after the
    migration's commit point) is only deleted."""
    scope, _pkg = _v1_scope(tmp_path)
    start = _tree(scope)
    stray = scope / STORE / ".migrate-abcd1234"
    stray.mkdir()
    (stray / "x").write_text("x")
    assert capmigrate.recover(str(scope)) == []
    assert _tree(scope) == start


@pytest.mark.parametrize("record", [{"moved": ["../../../x"], "store": []}, {"moved": [], "store": ["a/b"]},
                                    {"moved": "demo.cap", "store": []}])
def test_a_planted_steps_journal_of_a_migrate_is_refused_and_nothing_is_done(tmp_path, capsys, record):
    """The migration's journal is the steps executor's (output/steps): a record naming a path
    that is not an entry of the store is refused before any step is undone."""
    scope, _pkg = _v1_scope(tmp_path)
    aside = scope / STORE / ".migrate-abcd1234"
    aside.mkdir()
    journal = {"version": 1, "label": "cap migrate", "steps": [
        {"kind": "aside", "record": record, "state": "done", "point": False},
        {"kind": "lock", "record": {"lock": "e30K"}, "state": "done", "point": False}]}
    (aside / "journal.json").write_text(json.dumps(journal))
    before = (scope / "oas-lock.json").read_bytes()
    code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
    assert code == 1 and "error[AR142]" in err and "Traceback" not in err, err
    assert (scope / STORE / "demo.cap").is_dir() and (scope / "oas-lock.json").read_bytes() == before


def test_a_planted_migrate_journal_naming_a_path_outside_the_store_is_refused(tmp_path, capsys):
    scope, _pkg = _v1_scope(tmp_path)
    aside = scope / STORE / ".migrate-abcd1234"
    aside.mkdir()
    (aside / "journal.json").write_text(json.dumps({"kind": "agentrc-cap-migrate", "lock": "", "ignore": None,
                                                    "ignoreChanged": False, "moved": ["../../../x"], "store": []}))
    code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
    assert code == 1 and "error[AR142]" in err and "Traceback" not in err, err
    assert (scope / STORE / "demo.cap").is_dir()


def test_a_planted_journal_naming_a_file_outside_the_scope_is_refused(tmp_path, capsys):
    """A journal is data: one naming anything but the lock, the ignore file and the store's
    entries is AR142, nothing carried out (a committed `installed/` is the user's business,
    but not a path out of it)."""
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg")
    assert run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    txn = scope / STORE / captxn.TXN
    txn.mkdir()
    (txn / "0.new").write_text("evil\n")
    for target in ("../victim.txt", "oas-config.yaml", ".agents/capabilities/installed/.agentrc-lock"):
        journal = {"version": 2, "kind": captxn.KIND, "put": [{"path": target, "tmp": "0.new", "create": False,
                                                              "sha": writer.sha(b"evil\n")}],
                   "trees": [], "retire": [], "delete": [], "prune": [], "manifest": None}
        (txn / "journal.json").write_text(json.dumps(journal))
        code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
        assert code == 1 and "error[AR142]" in err and "Traceback" not in err, err
    assert victim.read_text() == "keep\n" and (txn / "0.new").read_text() == "evil\n"


def test_the_journal_is_the_step_executors(tmp_path):
    """The transaction is a plan run by output/steps: the journal, as saved when the commit
    point is recorded done, is the executor's, passes its checks with the scope's kinds, and
    names the point, the placed tree and the lock (the writer's version 2 shape it had before
    is only read back, `test_a_journal_of_the_earlier_shape_is_completed`)."""
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg")
    seen = []
    real = steps.Journal.save

    def save(self):
        real(self)
        if self.entries[0]["state"] == "done" and not seen:
            seen.append(json.loads(Path(self.path).read_text()))

    steps.Journal.save = save
    try:
        capinstall.install(str(scope), str(pkg))
    finally:
        steps.Journal.save = real
    entries = seen[0]["steps"]
    assert seen[0]["version"] == steps.VERSION and entries[0] == {"kind": "cap-commit", "record": {},
                                                                   "state": "done", "point": True}
    assert [(e["kind"], e["record"].get("path"), e["state"]) for e in entries[1:]] == [
        ("cap-place", ".agents/capabilities/installed/demo.cap", "todo"), ("cap-replace", "oas-lock.json", "todo")]
    kinds = captxn.kinds(str(scope))
    captxn.check_plan(entries, [kinds[e["kind"]](e["record"]) for e in entries])


def _staged_update(tmp_path: Path, capsys) -> tuple:
    """A scope with demo.pkg installed and, in its staging directory, what an update stages:
    the changed artifact as 1.dir and the new lock as 2.new (the clean result's bytes)."""
    pkg = write_package(tmp_path / "pkg")
    scope, clean = tmp_path / "scope", tmp_path / "clean"
    scope.mkdir()
    assert run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    (pkg / "capabilities" / "demo" / "injects" / "i.md").write_text("Changed.\n")
    shutil.copytree(scope, clean, symlinks=True)
    assert run_json(capsys, "cap", "update", "demo.pkg", "--dir", str(clean))[0] == 0
    txn = scope / STORE / captxn.TXN
    txn.mkdir()
    shutil.copytree(clean / STORE / "demo.cap", txn / "1.dir", symlinks=True)
    (txn / "2.new").write_bytes((clean / "oas-lock.json").read_bytes())
    return scope, clean, txn


def test_a_journal_of_the_earlier_shape_is_completed(tmp_path, capsys):
    """A committed journal an earlier agentrc wrote (the output writer's version 2, kind
    agentrc-cap) is converted into the executor's plan and completed by the next run."""
    scope, clean, txn = _staged_update(tmp_path, capsys)
    sha = writer.sha((txn / "2.new").read_bytes())
    (txn / "journal.json").write_text(json.dumps({
        "version": 2, "kind": captxn.KIND, "put": [{"path": "oas-lock.json", "tmp": "2.new", "create": False,
                                                   "sha": sha}],
        "trees": [{"path": ".agents/capabilities/installed/demo.cap", "tmp": "1.dir"}], "retire": [], "delete": [],
        "prune": [], "manifest": None}))
    code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
    assert code == 0 and "completed a capability transaction" in err, out + err
    assert _files(_tree(scope)) == _files(_tree(clean))


@pytest.mark.parametrize("bad", [
    [("cap-place", {"path": "../../victim", "tmp": "1.dir"}, "todo")],
    [("cap-place", {"path": ".agents/capabilities/installed/.agentrc-lock", "tmp": "1.dir"}, "todo")],
    [("cap-replace", {"path": "oas-config.yaml", "tmp": "2.new", "sha": "0" * 64}, "todo")],
    [("cap-replace", {"path": "oas-lock.json", "tmp": "../2.new", "sha": "0" * 64}, "todo")],
    [("cap-replace", {"path": "oas-lock.json", "tmp": "2.new"}, "todo")],
    [("cap-commit", {}, "todo"), ("cap-place", {"path": ".agents/capabilities/installed/demo.cap",
                                                 "tmp": "1.dir"}, "done")],
    [("cap-retire", {"path": ".agents/capabilities/installed/demo.cap", "tmp": "1.old"}, "todo"),
     ("cap-place", {"path": ".agents/capabilities/installed/demo.cap", "tmp": "3.dir"}, "todo")],
    [("rm-rf", {"path": "/"}, "todo")],
], ids=["escape", "dot-entry", "other-file", "staged-path", "no-sha", "begun-uncommitted", "twice", "unknown"])
def test_a_planted_steps_journal_of_a_transaction_is_refused(tmp_path, capsys, bad):
    """The executor's journal is data too: a record naming a target or a staged name no
    capability transaction writes, a plan not of its shape, are AR142, nothing done."""
    scope, _clean, txn = _staged_update(tmp_path, capsys)
    entries = [] if bad[0][0] == "cap-commit" else [("cap-commit", {}, "done")]
    entries += bad
    (txn / "journal.json").write_text(json.dumps({"version": 1, "label": "cap transaction", "steps": [
        {"kind": k, "record": r, "state": st, "point": k == "cap-commit"} for k, r, st in entries]}))
    before = _tree(scope)
    code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
    assert code == 1 and "error[AR142]" in err and "Traceback" not in err, err
    assert _tree(scope) == before


KILL_IN_SPAWN = """
import os, signal
from agentrc.capops import spawn as capspawn
def copy(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
capspawn._copy_skill = copy
"""


def test_a_killed_spawns_staging_is_removed_by_the_next_spawn(tmp_path, capsys):
    scope = tmp_path / "scope"
    scope.mkdir()
    git("init", "-q", str(scope))
    soul = scope / "agents" / "dev" / "soul"
    soul.mkdir(parents=True)
    (soul / "soul.yaml").write_text("name: dev\nrepo: .\nwork: checkout\nruntime: claude\n")
    (soul / "AGENTS.md").write_text("# Dev\n")
    instances = scope / "agents" / "dev" / "instances"
    proc = _proc("cap", "spawn", "dev", "--dir", str(scope), prelude=KILL_IN_SPAWN)
    assert proc.wait(60) == -signal.SIGKILL, proc.stderr.read()
    left = [n for n in os.listdir(instances) if ".agentrc-" in n]
    assert [n for n in left if n.startswith(".dev-")], left  # the staged home, never renamed into place
    code, out, err = run(capsys, "cap", "spawn", "dev", "--dir", str(scope))
    assert code == 0, out + err
    assert "warning[AR142]" in err and "interrupted in" in err, err
    names = os.listdir(instances)
    assert not [n for n in names if n.startswith(".")], names  # no staging, no lock file left
    assert len(names) == 1 and (instances / names[0] / "AGENTS.md").is_file()

