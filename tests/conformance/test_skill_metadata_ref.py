"""skills-ref (`agentskills validate`) accepts a SKILL.md whose fields no client reads are
carried in the Agent Skills `metadata` map (issue 34 item 11), and refuses the same fields
at the top level: the judge can tell the two apart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conformance_helpers import ROOT, describe, run

SKILL = """---
schema: 1
name: notes
description: Use when drafting notes
team: platform
priority: 2
compatibility: Requires git
---

Draft the notes.
"""


def test_carried_fields_pass_the_reference_validator(tmp_path: Path, agentskills_bin: Path):
    reg = tmp_path / "reg" / "skills" / "notes"
    reg.mkdir(parents=True)
    (reg / "SKILL.md").write_text(SKILL, encoding="utf-8")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", str(tmp_path / "reg"), "--client",
                           "opencode,codex", "--out", str(out)], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skills = sorted(p.parent for p in out.rglob("notes/SKILL.md"))
    assert skills, sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    for skill in skills:
        text = (skill / "SKILL.md").read_text(encoding="utf-8")
        assert "metadata:" in text and "team: platform" in text, text
        checked = run([agentskills_bin, "validate", skill], cwd=out)
        assert checked.returncode == 0 and "Valid skill" in checked.stdout, describe(checked)

    top = tmp_path / "top" / "notes"
    top.mkdir(parents=True)
    (top / "SKILL.md").write_text("---\nname: notes\ndescription: Use when drafting notes\nteam: platform\n---\n\n"
                                  "Draft the notes.\n", encoding="utf-8")
    refused = run([agentskills_bin, "validate", top], cwd=tmp_path)
    assert refused.returncode != 0 and "team" in refused.stdout + refused.stderr, describe(refused)
