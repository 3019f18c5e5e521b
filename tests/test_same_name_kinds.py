"""Items of different kinds with one name (spec 001 §2.1 co-locates a RULE.md and a
SKILL.md in one directory) build for every client: clients that write rules, commands or
agents as Agent Skills give the skill its name and the others `<name>-<kind>`."""

from __future__ import annotations

import shutil

import yaml

from agentrc.clients.base import skill_names
from agentrc.clients.registry import CLIENTS
from agentrc.inputs.tree import read_tree
from agentrc.model import Kind
from agentrc.pipeline import stages

FILES = {
    "reg/review/RULE.md": "---\ndescription: Review rules for every change.\n---\n\nReview carefully.\n",
    "reg/review/SKILL.md": "---\nname: review\ndescription: Run a review.\n---\n\nSee [the checklist](checklist.md).\n",
    "reg/review/checklist.md": "# Checklist\n\n- Tests pass.\n",
    "reg/review/COMMAND.md": "---\ndescription: Start a review.\n---\n\nReview $ARGUMENTS.\n",
    "reg/review/AGENT.md": "---\ndescription: A reviewer.\n---\n\nYou review code.\n",
}


def _tree(tmp_path):
    for rel, text in FILES.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return read_tree([str(tmp_path / "reg")]).tree


def test_every_client_builds_items_of_four_kinds_with_one_name(tmp_path):
    plan = stages.generate(_tree(tmp_path), sorted(CLIENTS))
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics if d.is_error)
    files = {f.path: f.content.decode() for f in plan.files}
    skills = sorted(p for p in files if p.startswith(".agents/skills/") and p.endswith("/SKILL.md"))
    assert set(skills) == {f".agents/skills/{n}/SKILL.md" for n in ("review", "review-agent", "review-command",
                                                                    "review-rule")}
    assert ".claude/skills/review-command/SKILL.md" in files and ".claude/skills/review/SKILL.md" in files
    for path in skills:  # Agent Skills: the name is the directory's
        fm = yaml.safe_load(files[path].split("---\n")[1])
        assert fm["name"] == path.split("/")[2]
    assert ".agents/skills/review/checklist.md" in files


def test_skill_names_keep_the_higher_kind_and_number_a_taken_suffix(tmp_path):
    loaded = stages.load(_tree(tmp_path))
    names = skill_names(loaded.registry.items)
    assert dict(names) == {("agent", "review"): "review-agent", ("command", "review"): "review-command",
                           ("rule", "review"): "review-rule"}
    # A name already taken by an item is never reused.
    shutil.copytree(tmp_path / "reg" / "review", tmp_path / "reg" / "review-rule")
    for p in (tmp_path / "reg" / "review-rule").iterdir():
        if p.name != "RULE.md":
            p.unlink()
    loaded = stages.load(read_tree([str(tmp_path / "reg")]).tree)
    assert dict(skill_names(loaded.registry.items))[("rule", "review")] == "review-rule-2"
    assert all(i.kind is not Kind.HOOK for i in loaded.registry.items)


def test_a_build_that_renames_reports_it(tmp_path):
    FILES_NAMED = dict(FILES)
    FILES_NAMED["reg/review/RULE.md"] = "---\nname: review\ndescription: Review rules.\n---\n\nReview.\n"
    for rel, text in FILES_NAMED.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    plan = stages.generate(read_tree([str(tmp_path / "reg")]).tree, ["codex"])
    report = next(r for r in plan.reports if (r.kind, r.name) == ("rule", "review"))
    name = next(f for f in report.fields if f.field == "name")
    assert name.status == "degraded" and "invoked as review-rule" in name.detail  # and AR261 says so
