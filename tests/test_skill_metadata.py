"""A skill's fields no client reads reach every client in the Agent Skills `metadata` map
(issue 34 item 11): strings as written (mapped), other scalars as their YAML text
(degraded), lists and maps dropped with AR092 and the reason; fields some client reads
stay that client's business; the shared copies stay byte for byte alike."""

from __future__ import annotations

import importlib
from pathlib import Path

import yaml

from agentrc.clients import names
from agentrc.clients.registry import CLIENTS
from agentrc.model import Kind
from agentrc.inputs.tree import read_tree
from agentrc.pipeline import stages

SKILL = """---
schema: 1
name: notes
description: Use when drafting notes
team: platform
priority: 2
reviewed: true
owners:
  - ana
  - bo
compatibility: Requires git
---

Draft the notes.
"""


def _registry(root: Path, text: str = SKILL) -> Path:
    d = root / "reg" / "skills" / "notes"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(text, encoding="utf-8")
    return root / "reg"


def _frontmatter(text: str) -> dict:
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])


def _plan(reg: Path, clients):
    plan = stages.generate(read_tree([str(reg)]).tree, list(clients), None)
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    return plan


def test_every_client_carries_unread_fields_in_metadata(tmp_path):
    """Every client that writes skills; one without (Aider: no skills at all) reports each
    field dropped with the skill, which tests of its own cover."""
    reg = _registry(tmp_path)
    writers = [c for c in sorted(CLIENTS) if Kind.SKILL in CLIENTS[c].kinds]
    assert len(writers) >= 15, writers
    for client in writers:
        plan = _plan(reg, [client])
        skills = [f for f in plan.files if f.path.endswith("/notes/SKILL.md")]
        assert skills, (client, [f.path for f in plan.files])
        for f in skills:
            fm = _frontmatter(f.content.decode())
            assert fm["metadata"] == {"team": "platform", "priority": "2", "reviewed": "true"}, (client, fm)
            assert not {"team", "priority", "reviewed", "owners"} & set(fm), (client, fm)
        report = next(r for r in plan.reports if (r.kind, r.name) == ("skill", "notes"))
        fields = {o.field: (o.status, o.detail) for o in report.fields}
        assert fields["team"][0] == "mapped" and "metadata.team" in fields["team"][1], (client, fields)
        assert fields["priority"][0] == "degraded" and "'2'" in fields["priority"][1], (client, fields)
        assert fields["reviewed"][0] == "degraded"
        assert fields["owners"][0] == "dropped" and "holds strings only" in fields["owners"][1], (client, fields)
        warned = {d.message.split(": ", 2)[-1].split(" dropped")[0] for d in plan.diagnostics if d.code == "AR092"}
        assert warned & {"team", "priority", "reviewed", "owners"} == {"owners"}, (client, warned)


def test_a_field_some_client_reads_is_not_moved(tmp_path):
    """`argument-hint` is Claude Code's and Copilot's: opencode drops it as before, and
    nothing goes into metadata."""
    reg = _registry(tmp_path, SKILL.replace("team: platform\npriority: 2\nreviewed: true\nowners:\n  - ana\n  - bo\n",
                                            "argument-hint: \"<file>\"\n"))
    plan = _plan(reg, ["opencode", "claude"])
    by_path = {f.path: _frontmatter(f.content.decode()) for f in plan.files if f.path.endswith("SKILL.md")}
    assert by_path[".claude/skills/notes/SKILL.md"]["argument-hint"] == "<file>"
    assert "metadata" not in by_path[".opencode/skills/notes/SKILL.md"]
    report = next(r for r in plan.reports if (r.client, r.kind) == ("opencode", "skill"))
    assert {o.field: o.status for o in report.fields}["argument-hint"] == "dropped"


def test_shared_copies_stay_one_file(tmp_path):
    """Every writer of the shared .agents/skills writes the same metadata: one file."""
    reg = _registry(tmp_path)
    plan = _plan(reg, ["codex", "gemini", "openclaw", "hermes"])
    shared = [f for f in plan.files if f.path == ".agents/skills/notes/SKILL.md"]
    assert len(shared) == 1
    assert _frontmatter(shared[0].content.decode())["metadata"]["team"] == "platform"


def test_a_block_s_metadata_key_wins_and_the_rest_merge(tmp_path):
    reg = _registry(tmp_path, SKILL.replace("compatibility: Requires git\n",
                                            "openclaw:\n  metadata:\n    team: gating\n    openclaw:\n"
                                            "      requires:\n        bins: [gh]\n"))
    plan = _plan(reg, ["openclaw"])
    fm = _frontmatter(next(f.content.decode() for f in plan.files if f.path.endswith("notes/SKILL.md")))
    assert fm["metadata"] == {"team": "gating", "openclaw": {"requires": {"bins": ["gh"]}}, "priority": "2",
                              "reviewed": "true"}
    report = next(r for r in plan.reports if (r.kind, r.name) == ("skill", "notes"))
    team = next(o for o in report.fields if o.field == "team")
    assert team.status == "dropped" and "which wins" in team.detail


def test_the_fields_read_are_the_adapters_own():
    registry = importlib.import_module("agentrc.clients.registry")
    hermes = importlib.import_module("agentrc.clients.hermes")
    openclaw = importlib.import_module("agentrc.clients.openclaw")
    read = set().union(*(a.skill_fields for a in registry.ADAPTERS))
    assert names.SKILL_FIELDS_READ == read | hermes.HERMES_SKILL_KEYS | openclaw.OPENCLAW_SKILL_KEYS


def test_a_date_reaches_metadata_as_written(tmp_path):
    """agentrc's YAML reading keeps a date as the text it was written as (no timestamps):
    carried so; a date object (another front door's loader) as its ISO text."""
    import datetime

    from agentrc.clients import skillmeta

    reg = _registry(tmp_path, SKILL.replace("team: platform\n", "team: platform\nreviewed-on: 2025-01-31\n"
                                            "synced-at: 2025-01-31 10:20:30\n"))
    plan = _plan(reg, ["claude"])
    skill = next(f for f in plan.files if f.path.endswith("/notes/SKILL.md"))
    meta = _frontmatter(skill.content.decode())["metadata"]
    assert meta["reviewed-on"] == "2025-01-31" and meta["synced-at"] == "2025-01-31 10:20:30", meta
    assert skillmeta._as_text(datetime.date(2025, 1, 31)) == "2025-01-31"
    assert skillmeta._as_text(datetime.datetime(2025, 1, 31, 10, 20, 30)) == "2025-01-31T10:20:30"
