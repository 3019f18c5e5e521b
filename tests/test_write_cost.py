"""The cost of a cold build's rendering and writing, counted, not timed (issue 13): threads
started for fsyncs, system calls per written file, formats of a body every client renders alike."""

from __future__ import annotations

import collections
import contextlib
import io
import os
import threading
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.clients import base
from agentrc.output import writer
from helpers import WrappedOS


def _registry(root: Path, n: int) -> Path:
    """`n` rules and `n` skills (one supporting file each), in nested output directories."""
    for i in range(n):
        d = root / "reg" / "rules" / f"rule-{i:04d}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"---\ndescription: Rule {i}.\nscope:\n  paths: [\"src/m{i}/**\"]\n---\n\n"
                                   f"Guidance {i}.\n\n- one\n- two\n")
        s = root / "reg" / "skills" / f"skill-{i:04d}"
        (s / "scripts").mkdir(parents=True)
        (s / "SKILL.md").write_text(f"---\nname: skill-{i:04d}\ndescription: Skill {i}.\n---\n\nDo {i}, "
                                    "with [the script](scripts/run.sh).\n")
        (s / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    return root / "reg"


def _build(reg: Path, out: Path, *extra: str) -> None:
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out), "--jobs", "1",
                     *extra]) == 0


class _CountingOS(WrappedOS):
    """`os` as the writer sees it, counting the calls by name."""

    def __init__(self):
        self.calls: "collections.Counter[str]" = collections.Counter()
        self.lock = threading.Lock()

    def around(self, name, real, args, kwargs):
        with self.lock:
            self.calls[name] += 1
        return real(*args, **kwargs)


def test_a_cold_build_makes_a_bounded_number_of_system_calls_per_file(tmp_path, monkeypatch):
    """Per written file: one open, one fsync, one fstat (its stat for the manifest); per
    directory: one open and one fsync; per new directory below one that is there, a rename.
    Before: a stat per staged file in the roll forward, an fstat per ancestor directory of
    every file, a descriptor lookup per component (recursively), a link and an unlink per
    file."""
    reg = _registry(tmp_path, 50)
    counting = _CountingOS()
    monkeypatch.setattr(writer, "os", counting)
    out = tmp_path / "out"
    _build(reg, out, "--no-cache")
    files = sum(1 for p in out.rglob("*") if p.is_file() and ".agentrc" not in p.parts)
    dirs = sum(1 for p in out.rglob("*") if p.is_dir() and ".agentrc" not in p.parts)
    calls = counting.calls
    assert files > 200 and dirs > 150, (files, dirs)
    assert calls["stat"] <= 10, calls  # none per staged file
    assert calls["fstat"] <= files + dirs + 10, calls
    assert calls["fsync"] <= files + dirs + 10, calls
    # Each file staged; each directory looked for once while reading (missing), made and
    # opened, and opened again to fsync when its descriptor was closed (`MAX_OPEN_DIRS`).
    assert calls["open"] <= files + 3 * dirs + 10, calls
    assert calls["mkdir"] <= dirs + 2, calls  # .agentrc and its txn
    # New directories are staged whole and renamed into place: no link and no unlink a file.
    assert calls["link"] + calls["unlink"] <= 10 and calls["rename"] <= 10, calls


