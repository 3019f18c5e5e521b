"""`agentrc build . --out .`, what users type: the output lies inside the source directory,
so the files agentrc writes at the root (`opencode.json`, `.mcp.json`) are walked as
sources too. The build after a cold one is still the no-change result, an edit after it is
still replayed, and a source edited while a build writes is still seen by the next build."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path
from typing import Dict, Tuple

import pytest

from agentrc.cli.main import main
from agentrc.output import writer
from agentrc.building import build as build_module
from agentrc.building import incremental
from test_edit_cost import _generator

CLIENTS = "claude,copilot,opencode"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    proj = tmp_path / "proj"
    _generator().generate(str(proj), 30)
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(proj)
    return proj


def _build(*extra: str) -> str:
    so = io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(so):
        assert main(["build", ".", "--out", ".", "--client", CLIENTS, "--jobs", "1", *extra]) == 0
    return so.getvalue()


def _tree(root: Path) -> Dict[str, Tuple[bytes, bool]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), os.access(p, os.X_OK))
            for p in sorted(root.rglob("*")) if p.is_file() and ".agentrc" not in p.relative_to(root).parts}


def _planned(monkeypatch) -> list:
    """Calls of the full pipeline from now on."""
    calls: list = []
    plan = build_module._plan
    monkeypatch.setattr(build_module, "_plan", lambda *a, **k: (calls.append(1), plan(*a, **k))[1])
    return calls


def test_the_build_after_a_cold_one_is_the_no_change_result_and_an_edit_is_replayed(project, monkeypatch,
                                                                                      tmp_path):
    _build()
    assert (project / "opencode.json").is_file() and (project / ".mcp.json").is_file()
    calls = _planned(monkeypatch)
    assert "0 created, 0 updated, 0 deleted" in _build()
    assert calls == [], "the second build planned again: agentrc's own root outputs were taken as changed sources"
    rule = sorted((project / "rules").iterdir())[0] / "RULE.md"
    rule.write_text(rule.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    incremental.LAST = incremental.Outcome()
    assert " 3 updated" in _build()
    assert incremental.LAST.path == "replay", incremental.LAST
    assert "0 created, 0 updated, 0 deleted" in _build()
    assert calls == []
    # The same tree as a build without any cache, from the same sources.
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    monkeypatch.chdir(copy)
    _build("--no-cache")
    assert _tree(copy) == _tree(project)


def test_a_source_edited_while_the_build_writes_is_built_next_time(project, monkeypatch):
    """The record of the sources is taken again after the write only where agentrc wrote:
    a rule edited meanwhile keeps the record taken before, so the next build reads it."""
    rule = sorted((project / "rules").iterdir())[0] / "RULE.md"
    apply = writer.Output.apply

    def apply_and_edit(self, files, changes):
        result = apply(self, files, changes)
        rule.write_text(rule.read_text(encoding="utf-8") + "\nWritten during the build.\n", encoding="utf-8")
        return result

    monkeypatch.setattr(writer.Output, "apply", apply_and_edit)
    _build()
    monkeypatch.setattr(writer.Output, "apply", apply)
    calls = _planned(monkeypatch)
    incremental.LAST = incremental.Outcome()
    printed = _build()
    assert calls or incremental.LAST.path == "replay", "the edit made during the last build was not seen"
    assert "0 created, 0 updated" not in printed
    written = [p for p in project.rglob("*.md") if ".claude" in p.parts and p.stem == rule.parent.name]
    assert written and all("Written during the build." in p.read_text(encoding="utf-8") for p in written)


def test_the_same_build_typed_relative_and_absolute_keeps_a_stamp_for_each(project, monkeypatch, tmp_path):
    """`agentrc build . --out .` and the same directories typed absolute print their paths as
    typed, so they cannot share a no-change stamp; with one stamp, alternating the two made
    every build a full one. Each spelling keeps its own stamp and replay record (the memo
    stays shared), so alternating them is the no-change result, and an edit is replayed."""
    absolute = ["build", str(project), "--out", str(project), "--client", CLIENTS, "--jobs", "1"]

    def build_absolute() -> str:
        so = io.StringIO()
        with contextlib.redirect_stdout(so), contextlib.redirect_stderr(so):
            assert main(absolute) == 0
        return so.getvalue()

    _build()
    build_absolute()
    calls = _planned(monkeypatch)
    for _ in range(2):
        assert "0 created, 0 updated, 0 deleted" in _build()
        assert "0 created, 0 updated, 0 deleted" in build_absolute()
    assert calls == []
    stamps = sorted(p.name for p in (tmp_path / "cache").glob("*.stamp"))
    assert len(stamps) == 2, stamps
    rule = sorted((project / "rules").iterdir())[0] / "RULE.md"
    with open(rule, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    incremental.LAST = incremental.Outcome()
    assert "0 created, 3 updated, 0 deleted" in build_absolute()
    assert incremental.LAST.path == "replay", incremental.LAST
    # The relative spelling's stamp is of the sources before the edit: a full build, which
    # finds the outputs as the replay wrote them.
    assert "0 created, 0 updated, 0 deleted" in _build()
    assert "0 created, 0 updated, 0 deleted" in _build()
    assert len(calls) == 1
