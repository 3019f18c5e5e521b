"""The memo writes a build's new entries to disk as they are made (`cache.Spool`): it keeps
no copy of them in memory, and its save never gathers them (issue 13: at 5,000 items a
cold build kept every parsed item and rendering until the save, then a pickled copy of all
of them, 36 MB, beside those). The CLI's build defers its own entries to the save, which
it makes aside (`cache.save_aside`)."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.memo import cache
from helpers import ROOT


def _blob(i: int) -> bytes:
    return bytes([i % 251]) * 50_000


def test_an_entry_put_is_pickled_at_once_and_not_kept(tmp_path):
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    for i in range(20):
        memo.put(("k", i), _blob(i))
    assert memo.data == {}  # the values are on their way to disk, not in memory
    assert memo.digests and not cache.Memo().digests  # renderings may be put as digests
    assert memo.computed == {("k", i) for i in range(20)}
    assert memo.get(("k", 3)) == _blob(3)  # read back (a second plan of the same build)
    cache.save(path, memo)
    # Saved: the index on disk says where the entries are; the memo keeps no key or location.
    assert memo.spool is not None and memo.spool.index == {} and memo.used == set()
    assert memo.made == {"k": 20}
    cache.save(path, memo)  # saved again: nothing new, nothing to forget
    again = cache.load(path)
    assert [again.get(("k", i)) for i in range(20)] == [_blob(i) for i in range(20)]
    assert again.store is not None and again.store.reads == 20


def test_saving_holds_one_entry_at_a_time(tmp_path):
    """200 entries of 50 KB (10 MB pickled): the save used to build a dict of every pickled
    entry before writing the pack; now at most the spool's buffer (1 MB) is held."""
    path = tmp_path / "build.pickle"
    memo = cache.Memo()  # no spool: entries handed in (as warming workers hand them in)
    for i in range(200):
        memo.put(("k", i), _blob(i))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        cache.save(path, memo)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000, peak
    loaded = cache.load(path)
    assert [loaded.get(("k", i)) for i in (0, 199)] == [_blob(0), _blob(199)]


def test_a_compaction_copies_entries_one_at_a_time(tmp_path, monkeypatch):
    """Compacting reads each kept entry from its pack and writes it to the new one; the
    largest thing held is one entry (and the buffer), never a dict of them."""
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    for i in range(40):
        memo.put(("k", i), _blob(i))
    cache.save(path, memo)
    again = cache.load(path)
    for i in range(10):  # 30 of 40 dead: compaction
        again.get(("k", i))
    held = []
    real = cache.Spool.add
    monkeypatch.setattr(cache.Spool, "add", lambda self, key, data: held.append(len(self._buffer)) or
                        real(self, key, data))
    cache.save(path, again)
    assert len(held) == 10 and max(held) <= cache.Spool.FLUSH
    assert len(list(path.with_suffix(".memo").glob("*.pack"))) == 1
    third = cache.load(path)
    assert set(third.store.index) == {("k", i) for i in range(10)}
    assert [third.get(("k", i)) for i in range(10)] == [_blob(i) for i in range(10)]


def test_a_memo_never_saved_leaves_no_file(tmp_path):
    """A build that fails saves nothing: its spool is deleted with the memo."""
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    for i in range(40):  # 2 MB: the spool's file exists
        memo.put(("k", i), _blob(i))
    root = path.with_suffix(".memo")
    assert [p.name for p in root.iterdir()][0].startswith("spool.")
    del memo
    gc.collect()
    assert list(root.iterdir()) == []


def test_a_damaged_spool_entry_is_a_miss(tmp_path):
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    memo.put(("k", 1), "one")
    spool = memo.spool
    assert spool is not None
    offset, length, crc = spool.index[("k", 1)]
    spool.index[("k", 1)] = (offset, length, crc ^ 1)
    assert memo.get(("k", 1)) is None


