"""A source file's digest is taken once (Pants keeps a target's files between runs, and
every run's plan keys each item directory by its files' digests); it is not a field."""

from __future__ import annotations

import hashlib
import pickle

from agentrc.model import SourceFile


def test_the_digest_is_computed_once_and_is_the_contents():
    f = SourceFile("r/RULE.md", b"---\nschema: 1\n---\n")
    first = f.sha256()
    assert first == hashlib.sha256(b"---\nschema: 1\n---\n").digest()
    assert f.sha256() is first  # kept, not hashed again


def test_a_kept_digest_changes_neither_equality_nor_hash():
    a, b = SourceFile("p", b"x"), SourceFile("p", b"x")
    a.sha256()
    assert a == b and hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(a)) == b
