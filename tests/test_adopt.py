"""Adoption in one step (issue 32, item 3): `agentrc import DIR` reads every client whose files
the directory holds (or `--from a,b,c`) into one registry: what the clients share is kept once
(a skill in .claude/skills and .github/skills, the paragraphs CLAUDE.md imports from
AGENTS.md), what differs under one name is kept apart and said; and an import into a registry
an earlier import wrote adds to it, never deleting what that one brought."""

from __future__ import annotations

from pathlib import Path

import pytest

from sourcerepos import write

from agentrc.cli.main import main

SKILL = "---\nname: review\ndescription: Review code. Use when asked to review.\n---\n\nReview carefully.\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    write(tmp_path / "repo", {
        "CLAUDE.md": "# Project\n\nUse pnpm.\n\n@AGENTS.md\n",
        "AGENTS.md": "# Agents\n\nRun tests with pnpm test.\n\nKeep commits small.\n",
        ".claude/skills/review/SKILL.md": SKILL,
        ".github/skills/review/SKILL.md": SKILL,
        ".claude/agents/helper.md": "---\nname: helper\ndescription: Helps\n---\n\nHelp.\n",
        ".github/agents/helper.agent.md": "---\ndescription: Helps differently\n---\n\nHelp in another way.\n",
        ".cursor/rules/ts.mdc": "---\ndescription: TS style\nglobs: \"**/*.ts\"\nalwaysApply: false\n---\n\nStrict.\n",
    })
    return tmp_path / "repo"


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_one_import_reads_every_client_found(repo, tmp_path, capsys):
    out = tmp_path / "ai"
    code, text = run(capsys, "import", str(repo), "--out", str(out))
    assert code == 0, text
    assert "imported from claude,copilot,cursor,codex" in text
    assert sorted(p.parent.name for p in out.glob("skills/*/SKILL.md")) == ["review"]  # the same skill once
    # the same name with different content: both kept, the later one named after its client, said so
    assert sorted(p.parent.name for p in out.glob("agents/*/AGENT.md")) == ["helper", "helper-copilot"]
    assert "kept apart as helper-copilot" in text
    context = (out / "context/project/CONTEXT.md").read_text()
    assert context.count("Run tests with pnpm test.") == 1 and "Use pnpm." in context
    assert (out / "rules/ts/RULE.md").is_file()
    assert run(capsys, "lint", str(out))[0] == 0


def test_from_takes_a_list_and_unknown_names_are_usage_errors(repo, tmp_path, capsys):
    out = tmp_path / "ai"
    assert run(capsys, "import", str(repo), "--from", "claude,cursor", "--out", str(out))[0] == 0
    assert (out / "rules/ts/RULE.md").is_file() and not (out / "agents/helper-copilot").exists()
    code, text = run(capsys, "import", str(repo), "--from", "claude,cursr", "--out", str(out))
    assert code == 2 and "cursr" in text


def test_a_second_import_adds_to_the_first(repo, tmp_path, capsys):
    out = tmp_path / "ai"
    assert run(capsys, "import", str(repo), "--from", "claude", "--out", str(out))[0] == 0
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*.md"))
    code, text = run(capsys, "import", str(repo), "--from", "cursor", "--out", str(out))
    assert code == 0 and " 0 deleted" in text, text
    after = sorted(str(p.relative_to(out)) for p in out.rglob("*.md"))
    assert set(before) < set(after) and "rules/ts/RULE.md" in after
    bundle = (out / "imported.bundle.yaml").read_text()
    assert "- review" in bundle and "- helper" in bundle and "- ts" in bundle
    assert (out / "context/project/CONTEXT.md").read_text().count("Keep commits small.") == 1
    assert run(capsys, "lint", str(out))[0] == 0


def test_a_directory_without_client_files_needs_from(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, text = run(capsys, "import", str(tmp_path / "empty"), "--out", str(tmp_path / "ai"))
    assert code == 2 and "no client files found" in text


def test_the_first_in_place_build_adopts_what_the_import_read(repo, capsys, monkeypatch):
    """The first `build . --out .` after an import meets the hand-written files it replaces:
    AR091 names --adopt, and --adopt hands them to agentrc, the context once (no hand-written
    copy beside the block); the next build has nothing to do."""
    monkeypatch.chdir(repo)
    assert run(capsys, "import", ".", "--from", "claude", "--out", "ai")[0] == 0
    code, text = run(capsys, "build", "ai", "--out", ".", "--client", "claude,codex")
    assert code == 1 and "AR091" in text and "--adopt" in text
    code, text = run(capsys, "build", "ai", "--out", ".", "--client", "claude,codex", "--adopt")
    assert code == 0, text
    agents = (repo / "AGENTS.md").read_text()
    assert agents.count("Keep commits small.") == 1 and agents.startswith("<!-- agentrc:begin")
    assert "Use pnpm." not in (repo / "CLAUDE.md").read_text().split("<!-- agentrc:begin")[0]
    assert "Review carefully." in (repo / ".claude/skills/review/SKILL.md").read_text()
    code, text = run(capsys, "build", "ai", "--out", ".", "--client", "claude,codex")
    assert code == 0 and "0 created, 0 updated, 0 deleted" in text, text


def test_a_new_import_of_the_same_client_replaces_what_it_wrote_last_time(repo, tmp_path, capsys):
    out = tmp_path / "ai"
    assert run(capsys, "import", str(repo), "--from", "claude", "--out", str(out))[0] == 0
    assert run(capsys, "import", str(repo), "--from", "cursor", "--out", str(out))[0] == 0
    (repo / ".claude/agents/helper.md").unlink()
    code, text = run(capsys, "import", str(repo), "--from", "claude", "--out", str(out))
    assert code == 0 and " deleted" in text, text
    assert not (out / "agents/helper").exists()  # gone from .claude: gone from the registry
    assert (out / "rules/ts/RULE.md").is_file()  # cursor's import stays
    bundle = (out / "imported.bundle.yaml").read_text()
    assert "helper" not in bundle and "- ts" in bundle
    assert run(capsys, "lint", str(out))[0] == 0
