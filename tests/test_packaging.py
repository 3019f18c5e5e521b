"""`pip install .` gives a working `agentrc` with its JSON Schemas (checked on a wheel)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

from helpers import ROOT


def test_wheel_has_console_script_and_schemas(tmp_path):
    project = tmp_path / "project"  # a copy: building writes build/ and *.egg-info beside the sources
    project.mkdir()
    shutil.copy(ROOT / "pyproject.toml", project)
    shutil.copy(ROOT / "README.md", project)
    shutil.copytree(ROOT / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(project)],
                   check=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                                  "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    wheel = next(tmp_path.glob("agentrc-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "agentrc/schemas/item.schema.json" in names
    assert "agentrc/schemas/bundle.schema.json" in names
    # agentrc's own texts for the kernel's part of an instance home (cap spawn, cap doctor).
    for name in ("oas", "local-soul", "instance-boundary", "work-checkout", "work-worktree", "work-attached",
                 "work-workspace"):
        assert f"agentrc/data/injects/{name}.md" in names, name
    for skill in ("oas", "oas-config", "oas-packages"):
        assert f"agentrc/data/skills/{skill}/SKILL.md" in names, skill
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "agentrc = agentrc.cli.entry:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
