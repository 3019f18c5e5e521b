"""The source stamp (agentrc.inputs.tree): a build with nothing to do reads no source file's
bytes, and every change to a source is still seen. Counts of files read, not timings."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.inputs import tree as treeread

RULES = 12


def _registry(root: Path) -> Path:
    for i in range(RULES):
        d = root / "reg" / "rules" / f"rule-{i:02d}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"---\ndescription: Rule {i}.\n---\n\nGuidance {i}.\n")
    skill = root / "reg" / "skills" / "helper"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: Helps.\n---\n\nSee [the notes](references/notes.md).\n")
    (skill / "references" / "notes.md").write_text("Notes.\n")
    return root / "reg"


@pytest.fixture
def counted(monkeypatch):
    """The display paths of the source files whose bytes are read."""
    reads = []
    real = treeread.read_file

    def read_file(path, display, *args, **kwargs):
        reads.append(display)
        return real(path, display, *args, **kwargs)

    monkeypatch.setattr(treeread, "read_file", read_file)
    return reads


def _build(reg: Path, out: Path, *extra: str) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed), contextlib.redirect_stdout(printed):
        assert main(["build", str(reg), "--client", "claude,opencode", "--out", str(out), *extra]) == 0, \
            printed.getvalue()
    return printed.getvalue()


def _sources(reg: Path) -> int:
    return sum(1 for p in reg.rglob("*") if p.is_file())


def test_a_build_with_nothing_to_do_reads_no_source_file(tmp_path, counted, monkeypatch):
    monkeypatch.setattr(treeread, "RACY_NS", 0)  # files older than the recording are trusted at once
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    assert len(counted) == _sources(reg) == RULES + 2
    counted.clear()
    assert "0 created, 0 updated, 0 deleted" in _build(reg, out)
    assert counted == []


def test_an_edit_that_keeps_size_and_mtime_is_seen_and_only_that_file_is_read_to_decide(tmp_path, counted,
                                                                                         monkeypatch):
    """The same size and the old mtime put back (as `cp -p` or a careless tool would): the
    ctime (and the stat call it comes from) still tells."""
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    rule = reg / "rules" / "rule-03" / "RULE.md"
    before = rule.stat()
    rule.write_text(rule.read_text().replace("Guidance 3.", "Guidance X."))
    os.utime(rule, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert rule.stat().st_size == before.st_size and rule.stat().st_mtime_ns == before.st_mtime_ns
    counted.clear()
    assert "2 updated" in _build(reg, out)  # claude's and opencode's copies
    assert "Guidance X." in (out / ".claude" / "rules" / "rule-03.md").read_text()
    # The stamp told which file changed, and that file is the only one read.
    assert counted == [f"{reg}/rules/rule-03/RULE.md"]


def test_one_edit_reads_the_edited_file_and_no_other(tmp_path, counted, monkeypatch):
    """The other item directories come from the memo by their files' digests, which the
    stamp holds: their bytes are never needed."""
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    skill = reg / "skills" / "helper" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nOne more line.\n")
    counted.clear()
    assert " 1 updated" in _build(reg, out)  # the one copy Claude and opencode share
    # The edited item's directory, parsed again: its entrypoint and its supporting file.
    assert sorted(counted) == [f"{reg}/skills/helper/SKILL.md", f"{reg}/skills/helper/references/notes.md"]
    assert "One more line." in (out / ".claude" / "skills" / "helper" / "SKILL.md").read_text()


def test_an_item_directory_the_memo_lacks_is_read_when_needed(tmp_path, counted, monkeypatch):
    """With the memo gone but the stamp kept, the vouched-for files are read when parsing
    needs them, and the build is the same."""
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    for memo in Path(os.environ["AGENTRC_CACHE_DIR"]).glob("*.memo"):
        shutil.rmtree(memo)
    (reg / "rules" / "rule-05" / "RULE.md").write_text("---\ndescription: Rule 5.\n---\n\nChanged 5.\n")
    counted.clear()
    assert "2 updated" in _build(reg, out, "--jobs", "1")
    assert sorted(counted) == sorted(str(p) for p in reg.rglob("*") if p.is_file())
    fresh = tmp_path / "fresh"
    _build(reg, fresh, "--no-cache")
    assert _tree(out) == _tree(fresh)


def test_a_source_that_changes_during_the_build_is_read_again(tmp_path, monkeypatch):
    """A deferred file whose bytes no longer match its recorded digest when they are needed:
    the build reads all sources again and plans with what they hold now."""
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    for memo in Path(os.environ["AGENTRC_CACHE_DIR"]).glob("*.memo"):
        shutil.rmtree(memo)
    (reg / "rules" / "rule-05" / "RULE.md").write_text("---\ndescription: Rule 5.\n---\n\nChanged 5.\n")
    rule = reg / "rules" / "rule-07" / "RULE.md"
    real = treeread.DeferredFile.__getattr__

    def racing(self, name):
        if name == "content" and self.path.endswith("rule-07/RULE.md") and "Raced" not in rule.read_text():
            rule.write_text("---\ndescription: Rule 7.\n---\n\nRaced.\n")
        return real(self, name)

    monkeypatch.setattr(treeread.DeferredFile, "__getattr__", racing)
    _build(reg, out, "--jobs", "1")
    assert "Raced." in (out / ".claude" / "rules" / "rule-07.md").read_text()
    assert "Changed 5." in (out / ".claude" / "rules" / "rule-05.md").read_text()


def test_a_touched_file_with_the_same_bytes_is_read_once_then_trusted_again(tmp_path, counted, monkeypatch):
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    notes = reg / "skills" / "helper" / "references" / "notes.md"
    os.utime(notes, ns=(notes.stat().st_atime_ns, notes.stat().st_mtime_ns - 10 ** 9))
    counted.clear()
    assert "0 created, 0 updated, 0 deleted" in _build(reg, out)
    assert counted == [f"{reg}/skills/helper/references/notes.md"]
    counted.clear()
    _build(reg, out)
    assert counted == []


def test_files_changed_close_to_the_recording_are_read_again(tmp_path, counted):
    """The racy case: a file changed within the timestamp granularity of the build that
    recorded it could have kept its size and times, so it is read (here: every file, as all
    were written just before the first build)."""
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    counted.clear()
    assert "0 created, 0 updated, 0 deleted" in _build(reg, out)
    assert sorted(counted) == sorted(str(p).replace(os.sep, "/") for p in reg.rglob("*") if p.is_file())


def test_added_and_removed_files_are_seen(tmp_path, counted, monkeypatch):
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    extra = reg / "rules" / "rule-99"
    extra.mkdir()
    (extra / "RULE.md").write_text("---\ndescription: New.\n---\n\nNew guidance.\n")
    assert "2 created" in _build(reg, out)
    assert (out / ".claude" / "rules" / "rule-99.md").is_file()
    (reg / "skills" / "helper" / "references" / "notes.md").unlink()
    (reg / "skills" / "helper" / "SKILL.md").write_text("---\ndescription: Helps.\n---\n\nNo notes.\n")
    assert "deleted" in _build(reg, out)
    assert not (out / ".claude" / "skills" / "helper" / "references" / "notes.md").exists()


def test_a_symlinked_source_is_not_stamped_and_is_read_every_time(tmp_path, counted, monkeypatch):
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg, out = _registry(tmp_path), tmp_path / "out"
    shared = reg / "skills" / "helper" / "references" / "shared.md"
    shared.write_text("Shared.\n")
    (reg / "skills" / "helper" / "references" / "linked.md").symlink_to("shared.md")
    _build(reg, out)
    counted.clear()
    _build(reg, out)
    assert len(counted) == _sources(reg)  # no stamp kept: everything read, as before
    shared.write_text("Shared, changed.\n")
    _build(reg, out)
    assert (out / ".claude" / "skills" / "helper" / "references" / "linked.md").read_text() == "Shared, changed.\n"


@pytest.mark.parametrize("record", [None, 3, "x", {"at": "1", "files": {}}, {"at": 1, "files": []},
                                    {"at": 1, "files": {"a": [1, 2]}}, {"at": 10 ** 30, "files": {"a": "x" * 7}},
                                    {"at": 1, "paths": "a", "statuses": b"", "shas": b""},
                                    {"at": 1, "paths": b"a", "statuses": b"x" * 48, "shas": b"y" * 32},
                                    {"at": 1, "paths": "a\0b", "statuses": b"x" * 48, "shas": b"y" * 64},
                                    {"at": 10 ** 30, "paths": "a", "statuses": b"x" * 48, "shas": b"y" * 32},
                                    {"at": 1, "paths": "\udc80", "statuses": b"x" * 48, "shas": b"y" * 32}])
def test_a_damaged_record_is_no_answer_or_a_full_read_never_a_crash(tmp_path, record):
    reg = _registry(tmp_path)
    got = treeread.stamped_digest([str(reg)], record)
    read = treeread.read_tree([str(reg)])
    assert got is None or got.digest == read.tree.digest()


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".agentrc" not in p.parts}
