"""The output writer's transaction as a plan of the one executor (`output.steps`, its kinds in
`output.writesteps`): a kill in any step is completed or undone by the next build through
`steps.recover`; a journal of the writer's earlier shape (version 1 or 2, its existence the
commit) left by an earlier agentrc is completed the same way; a journal planted in the output
tree (the output may be a cloned repository) is refused with AR093 and nothing is touched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.output import steps, writer, writesteps
from helpers import ROOT
from test_output_safety import _tree, _without_stat

REGISTRY = str(ROOT / "examples" / "registry")
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))


def _build(out: Path, clients: str = "claude", registry: str = REGISTRY) -> int:
    return main(["build", registry, "--client", clients, "--out", str(out), "--no-cache"])


class _Stop(BaseException):
    """A kill, standing in the process: nothing after it runs, no cleanup."""


def _left_staged(monkeypatch, out: Path, clients: str, registry: str = REGISTRY) -> dict:
    """A build into `out` stopped once it staged everything (its plan's data written, no
    journal begun): the plan's data, as the writer's journal held it before the executor."""
    def stop(self, journal, fresh=False):
        raise _Stop()

    monkeypatch.setattr(writer.Output, "_roll_forward", stop)
    with pytest.raises(_Stop):
        _build(out, clients, registry)
    monkeypatch.undo()
    txn = out / ".agentrc" / "txn"
    assert sorted(p.name for p in txn.iterdir() if not p.name[0].isdigit()) == [writesteps.CHUNK]
    return json.loads((txn / writesteps.CHUNK).read_text())


def test_a_build_stopped_before_its_plan_began_is_undone(tmp_path, monkeypatch, capsys):
    clean, out = tmp_path / "clean", tmp_path / "out"
    assert _build(clean, "claude,copilot") == 0
    _left_staged(monkeypatch, out, "claude,copilot")
    assert not (out / ".claude").exists()  # nothing visible before the commit point
    assert _build(out, "claude,copilot") == 0
    assert "completed a write" not in capsys.readouterr().err
    assert _without_stat(_tree(out)) == _without_stat(_tree(clean))


@pytest.mark.parametrize("version", [1, 2])
def test_a_journal_an_earlier_agentrc_left_is_completed_by_the_next_build(tmp_path, monkeypatch, capsys, version):
    """The writer's version 2 journal (a cold build: staged trees) and version 1 (as `replay`
    wrote it: updates only), committed by their existence, are converted into the plan and
    completed; the tree is the one a clean build gives."""
    clean, out = tmp_path / "clean", tmp_path / "out"
    reg = tmp_path / "reg"
    shutil.copytree(REGISTRY, reg)
    if version == 1:
        assert _build(out, "claude", str(reg)) == 0
        rule = reg / "rules" / "commit-style" / "RULE.md"
        rule.write_text(rule.read_text() + "\nOne more line.\n")  # an update, no new directory
    assert _build(clean, "claude", str(reg)) == 0
    data = _left_staged(monkeypatch, out, "claude", str(reg))
    assert bool(data.get("trees")) == (version == 2) and data["put"]
    if version == 1:
        assert data.pop("trees", []) == []
        data["version"] = 1
    txn = out / ".agentrc" / "txn"
    (txn / writesteps.CHUNK).unlink()
    (txn / "journal.json").write_text(json.dumps(data))
    capsys.readouterr()
    with writer.session(out) as tree:
        assert any("completed a write an earlier agentrc run" in d.message for d in tree.notes)
    assert not txn.exists()
    assert _without_stat(_tree(out)) == _without_stat(_tree(clean))


_KILL = textwrap.dedent("""
    import os, sys
    from agentrc.cli.main import main
    from agentrc.output import writesteps
    kind = sys.argv[2]
    for cls in writesteps._CLASSES:
        if cls.kind == kind:
            real = cls.do
            def do(self, real=real):
                real(self)
                os._exit(9)
            cls.do = do
    sys.exit(main(["build", {registry!r}, "--client", "claude", "--out", sys.argv[1], "--no-cache"]))
