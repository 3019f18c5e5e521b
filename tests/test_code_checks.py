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


def _complex(stdout: str) -> set:
    """`path:function:code` of each C901 (complexity over 10) and PLR0915 (over 50 statements)
    finding in ruff's JSON: the function is the one defined at the finding's line."""
    import ast
    import json

    found = set()
    for finding in json.loads(stdout or "[]"):
        path = finding["filename"]
        row = finding["location"]["row"]
        tree = ast.parse(open(path, encoding="utf-8").read())
        name = next((n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.lineno == row), f"line {row}")
        found.add(f"{os.path.relpath(path, str(ROOT))}:{name}:{finding['code']}")
    return found


def test_no_new_complex_function():
    """Ruff's complexity and statement-count rules (C901 at 10, PLR0915 at 50) as a ratchet
    (issue 20): today's findings are listed in tests/code_shape_known.py (COMPLEX) and may
    only go; a new one fails."""
    from code_shape_known import COMPLEX

    proc = _run("ruff", "check", "--no-cache", "--select", "C901,PLR0915", "--output-format", "json",
                "src", "pants-plugins")
    found = _complex(proc.stdout)
    new = sorted(found - COMPLEX)
    assert not new, f"too complex or too long (split them into named steps): {new}"
    gone = sorted(COMPLEX - found)
    assert not gone, f"no longer too complex: drop them from tests/code_shape_known.py COMPLEX: {gone}"
