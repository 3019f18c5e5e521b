"""Memo entries survive the JSON form used across process boundaries, exactly."""

from __future__ import annotations

import pytest

from helpers import ROOT

from agentrc.memo import codec as memocodec

from agentrc.pipeline import warm as parallel
from agentrc.inputs.tree import read_tree


def test_examples_entries_round_trip(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    entries = parallel.entries(tree, ["claude", "copilot", "opencode"])
    assert len(entries) == 19 + 20 * 3
    again = memocodec.loads(memocodec.dumps(entries))
    assert again == entries
    # Equality alone would not catch a Kind decoded as a plain str (Kind is a str enum).
    items = [i for key, value in again.items() if key[0] == "dir" for i in value[0]]
    assert items and all(type(i.kind).__name__ == "Kind" for i in items)
    assert all(type(r.kind).__name__ == "Kind" for i in items for r in i.requires)


def test_only_model_classes_are_rebuilt():
    with pytest.raises(KeyError):
        memocodec.loads(b'[[["x"], {"d": "Popen", "f": {}}]]')
