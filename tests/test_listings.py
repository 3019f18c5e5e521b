"""The source record's directory listings (agentrc.inputs.listings): a directory whose
status is as recorded is not listed again, and every change a listing would show is still
seen: files added, removed or renamed, directories added, a directory turned into a link,
an output tree appearing below the sources, a record of another shape."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import List

import pytest

from agentrc.cli.main import main
from agentrc.inputs import tree as treeread
from agentrc.inputs.listings import Listings
from test_nochange_cost import _registry as nochange_registry
from test_nochange_cost import trusted  # noqa: F401 - a fixture

CLIENTS = "claude,copilot,opencode"


def _registry(root: Path) -> Path:
    """Three rules (`rule-00` to `rule-02`) and a skill with a supporting file and a script."""
    return nochange_registry(root, rules=3)


def _listing_calls(monkeypatch) -> List[str]:
    listed: List[str] = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p: (listed.append(str(p)), real(p))[1])
    return listed


def _record(reg: Path) -> dict:
    first = treeread.stamped_digest([str(reg)], treeread.record(0, {}, {}, None, ""))
    assert first is not None
    return first.record


def _again(reg: Path, record: dict) -> treeread.Stamped:
    got = treeread.stamped_digest([str(reg)], record)
    assert got is not None
    return got


def _recorded(got: treeread.Stamped) -> List[str]:
    files = treeread.recorded_files(got.record)
    assert files is not None
    return files.paths


def _paths(got: treeread.Stamped) -> List[str]:
    return sorted(_recorded(got))


def test_a_file_added_removed_or_renamed_is_seen_and_only_its_directory_listed(tmp_path, trusted, monkeypatch):
    reg = _registry(tmp_path)
    record = _record(reg)
    listed = _listing_calls(monkeypatch)
    (reg / "rules" / "rule-01" / "extra.md").write_text("More.\n")
    got = _again(reg, record)
    assert str(reg / "rules" / "rule-01" / "extra.md") in _recorded(got)
    assert listed == [str(reg / "rules" / "rule-01")] and got.listed == 1
    assert got.digest != record["digest"]
    assert _paths(got) == sorted(f.path for f in treeread.read_tree([str(reg)]).tree.files)

    record = got.record
    listed.clear()
    (reg / "rules" / "rule-01" / "extra.md").rename(reg / "rules" / "rule-01" / "renamed.md")
    (reg / "skills" / "helper" / "references" / "notes.md").unlink()
    got = _again(reg, record)
    assert sorted(listed) == sorted([str(reg / "rules" / "rule-01"), str(reg / "skills" / "helper" / "references")])
    assert _paths(got) == sorted(f.path for f in treeread.read_tree([str(reg)]).tree.files)


def test_a_new_directory_is_entered(tmp_path, trusted, monkeypatch):
    reg = _registry(tmp_path)
    record = _record(reg)
    (reg / "rules" / "rule-09").mkdir()
    (reg / "rules" / "rule-09" / "RULE.md").write_text("---\ndescription: New.\n---\n\nNew.\n")
    listed = _listing_calls(monkeypatch)
    got = _again(reg, record)
    assert sorted(listed) == sorted([str(reg / "rules"), str(reg / "rules" / "rule-09")])
    assert str(reg / "rules" / "rule-09" / "RULE.md") in _recorded(got)
    listed.clear()
    again = _again(reg, dict(got.record, at=got.record["at"] + 1))
    assert listed == [] and again.digest == got.digest


def test_a_directory_turned_into_a_link_is_refused_as_a_listing_would(tmp_path, trusted):
    reg = _registry(tmp_path)
    record = _record(reg)
    elsewhere = tmp_path / "elsewhere"
    (reg / "skills" / "helper").rename(elsewhere)
    (reg / "skills" / "helper").symlink_to(elsewhere, target_is_directory=True)
    assert treeread.stamped_digest([str(reg)], record) is None  # the walk's warning: everything is read


def test_an_output_tree_appearing_below_the_sources_is_skipped(tmp_path, trusted):
    """A directory holding `.agentrc` is not recorded: its manifest can appear without the
    directory changing, and then the walk skips it as an output tree."""
    reg = _registry(tmp_path)
    (reg / "rules" / "rule-02" / ".agentrc").mkdir()
    record = _record(reg)
    assert str(reg / "rules" / "rule-02") not in record["dirs"][0].split("\0")
    (reg / "rules" / "rule-02" / ".agentrc" / "manifest.json").write_text("{}")
    got = _again(reg, record)
    assert str(reg / "rules" / "rule-02" / "RULE.md") not in _recorded(got)


def test_a_racy_directory_is_listed(tmp_path, monkeypatch):
    """A directory changed within the clock's slack of the recording is listed, whatever its status says."""
    monkeypatch.setattr(treeread, "RACY_NS", 3 * 10 ** 9)
    reg = _registry(tmp_path)
    record = _record(reg)
    listed = _listing_calls(monkeypatch)
    got = _again(reg, record)
    assert len(listed) == len([p for p in reg.rglob("*") if p.is_dir()]) + 1 and got.listed == len(listed)


