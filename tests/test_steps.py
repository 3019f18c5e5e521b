"""The one executor of a transaction's steps (`agentrc.output.steps`): in order, undone in
reverse before the commit point, completed after it, and a killed run finished by the next
from the journal alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentrc.output import steps

SRC = str(Path(__file__).resolve().parents[1] / "src")


class Touch(steps.Step):
    """Creates a file (its undo deletes it); fails when told to."""

    kind = "touch"

    def __init__(self, record):
        self.path, self.fail = record["path"], record.get("fail", "")
        self.point = bool(record.get("point"))

    def record(self):
        return {"path": self.path, "point": self.point}

    def do(self):
        if self.fail == "do":
            raise OSError("planned failure")
        Path(self.path).write_text("x")

    def undo(self):
        if self.fail == "undo" and os.path.exists(self.path + ".flag"):
            raise OSError("undo fails while the flag is there")
        with __import__("contextlib").suppress(FileNotFoundError):
            os.unlink(self.path)


KINDS = {"touch": Touch}


def _plan(tmp_path, spec):
    return [Touch({"path": str(tmp_path / name), **extra}) for name, extra in spec]


def test_a_plan_runs_in_order_and_leaves_no_journal(tmp_path):
    seen = []
    plan = _plan(tmp_path, [("a", {}), ("b", {"point": True}), ("c", {})])
    journal = steps.Journal(str(tmp_path / "journal.json"), str(tmp_path))
    steps.run(plan, journal, progress=lambda s: seen.append(os.path.basename(s.path)))
    assert seen == ["a", "b", "c"]
    assert all((tmp_path / n).exists() for n in "abc")
    assert not (tmp_path / "journal.json").exists()


def test_a_failure_before_the_point_undoes_every_step_begun_in_reverse(tmp_path):
    plan = _plan(tmp_path, [("a", {}), ("b", {}), ("c", {"fail": "do"}), ("d", {"point": True})])
    with pytest.raises(steps.Failed) as info:
        steps.run(plan, steps.Journal(str(tmp_path / "j.json"), str(tmp_path)))
    assert info.value.undone and not info.value.incomplete
    assert "planned failure" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing left, not even the journal


def test_a_failure_after_the_point_completes_the_rest_and_keeps_the_journal(tmp_path):
    plan = _plan(tmp_path, [("a", {"point": True}), ("b", {"fail": "do"}), ("c", {})])
    path = tmp_path / "j.json"
    with pytest.raises(steps.Failed) as info:
        steps.run(plan, steps.Journal(str(path), str(tmp_path)))
    assert not info.value.undone
    assert (tmp_path / "a").exists() and (tmp_path / "c").exists() and not (tmp_path / "b").exists()
    states = [e["state"] for e in json.loads(path.read_text())["steps"]]
    assert states == ["done", "doing", "done"]
    assert steps.recover(str(path), str(tmp_path), KINDS) == "completed"  # b's record no longer fails
    assert (tmp_path / "b").exists() and not path.exists()


def test_an_undo_that_fails_keeps_the_journal_and_the_next_run_undoes_it(tmp_path):
    (tmp_path / "a.flag").write_text("")
    plan = _plan(tmp_path, [("a", {"fail": "undo"}), ("b", {"fail": "do"})])
    path = tmp_path / "j.json"
    with pytest.raises(steps.Failed) as info:
        steps.run(plan, steps.Journal(str(path), str(tmp_path)))
    assert info.value.undone and [os.path.basename(s.path) for s in info.value.incomplete] == ["a"]
    assert (tmp_path / "a").exists() and path.exists()
    os.unlink(tmp_path / "a.flag")
    assert steps.recover(str(path), str(tmp_path), KINDS) == "rolled back"
    assert not (tmp_path / "a").exists() and not path.exists()
    assert steps.recover(str(path), str(tmp_path), KINDS) == ""


_KILLED = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {src!r})
    sys.path.insert(0, {tests!r})
    from agentrc.output import steps
    from test_steps import Touch
    root, kill_at = sys.argv[1], int(sys.argv[2])
    class Killer(Touch):
        def do(self):
            super().do()
            if os.path.basename(self.path) == "kill":
                os._exit(9)
    names = ["a", "b", "c", "d"]
    plan = [Touch({{"path": os.path.join(root, n), "point": n == "c"}}) for n in names]
    plan.insert(kill_at, Killer({{"path": os.path.join(root, "kill")}}))
    steps.run(plan, steps.Journal(os.path.join(root, "j.json"), root))
""")


@pytest.mark.parametrize("kill_at,outcome,left", [
    (0, "rolled back", []),
    (2, "rolled back", []),
    (3, "completed", ["a", "b", "c", "d", "kill"]),
    (4, "completed", ["a", "b", "c", "d", "kill"]),
])
def test_a_run_killed_anywhere_is_undone_or_completed_by_the_next(tmp_path, kill_at, outcome, left):
    script = tmp_path / "run.py"
    script.write_text(_KILLED.format(src=SRC, tests=str(Path(__file__).parent)))
    root = tmp_path / "scope"
    root.mkdir()
    proc = subprocess.run([sys.executable, str(script), str(root), str(kill_at)], check=False)
    assert proc.returncode == 9
    kinds = {"touch": Touch}
    assert steps.recover(str(root / "j.json"), str(root), kinds) == outcome
    assert sorted(p.name for p in root.iterdir()) == left


