"""The manifest's bytes come from a serialiser of its own (the json module's `indent`
selects its pure-Python encoder, about 1 s for 20,000 files); they must stay exactly
what `json.dumps(indent=1, sort_keys=True)` writes, or every existing output directory
would see its manifest rewritten."""

from __future__ import annotations

import json
import random

from agentrc.output import writer


def _reference(obj) -> bytes:
    return (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode()


def test_a_manifest_serialises_as_json_dumps_indent_1_sort_keys():
    manifest = {
        "version": 1, "generator": "agentrc 0.1.0",
        "files": {f".claude/rules/r-{i:03d}.md": f"{i:064x}" for i in range(50)},
        "stat": {f".claude/rules/r-{i:03d}.md": [100 + i, 1_700_000_000_123_456_789 + i, 0o644] for i in range(50)},
        "merged": {"opencode.json": {"format": "json", "created": False, "blank": "",
                                     "keys": [[["instructions"], "[\"a\", \"b\"]", True], [[], "{}", False]]}},
        "dirs": [".claude", ".claude/rules"],
    }
    assert writer._manifest_bytes(manifest) == _reference(manifest)


def test_odd_values_serialise_as_json_does():
    odd = {"ä/é": "snow ☃ \"quoted\" \\ \t\n\x00\x1f", "": [], "e": {}, "z": [[], {}, [[1, 2]], [True, None, False]],
           "b": [1, "x", {"k": [0, -5]}], "f": [1.5, float("1e300")], "n": None, "neg": -12345678901234567890,
           "t": (1, 2), "nested": {"a": {"b": {"c": [{"d": "e"}]}}}}
    assert writer._manifest_bytes(odd) == _reference(odd)


def test_random_documents_serialise_as_json_does():
    rng = random.Random(13)

    def value(depth: int):
        pick = rng.randrange(8 if depth < 4 else 4)
        if pick == 0:
            return rng.randrange(-10 ** 12, 10 ** 12)
        if pick == 1:
            return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 0x3000)])) for _ in range(6))
        if pick == 2:
            return rng.choice([True, False, None])
        if pick == 3:
            return rng.random()
        if pick in (4, 5):
            return {str(rng.random()): value(depth + 1) for _ in range(rng.randrange(4))}
        return [value(depth + 1) for _ in range(rng.randrange(4))]

    for _ in range(300):
        doc = {"files": value(0), "stat": value(0), "x": [value(1) for _ in range(3)]}
        assert writer._manifest_bytes(doc) == _reference(doc)
