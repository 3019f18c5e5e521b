"""The project's own docs and README pass the same markdownlint rules as generated output."""

from __future__ import annotations

from pathlib import Path

from .conformance_helpers import MARKDOWNLINT_CONFIG, describe, run

ROOT = Path(__file__).resolve().parents[2]


def test_docs_are_lint_clean(markdownlint_bin: Path):
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")) + ["README.md"]
    assert len(files) > 10
    proc = run([markdownlint_bin, "--config", MARKDOWNLINT_CONFIG, "--", *files], cwd=ROOT)
    assert proc.returncode == 0, describe(proc)
    out = proc.stdout + proc.stderr
    assert f"Linting: {len(files)} file" in out and "Summary: 0 issues" in out, out
