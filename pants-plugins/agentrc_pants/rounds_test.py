"""A MultiGet in rounds (rounds.py) asks for everything, in order, a bounded number at once."""

from __future__ import annotations

from pathlib import Path

from pants.core.goals.package import Package

from agentrc_pants import rounds
from agentrc_pants.merging_test import _registry
from agentrc_pants.testutil import make_rule_runner


def test_rounds_cover_every_request_in_order_within_the_bound(monkeypatch):
    monkeypatch.setattr(rounds, "IN_FLIGHT", 10)
    assert rounds._rounds([]) == []
    assert rounds._rounds([1] * 25) == [(0, 10), (10, 20), (20, 25)]
    # Buckets weigh their members; one heavier than the bound is a round of its own.
    assert rounds._rounds([4, 4, 4, 30, 2, 9]) == [(0, 2), (2, 3), (3, 4), (4, 5), (5, 6)]


def _dist(runner) -> dict:
    tree = Path(runner.build_root, "dist")
    return {str(p.relative_to(tree)): p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()}


def test_a_package_in_small_rounds_is_the_package_in_one(monkeypatch):
    """The index's peeks, the sources' buckets and the item directories' buckets asked for
    three at a time give the same tree as all at once."""
    trees = []
    for bound in (rounds.IN_FLIGHT, 3):
        monkeypatch.setattr(rounds, "IN_FLIGHT", bound)
        runner = make_rule_runner()
        runner.write_files(_registry(40))
        result = runner.run_goal_rule(Package, args=["reg::"])
        assert result.exit_code == 0, result.stderr
        trees.append(_dist(runner))
    assert trees[0] == trees[1] and len(trees[0]) > 40
