"""The output's directories that hold directories (agentrc.output.parents): while they stand
as the last build left them, a replayed edit lstats none of the other directories and lists
only those it writes; anything that replaced, added or removed a directory, or a record
taken within the clock's slack, sends it back to looking at every directory."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from agentrc.building import incremental
from agentrc.cli.main import main
from agentrc.memo import stamp as stampfile
from agentrc.output import parents, recovery, writer
from test_edit_cost import _generator

CLIENTS = "claude,copilot,opencode"


def _build(reg: Path, out: Path) -> str:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["build", str(reg), "--client", CLIENTS, "--out", str(out), "--jobs", "1"])
    assert code == 0, err.getvalue()[-2000:]
    return err.getvalue()


def _aged(record: tuple) -> tuple:
    """`record` as if taken a minute later (its directories older than it by more than the slack)."""
    return (record[0] + 60 * 10**9,) + record[1:]


def test_holding_is_every_directory_above_a_directory_of_outputs():
    joined = "\0".join(["opencode.json", ".claude/rules/a.md", ".claude/skills/x/SKILL.md",
                        ".claude/skills/x/refs/notes.md", ".github/agents/b.md", ".claude/skills/y/SKILL.md"])
    assert parents.holding(joined) == ["", ".claude", ".claude/skills", ".claude/skills/x", ".github"]
    assert parents.holding("opencode.json") == [] and parents.holding("") == []


@pytest.fixture
def built(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 30, seed=5)
    _build(reg, out)
    return reg, out


def _joined(out: Path) -> str:
    """The output's paths as the stamp joins them (`recorded_statuses`)."""
    data = json.loads((out / ".agentrc" / "manifest.json").read_text(encoding="utf-8"))
    return "\0".join(list(data["files"]) + list(data.get("merged", {})))


def _held(out: Path) -> tuple:
    record = parents.statuses(str(out), parents.holding(_joined(out)), time.time_ns())
    assert record is not None
    return _aged(record)


def test_the_directories_stand_until_one_is_replaced_added_or_removed(built, tmp_path):
    _, out = built
    record = _held(out)
    assert ".claude/agents" not in record[1].split("\0") and ".claude" in record[1].split("\0")
    assert parents.stand(str(out), record)
    agents = out / ".claude" / "agents"
    shutil.copytree(agents, tmp_path / "copy")  # sizes, mtimes and modes kept
    shutil.rmtree(agents)
    agents.symlink_to(tmp_path / "copy")
    assert not parents.stand(str(out), record)  # its parent, .claude, changed


@pytest.mark.parametrize("change", ["a directory added", "a directory removed", "a leaf renamed"])
def test_any_change_of_directories_is_seen_by_their_parent(built, change):
    _, out = built
    record = _held(out)
    skills = out / ".claude" / "skills"
    first = sorted(skills.iterdir())[0]
    if change == "a directory added":
        (skills / "new").mkdir()
    elif change == "a directory removed":
        shutil.rmtree(first)
    else:
        first.rename(skills / "renamed")
    assert not parents.stand(str(out), record)


def test_a_record_taken_within_the_clock_slack_vouches_for_nothing(built):
    _, out = built
    fresh = parents.statuses(str(out), parents.holding(_joined(out)), time.time_ns())
    assert fresh is not None
    os.utime(out / ".claude", ns=(fresh[0] - 10**6, fresh[0] - 10**6))  # changed a millisecond before
    again = parents.statuses(str(out), fresh[1].split("\0"), fresh[0])
    assert again is not None and not parents.stand(str(out), (fresh[0],) + again[1:])
    assert parents.stand(str(out), _aged(again))


@pytest.mark.parametrize("record", [None, (), (1, "", b""), ("1", "", b""), (1, "a", b"x"), (1, b"", b""),
                                    (1, "\0", b"x" * 32)])
def test_a_record_of_another_shape_stands_for_nothing(built, record):
    _, out = built
    if record == (1, "", b""):  # no directory holds one: nothing to check, it stands
        assert parents.stand(str(out), record)
    else:
        assert not parents.stand(str(out), record)
        assert parents.again(str(out), record, time.time_ns()) is None


