"""The memory and hashing of a cold build, counted, not timed (issue 13): each output hashed
once, one FieldOutcome object per distinct outcome, the heap trimmed before writing, the
manifest and journal encoded without copies."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import tracemalloc
from pathlib import Path

from agentrc import fidelity, files
from agentrc.cli.main import main
from agentrc.output import writer
from agentrc.building import build as build_pipeline


def _registry(root: Path, n: int) -> Path:
    """`n` rules and `n` skills (one supporting file each)."""
    for i in range(n):
        d = root / "reg" / "rules" / f"rule-{i:04d}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"---\ndescription: Rule {i}.\nscope:\n  paths: [\"src/m{i}/**\"]\n---\n\n"
                                   f"Guidance {i}.\n")
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


class _CountingHashlib:
    """`hashlib` as `agentrc.files` sees it: each sha256 counted."""

    def __init__(self):
        self.calls = 0

    def sha256(self, data=b""):
        self.calls += 1
        return hashlib.sha256(data)


def test_a_cold_build_hashes_each_output_once(tmp_path, monkeypatch):
    """The memo (kept as digests) and the output manifest share each file's sha256: before,
    the memo hashed a copy of every rendered file and the manifest hashed it again."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    counting = _CountingHashlib()
    monkeypatch.setattr(files, "hashlib", counting)
    # Every rendering written (no shared copies): the memo hashes each rendered file once, and
    # those are then exactly the outputs the manifest counts.
    from agentrc.output import plan
    monkeypatch.setattr(plan, "shared_view", lambda reader, item, ctx, own, other: own)
    reg, out = _registry(tmp_path, 30), tmp_path / "out"
    _build(reg, out)
    manifest = json.loads((out / ".agentrc" / "manifest.json").read_text())
    outputs = len(manifest["files"]) + len(manifest.get("merged", {}))
    assert outputs > 100
    assert counting.calls <= outputs


def test_a_cold_build_makes_each_distinct_field_outcome_once(tmp_path, monkeypatch):
    """Reports of 60 items for 3 clients hold thousands of FieldOutcomes but few distinct ones:
    each is made once and shared."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fidelity, "_OUTCOMES", {}, raising=False)  # as in a new process
    made = []

    class Counted(fidelity.FieldOutcome):
        def __init__(self, *args, **kwargs):
            made.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(fidelity, "FieldOutcome", Counted)
    reg, out = _registry(tmp_path, 30), tmp_path / "out"
    _build(reg, out, "--report", str(tmp_path / "report.json"))
    report = json.loads((tmp_path / "report.json").read_text())
    items = report["items"] if isinstance(report, dict) else report
    outcomes = [(f["field"], f["status"], f["detail"]) for r in items for f in r["fields"]]
    assert len(outcomes) > 3 * len(set(outcomes))
    assert len(made) == len(set(outcomes))


def test_outcomes_are_forgotten_past_a_bound(monkeypatch):
    """A long-lived process (pantsd) keeps at most `_MOST` of them."""
    monkeypatch.setattr(fidelity, "_OUTCOMES", {})
    monkeypatch.setattr(fidelity, "_MOST", 10)
    first = fidelity.outcome("name", fidelity.EMITTED)
    assert fidelity.outcome("name", fidelity.EMITTED) is first
    for i in range(25):
        fidelity.outcome("description", fidelity.MAPPED, str(i))
    assert len(fidelity._OUTCOMES) <= 10
    assert fidelity.outcome("name", fidelity.EMITTED) == first


def test_the_cli_build_trims_the_heap_before_writing(tmp_path, monkeypatch):
    """Once per build, after the plan (its garbage freed) and before the write."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    real, calls = build_pipeline.trim_heap, []
    monkeypatch.setattr(build_pipeline, "trim_heap",
                        lambda outputs: calls.append((outputs, not (tmp_path / "out").exists())))
    _build(_registry(tmp_path, 2), tmp_path / "out")
    assert len(calls) == 1 and calls[0][0] > 0 and calls[0][1]
    assert real() in (True, False)  # False without glibc, and no error
    assert real(build_pipeline.TRIM_FROM - 1) is False  # a small plan: nothing trimmed, ctypes not imported


