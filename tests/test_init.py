"""`agentrc init` (issue 32, item 2): in an empty directory, a project file and one sample of
each kind that lints clean and builds; in a repository with client files, what it found,
imported on `--import` (or `y` at a terminal), never a file overwritten; and the first hour
measured as a user lives it: `pip install .` of this checkout in a fresh venv, `agentrc init`,
`agentrc build` for two clients, at a real terminal (tmux), in under a minute."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.clients import names as client_names

ROOT = Path(__file__).resolve().parents[1]


def test_init_in_an_empty_directory_lints_clean_and_builds_for_every_client(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    err = capsys.readouterr().err
    assert "wrote agentrc.yaml and samples in ai/" in err and "ignore: .agentrc/" in err
    kinds = sorted(p.parent.parent.name for p in (tmp_path / "ai").rglob("*.md"))
    assert kinds == ["agents", "commands", "context", "hooks", "rules", "skills"]
    assert os.access(tmp_path / "ai" / "hooks" / "announce" / "announce.sh", os.X_OK)
    assert main(["lint"]) == 0
    assert "0 error(s), 0 warning(s)" in capsys.readouterr().err
    assert main(["fmt", "--check"]) == 0
    assert main(["build"]) == 0, capsys.readouterr().err
    assert (tmp_path / ".claude" / "skills" / "summarize-changes" / "SKILL.md").exists()
    assert (tmp_path / ".github" / "agents").is_dir()
    assert main(["build", "--out", "all", "--client", ",".join(client_names.CLIENTS)]) == 0
    assert "error" not in capsys.readouterr().err.replace("0 error(s)", "")
    # A second init writes nothing.
    before = (tmp_path / "agentrc.yaml").read_bytes()
    assert main(["init"]) == 1 and (tmp_path / "agentrc.yaml").read_bytes() == before


def test_init_takes_the_clients_and_refuses_unknown_ones(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "proj", "--client", "claude,cursor"]) == 0
    assert "clients: [claude, cursor]" in (tmp_path / "proj" / "agentrc.yaml").read_text()
    assert main(["init", "other", "--client", "claud"]) == 2
    assert not (tmp_path / "other").exists()


def _existing(root: Path) -> None:
    (root / ".claude" / "skills" / "deploy").mkdir(parents=True)
    (root / ".claude" / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Use when deploying\n---\n\nRun the deploy script.\n")
    (root / "CLAUDE.md").write_text("# Project\n\nUse pnpm.\n")
    (root / ".cursor" / "rules").mkdir(parents=True)
    (root / ".cursor" / "rules" / "style.mdc").write_text("---\ndescription: Style\nalwaysApply: true\n---\n\nBe brief.\n")


def test_init_in_a_repository_with_client_files_lists_them_and_imports_on_request(tmp_path, monkeypatch, capsys):
    _existing(tmp_path)
    monkeypatch.chdir(tmp_path)
    keep = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert main(["init"]) == 0  # no terminal: nothing imported, the command printed
    err = capsys.readouterr().err
    assert "claude: CLAUDE.md, .claude/skills/deploy/SKILL.md" in err and "cursor: .cursor/rules/style.mdc" in err
    assert "copilot:" not in err  # Copilot reads CLAUDE.md, but nothing of its own is here
    assert "not imported (no terminal to ask)" in err and not (tmp_path / "ai").exists()
    assert all(p.read_bytes() == data for p, data in keep.items())
    (tmp_path / "agentrc.yaml").unlink()
    assert main(["init", "--import"]) == 0, capsys.readouterr().err
    # every client found, into one registry: Claude's skill and Cursor's rule
    assert (tmp_path / "ai" / "skills" / "deploy" / "SKILL.md").exists()
    assert (tmp_path / "ai" / "rules" / "style" / "RULE.md").exists()
    assert "'agentrc build --adopt'" in capsys.readouterr().err
    assert all(p.read_bytes() == data for p, data in keep.items())
    (tmp_path / "agentrc.yaml").unlink()
    shutil.rmtree(tmp_path / "ai")
    assert main(["init", "--no-import", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["wrote"] == ["agentrc.yaml"] and doc["imported"] == []
    assert sorted(doc["found"]) == ["claude", "cursor"] and doc["next"] == ["agentrc build", "agentrc lint"]


def _wait(session: str, needle: str, seconds: float) -> str:
    screen = ""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-J", "-t", session], capture_output=True,
                                text=True).stdout
        if needle in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} not on the screen after {seconds} s:\n{screen}")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_first_hour_at_a_terminal_takes_under_a_minute(tmp_path):
    """pip install . in a fresh venv, then init and build for two clients, typed into a real
    terminal: from the first key to the built skill in under 60 seconds."""
    venv, work = tmp_path / "venv", tmp_path / "project"
    work.mkdir()
    session = f"agentrc-first-hour-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "220", "-y", "50", "-c", str(work)],
                   check=True, env=env)
    start = time.monotonic()
    try:
        steps = [f"{sys.executable} -m venv {venv} && {venv}/bin/pip install -q {ROOT} && echo INSTALLED",
                 f"{venv}/bin/agentrc init --client claude,copilot && echo INITED",
                 f"{venv}/bin/agentrc build && echo BUILT"]
        for step, needle, limit in zip(steps, ("INSTALLED", "INITED", "BUILT"), (55, 10, 10)):
            subprocess.run(["tmux", "send-keys", "-t", session, step, "Enter"], check=True)
            _wait(session, "\n" + needle, limit)
        took = time.monotonic() - start
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert (work / ".claude" / "skills" / "summarize-changes" / "SKILL.md").exists()
    assert (work / ".github" / "agents").is_dir()  # Copilot's own files; its skills are Claude's one copy
    assert took < 60, f"the first hour took {took:.1f} s"
