"""`agentrc.text.jsonindent.dumps` writes what `json.dumps(indent=2, sort_keys=True,
ensure_ascii=False)` writes, byte for byte (the lock is written with it): random nested
values, every scalar json knows, and values it leaves to json itself."""

from __future__ import annotations

import json
import random

import pytest

from agentrc.text import jsonindent

_TEXTS = ["", "a", "ünïcödé", "quote \" and \\ back", "tab\tnew\nline", "\x00\x1f control", "emoji 😀",
          "\u2028 separators \u2029", "lone \ud800 surrogate"]


def _value(rng: random.Random, depth: int):
    pick = rng.randrange(10 if depth < 4 else 6)
    if pick == 0:
        return rng.choice(_TEXTS) + str(rng.randrange(100))
    if pick == 1:
        return rng.choice([None, True, False])
    if pick == 2:
        return rng.randrange(-10**20, 10**20)
    if pick == 3:
        return rng.choice([0.0, -0.0, 1.5, 1e300, -2.5e-8, float("nan"), float("inf"), float("-inf"), 0.1])
    if pick == 4:
        return rng.choice([{}, [], ()])
    if pick == 5:
        return rng.choice(_TEXTS)
    if pick in (6, 7):
        return {rng.choice(_TEXTS) + str(i): _value(rng, depth + 1) for i in range(rng.randrange(6))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(6))]


def _json(value) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize("seed", range(40))
def test_the_same_text_as_json_for_random_values(seed):
    rng = random.Random(seed)
    for _ in range(25):
        value = _value(rng, 0)
        assert jsonindent.dumps(value) == _json(value)


def test_a_lock_shaped_value():
    value = {"version": 1, "clients": ["claude", "copilot"], "items": [
        {"name": f"r{i}", "sha256": "ab" * 32, "required_by": [f"bundle:b{i}"], "direct": i % 2 == 0,
         "commit": None} for i in range(50)]}
    assert jsonindent.dumps(value) == _json(value)


@pytest.mark.parametrize("value", [{1: "int key"}, {None: 1, "a": 2}, {"a": {2.5: "float key"}}, {"s": {1, 2}}])
def test_what_it_does_not_lay_out_itself_is_json_s(value):
    """Keys that are not strings (json converts them) and values json cannot write (it
    raises): the same text, or the same error, as json's."""
    try:
        expected = _json(value)
    except TypeError:
        with pytest.raises(TypeError):
            jsonindent.dumps(value)
        return
    assert jsonindent.dumps(value) == expected
