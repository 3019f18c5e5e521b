"""The cost of a build with nothing to do (issue 13, "no-op at most 0.1x ruler"): what it
makes, lists and stats per source and per output, and what the command line builds before
it knows there is nothing to do. Counts of work, not timings; and proofs that the cheaper
paths give what the old ones gave."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
from pathlib import Path
from typing import List

import pytest

from agentrc.cli.main import main
from agentrc.inputs import tree as treeread

CLIENTS = "claude,copilot,opencode"


def _registry(root: Path, rules: int = 6) -> Path:
    reg = root / "reg"
    for i in range(rules):
        d = reg / "rules" / f"rule-{i:02d}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"---\ndescription: Rule {i}.\n---\n\nGuidance {i}.\n")
    skill = reg / "skills" / "helper"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: Helps.\n---\n\nSee [the notes](references/notes.md).\n")
    (skill / "references" / "notes.md").write_text("Notes.\n")
    script = skill / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    return reg


def _build(reg: Path, out: Path, *extra: str) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed), contextlib.redirect_stdout(printed):
        code = main(["build", str(reg), "--client", CLIENTS, "--out", str(out), "--jobs", "1", *extra])
    assert code == 0, printed.getvalue()
    return printed.getvalue()


@pytest.fixture
def trusted(monkeypatch, tmp_path):
    """Files older than the recording are trusted at once (no racy window), in a cache of the test's own."""
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))


def test_a_no_change_build_makes_no_deferred_source_file(tmp_path, trusted, monkeypatch):
    """The stamp vouches for every source, and the build needs the sources' digest alone:
    the tree of deferred files (one object and one loader per source) is made only when a
    build asks for it, as an edit does."""
    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    made: List[str] = []
    real = treeread.DeferredFile.__init__

    def init(self, path, *args):
        made.append(path)
        real(self, path, *args)

    monkeypatch.setattr(treeread.DeferredFile, "__init__", init)
    assert "0 created, 0 updated, 0 deleted" in _build(reg, out)
    assert made == []
    rule = reg / "rules" / "rule-02" / "RULE.md"
    rule.write_text(rule.read_text() + "\nOne more line.\n")
    assert "0 updated" not in _build(reg, out)
    assert made, "an edit plans: the tree of the files the stamp vouched for is made"


def _columns(record: dict) -> dict:
    """The files of a sources record, without its directories' listings (as earlier versions kept it)."""
    return {k: record[k] for k in ("paths", "statuses", "shas")}


def _same_tree(got: treeread.Stamped, want: treeread.Read) -> None:
    files = [(f.path, f.content, f.executable, f.link) for f in got.tree.files]
    assert files == [(f.path, f.content, f.executable, f.link) for f in want.tree.files]
    assert got.tree.files is got.tree.files  # made once
    assert got.digest == want.tree.digest() == got.tree.digest()
    plain = pickle.loads(pickle.dumps(got.tree))
    assert type(plain) is treeread.SourceTree and plain == want.tree


def test_the_deferred_tree_is_the_tree_read_from_disk(tmp_path):
    """`stamped_digest`'s tree, made on demand, holds the files `read_tree` reads (paths,
    bytes, executable bits, digest) whether the record vouched for them or not, and pickles
    as a plain `SourceTree` of plain files."""
    reg = _registry(tmp_path)
    read = treeread.read_tree([str(reg)])
    assert any(f.executable for f in read.tree.files)
    first = treeread.stamped_digest([str(reg)], treeread.record(0, {}, {}, None, ""))  # nothing vouched for: all read
    assert first is not None and first.read == len(read.tree.files)
    _same_tree(first, read)
    later = dict(_columns(first.record), at=first.record["at"] + treeread.RACY_NS + 1)
    again = treeread.stamped_digest([str(reg)], later)  # every file vouched for: none read
    assert again is not None and again.read == 0
    assert all(isinstance(f, treeread.DeferredFile) for f in again.tree.files)
    _same_tree(again, read)
    edited = reg / "rules" / "rule-01" / "RULE.md"
    edited.write_text("---\ndescription: Changed.\n---\n\nNew.\n")
    mixed = treeread.stamped_digest([str(reg)], later)  # one read, the others vouched for
    assert mixed is not None and mixed.read == 1
    _same_tree(mixed, treeread.read_tree([str(reg)]))
    assert [f.path for f in mixed.tree.files if not isinstance(f, treeread.DeferredFile)] == [str(edited)]


def _counting(monkeypatch) -> "tuple[List[str], List[str]]":
    """The paths `os.scandir` and `os.lstat` are called on from now on."""
    listed: List[str] = []
    statted: List[str] = []
    real_scandir, real_lstat = os.scandir, os.lstat
    monkeypatch.setattr(os, "scandir", lambda p: (listed.append(str(p)), real_scandir(p))[1])
    monkeypatch.setattr(os, "lstat", lambda p, **kw: (statted.append(str(p)), real_lstat(p, **kw))[1])
    return listed, statted


def test_the_source_stamp_lists_each_directory_once_and_stats_each_source_once(tmp_path, trusted, monkeypatch):
    """The source side of a build with a record of the files but not of the directories (as
    earlier versions kept it): one status and one listing per directory, one lstat per
    source file, no file opened (guards against a walk that stats or lists twice)."""
    reg = _registry(tmp_path)
    first = treeread.stamped_digest([str(reg)], treeread.record(0, {}, {}, None, ""))
    assert first is not None
    listed, statted = _counting(monkeypatch)
    got = treeread.stamped_digest([str(reg)], dict(_columns(first.record), at=first.record["at"] + 1))
    assert got is not None and got.read == 0
    dirs = [p for p in reg.rglob("*") if p.is_dir()] + [reg]
    files = [p for p in reg.rglob("*") if p.is_file()]
    assert sorted(listed) == sorted(str(d) for d in dirs)
    below = [p for p in statted if p.startswith(str(reg) + os.sep)]  # the others: resolving the root, and the root
    assert sorted(below) == sorted([str(f) for f in files] + [str(d) for d in dirs if d != reg])


