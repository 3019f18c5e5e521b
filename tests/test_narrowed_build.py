"""A build narrowed by --client never deletes another client's files (issue 32, item 1): in a
project whose agentrc.yaml names claude, codex and cursor, `agentrc build --client claude`
builds Claude's files and leaves the others as they are (not deleted, not rewritten, still
agentrc's), `--prune` deletes them, and a client taken out of the project file is declared
intent: the next build removes its files and `--check` lists them as stale. A project without
the file keeps today's behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrc.cli.main import main

MANIFEST = ".agentrc/manifest.json"


@pytest.fixture
def project(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--client", "claude,codex,cursor"]) == 0
    assert main(["build"]) == 0
    capsys.readouterr()
    return tmp_path


def files_of(root: Path, *tops: str) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for top in tops for p in sorted((root / top).rglob("*"))
            if p.is_file()}


def owned(root: Path) -> set:
    manifest = json.loads((root / MANIFEST).read_text())
    return set(manifest["files"]) | set(manifest.get("merged", {}))  # written whole, or agentrc's keys in it


def test_a_narrowed_build_leaves_the_other_clients_files(project, capsys):
    others = files_of(project, ".codex", ".cursor", ".agents")
    assert others
    rule = next((project / "ai" / "rules").rglob("RULE.md"))
    rule.write_text(rule.read_text() + "\nOne more line.\n")
    assert main(["build", "--client", "claude"]) == 0
    err = capsys.readouterr().err
    assert "0 deleted" in err and "of codex, cursor left as they are" in err and "--prune" in err
    assert files_of(project, ".codex", ".cursor", ".agents") == others  # not deleted, not rewritten
    assert "One more line." in "".join(p.read_text() for p in (project / ".claude").rglob("*.md"))
    assert set(others) <= owned(project)  # still agentrc's: a later full build updates them
    assert main(["build"]) == 0
    assert "One more line." in "".join(p.read_text() for p in (project / ".cursor").rglob("*.mdc"))


def test_prune_deletes_them(project, capsys):
    assert main(["build", "--client", "claude", "--prune"]) == 0
    assert " 0 deleted" not in capsys.readouterr().err
    assert not (project / ".cursor").exists() and not (project / ".codex").exists()


def test_a_client_taken_out_of_the_project_file_is_removed_by_the_next_build(project, capsys):
    text = (project / "agentrc.yaml").read_text()
    (project / "agentrc.yaml").write_text(text.replace("clients: [claude, codex, cursor]", "clients: [claude, codex]"))
    assert main(["build", "--check"]) == 1
    assert "stale: " in capsys.readouterr().err
    assert main(["build"]) == 0
    assert not (project / ".cursor").exists() and (project / ".codex").exists()


def test_without_a_project_file_a_narrowed_build_builds_what_was_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--client", "claude,cursor"]) == 0
    (tmp_path / "agentrc.yaml").unlink()
    assert main(["build", "ai", "--out", ".", "--client", "claude,cursor"]) == 0
    assert main(["build", "ai", "--out", ".", "--client", "claude"]) == 0
    assert not (tmp_path / ".cursor").exists()
