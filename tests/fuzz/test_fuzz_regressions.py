"""One regression test per crash class the fetch surfaces' fuzz targets found (issue 30).

Each is the smallest input that crashed, through the entry point a user reaches, and stays
here once fixed, so the class cannot come back unnoticed: a lock holding an escaped lone
surrogate is AR203 (`sources.lock.loads`), and a file name that is not UTF-8 is AR008 where
the tree is walked (`inputs.tree.walk`), for `add` and `lint` alike.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentrc.cli.main import main
from agentrc.pipeline import consume


def _lock(project: Path, **extra) -> None:
    project.mkdir(parents=True, exist_ok=True)
    doc = {"version": 1, "clients": ["claude"], "bundles": [], "items": [], **extra}
    (project / "agentrc.lock.json").write_text(json.dumps(doc))  # json.dumps writes "\ud800" as an escape


def test_a_lock_holding_a_lone_surrogate_is_AR203(tmp_path):
    project = tmp_path / "project"
    _lock(project, mcps_removed=["\ud800"])
    before = (project / "agentrc.lock.json").read_bytes()
    result = consume.install(str(project))
    assert not result.ok and any(d.code == "AR203" for d in result.diagnostics)
    assert (project / "agentrc.lock.json").read_bytes() == before


def _registry_with_a_name_that_is_not_utf8(root: Path) -> Path:
    reg = root / "reg"
    (reg / "skills" / "a").mkdir(parents=True)
    (reg / "skills" / "a" / "SKILL.md").write_text("---\ndescription: A skill\n---\n\nBody.\n")
    with open(os.path.join(os.fsencode(reg / "skills" / "a"), b"\xff.md"), "wb") as f:
        f.write(b"x\n")
    return reg


def test_a_fetched_file_name_that_is_not_utf8_is_a_diagnostic(tmp_path, monkeypatch):
    _registry_with_a_name_that_is_not_utf8(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    result = consume.add(str(project), "../reg", clients=("claude",), cwd=str(project))
    assert not result.ok and not os.listdir(project)


def test_lint_of_a_file_name_that_is_not_utf8_is_a_diagnostic(tmp_path, monkeypatch):
    _registry_with_a_name_that_is_not_utf8(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "reg"]) == 1