@pytest.mark.parametrize("damage", ["names", "outside", "shape", "incomplete", "statuses"])
def test_a_record_of_another_shape_is_not_used(tmp_path, trusted, monkeypatch, damage):
    """A record whose listings name what no listing gives, lie outside the root, or have
    another shape: the directories are listed, and the files found are the tree's."""
    reg = _registry(tmp_path)
    record = _record(reg)
    paths, statuses, files, subdirs, complete = record["dirs"]
    rule = str(reg / "rules" / "rule-00")
    if damage == "names":
        files = "\0".join("../../../etc/passwd" if p == rule else f for p, f in zip(paths.split("\0"),
                                                                                    files.split("\0")))
    elif damage == "outside":
        paths = "\0".join("/etc" if p == rule else p for p in paths.split("\0"))
    elif damage == "shape":
        statuses = statuses[:-1]
    elif damage == "incomplete":
        complete = "yes"
    else:
        statuses = tuple(str(s) for s in statuses)
    listed = _listing_calls(monkeypatch)
    got = _again(reg, dict(record, dirs=(paths, statuses, files, subdirs, complete)))
    assert listed, "listed again"
    assert _paths(got) == sorted(f.path for f in treeread.read_tree([str(reg)]).tree.files)
    assert not any("passwd" in p or p.startswith("/etc") for p in _recorded(got))


def test_a_recorded_sha256_that_is_not_the_files_makes_its_bytes_read_again(tmp_path, trusted):
    """The record vouches for the tree's digest alone: a file's recorded sha256 that is not
    its bytes' makes no traceback when its bytes are read, but SourcesChanged (read
    everything); a column of digests of another length is no record."""
    reg = _registry(tmp_path)
    record = _record(reg)
    got = _again(reg, dict(record, shas=b"z" * len(record["shas"])))
    assert got.digest == record["digest"]
    with pytest.raises(treeread.SourcesChanged):
        got.tree.files[0].content
    assert treeread.stamped_digest([str(reg)], dict(record, shas=record["shas"][:-1])) is None


def test_listings_kept_by_a_full_read_are_complete(tmp_path):
    reg = _registry(tmp_path)
    listings = Listings()
    treeread.read_tree([str(reg)], listings=listings)
    paths, statuses, files, subdirs, complete = listings.record()
    assert complete and paths.split("\0")[0] == str(reg) and len(statuses) == 4 * len(paths.split("\0"))
    two = Listings()
    treeread.read_tree([str(reg / "rules"), str(reg / "skills")], listings=two)
    assert two.record()[4] is False  # two roots: taken directory by directory, never whole


def _build(reg: Path, out: Path) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed), contextlib.redirect_stdout(printed):
        code = main(["build", str(reg), "--client", CLIENTS, "--out", str(out), "--jobs", "1"])
    assert code == 0, printed.getvalue()
    return printed.getvalue()


