"""The memory and hashing of a cold build, counted, not timed (issue 13): each output hashed
once, one FieldOutcome object per distinct outcome, the heap trimmed before writing."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path

from agentrc import fidelity, files
from agentrc.cli.main import main
from agentrc.pipeline import build as build_pipeline


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
    monkeypatch.setattr(build_pipeline, "trim_heap", lambda: calls.append(not (tmp_path / "out").exists()))
    _build(_registry(tmp_path, 2), tmp_path / "out")
    assert calls == [True]
    assert real() in (True, False)  # False without glibc, and no error
