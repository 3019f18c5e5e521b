"""Spec 000 and the format (issue 34 items 12 to 14): the `## Skills` sentence read back in
both its forms, override suffixes for every client, hooks' `index.json` as an array."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrc.clients.base import SKILLS_INTRO
from agentrc.clients.registry import CLIENTS
from agentrc.codes import CODES
from agentrc.importers.cleanup import split_skills_section
from agentrc.inputs.tree import read_tree
from agentrc.pipeline import stages


def test_the_skills_sentence_is_wrapped_and_both_forms_read_back():
    assert all(len(line) <= 80 for line in SKILLS_INTRO)
    new = "Do it.\n\n## Skills\n\n" + "\n".join(SKILLS_INTRO) + "\n\n- review\n- release-notes\n"
    old = ("Do it.\n\n## Skills\n\nThis agent relies on the following skills, installed alongside it. "
           "Use them when relevant:\n\n- review\n")
    assert split_skills_section(new) == ("Do it.\n", ["review", "release-notes"])
    assert split_skills_section(old) == ("Do it.\n", ["review"])
    # Neither form spread over other lines, nor an author's own section, is taken.
    other = "Do it.\n\n## Skills\n\nThis agent relies on the following skills,\ninstalled alongside it.\n\n- x\n"
    assert split_skills_section(other) == (other, [])


def _override_registry(root: Path) -> Path:
    """A rule for everyone, with an override for every client agentrc has."""
    d = root / "reg" / "rules" / "style"
    d.mkdir(parents=True)
    (d / "RULE.md").write_text("---\nschema: 1\nname: style\ndescription: Use when writing code\n---\n\n"
                               "CANONICAL-BODY for everyone.\n", encoding="utf-8")
    for client in CLIENTS:
        (d / f"RULE.{client}.md").write_text(f"OVERRIDE-{client} only.\n", encoding="utf-8")
    return root / "reg"


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_an_override_suffix_of_each_client_is_its_body(tmp_path, client):
    """Spec 001 §2.3 names claude, copilot and opencode; agentrc takes every client's suffix
    (RULE.codex.md, RULE.cursor.md, ...), and that client gets the override verbatim."""
    reg = _override_registry(tmp_path)
    plan = stages.generate(read_tree([str(reg)]).tree, [client], None)
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    text = "".join(f.content.decode("utf-8", "replace") for f in plan.files)
    assert f"OVERRIDE-{client} only." in text
    assert "CANONICAL-BODY" not in text and text.count("OVERRIDE-") == 1, text


def test_an_unknown_override_suffix_is_ar041_naming_every_client(tmp_path):
    reg = _override_registry(tmp_path)
    (reg / "rules" / "style" / "RULE.vim.md").write_text("Vim.\n", encoding="utf-8")
    plan = stages.generate(read_tree([str(reg)]).tree, ["claude"], None)
    found = [d for d in plan.diagnostics if d.code == "AR041"]
    assert len(found) == 1 and found[0].path.endswith("RULE.vim.md")
    assert all(name in found[0].message for name in CLIENTS)
    assert "<KIND>.<client>.md" in CODES["AR041"].hint
