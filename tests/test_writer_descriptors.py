"""The writer keeps a bounded number of directory descriptors open (issue 13: a build of
10,000 items failed with "Too many open files"; each of its 20,000+ output directories kept
a descriptor). Built here under a limit of 160 open files, into several hundred directories:
cold, no change, one edit and dropping a client all succeed, and the tree equals one built without
the limit."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from helpers import ROOT
from test_bench_registry import _generator

from agentrc.output import writer

LIMIT = 160
CLIENTS = "claude,copilot,opencode"


def _build(registry: Path, out: Path, limit: bool, clients: str = CLIENTS) -> subprocess.CompletedProcess:
    def lower() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, hard))

    return subprocess.run([sys.executable, "-m", "agentrc", "build", str(registry), "--client", clients,
                           "--out", str(out), "--jobs", "1"],
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), capture_output=True, text=True,
                          preexec_fn=lower if limit else None, timeout=600)


def _tree(root: Path):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".agentrc" not in p.parts}


def test_a_build_into_more_directories_than_open_files_allowed_succeeds(tmp_path):
    registry = tmp_path / "reg"
    _generator().generate(str(registry), 240, seed=5)
    out, free = tmp_path / "out", tmp_path / "free"
    first = _build(registry, out, limit=True)
    assert first.returncode == 0, first.stderr[-2000:]
    dirs = sum(1 for p in out.rglob("*") if p.is_dir())
    assert dirs > LIMIT * 2, dirs  # one descriptor per directory could not have fit
    assert _build(registry, out, limit=True).returncode == 0  # no change
    rule = next(registry.glob("rules/*/RULE.md"))
    rule.write_text(rule.read_text() + "\nOne more line.\n")
    edited = _build(registry, out, limit=True)
    assert edited.returncode == 0, edited.stderr[-2000:]
    # One client fewer: its files deleted, its directories pruned, under the same limit.
    fewer = _build(registry, out, limit=True, clients="claude,copilot")
    assert fewer.returncode == 0, fewer.stderr[-2000:]
    assert not (out / ".opencode").exists()
    assert _build(registry, free, limit=False, clients="claude,copilot").returncode == 0
    assert _tree(out) == _tree(free)


def test_the_descriptor_cache_closes_the_least_recently_used(tmp_path):
    for i in range(40):
        (tmp_path / f"d{i}" / "x").mkdir(parents=True)
    tree = writer._Tree(str(tmp_path), most=8)
    try:
        for i in range(40):
            assert tree.dir(f"d{i}/x") is not None
            assert len(tree.fds) <= 8
        assert tree.opened == 80
        tree.held.add("d39/x")
        for i in range(10):
            tree.dir(f"d{i}")
        assert "d39/x" in tree.fds and "" in tree.fds  # held and pinned stay open
    finally:
        tree.close()


def test_reopened_directories_stay_a_constant_factor_of_the_tree(tmp_path, monkeypatch):
    """With a cache of 32 descriptors, a cold build and a no-change build open each output
    directory a bounded number of times (one per pass of the writer over the tree), not a
    number that grows with the tree."""
    from agentrc.cli.main import main

    registry = tmp_path / "reg"
    _generator().generate(str(registry), 70, seed=5)
    opened = []
    real = writer._Tree.__init__

    def small_cache(self, root, most=None):
        real(self, root, 32)
        opened.append(self)

    monkeypatch.setattr(writer._Tree, "__init__", small_cache)
    out = tmp_path / "out"
    assert main(["build", str(registry), "--client", CLIENTS, "--out", str(out), "--jobs", "1"]) == 0
    dirs = sum(1 for p in out.rglob("*") if p.is_dir())
    assert dirs > 100
    assert sum(t.opened for t in opened) <= 4 * dirs, (sum(t.opened for t in opened), dirs)