def test_an_edit_whose_parents_stand_lists_only_what_it_writes(built, monkeypatch):
    """The stamp keeps the parents' statuses after each build and each edit; an edit that
    finds them standing never lstats the other directories (`_recent_dirs`), lists only the
    directories it writes, the root and `.agentrc`, and records them again."""
    reg, out = built
    rule = sorted((reg / "rules").iterdir())[0] / "RULE.md"
    [stamp_file] = [p for p in (out.parent / "cache").iterdir() if p.suffix == ".stamp"]
    stamp = stampfile.load_stamp(stamp_file)
    assert stamp is not None and parents.stand(str(out), _aged(stamp["parents"]))
    stampfile.save_stamp(stamp_file, dict(stamp, parents=_aged(stamp["parents"])))
    passes, listed = [], []
    real_recent, real_listdir = recovery._recent_dirs, writer.os.listdir
    monkeypatch.setattr(recovery, "_recent_dirs", lambda *a: (passes.append(1), real_recent(*a))[1])
    monkeypatch.setattr(writer.os, "listdir", lambda fd: (listed.append(fd), real_listdir(fd))[1])
    with open(rule, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    before = time.time_ns()
    _build(reg, out)
    assert incremental.LAST.path == "replay" and passes == [] and len(listed) <= 8, (incremental.LAST, listed)
    after = stampfile.load_stamp(stamp_file)
    assert after is not None and after["parents"][0] >= before and after["parents"][1] == stamp["parents"][1]


def _full_passes_of_an_edit(reg: Path, out: Path, monkeypatch) -> list:
    """A rule edited and built again: one entry for each pass over every directory it made."""
    passes: list = []
    real_recent = recovery._recent_dirs
    monkeypatch.setattr(recovery, "_recent_dirs", lambda *a: (passes.append(1), real_recent(*a))[1])
    rule = sorted((reg / "rules").iterdir())[0] / "RULE.md"
    with open(rule, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    _build(reg, out)
    return passes


def test_an_edit_whose_parents_do_not_stand_looks_at_every_directory(built, monkeypatch):
    reg, out = built
    (out / ".claude" / "stray").mkdir()  # the root's .claude changed: not as recorded
    passes = _full_passes_of_an_edit(reg, out, monkeypatch)
    assert incremental.LAST.path == "replay" and passes == [1], incremental.LAST


def test_a_directory_swapped_after_the_check_and_before_the_record_is_still_seen(built, tmp_path, monkeypatch):
    """The record is as of when the directories were verified, not when their statuses were
    read: a directory swapped for a link in between makes its parent newer than the record,
    and the next edit looks at every directory, and refuses the link (AR140)."""
    reg, out = built
    real = parents.statuses
    swapped = []

    def swap_first(root, dirs, at):
        if not swapped:
            time.sleep(0.03)  # past a tick of the file system's clock: the swap is newer than `at`
            agents = out / ".claude" / "agents"
            shutil.copytree(agents, tmp_path / "copy")
            shutil.rmtree(agents)
            agents.symlink_to(tmp_path / "copy")
            swapped.append(1)
        return real(root, dirs, at)

    rule = sorted((reg / "rules").iterdir())[0] / "RULE.md"
    added = reg / "rules" / "zz-added"
    shutil.copytree(rule.parent, added)  # a source added: a full build, which records the parents
    (added / "RULE.md").write_text((added / "RULE.md").read_text(encoding="utf-8").replace(
        rule.parent.name, "zz-added"), encoding="utf-8")
    # No slack: only the record's time tells the swap from the build's own writes.
    monkeypatch.setattr(writer, "SWEEP_SLACK_NS", 0)
    monkeypatch.setattr(writer, "SWEEP_SLACK_FINE_NS", 0)
    with monkeypatch.context() as m:
        m.setattr(parents, "statuses", swap_first)
        _build(reg, out)
    assert swapped and incremental.LAST.path == "full", incremental.LAST
    with open(rule, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["build", str(reg), "--client", CLIENTS, "--out", str(out), "--jobs", "1"])
    assert code == 1 and "AR140" in err.getvalue(), err.getvalue()[-2000:]


def test_directories_changed_within_the_slack_are_unsettled_and_their_leaves_looked_at(built, tmp_path):
    """A record taken right after a write (a full build's) vouches for its directories'
    inodes, not for what they hold: the directories in the unsettled ones are lstat'ed
    themselves, and a link found there sends the edit to the full pass (None)."""
    _, out = built
    joined = _joined(out)
    paths = joined.split("\0")
    now = parents.statuses(str(out), parents.holding(joined), time.time_ns())
    assert now is not None
    loose = parents.unsettled(str(out), now)
    assert loose is not None and ".claude" in loose  # written a moment ago: within the slack
    assert parents.unsettled(str(out), _aged(now)) == [] and parents.stand(str(out), _aged(now))
    listed = parents.leaves(str(out), now, loose, paths, None)
    held = set(now[1].split("\0"))
    assert listed is not None and ".claude/agents" in listed
    # the unsettled directories and the directories directly in them that hold none, no other
    assert all(d in loose or (d not in held and d.rpartition("/")[0] in loose) for d in listed)
    agents = out / ".claude" / "agents"
    shutil.copytree(agents, tmp_path / "copy")
    shutil.rmtree(agents)
    agents.symlink_to(tmp_path / "copy")
    swapped = parents.statuses(str(out), parents.holding(joined), time.time_ns())
    assert swapped is not None
    loose = parents.unsettled(str(out), swapped)
    assert loose is not None and ".claude" in loose
    assert parents.leaves(str(out), swapped, loose, paths, None) is None


def test_the_first_edit_after_a_full_build_skips_the_full_pass(built, monkeypatch):
    """The full build's record is taken right after its write, so some of its directories
    are unsettled at the first edit: the edit looks inside those alone, never at every
    directory (`_recent_dirs`), and replays."""
    reg, out = built
    passes = _full_passes_of_an_edit(reg, out, monkeypatch)
    assert incremental.LAST.path == "replay" and passes == [], incremental.LAST


def test_an_edit_takes_again_only_the_directories_it_wrote_into(built, monkeypatch):
    """After an edit that found the directories as recorded, the record keeps their
    statuses and takes again only those of the directories it wrote files into; the next
    edit still finds them standing (no full pass)."""
    reg, out = built
    [stamp_file] = [p for p in (out.parent / "cache").iterdir() if p.suffix == ".stamp"]
    stamp = stampfile.load_stamp(stamp_file)
    assert stamp is not None
    stampfile.save_stamp(stamp_file, dict(stamp, parents=_aged(stamp["parents"])))
    passes, taken = [], []
    real_recent, real_statuses = recovery._recent_dirs, parents.statuses
    monkeypatch.setattr(recovery, "_recent_dirs", lambda *a: (passes.append(1), real_recent(*a))[1])
    monkeypatch.setattr(parents, "statuses", lambda *a: (taken.append(a[1]), real_statuses(*a))[1])
    # a skill whose copy holds a directory (its supporting files'): its directory is in the record
    holding = sorted(d for d in (out / ".claude" / "skills").iterdir() if any(p.is_dir() for p in d.iterdir()))
    skill = reg / "skills" / holding[0].name / "SKILL.md"
    with open(skill, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    _build(reg, out)
    assert incremental.LAST.path == "replay" and passes == [] and taken == [], (incremental.LAST, taken)
    after = stampfile.load_stamp(stamp_file)
    assert after is not None and after["parents"][1] == stamp["parents"][1]
    dirs = stamp["parents"][1].split("\0")
    changed = {dirs[i // 32] for i in range(0, len(after["parents"][2]), 32)
               if after["parents"][2][i:i + 32] != stamp["parents"][2][i:i + 32]}
    assert f".claude/skills/{holding[0].name}" in changed and all("skills/" in d for d in changed), changed
    stampfile.save_stamp(stamp_file, dict(after, parents=_aged(after["parents"])))
    with open(skill, "a", encoding="utf-8") as fh:
        fh.write("\nAnd another.\n")
    _build(reg, out)
    assert incremental.LAST.path == "replay" and passes == [], incremental.LAST