def test_a_build_lists_nothing_when_nothing_changed_and_finds_a_new_item(tmp_path, trusted, monkeypatch):
    """What users type: a build, a build with nothing to do (no directory listed), a new rule
    added, a build that writes it."""
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    listed = _listing_calls(monkeypatch)
    assert "0 created, 0 updated, 0 deleted" in _build(reg, out)
    assert not [p for p in listed if p.startswith(str(reg))]
    (reg / "rules" / "rule-07").mkdir()
    (reg / "rules" / "rule-07" / "RULE.md").write_text("---\ndescription: Seven.\n---\n\nSeven.\n")
    printed = _build(reg, out)
    assert "0 created" not in printed
    assert (out / ".claude" / "rules" / "rule-07.md").exists()
    listed.clear()
    assert "0 created, 0 updated, 0 deleted" in _build(reg, out)
    assert not [p for p in listed if p.startswith(str(reg))]


@pytest.mark.parametrize("name", ["node_modules", ".hidden"])
def test_a_directory_holding_a_link_is_listed_every_time(tmp_path, trusted, name):
    """A link the walk skips (to a directory it does not enter) is handed on as a file once
    its target is a file: the directory holding it is not recorded, so that is seen."""
    reg = _registry(tmp_path)
    target = tmp_path / "target"
    target.mkdir()
    (reg / "skills" / "helper" / name).symlink_to(target, target_is_directory=True)
    record = _record(reg)
    assert str(reg / "skills" / "helper") not in record["dirs"][0].split("\0")
    target.rmdir()
    target.write_text("now a file\n")
    assert treeread.stamped_digest([str(reg)], record) is None  # handed on, not plain: everything is read


@pytest.mark.parametrize("where", ["files", "subdirs"])
def test_a_record_naming_what_no_file_can_be_named_is_not_used(tmp_path, trusted, monkeypatch, where):
    """A lone surrogate (marshal keeps one; no listing gives one) in a recorded name: that
    directory is listed, no traceback."""
    reg = _registry(tmp_path)
    record = _record(reg)
    paths, statuses, files, subdirs, complete = record["dirs"]
    rules = str(reg / "rules")
    column = files if where == "files" else subdirs
    column = "\0".join(c + ("/" if c else "") + "bad\ud800" if p == rules else c
                       for p, c in zip(paths.split("\0"), column.split("\0")))
    damaged = (paths, statuses, column, subdirs, False) if where == "files" else (paths, statuses, files, column, False)
    listed = _listing_calls(monkeypatch)
    got = _again(reg, dict(record, dirs=damaged))
    assert rules in listed
    assert _paths(got) == sorted(f.path for f in treeread.read_tree([str(reg)]).tree.files)


def test_a_complete_record_missing_a_directory_is_walked(tmp_path, trusted, monkeypatch):
    """A record said to be whole whose directories are not every subdirectory it names: walked."""
    reg = _registry(tmp_path)
    record = _record(reg)
    paths, statuses, files, subdirs, complete = record["dirs"]
    keep = [i for i, p in enumerate(paths.split("\0")) if "references" not in p]
    pick = lambda joined: "\0".join(joined.split("\0")[i] for i in keep)  # noqa: E731
    partial = (pick(paths), tuple(v for i in keep for v in statuses[4 * i:4 * i + 4]), pick(files), pick(subdirs), True)
    got = _again(reg, dict(record, dirs=partial))
    assert str(reg / "skills" / "helper" / "references" / "notes.md") in _recorded(got)


def test_a_full_read_given_a_record_records_each_directory_once(tmp_path, trusted):
    reg = _registry(tmp_path)
    record = _record(reg)
    listings = Listings(record["dirs"], record["at"] + 1)
    treeread.read_tree([str(reg)], listings=listings)
    paths = listings.record()[0].split("\0")
    assert len(paths) == len(set(paths)) == len([p for p in reg.rglob("*") if p.is_dir()]) + 1


@pytest.mark.parametrize("digest", ["\udc80" * 64, "é" * 64, "z" * 64, "0" * 63, 7])
def test_a_recorded_tree_digest_that_is_not_a_sha256_is_not_taken(tmp_path, trusted, digest):
    """Every file vouched for, in its place: the record's tree digest is taken as it is, but
    only when it is 64 hex digits; anything else is computed from the files' digests (a
    record of the user's cache, damaged or crafted, never gives a traceback)."""
    reg = _registry(tmp_path)
    record = _record(reg)
    got = _again(reg, dict(record, digest=digest))
    assert got.read == 0 and got.digest == record["digest"] == treeread.read_tree([str(reg)]).tree.digest()
