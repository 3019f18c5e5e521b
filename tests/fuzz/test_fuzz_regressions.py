"""One regression test per crash class the fetch surfaces' fuzz targets found (issue 30).

Each is the smallest input that crashed, through the entry point a user reaches, and stays
here once fixed, so the class cannot come back unnoticed: a lock holding an escaped lone
surrogate is AR203 (`sources.lock.loads`), and a file name that is not UTF-8 is AR008 where
the tree is walked (`inputs.tree.walk`), for `add` and `lint` alike.

Each was marked `xfail(strict=True)` while it was open; all are fixed now: the
suite stays green while it is open, and the test turns into an XPASS failure the day it is
fixed, so whoever fixes it removes the mark (and its row of `fetchfuzz.KNOWN`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.consumer import consume


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


# --- spec 003: oas-lock.json ----------------------------------------------------------------

def _scope(tmp_path: Path, edit) -> Path:
    """A scope that installed the fuzz package (fuzzlib's), its oas-lock.json edited."""
    import fuzzlib
    files = fuzzlib._built(fuzzlib._cap_seed(), ["cap", "install", "./in/pkg", "--dir", "."])
    scope = tmp_path / "scope"
    for rel, data in files.items():
        if not rel.startswith("in/"):
            (scope / rel).parent.mkdir(parents=True, exist_ok=True)
            (scope / rel).write_bytes(data)
    lock = json.loads((scope / "oas-lock.json").read_text())
    edit(lock)
    (scope / "oas-lock.json").write_text(json.dumps(lock, indent=2))  # "\ud800" written as an escape
    return scope


def _surrogate_version(lock: dict) -> None:
    lock["capabilities"]["demo.review"]["version"] = "\ud800"


def test_an_oas_lock_holding_a_lone_surrogate_is_AR159(tmp_path, monkeypatch, capsys):
    scope = _scope(tmp_path, _surrogate_version)
    before = (scope / "oas-lock.json").read_bytes()
    monkeypatch.chdir(scope)
    assert main(["cap", "trust", "demo.chat", "--dir", "."]) == 1
    assert "AR159" in capsys.readouterr().err
    assert (scope / "oas-lock.json").read_bytes() == before


def test_cap_list_prints_nothing_a_utf8_terminal_cannot_hold(tmp_path, monkeypatch, capsys):
    scope = _scope(tmp_path, _surrogate_version)
    monkeypatch.chdir(scope)
    main(["cap", "list", "--dir", "."])
    out = capsys.readouterr()
    (out.out + out.err).encode("utf-8")


# --- no secret shown (issue 30 §4) ---------------------------------------------------------

SECRET = "hunter2"


@pytest.mark.parametrize("source", [
    pytest.param(f"https://user:{SECRET}@example.invalid/r.git", id="schema-pattern"),
    pytest.param(f"git:https://u:{SECRET}@example.invalid/r.git@v1", id="check-rows"),
])
def test_an_oas_lock_source_with_a_password_is_not_shown(tmp_path, monkeypatch, capsys, source):
    def _package_source(lock: dict) -> None:
        lock["packages"]["demo.pkg"]["source"] = source

    scope = _scope(tmp_path, _package_source)
    monkeypatch.chdir(scope)
    assert main(["cap", "list", "--dir", "."]) == 1
    out = capsys.readouterr()
    assert "AR159" in out.err or "AR225" in out.err
    assert SECRET not in out.out + out.err


@pytest.mark.parametrize("locator", [
    pytest.param(f"https://user:{SECRET}@example.invalid/r.git x", id="with-a-space"),
    pytest.param("x" * 40 + f"/user:{SECRET}@example.invalid/r.git@v1", id="not-a-source"),
])
def test_add_never_shows_the_password_of_a_locator_it_refuses(tmp_path, monkeypatch, capsys, locator):
    monkeypatch.chdir(tmp_path)
    assert main(["add", locator, "--dir", ".", "--client", "claude"]) in (1, 2)
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err


@pytest.mark.parametrize("spec", [
    pytest.param(f"ps://{SECRET}@example.invalid/r.git", id="unknown-scheme"),
    pytest.param(f"https://a@b:{SECRET}@example.invalid/r.git", id="two-at-signs"),
])
def test_cap_install_never_shows_the_secret_of_a_source_it_refuses(tmp_path, monkeypatch, capsys, spec):
    monkeypatch.chdir(tmp_path)
    assert main(["cap", "install", spec, "--dir", "."]) in (1, 2)
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err


def test_add_never_shows_the_password_of_a_source_a_bundle_requires(tmp_path, monkeypatch, capsys):
    reg = tmp_path / "reg"
    (reg / "rules" / "style").mkdir(parents=True)
    (reg / "rules" / "style" / "RULE.md").write_text("---\ndescription: Style\n---\n\nWrap.\n")
    (reg / "core.bundle.yaml").write_text(
        "schema: 1\nname: core\ndescription: Core\nitems:\n  rules:\n    - style\nrequires:\n"
        f"  - {{ name: base, source: \"https://user:{SECRET}@example.invalid/r.git\" }}\n")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    assert main(["add", "../reg", "--dir", ".", "--client", "claude"]) == 1
    out = capsys.readouterr()
    assert "AR225" in out.err
    assert SECRET not in out.out + out.err


def test_parse_locked_never_quotes_a_password():
    from agentrc.capabilities import source as capsource
    with pytest.raises(capsource.SourceError) as exc:
        capsource.parse_locked(f"https://user:{SECRET}@example.invalid/r.git")
    assert SECRET not in str(exc.value)