def test_a_build_pickles_its_own_entries_when_it_saves_them_aside(tmp_path, monkeypatch):
    """A cold build keeps the entries it makes as they are (`Memo.defer`: the parsed items
    the registry holds anyway, each rendering's digests and report) and pickles them when
    the memo is saved: in a child while the output is written (`cache.save_aside`), which
    the build waits for. The memo then holds none of them, and the one on disk holds every
    entry, which the next build reads back to byte-identical outputs."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "ASIDE_MIN", 1)  # the example registry's 79 entries: saved aside too
    shutil.copytree(ROOT / "examples" / "registry", tmp_path / "reg")
    seen, children = [], []
    real = cache.save_aside

    def save_aside(path, memo):
        held = (len(memo.data), len(memo.computed))
        saving = real(path, memo)
        seen.append(held + (len(memo.data), path))
        children.append(saving.pid)
        return saving
    monkeypatch.setattr(cache, "save_aside", save_aside)
    argv = ["build", str(tmp_path / "reg"), "--client", "claude,copilot,opencode"]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(argv + ["--out", str(tmp_path / "a")]) == 0
        assert main(argv + ["--out", str(tmp_path / "b"), "--no-cache"]) == 0
    in_memory, computed, after, path = seen[0]
    assert in_memory == computed == 19 + 20 * 3  # directories parsed, items rendered for 3 clients
    assert after == 0 and children[0] is not None  # saved by a child, which the build reaped
    with pytest.raises(ChildProcessError):
        os.waitpid(children[0], os.WNOHANG)
    saved = cache.load(path)
    assert saved.store is not None and len(saved.store.index) == computed
    assert all(saved.store.read(k) is not None for k in saved.store.index)

    def files(root: Path) -> dict:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and ".agentrc" not in p.parts}
    assert files(tmp_path / "a") == files(tmp_path / "b")
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        rule = next((tmp_path / "reg").rglob("RULE.md"))
        rule.write_text(rule.read_text() + "\nOne more line.\n")
        assert main(argv + ["--out", str(tmp_path / "a")]) == 0  # an edit, from the saved memo
        assert main(argv + ["--out", str(tmp_path / "b"), "--no-cache"]) == 0
    assert files(tmp_path / "a") == files(tmp_path / "b")


def test_a_save_aside_that_fails_saves_nothing_and_the_build_goes_on(tmp_path, monkeypatch):
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    memo.defer = True
    for i in range(3):
        memo.put(("k", i), _blob(i))
    memo.put(("bad",), lambda: None)  # cannot be pickled: the child's save fails
    monkeypatch.setattr(cache, "ASIDE_MIN", 1)
    saving = cache.save_aside(path, memo)
    assert saving.pid is not None and memo.data == {}
    assert saving.wait() is False and saving.wait() is False  # reaped once
    assert cache.load(path).store is None  # no index: the next build is a cold one


def test_a_save_hashes_no_entry(tmp_path, monkeypatch):
    """A pack's name is random, not the sha256 of its bytes (which a save computed over
    every entry written: 37 MB at 5,000 items); the crc32 per entry still tells damage."""
    import hashlib

    hashed = []
    real = hashlib.sha256

    def counting(data=b"", *args, **kwargs):
        h = real(data, *args, **kwargs)
        hashed.append(len(data))

        class Counting:
            def update(self, more):
                hashed.append(len(more))
                h.update(more)

            def hexdigest(self):
                return h.hexdigest()

            def digest(self):
                return h.digest()
        return Counting()

    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    for i in range(20):
        memo.put(("k", i), _blob(i))
    monkeypatch.setattr(hashlib, "sha256", counting)
    cache.save(path, memo)
    monkeypatch.undo()
    assert sum(hashed) == 0, sum(hashed)
    names = [p.name for p in path.with_suffix(".memo").glob("*.pack")]
    assert len(names) == 1 and len(names[0]) == 32 + len(".pack")
    assert cache.load(path).get(("k", 7)) == _blob(7)


def test_a_cache_that_cannot_be_written_costs_only_its_entries(tmp_path, monkeypatch):
    """A full disk or a read-only cache directory while the spool is written: the build
    goes on (as when a save fails), nothing is left behind, and the next build is cold."""
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    real = cache.os.write

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache.os, "write", full)
    for i in range(40):
        memo.put(("k", i), _blob(i))  # 2 MB: the first flush fails
    monkeypatch.setattr(cache.os, "write", real)
    assert memo.spool is not None and memo.spool.failed and memo.spool.index == {}
    assert memo.get(("k", 1)) is None  # a miss: computed again
    cache.save(path, memo)
    root = path.with_suffix(".memo")
    assert not any(p.name.startswith("spool.") for p in root.iterdir()) if root.exists() else True
    assert cache.load(path).empty


def test_a_build_whose_cache_directory_is_unusable_still_builds(tmp_path, monkeypatch):
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache directory would be")
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(blocked / "below"))
    monkeypatch.setattr(cache.Spool, "FLUSH", 1)  # every entry put is flushed: the first fails
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(["build", str(ROOT / "examples" / "registry"), "--client", "claude",
                     "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / ".claude").is_dir()


def _files(root: Path) -> dict:
    """Each file of the memo directory: (inode, mtime, size)."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size) for p in root.iterdir()}


def _replayed(path: Path, first: int, count: int) -> cache.Memo:
    """A replay's memo: loaded, a few entries read, `count` new ones put, appended."""
    memo = cache.load(path)
    assert memo.get(("k", 0)) == _blob(0)
    for i in range(first, first + count):
        memo.put(("k", i), _blob(i))
    cache.append(path, memo)
    return memo


