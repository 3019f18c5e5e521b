"""Work a cold build does once that it once did per client or per entry (issue 36), counted:
a worker takes the digest of each of an item's supporting files once for the memo's
entries of all the clients that copy it, not once per copy."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from agentrc.inputs.read import read_inputs
from agentrc.pipeline import warm

CLIENTS = ["claude", "copilot", "opencode"]


def _registry(root: Path, skills: int, files: int) -> Path:
    for i in range(skills):
        d = root / "skills" / f"skill-{i:02d}"
        (d / "references").mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: skill-{i:02d}\ndescription: Skill {i} for tests.\n---\n\n"
                                    f"Read [the notes](references/notes-0.md) first.\n")
        for j in range(files):
            (d / "references" / f"notes-{j}.md").write_text(f"# Notes {j} of skill {i}\n\n" + "Text. " * 40)
    return root


def test_a_worker_hashes_each_supporting_file_once_for_every_client(tmp_path, monkeypatch):
    reg = _registry(tmp_path / "reg", skills=6, files=3)
    tree = read_inputs([str(reg)]).tree
    resources = {f.content for f in tree.files if "/references/" in f.path}
    assert len(resources) == 18
    hashed = []
    real = hashlib.sha256

    def counted(data=b"", *args, **kwargs):
        if data in resources:
            hashed.append(data)
        return real(data, *args, **kwargs)
    monkeypatch.setattr(hashlib, "sha256", counted)
    fd = os.open(tmp_path / "chunks", os.O_RDWR | os.O_CREAT)
    read, write = os.pipe()
    try:
        sink = warm._Sink(fd, write, None)
        warm._compute(tree, CLIENTS, sink)
        sink.flush()
    finally:
        for d in (fd, read, write):
            os.close(d)
    # Once each (the memo's entries of three clients name it; before: three times each).
    assert len(hashed) == len(resources), len(hashed)


@pytest.mark.parametrize("files", [1, 4])
def test_the_hashing_grows_with_the_files_not_the_clients(tmp_path, monkeypatch, files):
    reg = _registry(tmp_path / "reg", skills=3, files=files)
    counts = []
    real = hashlib.sha256
    for clients in (CLIENTS[:1], CLIENTS):
        tree = read_inputs([str(reg)]).tree  # read again: a parse releases the sources' bytes
        resources = {f.content for f in tree.files if "/references/" in f.path}
        hashed = []

        def counted(data=b"", *args, _seen=hashed, _resources=resources, **kwargs):
            if data in _resources:
                _seen.append(data)
            return real(data, *args, **kwargs)
        monkeypatch.setattr(hashlib, "sha256", counted)
        fd = os.open(tmp_path / f"chunks-{len(clients)}", os.O_RDWR | os.O_CREAT)
        read, write = os.pipe()
        try:
            sink = warm._Sink(fd, write, None)
            warm._compute(tree, clients, sink)
            sink.flush()
        finally:
            for d in (fd, read, write):
                os.close(d)
        counts.append(len(hashed))
    assert counts == [3 * files, 3 * files]


@pytest.mark.parametrize("idle", [False, True])
def test_a_cold_build_of_a_thousand_items_forks_a_worker_only_beside_an_idle_cpu(monkeypatch, idle):
    """From `warm.MIN_ITEMS` item directories (2,000) a build with `--jobs 2` gets its
    worker; from `warm.IDLE_MIN_ITEMS` (300) only while a CPU is idle right now
    (`memo.cpus.spare`): at 1,000 items a worker saved a seventh of the wall time on two
    idle cores and cost a twentieth beside one busy process (pipeline/warm.py has the figures)."""
    from agentrc.memo import cpus
    from agentrc.memo.cache import Memo
    from agentrc.model import SourceFile, SourceTree

    started = []

    class Started:
        def __init__(self, *args, **kwargs):
            started.append(args[4])  # the shares: the build's own, then the worker's

        def fill(self) -> None:
            pass
    monkeypatch.setattr(warm, "Workers", Started)
    monkeypatch.setattr(warm, "_prepare_validators", lambda groups: None)
    monkeypatch.setattr(cpus, "spare", lambda n: idle)
    for dirs, forks in ((299, 0), (300, int(idle)), (1000, int(idle)), (1999, int(idle)), (2000, 1), (5000, 1)):
        tree = SourceTree(tuple(SourceFile(f"r/rules/r{i:05d}/RULE.md", b"---\n---\n") for i in range(dirs)))
        assert warm.warm(tree, CLIENTS, Memo(), jobs=2) is None
        assert len(started) == forks, (dirs, started)
        started.clear()


@pytest.mark.parametrize("spare", [False, True])
def test_a_memo_of_a_thousand_items_is_saved_aside_only_beside_an_idle_cpu(tmp_path, monkeypatch, spare):
    """A cold 1,000-item build defers 4,000 entries (a directory and three renderings an
    item): while every other CPU is busy they are pickled in place below `cache.ASIDE_MIN`
    (8,000), where the fork cost more CPU than the pickling and gained no wall time; with a
    CPU idle (`cpus.spare`) in a forked child from `cache.SPARE_MIN` (1,000), beside the write."""
    from agentrc.memo import cache, cpus

    monkeypatch.setattr(cpus, "spare", lambda n: spare)
    cases = ((999, False), (1000, True), (4000, True), (8000, True)) if spare else \
        ((4000, False), (7999, False), (8000, True))
    for entries, forked in cases:
        path = tmp_path / f"m{entries}" / "build.pickle"
        memo = cache.load(path)
        memo.defer = True
        for i in range(entries):
            memo.put(("k", i), i)
        saving = cache.save_aside(path, memo)
        assert (saving.pid is not None) is forked, entries
        assert saving.wait() is True
        assert cache.load(path).get(("k", entries - 1)) == entries - 1
