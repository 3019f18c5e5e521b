"""markdownlint-cli2 with its default rules (MD013 included) finds nothing in the lines
agentrc writes itself (issue 34 item 13).

tests/conformance/markdownlint.jsonc turns MD013 (line length 80) off for the example
registry, whose author prose is long and carried as written. agentrc's own sentences must
pass it anyway: here an agent with `preload-skills` (the `## Skills` section Copilot and
opencode get in the body, there being no frontmatter field for it) and short author prose
is built, and its entrypoints are linted with nothing but `"default": true`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conformance_helpers import ROOT, describe, run

AGENT = """---
schema: 1
name: reviewer
description: Use when reviewing a change
preload-skills:
  - review
  - release-notes
---

Review the change.
"""


def _skill(name: str) -> str:
    return f"---\nschema: 1\nname: {name}\ndescription: Use when doing {name}\n---\n\nDo {name}.\n"


def _build(tmp_path: Path) -> Path:
    reg = tmp_path / "reg"
    (reg / "agents" / "reviewer").mkdir(parents=True)
    (reg / "agents" / "reviewer" / "AGENT.md").write_text(AGENT, encoding="utf-8")
    for name in ("review", "release-notes"):
        (reg / "skills" / name).mkdir(parents=True)
        (reg / "skills" / name / "SKILL.md").write_text(_skill(name), encoding="utf-8")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", str(reg), "--client", "claude,copilot,opencode",
                           "--out", str(out)], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_agentrc_own_sentences_pass_the_default_rules(tmp_path: Path, markdownlint_bin: Path):
    out = _build(tmp_path)
    agents = [".github/agents/reviewer.agent.md", ".opencode/agents/reviewer.md"]
    for path in agents:
        text = (out / path).read_text(encoding="utf-8")
        assert "## Skills" in text and "- release-notes" in text, text  # the section under test is there
    files = agents + sorted(p.relative_to(out).as_posix() for p in out.rglob("SKILL.md"))
    config = tmp_path / "defaults.jsonc"
    config.write_text('{"default": true}\n', encoding="utf-8")

    proc = run([markdownlint_bin, "--config", config, "--", *files], cwd=out)

    assert proc.returncode == 0, describe(proc)
    assert f"Linting: {len(files)} file" in proc.stdout, describe(proc)


def test_the_default_rules_catch_a_long_line(tmp_path: Path, markdownlint_bin: Path):
    """The judge can fail: the one-line sentence agentrc wrote before is MD013 under the defaults."""
    old = ("# reviewer\n\nReview the change.\n\n## Skills\n\nThis agent relies on the following skills, "
           "installed alongside it. Use them when relevant:\n\n- review\n")
    (tmp_path / "old.md").write_text(old, encoding="utf-8")
    config = tmp_path / "defaults.jsonc"
    config.write_text('{"default": true}\n', encoding="utf-8")

    proc = run([markdownlint_bin, "--config", config, "--", "old.md"], cwd=tmp_path)

    assert proc.returncode != 0 and "MD013" in proc.stderr, describe(proc)
