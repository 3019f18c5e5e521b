"""Style never blocks consuming (issue 31, item 1): `agentrc add` of a repository shaped like a
published Agent Skills repository (`skills/<name>/SKILL.md`), with an H1 body and bare fences
in one skill and a name error in another. The selected item installs; style in it is
normalized on the way in and reported as warnings; errors of skills nobody selected never
block; the lock's digests are of the bytes as fetched. And `fmt` then `lint` is clean."""

from __future__ import annotations

import hashlib
import json

import pytest

from sourcerepos import Repo, isolated_home, skill

from agentrc.cli.main import main

LOCK = "agentrc.lock.json"

H1_BODY = ("---\nname: h1-one\ndescription: Use when a body starts with a title.\n---\n\n"
           "# H1 One\n\nRun it:\n\n```\nmake pdf\n```\n\n## Steps\n\n#### Deep\n\nDone.\n")
BROKEN = "---\nname: broken\ndescription: Use when the name is not the directory's.\n---\n\n## Steps\n\nNone.\n"


@pytest.fixture
def src(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path, "skills")
    repo.commit({
        "README.md": "# Skills\n\nA look-alike of a published skills repository.\n",
        "skills/clean-one/SKILL.md": skill("clean-one"),
        "skills/h1-one/SKILL.md": H1_BODY,
        "skills/h1-one/scripts/run.sh": "#!/bin/sh\necho hi\n",
        "skills/broken-skill/SKILL.md": BROKEN,  # AR012: its name is not its directory's
    })
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return repo, project


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_clean_item_installs_whatever_the_unselected_items_hold(src, capsys):
    repo, project = src
    code, _, err = run(capsys, "add", repo.url, "--item", "skill:clean-one", "--client", "claude")
    assert code == 0, err
    assert "AR012" not in err and "AR020" not in err and "AR022" not in err  # nobody selected them
    assert (project / ".claude/skills/clean-one/SKILL.md").is_file()
    assert not (project / ".claude/skills/h1-one").exists()


def test_an_item_with_style_findings_installs_normalized_with_warnings(src, capsys):
    repo, project = src
    code, _, err = run(capsys, "add", repo.url, "--item", "skill:h1-one", "--client", "claude")
    assert code == 0, err
    assert "AR012" not in err
    for code_ in ("AR020", "AR021", "AR022"):
        assert "skills/h1-one/SKILL.md:" in err and f"warning[{code_}]" in err, (code_, err)
    assert "error[" not in err
    out = (project / ".claude/skills/h1-one/SKILL.md").read_text()
    assert "\n# H1 One" not in out and "## H1 One" in out
    assert "```text\nmake pdf\n```" in out and "\n```\nmake pdf" not in out
    assert "\n### Steps\n\n#### Deep\n" in out  # every heading a level down, none skipped
    # The lock's digest is of the bytes as fetched, not of the normalized ones.
    lock = json.loads((project / LOCK).read_text())
    (item,) = lock["items"]
    h = hashlib.sha256()
    for rel, text in sorted([("skills/h1-one/SKILL.md", H1_BODY), ("skills/h1-one/scripts/run.sh",
                                                                    "#!/bin/sh\necho hi\n")]):
        h.update(rel.encode() + b"\0" + hashlib.sha256(text.encode()).digest() + b"-")
    assert item["sha256"] == h.hexdigest()
    # A fresh install from the lock builds the same normalized bytes and verifies the digest.
    (project / ".claude/skills/h1-one/SKILL.md").unlink()
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 0, err
    assert (project / ".claude/skills/h1-one/SKILL.md").read_text() == out
    # An upstream commit that breaks another skill does not block updating this one.
    repo.commit({"skills/clean-one/SKILL.md": "---\nname: Clean_One\ndescription: x\n---\n\n# T\n"})
    code, _, err = run(capsys, "update")
    assert code == 0, err
    assert "AR010" not in err and "clean-one" not in err


def test_a_selected_item_with_an_error_fails_on_its_own_error_only(src, capsys):
    repo, project = src
    code, _, err = run(capsys, "add", repo.url, "--item", "skill:broken", "--client", "claude")
    assert code == 1
    assert "error[AR012]" in err and "broken-skill/SKILL.md" in err
    assert "h1-one" not in err and "AR020" not in err
    assert not (project / LOCK).exists() and not (project / ".claude").exists()


def test_the_whole_repository_fails_on_the_broken_item_not_on_style(src, capsys):
    repo, project = src
    code, _, err = run(capsys, "add", repo.url, "--client", "claude")
    assert code == 1
    assert "error[AR012]" in err
    assert "error[AR020]" not in err and "error[AR022]" not in err and "warning[AR020]" in err


def test_fmt_fixes_h1_and_bare_fences_so_lint_is_clean(tmp_path, capsys):
    d = tmp_path / "reg" / "skills" / "h1-one"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(H1_BODY)
    (d / "SKILL.claude.md").write_text("# Claude only\n\n```\nx\n```\n")
    code, _, err = run(capsys, "lint", str(tmp_path / "reg"))
    assert code == 1 and "AR020" in err and "AR022" in err
    assert "AR101" not in err  # lint reports the style findings themselves, not as formatting
    code, _, err = run(capsys, "fmt", str(tmp_path / "reg"))
    assert code == 0, err
    code, _, err = run(capsys, "lint", str(tmp_path / "reg"))
    assert code == 0, err
    assert "AR020" not in err and "AR021" not in err and "AR022" not in err and "AR101" not in err
    assert "## H1 One" in (d / "SKILL.md").read_text()
    assert "```text" in (d / "SKILL.claude.md").read_text()
    code, _, err = run(capsys, "fmt", "--check", str(tmp_path / "reg"))
    assert code == 0, err  # idempotent


def test_normalization_is_a_function_of_the_bytes():
    from agentrc.diagnostics import Diagnostics
    from agentrc.portable.normalize import normalize_file

    once = normalize_file("s/h1-one/SKILL.md", H1_BODY.encode(), Diagnostics())
    assert once is not None and once == normalize_file("s/h1-one/SKILL.md", H1_BODY.encode(), Diagnostics())
    assert normalize_file("s/h1-one/SKILL.md", once, Diagnostics()) is None  # already normalized
    assert normalize_file("s/h1-one/notes.md", H1_BODY.encode(), Diagnostics()) is None  # not a source
    assert normalize_file("s/h1-one/SKILL.md", b"\xff# x", Diagnostics()) is None  # AR008 is loading's