def test_an_append_writes_the_new_entries_and_an_index_addition_alone(tmp_path, monkeypatch):
    """A replayed edit keeps every entry and makes a few: its save wrote the index of every
    entry again (20,000 keys at 5,000 items) and compacted the packs every MAX_PACKS replays
    (36 MB copied). `append` writes its new entries' pack and an index of them alone; the
    index and the packs already there are not rewritten, and all entries load back."""
    path = tmp_path / "build.pickle"
    root = path.with_suffix(".memo")
    memo = cache.load(path)
    for i in range(40):
        memo.put(("k", i), _blob(i))
    cache.save(path, memo)
    before = _files(root)
    copied = []
    real = cache.Spool.add
    monkeypatch.setattr(cache.Spool, "add", lambda self, key, data: copied.append(key) or real(self, key, data))
    for n in range(cache.MAX_PACKS + 2):  # more than the packs that made `save` compact
        _replayed(path, 100 + 2 * n, 2)
    assert len(copied) == 2 * (cache.MAX_PACKS + 2)  # the new entries, once each: nothing copied
    after = _files(root)
    assert {k: v for k, v in after.items() if k in before} == before  # index and pack untouched
    added = [name for name in after if name.endswith(cache.ADDITION)]
    assert len(added) == cache.MAX_PACKS + 2 and all(name[:-len(cache.ADDITION)] in after for name in added)
    again = cache.load(path)
    keys = [("k", i) for i in range(40)] + [("k", i) for i in range(100, 100 + 2 * (cache.MAX_PACKS + 2))]
    assert [again.get(k) for k in keys] == [_blob(i) for _, i in keys]
    assert memo.used == set()  # as `save`, the memo lets go of its keys once saved


def test_index_additions_are_folded_into_the_index_after_max_additions(tmp_path, monkeypatch):
    """Additions do not pile up: the append after MAX_ADDITIONS of them writes the index
    again with their entries (a few each) copied into its pack, and removes them and their
    packs; the full build's pack is still not copied. A full save folds them in too."""
    monkeypatch.setattr(cache, "MAX_ADDITIONS", 3)
    path = tmp_path / "build.pickle"
    root = path.with_suffix(".memo")
    memo = cache.load(path)
    for i in range(40):
        memo.put(("k", i), _blob(i))
    cache.save(path, memo)
    big = next(p.name for p in root.iterdir() if p.name.endswith(".pack"))
    for n in range(3):
        _replayed(path, 100 + n, 1)
    assert sum(name.endswith(cache.ADDITION) for name in _files(root)) == 3
    copied = []
    real = cache.Spool.add
    monkeypatch.setattr(cache.Spool, "add", lambda self, key, data: copied.append(key) or real(self, key, data))
    _replayed(path, 103, 1)
    monkeypatch.undo()
    assert sorted(copied) == [("k", i) for i in range(100, 104)]  # the new entry, then the 3 added ones
    assert sorted(_files(root)) == sorted(["index", big, next(p.name for p in root.iterdir()
                                                               if p.name.endswith(".pack") and p.name != big)])
    again = cache.load(path)
    assert again.store is not None and again.store.added == {}
    keys = [("k", i) for i in range(40)] + [("k", i) for i in range(100, 104)]
    assert [again.get(k) for k in keys] == [_blob(i) for _, i in keys]
    _replayed(path, 104, 1)
    full = cache.load(path)
    for key in keys + [("k", 104)]:
        full.get(key)
    cache.save(path, full)  # a full build's save: its index names every entry it used
    assert not [name for name in _files(root) if name.endswith(cache.ADDITION)]
    last = cache.load(path)
    assert [last.get(k) for k in keys + [("k", 104)]] == [_blob(i) for _, i in keys + [("k", 104)]]


def test_an_index_addition_never_overrides_the_index(tmp_path):
    """An addition a full save folded in already (left by a save killed before removing it)
    may name a pack since removed: the index's entry wins; a damaged addition is left out."""
    path = tmp_path / "build.pickle"
    root = path.with_suffix(".memo")
    memo = cache.load(path)
    memo.put(("k", 1), _blob(1))
    cache.save(path, memo)
    import pickle

    from agentrc import __version__
    (root / ("gone.pack" + cache.ADDITION)).write_bytes(
        pickle.dumps((__version__, {("k", 1): ("gone.pack", 0, 5, 0), ("k", 2): ("gone.pack", 0, 5, 0)})))
    (root / ("bad.pack" + cache.ADDITION)).write_bytes(b"not a pickle")
    loaded = cache.load(path)
    assert loaded.get(("k", 1)) == _blob(1)
    assert loaded.get(("k", 2)) is None  # its pack is gone: a miss, never an error


