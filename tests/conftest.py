"""Shared test setup: the core is imported from src/ (no install needed), goldens can be
regenerated with AGENTRC_REGEN_GOLDENS=1 (then review the diff)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

REGEN = os.environ.get("AGENTRC_REGEN_GOLDENS") == "1"


@pytest.fixture(autouse=True, scope="session")
def _isolated_build_cache(tmp_path_factory):
    """Builds in tests keep their memo in a temporary directory, never in ~/.cache."""
    old = os.environ.get("AGENTRC_CACHE_DIR")
    os.environ["AGENTRC_CACHE_DIR"] = str(tmp_path_factory.mktemp("agentrc-cache"))
    yield
    if old is None:
        os.environ.pop("AGENTRC_CACHE_DIR", None)
    else:
        os.environ["AGENTRC_CACHE_DIR"] = old


def compare_golden(path: Path, actual: str) -> None:
    """Assert `actual` equals the golden file, or rewrite it when regenerating."""
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden {path}; run with AGENTRC_REGEN_GOLDENS=1 and review it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path} differs; rerun with AGENTRC_REGEN_GOLDENS=1 and review the diff"
