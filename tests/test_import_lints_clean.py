"""What `agentrc import` writes lints clean (issue 10 point 12): an item whose portable form
still fails lint is left out with AR132 and the rest is written; `--strict` keeps the lint
errors, so nothing is written."""

from __future__ import annotations

from agentrc.importers import document as importer
from agentrc.model import SourceTree
from agentrc.pipeline import importing, stages

# The importers never produce a name lint rejects (they slug names, AR130); a document
# written by hand can, which is what reaches the last line of defence here.
DOC = {
    "rules": {
        "style": {"content": "Use four spaces.\n"},
        "Bad Name": {"content": "Never written.\n"},
    },
    "skills": {
        "Also Bad": {"description": "d", "content": "Body.\n", "references": {"notes.md": "n\n"}},
        "review": {"description": "Review code", "content": "Body.\n"},
    },
}


def _paths(tree: SourceTree):
    return sorted(f.path for f in tree.files)


def test_an_item_that_fails_lint_is_left_out_and_the_rest_lints_clean():
    tree, diags = importing.portable_that_lints(DOC, {}, "registry", "registry/imported.bundle.yaml")
    assert _paths(tree) == ["imported.bundle.yaml", "rules/style/RULE.md", "skills/review/SKILL.md"]
    skipped = [d for d in diags if d.code == "AR132"]
    assert [(d.severity, d.path) for d in skipped] == [
        ("warning", "registry/rules/Bad Name/RULE.md"), ("warning", "registry/skills/Also Bad/SKILL.md")]
    assert "rule Bad Name is not imported" in skipped[0].message and "AR010" in skipped[0].message
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    bundle = next(f for f in tree.files if f.path == "imported.bundle.yaml").content.decode()
    assert "Bad Name" not in bundle and "Also Bad" not in bundle and "style" in bundle
    _, lint = stages.lint(importer.relative(tree, "registry"))
    assert not any(d.is_error for d in lint)


def test_strict_keeps_the_lint_errors():
    tree, diags = importing.portable_that_lints(DOC, {}, "registry", "registry/imported.bundle.yaml", strict=True)
    assert "rules/Bad Name/RULE.md" in _paths(tree)
    assert {d.code for d in diags if d.is_error} >= {"AR010"}
    assert not any(d.code == "AR132" for d in diags)


def test_a_clean_document_is_written_whole_in_one_round():
    clean = {"rules": {"style": DOC["rules"]["style"]}, "skills": {"review": DOC["skills"]["review"]}}
    tree, diags = importing.portable_that_lints(clean, {}, ".", "imported.bundle.yaml")
    assert _paths(tree) == ["imported.bundle.yaml", "rules/style/RULE.md", "skills/review/SKILL.md"]
    assert not any(d.code == "AR132" or d.is_error for d in diags)
