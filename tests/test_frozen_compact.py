"""FrozenMap keeps one dict, not a tuple of pairs beside it (issue 13: the parsed items of
a cold build at 5,000 items held 36,000 of them); what it means, hashes and pickles to is
unchanged."""

from __future__ import annotations

import gc
import pickle
import tracemalloc

from agentrc.frozen import FrozenMap, _restore, freeze, thaw


def _frontmatter(i: int) -> dict:
    return {"name": f"n{i}", "description": "d", "tools": ["a", "b"], "x": i, "meta": {"k": "v"}}


def test_frozen_frontmatter_takes_less_memory():
    """10,000 frontmatters (20,000 maps): 11 MB with the pairs kept beside the dict, 6.3 MB
    without; the bound sits between the two."""
    data = [_frontmatter(i) for i in range(10_000)]
    gc.collect()
    tracemalloc.start()
    try:
        frozen = [freeze(d) for d in data]
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 8_500_000, held
    assert [thaw(f) for f in frozen] == data


def test_meaning_hash_and_pickle_are_unchanged():
    fm = freeze({"b": 1, "a": [1, {"c": None}], "d": True})
    assert list(fm) == ["b", "a", "d"] and list(fm.items()) == [("b", 1), ("a", (1, FrozenMap({"c": None}))),
                                                                 ("d", True)]
    assert fm == {"b": 1, "a": (1, {"c": None}), "d": True} and fm != {"b": 1}
    assert hash(fm) == hash(tuple(fm.items()))  # as the tuple of pairs hashed
    assert fm.get("a") == (1, FrozenMap({"c": None})) and fm.get("z", 5) == 5 and "d" in fm and "z" not in fm
    # Pickled as the pairs, as earlier versions were: their memos read back the same.
    assert fm.__reduce__() == (_restore, (tuple(fm.items()),))
    back = pickle.loads(pickle.dumps(fm))
    assert back == fm and list(back) == list(fm) and hash(back) == hash(fm)
    assert FrozenMap([("x", 1), ("y", 2)]) == FrozenMap({"x": 1, "y": 2}) == FrozenMap(FrozenMap({"x": 1, "y": 2}))
    assert len(FrozenMap()) == 0 and repr(FrozenMap({"a": 1})) == "FrozenMap({'a': 1})"
