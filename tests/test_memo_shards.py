"""The memo's index in shards (agentrc.memo.shards): a replayed edit reads the shards of the
keys it asks for, never the whole index; what it finds is what the index holds; a pointer
or a shard that cannot be read is a miss or the index, never a traceback; old shards go."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
from pathlib import Path
from typing import List

import pytest

from agentrc.cli.main import main
from agentrc.memo import cache, shards


def _blob(i: int) -> bytes:
    return (f"entry {i} " * 20).encode()


def _saved(tmp_path: Path, count: int = 200) -> Path:
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    for i in range(count):
        memo.put(("k", f"item-{i}", i), _blob(i))
    cache.save(path, memo)
    return path


def test_a_saved_index_is_in_shards_and_each_key_is_found_in_its_own(tmp_path, monkeypatch):
    path = _saved(tmp_path)
    root = path.with_suffix(".memo")
    name = shards.current(root)
    assert name is not None and len(os.listdir(root / name)) == shards.SHARDS
    whole = cache.load(path)
    few = cache.load_few(path)
    assert few.store is not None and not few.store.whole
    read: List[str] = []
    real = shards._bucket
    monkeypatch.setattr(shards, "_bucket", lambda p: read.append(p.name) or real(p))
    keys = [("k", f"item-{i}", i) for i in (3, 50, 199)]
    assert [few.get(k) for k in keys] == [whole.get(k) for k in keys] == [_blob(i) for i in (3, 50, 199)]
    assert few.get(("k", "none", 0)) is None
    assert len(read) <= 4 and not few.store.whole  # one shard a key, the index never read
    assert few.store.index == whole.store.index and few.store.whole  # asked whole: read whole


def test_additions_are_found_and_folded_in_as_the_index_folds_them(tmp_path):
    path = _saved(tmp_path, 20)
    memo = cache.load(path)
    memo.put(("k", "new", 1), _blob(1000))
    memo.put(("k", "item-3", 3), _blob(3))  # already in the index: the addition never overrides it
    cache.append(path, memo)
    few = cache.load_few(path)
    assert few.get(("k", "new", 1)) == _blob(1000) and few.get(("k", "item-3", 3)) == _blob(3)
    whole = cache.load(path)
    assert few.store.index == whole.store.index and few.store.added == whole.store.added


@pytest.mark.parametrize("damage", ["pointer", "foreign", "shard", "garbage-shard"])
def test_a_damaged_pointer_or_shard_is_the_index_or_a_miss(tmp_path, damage):
    path = _saved(tmp_path)
    root = path.with_suffix(".memo")
    name = shards.current(root)
    assert name is not None
    key = ("k", "item-7", 7)
    bucket = root / name / f"{shards.shard_of(key):02x}"
    if damage == "pointer":
        (root / shards.POINTER).write_bytes(b"not a pickle")
    elif damage == "foreign":
        (root / shards.POINTER).write_bytes(pickle.dumps(("0.0.0", name)))
    elif damage == "shard":
        bucket.unlink()
    else:
        bucket.write_bytes(pickle.dumps(("x", {key: "nowhere"})))
    few = cache.load_few(path)
    got = few.get(key)
    if damage in ("pointer", "foreign"):
        assert few.store is not None and few.store.whole and got == _blob(7)  # no shards: `load`
    else:
        assert got is None  # a miss: the entry is made again


def test_a_shard_naming_a_location_of_another_shape_is_a_miss(tmp_path):
    path = _saved(tmp_path, 10)
    root = path.with_suffix(".memo")
    name = shards.current(root)
    key = ("k", "item-1", 1)
    from agentrc import __version__
    (root / name / f"{shards.shard_of(key):02x}").write_bytes(pickle.dumps((__version__, {key: ("a", 1)})))
    assert cache.load_few(path).get(key) is None


def test_a_save_removes_the_shards_the_pointer_no_longer_names(tmp_path):
    path = _saved(tmp_path, 30)
    root = path.with_suffix(".memo")
    first = shards.current(root)
    memo = cache.load(path)
    for i in range(30):
        memo.get(("k", f"item-{i}", i))
    memo.put(("k", "more", 0), _blob(5000))
    cache.save(path, memo)
    second = shards.current(root)
    assert second is not None and second != first
    assert [n for n in os.listdir(root) if n.startswith(shards.PREFIX)] == [second]


def test_an_edit_replayed_reads_no_whole_index(tmp_path, monkeypatch):
    """What users type: a build, one rule edited, a build (replayed): the memo's entries come
    from their shards, and the index is never read whole."""
    from agentrc.building import incremental

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    for i in range(12):
        d = reg / "rules" / f"rule-{i:02d}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"---\ndescription: Rule {i}.\n---\n\nGuidance {i}.\n")
    argv = ["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out), "--jobs", "1"]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    wholes: List[int] = []
    real, real_load = cache._whole_index, cache.load
    monkeypatch.setattr(cache, "_whole_index", lambda store: wholes.append(1) or real(store))
    monkeypatch.setattr(cache, "load", lambda path: wholes.append(2) or real_load(path))
    rule = reg / "rules" / "rule-04" / "RULE.md"
    rule.write_text(rule.read_text() + "\nOne more line.\n")
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed), contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    assert incremental.LAST.path == "replay", incremental.LAST
    assert incremental.LAST.memo_reads > 0 and wholes == []
    assert "One more line." in (out / ".claude" / "rules" / "rule-04.md").read_text()