@pytest.mark.parametrize("content", [
    b"not json", b"[]", b'{"version": 1, "steps": [{"kind": "rm-rf", "record": {}, "state": "done", "point": true}]}',
    b'{"version": 2, "steps": []}', b'{"version": 1, "steps": [{"kind": "touch", "record": [], "state": "done"}]}',
    b"\xff\xfe", b"[" * 100000,
])
def test_a_hostile_journal_is_refused_and_nothing_is_done(tmp_path, content):
    path = tmp_path / "j.json"
    path.write_bytes(content)
    with pytest.raises(steps.JournalError):
        steps.recover(str(path), str(tmp_path), KINDS)
    assert path.read_bytes() == content


def test_a_journal_that_is_a_link_or_too_large_is_refused(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"version": 1, "steps": []}))
    root = tmp_path / "root"
    root.mkdir()
    (root / "j.json").symlink_to(outside)
    with pytest.raises((steps.JournalError, OSError)):
        steps.recover(str(root / "j.json"), str(root), KINDS)
    (root / "big.json").write_bytes(b" " * (steps.MAX_JOURNAL + 1))
    with pytest.raises(steps.JournalError):
        steps.recover(str(root / "big.json"), str(root), KINDS)
    with pytest.raises(OSError):  # the executor never writes its journal through a link
        steps.run(_plan(root, [("a", {})]), steps.Journal(str(root / "j.json"), str(root)))
    assert json.loads(outside.read_text()) == {"version": 1, "steps": []}


def test_a_whole_plan_check_refuses_before_any_step_runs(tmp_path):
    """`recover`'s `check` sees every step built from its record before one runs: a plan a
    workflow would never write (here: two steps on one path) is refused, nothing done."""
    path = tmp_path / "j.json"
    victim = tmp_path / "a"
    entries = [{"kind": "touch", "record": {"path": str(victim), "point": True}, "state": "done", "point": True},
               {"kind": "touch", "record": {"path": str(victim), "point": False}, "state": "todo", "point": False}]
    path.write_text(json.dumps({"version": steps.VERSION, "label": "", "steps": entries}))

    def once(_entries, plan):
        if len({s.path for s in plan}) != len(plan):
            raise steps.JournalError("a path named twice")

    with pytest.raises(steps.JournalError, match="named twice"):
        steps.recover(str(path), str(tmp_path), KINDS, check=once)
    assert not victim.exists() and path.exists()


def test_a_journal_of_an_earlier_shape_is_recovered_through_its_reader(tmp_path):
    """`legacy` turns a journal an earlier agentrc wrote into entries, which are checked like
    any and recovered by the same executor; without a reader it is refused."""
    path = tmp_path / "j.json"
    path.write_text(json.dumps({"old": [str(tmp_path / "a"), str(tmp_path / "b")]}))

    def reader(data):
        if not isinstance(data, dict) or not isinstance(data.get("old"), list):
            raise steps.JournalError("not an old journal")
        return [{"kind": "touch", "record": {"path": p}, "state": "done" if i == 0 else "todo", "point": i == 0}
                for i, p in enumerate(data["old"])]

    with pytest.raises(steps.JournalError):
        steps.recover(str(path), str(tmp_path), KINDS)
    assert steps.recover(str(path), str(tmp_path), KINDS, legacy=reader) == "completed"
    assert (tmp_path / "b").exists() and not path.exists()
    path.write_text(json.dumps([{"kind": "rm", "record": {}, "state": "todo", "point": False}]))
    with pytest.raises(steps.JournalError):
        steps.recover(str(path), str(tmp_path), KINDS, legacy=lambda data: data)  # an unknown kind, still refused
    assert path.exists()


class Batch(steps.Step):
    """Touches the files of its payload chunk's range (the writer's shape: a record naming a
    chunk written once beside the journal); doing it again is harmless."""

    kind = "batch"
    idempotent = True

    def __init__(self, record):
        payload = record[steps.PAYLOAD]
        if not (isinstance(payload, list) and all(isinstance(p, str) for p in payload)):
            raise steps.JournalError("a payload this kind never writes")
        self.names, self.start, self.end = payload, record["start"], record["end"]
        self.chunk = record.get("chunk", "names-0.json")
        self.runs = 0

    def record(self):
        return {steps.PAYLOAD: self.chunk, "start": self.start, "end": self.end}

    def do(self):
        self.runs += 1
        for name in self.names[self.start:self.end]:
            Path(name).write_text("x")


BATCH_KINDS = {"touch": Touch, "batch": Batch}


def _batch_plan(tmp_path, journal, names, cut):
    journal.chunk("names-0.json", json.dumps(names).encode())
    point = Touch({"path": str(tmp_path / "point"), "point": True})
    return [point] + [Batch({steps.PAYLOAD: names, "start": s, "end": e}) for s, e in ((0, cut), (cut, len(names)))]


