"""agentrc's own code is checked like its output: ruff (pyflakes, isort, pycodestyle at
120 columns) and mypy (as Python 3.9, against the Pants venv's packages) over `src/` and
`pants-plugins/`. The checkers live in .tools/code-check-venv (tools/install.sh); the
settings are in pyproject.toml."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import ROOT

BIN = ROOT / ".tools" / "code-check-venv" / "bin"


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    exe = BIN / tool
    if not exe.exists():
        if os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1":
            pytest.fail(f"{exe} is missing: run tools/install.sh")
        pytest.skip(f"{tool} not installed (tools/install.sh)")
    return subprocess.run([str(exe), *args], cwd=str(ROOT), capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    proc = _run("ruff", "check", "--no-cache", "src", "pants-plugins")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_finds_nothing():
    proc = _run("mypy", "--python-executable", sys.executable, "--cache-dir", str(ROOT / ".tools" / "mypy-cache"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
