"""A consumer project's agentrc.yaml and its lock kept together (issue 32, item 1): `add`,
`remove` and `update --ref` write the project file's `sources:` from the lock they wrote
(comments and other keys kept); `install` installs what the project file declares at the
locked commits, adding what the lock lacks; `install --frozen` and `--check` fail, writing
nothing, when the lock does not match it."""

from __future__ import annotations

import pytest

from sourcerepos import Repo, bundle, isolated_home, rule, skill
from test_consumer_cli import LOCK, run

HEAD = "# our agents' content\nschema: 1\nclients: [claude]\n"


@pytest.fixture
def env(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path, "reg")
    repo.commit({"rules/style/RULE.md": rule("style"), "skills/review/SKILL.md": skill("review"),
                 "core.bundle.yaml": bundle("core", "  rules:\n    - style\n")}, tag="v1")
    repo.commit({"rules/style/RULE.md": rule("style").replace("Always style.", "Always style, v2.")}, tag="v2")
    project = tmp_path / "project"
    project.mkdir()
    (project / "agentrc.yaml").write_text(HEAD)
    monkeypatch.chdir(project)
    return repo, project


def test_add_remove_and_update_write_the_project_files_sources(env, capsys):
    repo, project = env
    assert run(capsys, "add", f"{repo.url}@v1", "--bundle", "core")[0] == 0
    text = (project / "agentrc.yaml").read_text()
    assert text.startswith(HEAD)  # the comment and the other keys as written
    assert f'sources:\n  - source: "{repo.url}"\n    ref: "v1"\n    bundles: ["core"]\n' in text
    assert (project / ".claude" / "rules" / "style.md").exists()  # the project file's clients
    assert run(capsys, "add", f"{repo.url}@v1", "--item", "skill:review")[0] == 0
    assert 'bundles: ["core"]\n    items: ["skill:review"]\n' in (project / "agentrc.yaml").read_text()
    assert run(capsys, "update", "core", "review", "--ref", "v2")[0] == 0
    assert 'ref: "v2"' in (project / "agentrc.yaml").read_text()
    assert run(capsys, "remove", "core", "review")[0] == 0
    assert (project / "agentrc.yaml").read_text() == HEAD + "sources: []\n"


def test_install_installs_what_the_project_file_declares(env, capsys):
    repo, project = env
    (project / "agentrc.yaml").write_text(HEAD + f"sources:\n  - source: {repo.url}\n    ref: v1\n"
                                                  "    items: [\"rule:style\"]\n")
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "there is no lock" in err and not (project / LOCK).exists()
    code, _, err = run(capsys, "install")
    assert code == 0, err
    assert (project / ".claude" / "rules" / "style.md").exists() and (project / LOCK).exists()
    assert run(capsys, "install", "--check")[0] == 0
    assert run(capsys, "install", "--frozen")[0] == 0
    # Declared otherwise than locked: --frozen and --check stop at it, nothing written.
    (project / "agentrc.yaml").write_text(HEAD + f"sources:\n  - source: {repo.url}\n    ref: v2\n"
                                                  "    items: [\"rule:style\"]\n")
    before = (project / LOCK).read_bytes()
    for flag in ("--frozen", "--check"):
        code, _, err = run(capsys, "install", flag)
        assert code == 1 and f"{repo.url}@v1 is locked but not declared" in err, err
        assert f"{repo.url}@v2 is declared but not locked" in err
    assert (project / LOCK).read_bytes() == before


def test_init_in_a_project_with_a_lock_declares_what_it_locks(env, capsys):
    repo, project = env
    (project / "agentrc.yaml").unlink()
    assert run(capsys, "add", f"{repo.url}@v1", "--bundle", "core", "--client", "claude,copilot")[0] == 0
    for p in project.iterdir():
        if p.name not in (LOCK,):
            if p.is_dir():
                import shutil
                shutil.rmtree(p)
            else:
                p.unlink()
    assert run(capsys, "init")[0] == 0
    text = (project / "agentrc.yaml").read_text()
    assert "clients: [claude, copilot]" in text and 'bundles: ["core"]' in text
    assert run(capsys, "install", "--frozen")[0] == 0
