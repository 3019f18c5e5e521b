"""A large plan keeps its rendered bytes in the build cache's directory, not in memory
(agentrc.output.spill): the output is byte for byte the same whatever is spilled, a spill
that cannot be written keeps the bytes in memory, and the plan holds at most the limit."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import List

import pytest

from agentrc.files import OutputFile
from agentrc.output import plan as plan_module
from agentrc.output import spill
from agentrc.building import build as build_module
from agentrc.building import incremental
from test_edit_cost import _build, _generator, _tree


@pytest.fixture
def registry(tmp_path, monkeypatch) -> Path:
    reg = tmp_path / "reg"
    _generator().generate(str(reg), 60, seed=7)
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    return reg


def _spills(monkeypatch) -> List[spill.Spill]:
    made: List[spill.Spill] = []
    real = spill.Spill.__init__

    def init(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(spill.Spill, "__init__", init)
    return made


def test_a_spilled_plan_writes_the_tree_an_unspilled_one_writes(registry, tmp_path, monkeypatch):
    fresh = tmp_path / "fresh"
    _build(registry, fresh, "--no-cache")  # no cache: nothing is spilled
    monkeypatch.setattr(spill, "LIMIT", 0)
    made = _spills(monkeypatch)
    out = tmp_path / "out"
    _build(registry, out)
    assert made and made[0].spilled > 100, [s.spilled for s in made]
    assert _tree(out) == _tree(fresh)
    # The next build is the no-change result, and an edit is replayed onto the spilled build.
    _build(registry, out)
    rule = sorted((registry / "rules").iterdir())[0] / "RULE.md"
    with open(rule, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    incremental.LAST = incremental.Outcome()
    _build(registry, out)
    assert incremental.LAST.path == "replay", incremental.LAST
    _build(registry, tmp_path / "fresh-2", "--no-cache")
    assert _tree(out) == _tree(tmp_path / "fresh-2")


def test_the_plan_holds_at_most_the_limit_of_rendered_bytes(registry, tmp_path, monkeypatch):
    """What a plan keeps in memory: the bytes of its plain files (merged config files and
    the project files the adapters add are not spilled, and are few)."""
    held = {}
    real_plan = build_module._plan

    def planned(*args, **kwargs):
        result = real_plan(*args, **kwargs)
        items = [f for f in result.files if type(f) is OutputFile and not f.merge and "/" in f.path]
        held["bytes"] = sum(len(f.content) for f in items)
        held["files"] = len(items)
        return result
    monkeypatch.setattr(build_module, "_plan", planned)
    monkeypatch.setattr(spill, "LIMIT", 20_000)
    _build(registry, tmp_path / "out")
    limited = dict(held)
    monkeypatch.setattr(spill, "LIMIT", 10**12)
    _build(registry, tmp_path / "out-2")
    assert held["bytes"] > 200_000, held  # unspilled, the plan held every rendered byte
    # Spilled: at most the limit, plus the one rendering that crossed it (a few files).
    assert limited["bytes"] <= 20_000 + 60_000, limited
    assert _tree(tmp_path / "out") == _tree(tmp_path / "out-2")


def test_a_spill_that_cannot_be_written_keeps_the_bytes_in_memory(registry, tmp_path, monkeypatch):
    fresh = tmp_path / "fresh"
    _build(registry, fresh, "--no-cache")
    monkeypatch.setattr(spill, "LIMIT", 0)
    monkeypatch.setattr(spill, "FLUSH", 1)  # every file written at once: the failure comes early
    made = _spills(monkeypatch)
    real_write = os.write
    state = {"writes": 0}

    def full_disk(fd, data):
        state["writes"] += 1
        if state["writes"] > 40 and any(fd == s._fd for s in made):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)
    monkeypatch.setattr(spill.os, "write", full_disk)
    out = tmp_path / "out"
    _build(registry, out)
    monkeypatch.undo()
    assert made and made[0].spilled >= 30, made[0].spilled  # some were spilled before the disk filled
    assert _tree(out) == _tree(fresh)


def test_a_spill_in_a_directory_that_cannot_be_made_keeps_the_bytes(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    s = spill.Spill(str(blocker / "cache"), limit=0)
    rendered = plan_module.Rendered((OutputFile("a/b.md", b"x" * 100),), None, ())  # type: ignore[arg-type]
    assert s.keep(rendered) is rendered
    assert s.spilled == 0


def test_spilled_bytes_read_back_whole_from_the_buffer_and_the_file(tmp_path):
    s = spill.Spill(str(tmp_path), limit=0)
    files = tuple(OutputFile(f"d/{i}.md", bytes([65 + i % 26]) * (1000 + i)) for i in range(3000))
    rendered = plan_module.Rendered(files, None, ())  # type: ignore[arg-type]
    kept = s.keep(rendered).files
    assert all(isinstance(f, spill.Spilled) for f in kept)
    assert [f.content for f in kept] == [f.content for f in files]  # from the file and the last buffer
    assert [f.sha256() for f in kept] == [f.sha256() for f in files]
    assert all(f.same_bytes(g) for f, g in zip(kept, files))
    s.close()
    with pytest.raises(OSError):
        kept[0].content


def test_a_spilled_file_is_staged_by_the_kernel_not_read_back(registry, tmp_path, monkeypatch):
    """The writer stages a spilled file with `os.sendfile` from the spill (no bytes object,
    one system call instead of a read and a write): no spilled byte is read back into the
    build, and the tree is the one an unspilled build writes."""
    fresh = tmp_path / "fresh"
    _build(registry, fresh, "--no-cache")
    monkeypatch.setattr(spill, "LIMIT", 0)
    made = _spills(monkeypatch)
    reads, sent = [], []
    monkeypatch.setattr(spill.Spill, "read", lambda self, at, length: reads.append(at) or b"")
    real_send = spill._SENDFILE
    monkeypatch.setattr(spill, "_SENDFILE", lambda *args: sent.append(args[3]) or real_send(*args))
    out = tmp_path / "out"
    _build(registry, out, "--jobs", "1")
    assert made and made[0].spilled > 100 and len(sent) >= made[0].spilled and reads == []
    assert _tree(out) == _tree(fresh)


def test_a_spill_copied_where_sendfile_cannot_is_read_and_written(tmp_path, monkeypatch):
    """Where the kernel cannot send between the two files (EINVAL), the bytes are read back
    and written as before; another error of the copy is raised, not hidden."""
    s = spill.Spill(str(tmp_path), limit=0)
    files = tuple(OutputFile(f"d/{i}.md", bytes([65 + i % 26]) * (3000 + i)) for i in range(800))
    kept = s.keep(plan_module.Rendered(files, None, ())).files  # type: ignore[arg-type]
    assert s.flush()

    def refuse(*args):
        raise OSError(errno.EINVAL, "no")

    monkeypatch.setattr(spill, "_SENDFILE", refuse)
    for f, original in ((kept[0], files[0]), (kept[-1], files[-1])):
        with open(tmp_path / "copy", "wb") as fh:
            f.copy_to(fh.fileno())
        assert (tmp_path / "copy").read_bytes() == original.content

    def broken(*args):
        raise OSError(errno.EIO, "broken")

    monkeypatch.setattr(spill, "_SENDFILE", broken)
    with open(tmp_path / "copy", "wb") as fh, pytest.raises(OSError, match="broken"):
        kept[1].copy_to(fh.fileno())
    s.close()


def _saved_renderings(cache_dir: Path) -> dict:
    """The render entries of the memo under `cache_dir`, unpickled, by key."""
    import pickle

    from agentrc.memo import cache
    from test_warm import _memo

    return {k: pickle.loads(v) for k, v in _memo(cache_dir).items() if cache.is_render_key(k)}


def test_a_deferring_memo_holds_the_plans_own_renderings(registry, tmp_path, monkeypatch):
    """The CLI's build defers its memo entries (packed and pickled when the memo is saved,
    aside): each rendering goes to the memo as the plan keeps it, its bytes spilled, never a
    second copy of them; and what is saved is what packing it at once saved."""
    from agentrc.clients.base import Rendered
    from agentrc.memo import cache

    monkeypatch.setattr(spill, "LIMIT", 0)
    held: List[object] = []
    real_put = cache.Memo.put

    def put(self, key, value):
        if isinstance(value, Rendered):
            held.extend(f for f in value.files if type(f) is OutputFile and not f.merge)  # bytes in memory
        real_put(self, key, value)

    monkeypatch.setattr(cache.Memo, "put", put)
    _build(registry, tmp_path / "out")
    assert held == []
    deferred = _saved_renderings(tmp_path / "cache")
    assert len(deferred) > 100

    # The same build with entries packed as they are put: the same entries saved.
    for p in (tmp_path / "cache", tmp_path / "out"):
        shutil.rmtree(p)
    monkeypatch.setattr(cache.Memo, "defer", property(lambda self: False, lambda self, value: None), raising=False)
    _build(registry, tmp_path / "out")
    assert _saved_renderings(tmp_path / "cache") == deferred


def test_a_deferring_memo_without_a_spill_gets_packed_renderings(registry):
    """A plan without a spill (a narrowed build's plan of the other clients, with the build's
    memo) keeps its renderings' bytes: the memo gets them packed at once, not the renderings."""
    from agentrc.clients.base import Rendered
    from agentrc.inputs.tree import read_tree
    from agentrc.memo import cache
    from agentrc.pipeline import stages

    memo = cache.Memo()
    memo.defer = True
    plan = stages.generate(read_tree([str(registry)]).tree, ["claude", "copilot"], None, memo=memo)
    assert plan.ok
    renders = [v for k, v in memo.data.items() if cache.is_render_key(k)]
    assert len(renders) > 50 and not any(isinstance(v, Rendered) for v in renders)