def _manifest(n: int) -> dict:
    files = {f"d{i % 97}/sk\u00e9ll \"{i}\"/SKILL.md": f"{i:064x}" for i in range(n)}
    return {"version": 1, "generator": "agentrc 0", "files": files,
            "stat": {p: [100 + i, 1_700_000_000_000_000_000 + i, 0o644] for i, p in enumerate(files)},
            "merged": {".mcp.json": {"format": "json", "created": True, "keys": [[["mcpServers", "a"], "{}", False]]}},
            "dirs": sorted({p.rsplit("/", 2)[0] for p in files})}


def _journal(manifest: dict) -> dict:
    puts = [{"path": p, "tmp": f"{i}.new", "create": i % 3 > 0} for i, p in enumerate(manifest["files"])]
    return {"version": 1, "put": puts, "delete": [{"path": "old.md", "sha": "0" * 64}], "prune": ["a/b", "a"],
            "manifest": manifest}


def _reference_manifest(manifest: dict) -> bytes:
    """The manifest's layout, from json.dumps: one entry a line."""
    lines = []
    for key in sorted(manifest):
        value = manifest[key]
        if isinstance(value, dict) and value:
            inner = ",\n".join(f"  {json.dumps(k)}: {json.dumps(value[k], sort_keys=True)}" for k in sorted(value))
            lines.append(f" {json.dumps(key)}: {{\n{inner}\n }}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)}")
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode()


def test_the_manifest_and_journal_bytes_are_laid_out_as_before():
    for n in (0, 1, writer._CHUNK if hasattr(writer, "_CHUNK") else 1024, 2500):
        manifest = _manifest(n)
        data = writer._manifest_bytes(manifest)
        assert data == _reference_manifest(manifest)
        journal = _journal(manifest)
        text = json.dumps(dict(journal, manifest="@MANIFEST@"), sort_keys=True)
        expected = text.replace('"@MANIFEST@"', data.decode().rstrip("\n")) + "\n"
        assert writer._journal_bytes(journal, data) == expected.encode()
        assert writer._journal_bytes(dict(journal, manifest=None), None) == \
            (json.dumps(dict(journal, manifest=None), sort_keys=True) + "\n").encode()


def _peak(make):
    """The bytes `make()` allocated at its peak beyond what it started with, and its result."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = make()
        return tracemalloc.get_traced_memory()[1] - base, result
    finally:
        tracemalloc.stop()


def test_staging_holds_the_manifest_and_journal_bytes_about_once():
    """Encoding the manifest held its lines, their joined text and its encoded copy at once
    (3.4 times its size), and the journal a stripped copy of the manifest beside the joined
    journal (2.3 times the journal's size): at 5,000 items, tens of MB at the build's peak.
    Now each is written into one buffer which becomes the bytes returned."""
    manifest = _manifest(6000)
    peak, data = _peak(lambda: writer._manifest_bytes(manifest))
    assert peak < 2 * len(data)
    journal = _journal(manifest)
    peak, raw = _peak(lambda: writer._journal_bytes(journal, data))
    assert peak < 1.6 * len(raw)


def test_the_journal_is_written_without_being_held_whole(tmp_path, monkeypatch):
    """From the manifest's encoding to the journal's commit, `_stage` allocates less than
    half the journal's size: its pieces (`_journal_chunks`) go to the file as they come.
    The journal's bytes were held whole before, beside the manifest's and the entries
    they were encoded from: the peak of a cold build at 10,000 items."""
    import os

    from agentrc.files import OutputFile

    files = [OutputFile(f"d{i % 50}/sk\u00e9ll-{i:05d}/SKILL.md", b"x\n") for i in range(3000)]
    real_manifest, real_replace = writer._manifest_bytes, os.replace
    seen = {}

    def manifest_bytes(m, encoded=None):
        data = real_manifest(m, encoded)
        seen["base"] = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        return data

    def replace(src, dst, **kw):
        if src == "journal.tmp":
            seen["peak"] = tracemalloc.get_traced_memory()[1] - seen["base"]
            seen["size"] = os.stat(src, dir_fd=kw["src_dir_fd"]).st_size
        return real_replace(src, dst, **kw)

    monkeypatch.setattr(writer, "_manifest_bytes", manifest_bytes)
    monkeypatch.setattr(writer.os, "replace", replace)
    with writer.session(tmp_path / "out") as out:
        changes, _, _ = out.diff(files)
        tracemalloc.start()
        try:
            assert out.apply(files, changes) == ()
        finally:
            tracemalloc.stop()
    assert seen["size"] > 300_000
    assert seen["peak"] < seen["size"] / 2, seen  # about 1.5 times its size before
