"""The canonical front door (spec 000) as people use it: from the project root (`agentrc
build . --out .`), every key of every item accounted for, explicit degradation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrc.cli.main import main

# A small project with every layer kind: .ai/ (context, a rule, a command, an agent, a hook),
# a root AGENTS.md and ai.config.json.
PROJECT = {
    "ai.config.json": json.dumps({"context": {"global": "## From the config\n\nShip small changes.\n"},
                                  "mcp": {"servers": {"notes": {"command": "notes-mcp"}}}}),
    "AGENTS.md": "# Ledger service\n\nKeep the ledger balanced.\n",
    ".ai/AGENTS.md": "## Layer notes\n\nPrefer pure functions.\n",
    ".ai/rules/money/prompt.md": "---\ndescription: Money handling\nglobs: src/money/**\n---\n\nUse decimals.\n",
    ".ai/commands/tally/prompt.md": "---\ndescription: Tally the books\n---\n\nTally $ARGUMENTS.\n",
    ".ai/agents/auditor/prompt.md": "---\ndescription: Audits entries\n---\n\nCheck every entry.\n",
    ".ai/hooks/Stop/prompt.md": "echo balanced\n",
}


def write(root: Path, files) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def tree(root: Path):
    """Every file below `root` but the manifest (which records modification times)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".agentrc" not in p.parts}


# --- issue 10.2: `.` is the project --------------------------------------------------------

def test_build_dot_out_dot_equals_the_absolute_path_build(tmp_path, monkeypatch, capsys):
    here = write(tmp_path / "here", PROJECT)
    there = write(tmp_path / "there", PROJECT)
    monkeypatch.chdir(here)
    assert main(["build", ".", "--out", ".", "--client", "claude", "--no-cache"]) == 0
    monkeypatch.chdir(tmp_path)
    assert main(["build", str(there), "--out", str(there), "--client", "claude", "--no-cache"]) == 0
    capsys.readouterr()
    built = tree(here)
    assert built == tree(there)
    # The .ai/ layer is in: its command, hook, agent and context.
    assert ".claude/skills/tally/SKILL.md" in built and ".claude/agents/auditor.md" in built
    assert b"echo balanced" in built[".claude/settings.json"]
    assert b"Prefer pure functions." in built["AGENTS.md"]


def test_inspect_dot_equals_the_absolute_path_inspect(tmp_path, monkeypatch, capsys):
    root = write(tmp_path / "p", PROJECT)
    monkeypatch.chdir(root)
    assert main(["inspect", ".", "--json"]) == 0
    here = json.loads(capsys.readouterr().out)
    monkeypatch.chdir(tmp_path)
    assert main(["inspect", str(root), "--json"]) == 0
    there = json.loads(capsys.readouterr().out.replace(str(root) + "/", ""))
    here["project"] = there["project"]
    assert here == there
    assert set(here["commands"]) == {"tally"} and set(here["hooks"]) == {"Stop"}
    assert [p["layer"] for p in here["provenance"]["context.global"]] == [".ai", "AGENTS.md", "ai.config.json"]
    assert here["provenance"]["commands.tally"]["file"] == ".ai/commands/tally/prompt.md"


@pytest.mark.parametrize("target", [".", "./"])
def test_lint_dot_reads_the_ai_directory(tmp_path, monkeypatch, capsys, target):
    root = write(tmp_path / "p", dict(PROJECT, **{".ai/commands/empty/prompt.md": "---\ndescription: E\n---\n"}))
    monkeypatch.chdir(root)
    assert main(["lint", target]) == 1
    err = capsys.readouterr().err
    assert ".ai/commands/empty/prompt.md" in err and "[AR116]" in err