""")


@pytest.mark.parametrize("kind", writesteps.ORDER)
def test_a_build_killed_after_any_step_is_completed_or_undone_by_the_next(tmp_path, kind):
    """A real kill (the process ends in the step, after its work) at each step of the plan:
    before the point is done the next build rolls back, after it completes; either way the
    tree is the clean build's and the executor's journal is gone."""
    clean, out = tmp_path / "clean", tmp_path / "out"
    for tree in (clean, out):  # copilot's files deleted and their directories pruned, claude's created
        assert _build(tree, "copilot") == 0
    assert _build(clean, "claude") == 0
    script = tmp_path / "kill.py"
    script.write_text(_KILL.format(registry=REGISTRY))
    proc = subprocess.run([sys.executable, str(script), str(out), kind], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    journal = out / ".agentrc" / "txn" / "journal.json"
    entries = json.loads(journal.read_text())["steps"]
    assert entries[0]["kind"] == "out-commit" and entries[0]["state"] in ("doing", "done")
    assert all(e["state"] == "todo" for e in entries[1:])  # idempotent: never journaled, done again
    assert [e["kind"] for e in entries] == list(writesteps.ORDER)
    done = subprocess.run([sys.executable, "-m", "agentrc", "build", REGISTRY, "--client", "claude",
                           "--out", str(out), "--no-cache"], env=ENV, capture_output=True, text=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert ("completed a write" in done.stderr) == (entries[0]["state"] == "done")
    assert _without_stat(_tree(out)) == _without_stat(_tree(clean))
    assert not (out / ".agentrc" / "txn").exists()


def _planted(tmp_path: Path, entries, chunk=None) -> tuple:
    """An output built once (its tree kept to compare), a victim beside it, and a journal of
    the executor's shape planted in its staging directory."""
    out, victim = tmp_path / "out", tmp_path / "victim"
    assert _build(out) == 0
    victim.mkdir()
    (victim / "keep.txt").write_text("keep me\n")
    txn = out / ".agentrc" / "txn"
    txn.mkdir()
    if chunk is not None:
        (txn / writesteps.CHUNK).write_text(json.dumps(chunk))
    (txn / "journal.json").write_text(json.dumps({"version": steps.VERSION, "label": "", "steps": entries}))
    return out, victim, _tree(out)


def _e(kind, record, state="todo", point=False):
    return {"kind": kind, "record": record, "state": state, "point": point}


_PLAN = {"version": 2, "put": [], "trees": [], "delete": [{"path": "../victim/keep.txt", "sha": "0" * 64}],
         "prune": ["../victim"], "manifest": None}
_GOOD = {"version": 2, "put": [], "trees": [], "delete": [], "prune": [], "manifest": None}
_CHUNK = {"payload": writesteps.CHUNK}
_COMMIT = _e("out-commit", {}, "done", True)


@pytest.mark.parametrize("entries, chunk", [
    ([_COMMIT, _e("out-delete", _CHUNK), _e("out-manifest", _CHUNK)], _PLAN),  # unsafe paths in the chunk
    ([_COMMIT, _e("out-delete", {"plan": _PLAN}), _e("out-manifest", {"plan": _PLAN})], None),  # inline
    ([_COMMIT, _e("out-manifest", {"payload": "../../victim/keep.txt"})], _GOOD),  # a path for a chunk
    ([_COMMIT, _e("out-manifest", {"payload": "journal.json"})], _GOOD),  # the journal itself
    ([_COMMIT, _e("out-rm-rf", _CHUNK), _e("out-manifest", _CHUNK)], _GOOD),  # an unknown kind
    ([_e("out-manifest", _CHUNK, "done", True)], _GOOD),  # the point elsewhere
    ([_COMMIT, _e("out-manifest", _CHUNK), _e("out-delete", _CHUNK)], _GOOD),  # out of order
    ([_COMMIT, _e("out-delete", _CHUNK, point=True), _e("out-manifest", _CHUNK)], _GOOD),  # two points
    ([_e("out-commit", {}, "todo", True), _e("out-manifest", _CHUNK, "doing")], _GOOD),  # begun before the point
    ([_COMMIT, _e("out-put-range", dict(_CHUNK, start=0, end=5)), _e("out-manifest", _CHUNK)], _GOOD),  # bounds
    ([_e("out-commit", {"x": 1}, "done", True), _e("out-manifest", _CHUNK)], _GOOD),  # a record it never writes
    ([_COMMIT, _e("out-manifest", _CHUNK)], ["not", "a", "plan"]),
], ids=["unsafe-chunk", "unsafe-inline", "chunk-path", "chunk-is-journal", "unknown-kind", "point-elsewhere",
        "order", "two-points", "begun-before-point", "bounds", "record", "chunk-shape"])
def test_a_planted_journal_is_refused_and_nothing_is_touched(tmp_path, capsys, entries, chunk):
    out, victim, before = _planted(tmp_path, entries, chunk)
    capsys.readouterr()
    assert _build(out) == 1
    err = capsys.readouterr().err
    assert "error[AR093]" in err and "cannot read the journal" in err and "Traceback" not in err
    assert _tree(out) == before
    assert (victim / "keep.txt").read_text() == "keep me\n"


def test_a_chunk_that_is_a_link_is_not_followed(tmp_path, capsys):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(_PLAN))
    out, victim, _ = _planted(tmp_path, [_COMMIT, _e("out-delete", _CHUNK), _e("out-manifest", _CHUNK)])
    (out / ".agentrc" / "txn" / writesteps.CHUNK).symlink_to(outside)
    before = _tree(out)
    assert _build(out) == 1
    err = capsys.readouterr().err
    assert "error[AR093]" in err and "Traceback" not in err
    assert _tree(out) == before and (victim / "keep.txt").read_text() == "keep me\n"