def test_a_no_change_build_lists_no_directory(tmp_path, trusted, monkeypatch):
    """With the record of a walk, a build whose sources did not change lists no directory:
    one lstat per directory and per source file, no listing, no file opened; and the record
    it makes is the one it was given (nothing to write again)."""
    reg = _registry(tmp_path)
    first = treeread.stamped_digest([str(reg)], treeread.record(0, {}, {}, None, ""))
    assert first is not None
    record = dict(first.record, at=first.record["at"] + 1)
    listed, statted = _counting(monkeypatch)
    got = treeread.stamped_digest([str(reg)], record)
    assert got is not None and got.read == 0 and got.listed == 0
    assert listed == []
    dirs = [p for p in reg.rglob("*") if p.is_dir()] + [reg]
    files = [p for p in reg.rglob("*") if p.is_file()]
    below = [p for p in statted if p.startswith(str(reg) + os.sep)]  # the others: resolving the root, and the root
    assert sorted(below) == sorted([str(f) for f in files] + [str(d) for d in dirs if d != reg])
    assert got.record["dirs"] is record["dirs"] and got.digest == first.digest == record["digest"]
    assert all(got.record[k] is record[k] for k in ("paths", "statuses", "shas"))  # kept as they were


def test_a_no_change_build_lstats_each_output_once(tmp_path, trusted, monkeypatch):
    """The output side of a no-change build: one lstat per file the manifest owns or merged
    into, nothing opened but the manifest (not through `.agentrc` linked elsewhere: one lstat
    of it), nothing listed."""
    from agentrc.output import writer

    reg, out = _registry(tmp_path), tmp_path / "out"
    _build(reg, out)
    owned = [p for p in out.rglob("*") if p.is_file() and ".agentrc" not in p.parts]
    statted: List[str] = []
    listed: List[str] = []
    real_lstat, real_scandir = os.lstat, os.scandir
    monkeypatch.setattr(os, "lstat", lambda p, **kw: (statted.append(str(p)), real_lstat(p, **kw))[1])
    monkeypatch.setattr(os, "scandir", lambda p: (listed.append(str(p)), real_scandir(p))[1])
    assert "0 created, 0 updated, 0 deleted" in _build(reg, out)
    below = [p for p in statted if p.startswith(str(out) + os.sep)]
    # and the pending write's, and the state directory's (a link there is no answer)
    assert sorted(below) == sorted([str(p) for p in owned] + [str(out / writer.TXN), str(out / writer.STATE)])
    assert not [p for p in listed if p.startswith(str(out))]


@pytest.mark.parametrize("field", ["size", "mtime", "mode", "missing", "none"])
@pytest.mark.parametrize("which", [0, 2])
def test_same_statuses_sees_any_field_of_any_output(tmp_path, field, which):
    from agentrc.output import writer

    paths = ["a.md", "d/b.md", "d/e/c.md"]
    numbers: List[int] = []
    for p in paths:
        f = tmp_path / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("x")
        st = os.lstat(f)
        numbers += [st.st_size, st.st_mtime_ns, st.st_mode & 0o7777]
    target = tmp_path / paths[which]
    st = os.lstat(target)
    if field == "size":
        target.write_text("xy")
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif field == "mtime":
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    elif field == "mode":
        target.chmod(0o600 if st.st_mode & 0o7777 != 0o600 else 0o644)
    elif field == "missing":
        target.unlink()
    base = str(tmp_path) + os.sep
    assert writer._same_statuses(base, paths, tuple(numbers)) is (field == "none")


def _modules_of_a_no_change_build(tmp_path: Path) -> List[str]:
    import subprocess
    import sys

    from helpers import ROOT

    reg, out = _registry(tmp_path), tmp_path / "out"
    script = ("import sys; from agentrc.cli.main import main\n"
              "code = main(sys.argv[1:])\n"
              "print(' '.join(sorted(sys.modules)))\n"
              "sys.exit(code)")
    cmd = [sys.executable, "-c", script, "build", str(reg), "--client", CLIENTS, "--out", str(out)]
    env = dict(os.environ, AGENTRC_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT / "src"))
    for _ in range(2):  # the first build writes; the second has nothing to do
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert "0 created, 0 updated, 0 deleted" in done.stderr
    return done.stdout.split()


def test_a_no_change_build_imports_no_name_rules(tmp_path):
    """What the command line imports for a build it only prints: the name rules
    (agentrc.names, for --plugin-name) are imported when that flag is given, and the totals
    (agentrc.output.totals) need no fidelity types to print recorded numbers."""
    loaded = _modules_of_a_no_change_build(tmp_path)
    assert "agentrc.cli.build" in loaded and "agentrc.output.totals" in loaded
    assert "agentrc.names" not in loaded
    # Nor the reports and registries that only a build with something to do makes
    # (inputs.read imports them in read_inputs).
    assert "agentrc.fidelity" not in loaded and "agentrc.loaded" not in loaded


def test_a_no_change_build_imports_no_shutil(tmp_path):
    """argparse imports shutil (and bz2, lzma, threading with it) to ask the terminal's
    width when a help formatter is set up; the command line's formatters are set up only to
    print help or an error (agentrc.cli.main._Formatter), and nothing else on the way needs it."""
    loaded = _modules_of_a_no_change_build(tmp_path)
    assert "shutil" not in loaded and "bz2" not in loaded, [m for m in ("shutil", "bz2", "lzma") if m in loaded]