def test_fsyncs_run_on_threads_started_once_per_process(tmp_path, monkeypatch):
    """A cold build fsyncs its staged files in batches (`SYNC_BATCH`), made small here: the
    threads doing it are started once, not per batch (904 threads at 1,000 items before)."""
    reg = _registry(tmp_path, 20)
    monkeypatch.setattr(writer, "SYNC_BATCH", 4)
    started = []
    real = threading.Thread.start

    def start(self):
        started.append(self.name)
        return real(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    monkeypatch.setattr(writer, "_pool", None)  # as in a new process
    monkeypatch.setattr(writer, "_slow_fsyncs", True)  # a file system whose fsyncs wait: threads
    _build(reg, tmp_path / "out", "--no-cache")
    _build(reg, tmp_path / "out2", "--no-cache")
    assert 0 < len(started) <= writer.SYNC_THREADS, started


@pytest.mark.parametrize("slow", [False, True], ids=["in-line", "threads"])
def test_an_fsync_error_is_the_first_of_the_batch(monkeypatch, slow):
    """Every descriptor of a batch is fsync'd, in the calling thread while fsyncs return at
    once, else on the pool; the error raised is that of the first that failed."""
    tried = []
    monkeypatch.setattr(writer, "_slow_fsyncs", slow)

    class _OS:
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def fsync(fd):
            tried.append(fd)
            if fd in (5, 9):
                raise OSError(fd, "failed")

    monkeypatch.setattr(writer, "os", _OS())
    try:
        writer._fsync_all(list(range(20)))
    except OSError as exc:
        assert exc.errno == 5
    else:
        raise AssertionError("no error raised")
    assert sorted(tried) == list(range(20))
    assert writer._slow_fsyncs is slow  # these returned at once


def test_fsyncs_that_return_at_once_start_no_thread(tmp_path, monkeypatch):
    """On a file system where fsync waits for nothing, the batches are fsync'd in the calling
    thread: no thread is started, and every staged file is still fsync'd."""
    reg = _registry(tmp_path, 10)
    monkeypatch.setattr(writer, "_slow_fsyncs", False)
    monkeypatch.setattr(writer, "_pool", None)
    synced = []

    class _OS:
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def fsync(fd):
            synced.append(fd)  # returns at once

    monkeypatch.setattr(writer, "os", _OS())
    _build(reg, tmp_path / "out", "--no-cache")
    assert writer._pool is None and not writer._slow_fsyncs
    files = sum(1 for p in (tmp_path / "out").rglob("*") if p.is_file() and ".agentrc" not in p.parts)
    assert len(synced) > files


def test_a_body_every_client_renders_alike_is_formatted_once(tmp_path, monkeypatch):
    """Three clients render each item; the markdown formatter runs once per distinct document,
    not once per client, and the output is the same as formatting each (golden tests)."""
    reg = _registry(tmp_path, 30)
    calls = []
    real = base._format_document
    monkeypatch.setattr(base, "_format_document", lambda text: calls.append(text) or real(text))
    _build(reg, tmp_path / "out", "--no-cache")
    assert len(calls) == len(set(calls)), len(calls) - len(set(calls))
    assert len(calls) <= 2 * 60, len(calls)  # 60 items, 3 clients: at most the distinct bodies


def test_the_journal_holds_the_manifest_serialised_once(tmp_path, monkeypatch):
    """The journal splices in the manifest's bytes (`_manifest_bytes`) instead of encoding
    the manifest again: the same JSON value as `json.dumps(journal)`, with or without one,
    and the file written holds exactly the pieces `_journal_chunks` gives."""
    import json

    reg = _registry(tmp_path, 5)
    journals = []
    real = writer._journal_chunks
    monkeypatch.setattr(writer, "_journal_chunks", lambda j, m: journals.append((j, m)) or real(j, m))
    written = []
    real_write = writer._write_chunks
    monkeypatch.setattr(writer, "_write_chunks",
                        lambda d, n, c, mode: written.append(b"".join(c)) or real_write(d, n, written[-1:], mode))
    encoded = []
    real_manifest = writer._manifest_bytes
    monkeypatch.setattr(writer, "_manifest_bytes",
                        lambda m, ready=None: encoded.append((m, ready)) or real_manifest(m, ready))
    _build(reg, tmp_path / "out", "--no-cache")
    assert len(journals) == 1 and len(encoded) == 1
    # Its `files` section encoded beforehand (while files were staged): the same bytes.
    whole, ready = encoded[0]
    assert list(ready) == ["files"] and real_manifest(whole, ready) == real_manifest(whole)
    journal, manifest = journals[0]
    assert written == [b"".join(real(journal, manifest))] == [writer._journal_bytes(journal, manifest)]
    assert json.loads(written[0]) == json.loads(json.dumps(journal, sort_keys=True))
    assert written[0].endswith(b"}\n")
    without = dict(journal, manifest=None)
    assert writer._journal_bytes(without, None) == (json.dumps(without, sort_keys=True) + "\n").encode()


@pytest.mark.parametrize("pattern, switched", [([1.0], True), ([1.0, 1.0, 0.0], False)], ids=["slow", "preempted"])
def test_threads_take_over_after_a_run_of_slow_fsyncs(monkeypatch, pattern, switched):
    """SLOW_RUN slow fsyncs in a row (a device that waits) hand the rest of the batch, and the
    process's later batches, to the threads; a slow one now and then (a preemption) does not."""
    tried = []
    durations = iter(pattern * 100)

    class _Clock:
        now = 0.0

        def perf_counter(self):  # each reading moves on by half the next of `pattern`
            self.now += next(durations) / 2
            return self.now

    class _OS:
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def fsync(fd):
            tried.append((fd, threading.current_thread() is threading.main_thread()))

    monkeypatch.setattr(writer, "time", _Clock())
    monkeypatch.setattr(writer, "os", _OS())
    monkeypatch.setattr(writer, "_slow_fsyncs", False)
    monkeypatch.setattr(writer, "_slow_run", 0)
    writer._fsync_all(list(range(40)))
    assert sorted(fd for fd, _ in tried) == list(range(40))
    assert writer._slow_fsyncs is switched
    in_line = sum(1 for _, main in tried if main)
    assert in_line == (writer.SLOW_RUN if switched else 40), in_line


def test_a_new_merged_file_is_made_from_agentrcs_keys_without_an_edit_per_key(tmp_path, monkeypatch):
    """A config file agentrc merges into, absent or empty so far, is agentrc's keys alone:
    made at once (`merge.fresh`), not by applying every key to an empty document
    (opencode.json's instructions hold one key per rule: 2,000 edits at 5,000 items). The
    same bytes as the key-by-key merge, which a file holding only whitespace still takes."""
    from agentrc.text import jsonedit

    reg = tmp_path / "reg"
    for i in range(30):
        rule = reg / "rules" / f"rule-{i:02d}"
        rule.mkdir(parents=True)
        (rule / "RULE.md").write_text(f"---\nschema: 1\nname: rule-{i:02d}\ndescription: Rule {i} for tests.\n"
                                      f"scope:\n  paths: [\"src/{i}/**\"]\n---\n\nRule {i}.\n", encoding="utf-8")
    calls = []
    real = jsonedit.edit
    monkeypatch.setattr(jsonedit, "edit", lambda *a, **k: (calls.append(len(a[1])), real(*a, **k))[1])
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    from agentrc.cli.main import main
    assert main(["build", str(reg), "--client", "opencode", "--out", str(out), "--jobs", "1"]) == 0
    assert calls == []  # made whole, not merged key by key
    made = (out / "opencode.json").read_bytes()
    # The same bytes as the key-by-key merge, which a file of whitespace alone takes.
    spaced = tmp_path / "spaced"
    spaced.mkdir()
    (spaced / "opencode.json").write_text("\n", encoding="utf-8")
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache-2"))
    assert main(["build", str(reg), "--client", "opencode", "--out", str(spaced), "--jobs", "1"]) == 0
    assert calls and max(calls) >= 30  # merged key by key: one edit per instruction
    assert (spaced / "opencode.json").read_bytes() == made
