"""`agentrc.output.writer` split by job (issue 35, item 3): callers keep working through it.

The writer's code lives in modules of `agentrc.output` (tree, fsync, manifest, recorded,
directory, diffing, staging, commit, recovery); `writer` composes `Output` from them and
re-exports their names. Setting a name on `writer` (tests replace `os`, shrink a limit, wrap
a function) must reach the module whose code reads it, or such a test would silently test
nothing.
"""

from __future__ import annotations

import os

from agentrc.output import commit, directory, fsync, manifest, recovery, staging, tree, writer

# What callers, Pants' rules and tests use of the writer (grep `writer.` in src, tests and
# pants-plugins): each is still there.
USED = ("Output", "session", "OutputError", "Changes", "sha", "untouched", "manifest_digest", "recorded_statuses",
        "replayed_statuses", "write_atomic", "safe_path", "MANIFEST", "STATE", "TXN", "JOURNAL", "LOCK_TIMEOUT",
        "PARTIAL", "MAX_MANIFEST", "MAX_TREE_DEPTH", "PARALLEL_MIN", "SYNC_BATCH", "SYNC_THREADS", "SLOW_RUN",
        "SWEEP_SLACK_NS", "SWEEP_SLACK_FINE_NS", "_Tree", "_LEFTOVER", "_CHUNK", "_manifest_bytes",
        "_journal_bytes", "_journal_chunks", "_write_chunks", "_load_json", "_parse_journal", "_patch",
        "_recent_dirs", "_replay_manifest", "_recorded_manifest", "_remove_staged", "_same_statuses",
        "_sweep_since", "_directories", "_fsync_all", "_open_dirs_allowed", "_pool", "_slow_fsyncs", "_slow_run",
        "os", "time")


def test_every_name_callers_use_is_still_the_writers():
    missing = [n for n in USED if not hasattr(writer, n)]
    assert not missing, missing
    assert writer._Tree is tree._Tree and writer._manifest_bytes is manifest._manifest_bytes


def test_a_name_set_on_the_writer_reaches_the_modules_that_read_it(monkeypatch):
    monkeypatch.setattr(writer, "SYNC_BATCH", 2)
    assert staging.SYNC_BATCH == recovery.SYNC_BATCH == fsync.SYNC_BATCH == 2
    monkeypatch.setattr(writer, "PARALLEL_MIN", 4)
    assert commit.PARALLEL_MIN == directory.PARALLEL_MIN == 4
    sentinel = object()
    monkeypatch.setattr(writer, "os", sentinel)
    assert tree.os is staging.os is commit.os is recovery.os is fsync.os is sentinel
    monkeypatch.undo()  # and back, everywhere
    assert staging.SYNC_BATCH == 64 and commit.PARALLEL_MIN == 10_000
    assert tree.os is staging.os is commit.os is os


def test_a_name_set_on_the_writer_leaves_modules_outside_the_split_alone(monkeypatch):
    from agentrc.output import atomic

    monkeypatch.setattr(writer, "os", object())
    assert atomic.os is os  # never the writer's before the split either


def test_the_fsync_state_is_read_and_set_where_fsync_keeps_it(monkeypatch):
    monkeypatch.setattr(writer, "_slow_fsyncs", True)
    assert fsync._slow_fsyncs is True and writer._slow_fsyncs is True
    monkeypatch.setattr(fsync, "_slow_run", 7)  # as `fsync` rebinds it while it learns the file system
    assert writer._slow_run == 7
    assert "_slow_fsyncs" not in vars(writer)  # no copy to go stale


def test_no_method_of_output_is_defined_in_two_of_its_parts():
    seen = {}
    doubled = []
    for cls in writer.Output.__mro__[:-1]:
        for name, value in vars(cls).items():
            if callable(value) and not name.startswith("__"):
                if name in seen:
                    doubled.append((name, cls.__name__, seen[name]))
                seen.setdefault(name, cls.__name__)
    assert not doubled, doubled


def test_a_write_runs_through_the_split_output(tmp_path):
    from agentrc.files import OutputFile

    files = [OutputFile("a/b.md", b"one\n", False, "t"), OutputFile("c.md", b"two\n", False, "t")]
    with writer.session(tmp_path) as out:
        changes, _, diags = out.diff(files)
        assert not diags and changes.create == ("a/b.md", "c.md")
        out.apply(files, changes)
    assert (tmp_path / "a" / "b.md").read_bytes() == b"one\n"
    with writer.session(tmp_path) as out:
        changes, _, diags = out.diff(files[1:])
        assert changes.delete == ("a/b.md",) and changes.unchanged == 1
        out.apply(files[1:], changes)
    assert not (tmp_path / "a").exists() and (tmp_path / "c.md").read_bytes() == b"two\n"
