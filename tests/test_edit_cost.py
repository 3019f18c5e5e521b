"""The cost of one edit: the pieces of a build that run once per output or per item must be
cheap and exact (issue 13, "one edit"), and an edited registry built on an earlier build's
memo and output must give the tree a build from scratch gives."""

from __future__ import annotations

import json

from agentrc.output import writer
from agentrc.portable import discovery


def test_the_manifest_encoding_reads_back_as_the_manifest():
    manifest = {"version": 1, "generator": "agentrc 0", "files": {"b/\"q\".md": "0" * 64, "a/é/x.md": "f" * 64},
                "stat": {"a/é/x.md": [12, 1700000000123456789, 0o644], "b/\"q\".md": [0, 0, 0]},
                "merged": {"opencode.json": {"format": "json", "created": False,
                                             "keys": [[["instructions"], ".opencode/a.md", True]]}},
                "dirs": ["a", "a/é"]}
    data = writer._manifest_bytes(manifest)
    assert json.loads(data) == manifest
    assert data.decode("ascii").count("\n") == 16  # one entry a line: readable and diffable
    assert writer._manifest_bytes({"version": 1, "files": {}}) == b'{\n "files": {},\n "version": 1\n}\n'


def test_safe_path_accepts_exactly_normalised_relative_paths_outside_the_state_directory():
    for good in ("a", "a/b", "x/.agentrc", "x/..b", "a/.b", ".agentrcx/y", "..a"):
        assert writer.safe_path(good), good
    for bad in ("", "/a", "a/", "a//b", "./a", "a/.", "a/./b", "..", ".", "a/..", "../a", "a/../b",
                ".agentrc", ".agentrc/manifest.json", "a\\b", "a\x00b", None, 3):
        assert not writer.safe_path(bad), bad


def test_registry_of_is_the_nearest_root_at_or_above_a_directory():
    roots = ("", "vendor/x", "vendor/x/inner")
    assert discovery.registry_of("vendor/x/rules/a", roots) == "vendor/x"
    assert discovery.registry_of("vendor/x/inner/rules/a", list(roots)) == "vendor/x/inner"
    assert discovery.registry_of("vendor/x", roots) == "vendor/x"
    assert discovery.registry_of("rules/a", ("vendor/x",)) == ""
    assert discovery.registry_of("rules/a", ()) == ""