def test_a_payload_chunk_keeps_the_journal_small_and_goes_with_it(tmp_path):
    """A record names its chunk; the journal holds the name, not the data, and idempotent
    steps after the point are not journaled (three writes: begin, the point's start and end)."""
    names = [str(tmp_path / f"f{i}") for i in range(2000)]
    journal = steps.Journal(str(tmp_path / "j.json"), str(tmp_path))
    plan = _batch_plan(tmp_path, journal, names, 1500)
    saved = []
    real = journal.save
    journal.save = lambda: saved.append(len(json.dumps(journal.entries))) or real()  # type: ignore[method-assign]
    steps.run(plan, journal)
    assert len(saved) == 3 and max(saved) < 1000
    assert all(os.path.exists(n) for n in names)
    assert not (tmp_path / "j.json").exists() and not (tmp_path / "names-0.json").exists()


def test_idempotent_steps_after_the_point_are_done_again_by_the_next_run(tmp_path):
    names = [str(tmp_path / f"f{i}") for i in range(10)]
    path = tmp_path / "j.json"
    journal = steps.Journal(str(path), str(tmp_path))
    plan = _batch_plan(tmp_path, journal, names, 5)

    class Stop(BaseException):
        pass

    def second(_step=plan[2]):
        raise Stop()

    plan[2].do = second  # type: ignore[method-assign]
    with pytest.raises(Stop):
        steps.run(plan, journal, interrupts=False)
    states = [e["state"] for e in json.loads(path.read_text())["steps"]]
    assert states == ["done", "todo", "todo"]  # the first batch ran, unjournaled
    assert all(os.path.exists(n) for n in names[:5]) and not any(os.path.exists(n) for n in names[5:])
    assert steps.recover(str(path), str(tmp_path), BATCH_KINDS) == "completed"
    assert all(os.path.exists(n) for n in names)
    assert not path.exists() and not (tmp_path / "names-0.json").exists()


def test_go_on_false_stops_at_a_failure_after_the_point(tmp_path):
    plan = _plan(tmp_path, [("a", {"point": True}), ("b", {"fail": "do"}), ("c", {})])
    path = tmp_path / "j.json"
    with pytest.raises(steps.Failed) as info:
        steps.run(plan, steps.Journal(str(path), str(tmp_path)), go_on=False)
    assert not info.value.undone and [os.path.basename(s.path) for s in info.value.incomplete] == ["b", "c"]
    assert not (tmp_path / "c").exists()
    assert [e["state"] for e in json.loads(path.read_text())["steps"]] == ["done", "doing", "todo"]


@pytest.mark.parametrize("name", ["../names-0.json", "/etc/passwd", "j.json", "names.json", 7, "a/names-0.json",
                                  "link-0.json", "big-0.json", "dir-0.json", "gone-0.json", "bad-0.json"])
def test_a_hostile_payload_chunk_is_refused_and_nothing_is_done(tmp_path, name):
    """A chunk's name must be one `Journal.chunk` writes, beside the journal: no path, not
    the journal, a regular file (no link, no directory), within the limit, JSON; else the
    journal is refused and no step runs."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "names-0.json").write_text(json.dumps([str(tmp_path / "victim")]))
    root = tmp_path / "root"
    root.mkdir()
    (root / "link-0.json").symlink_to(outside / "names-0.json")
    (root / "big-0.json").write_bytes(b" " * (steps.MAX_JOURNAL + 1))
    (root / "dir-0.json").mkdir()
    (root / "bad-0.json").write_bytes(b"[\xff")
    entries = [{"kind": "touch", "record": {"path": str(root / "point"), "point": True}, "state": "done",
                "point": True},
               {"kind": "batch", "record": {"payload": name, "start": 0, "end": 1}, "state": "todo", "point": False}]
    path = root / "j.json"
    path.write_text(json.dumps({"version": steps.VERSION, "label": "", "steps": entries}))
    before = path.read_bytes()
    with pytest.raises(steps.JournalError):
        steps.recover(str(path), str(root), BATCH_KINDS)
    assert path.read_bytes() == before and not (tmp_path / "victim").exists()


def test_a_payload_of_a_shape_the_kind_never_writes_is_refused(tmp_path):
    (tmp_path / "names-0.json").write_text(json.dumps({"not": "a list"}))
    entries = [{"kind": "batch", "record": {"payload": "names-0.json", "start": 0, "end": 1}, "state": "todo",
                "point": True}]
    path = tmp_path / "j.json"
    path.write_text(json.dumps({"version": steps.VERSION, "label": "", "steps": entries}))
    with pytest.raises(steps.JournalError):
        steps.recover(str(path), str(tmp_path), BATCH_KINDS)
    assert path.exists()


def test_a_chunk_name_journal_chunk_would_not_write_is_refused(tmp_path):
    journal = steps.Journal(str(tmp_path / "j.json"), str(tmp_path))
    for name in ("../x-0.json", "x.json", "j.json"):
        with pytest.raises(ValueError):
            journal.chunk(name, b"[]")
