"""`agentskills validate` (skills-ref, the Agent Skills reference validator) accepts the
generated skills.

* opencode output must carry only the standard Agent Skills frontmatter keys, so every
  skill under .opencode/skills is validated.
* Claude Code and Copilot skills may legitimately carry client extensions (for example
  `argument-hint`, `disable-model-invocation`), which the reference validator rejects as
  unknown keys. Those skills are skipped with the reason; the rest are validated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest

from .conformance_helpers import STANDARD_SKILL_KEYS, describe, read_frontmatter, run


def test_agentskills_validate(skill_dir: Optional[str], build: Path, agentskills_bin: Path):
    assert skill_dir is not None, "the build generated no skills for any client"
    client, relpath = skill_dir.split(":", 1)
    path = build / relpath
    keys = set(read_frontmatter(path / "SKILL.md"))
    extra = sorted(keys - STANDARD_SKILL_KEYS)
    if extra and client != "opencode":
        pytest.skip(
            f"{relpath}/SKILL.md uses {client}-specific frontmatter keys {extra}; the reference validator "
            f"accepts only the standard keys {sorted(STANDARD_SKILL_KEYS)}"
        )

    proc = run([agentskills_bin, "validate", path], cwd=build)

    assert proc.returncode == 0 and "Valid skill" in proc.stdout, describe(proc)