def test_an_append_of_a_memo_not_loaded_from_its_index_keeps_every_entry(tmp_path):
    path = tmp_path / "build.pickle"
    memo = cache.Memo()  # entries handed in: saved whole
    memo.put(("k", 1), _blob(1))
    cache.append(path, memo)
    assert cache.load(path).get(("k", 1)) == _blob(1)
    cold = cache.load(tmp_path / "other.pickle")  # no index yet
    cold.put(("k", 2), _blob(2))
    cache.append(tmp_path / "other.pickle", cold)
    assert cache.load(tmp_path / "other.pickle").get(("k", 2)) == _blob(2)


def test_a_save_leaves_the_temporary_files_of_a_build_still_running(tmp_path):
    """`save` removes what no index names, which included the spool of a second build of
    the same output running at that moment (it lost its cache save). A temporary file whose
    process still runs is now left to it; one whose process is gone is removed."""
    import subprocess
    import sys

    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    memo.put(("k", 1), _blob(1))
    root = path.with_suffix(".memo")
    root.mkdir(parents=True, exist_ok=True)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        names = [f"spool.{running.pid}.1.tmp", f"index.{running.pid}.tmp", f"spool.{gone.pid}.7.tmp",
                 f"index.{gone.pid}.tmp", "stray.pack"]
        for name in names:
            (root / name).write_bytes(b"x")
        cache.save(path, memo)
        left = {p.name for p in root.iterdir()}
        assert {f"spool.{running.pid}.1.tmp", f"index.{running.pid}.tmp"} <= left
        assert not left & {f"spool.{gone.pid}.7.tmp", f"index.{gone.pid}.tmp", "stray.pack"}
    finally:
        running.kill()
        running.wait()
    assert cache.load(path).get(("k", 1)) == _blob(1)


def test_a_full_build_after_replays_does_not_compact_their_small_packs(tmp_path, monkeypatch):
    """Each replayed edit adds a pack of a few entries. A full build after MAX_PACKS of them
    counted those packs as MAX_PACKS and copied every entry into one new pack (36 MB at
    5,000 items). Only packs holding a real share of the entries count now; past
    4 x MAX_PACKS packs of any size a save compacts all the same, so they stay bounded."""
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    for i in range(200):
        memo.put(("k", i), _blob(i))
    cache.save(path, memo)
    replays = cache.MAX_PACKS + 2
    keys = [("k", i) for i in range(200)] + [("k", 1000 + i) for i in range(2 * replays)]
    for n in range(replays):
        _replayed(path, 1000 + 2 * n, 2)
    copied = []
    real = cache.Spool.add
    monkeypatch.setattr(cache.Spool, "add", lambda self, key, data: copied.append(key) or real(self, key, data))

    def full_build(new_key) -> None:
        full = cache.load(path)
        for k in keys:
            assert full.get(k) is not None
        full.put(new_key, _blob(7))
        cache.save(path, full)
        keys.append(new_key)

    full_build(("k", "full"))
    assert copied == [("k", "full")]  # the new entry alone: nothing copied to gather packs
    for n in range(4 * cache.MAX_PACKS):  # many more
        _replayed(path, 5000 + 2 * n, 2)
        keys.extend([("k", 5000 + 2 * n), ("k", 5001 + 2 * n)])
    full_build(("k", "full-2"))
    assert len(list(path.with_suffix(".memo").glob("*.pack"))) <= 4 * cache.MAX_PACKS  # bounded all the same
    again = cache.load(path)
    assert all(again.get(k) is not None for k in keys)


def test_a_memo_that_keeps_parsed_directories_reads_each_from_disk_once(tmp_path):
    """`keep_parsed` (a consumer's command, which reads a source, then plans its selection):
    a parsed item directory read or made once is handed out as it is afterwards, not read
    from the packs and unpickled again; other entries (renderings: they hold their bytes) are not kept."""
    path = tmp_path / "build.pickle"
    memo = cache.load(path)
    memo.put(("dir", "rules/a", "d1"), (("item a",), ()))
    memo.put(("skills", "claude", "d1"), ("found",))
    cache.save(path, memo)
    again = cache.load(path).keep_parsed()
    assert again.store is not None
    first = again.get(("dir", "rules/a", "d1"))
    reads = again.store.reads
    assert again.get(("dir", "rules/a", "d1")) is first and again.store.reads == reads
    assert again.get(("skills", "claude", "d1")) == ("found",) and again.store.reads == reads + 1
    assert again.get(("skills", "claude", "d1")) == ("found",) and again.store.reads == reads + 2
    made = (("item b",), ())
    again.put(("dir", "rules/b", "d2"), made)
    assert again.get(("dir", "rules/b", "d2")) is made
    plain = cache.load(path)  # a build's memo keeps nothing
    plain.get(("dir", "rules/a", "d1"))
    plain.get(("dir", "rules/a", "d1"))
    assert plain.store is not None and plain.store.reads == 2
