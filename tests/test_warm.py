"""A cold build with workers (agentrc.pipeline.warm) is the build without them: the same
outputs, the same lines printed, the same memo entries (so the next no-change build and a
replayed edit go as they would), each entry computed once, and the build's own process
parsing and rendering its share alone. The workers' speed is measured, not tested
(docs/benchmarks.md)."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from agentrc.building import incremental
from agentrc.cli.main import main
from agentrc.memo import cache
from agentrc.model import SourceFile
from agentrc.pipeline import warm
from agentrc.portable import load
from helpers import ROOT
from test_edit_cost import _generator

CLIENTS = "claude,copilot,opencode"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked")


def _build(reg: Path, out: Path, cache_dir: Path, monkeypatch, *extra: str) -> Tuple[int, List[str]]:
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(cache_dir))
    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        code = main(["build", str(reg), "--client", CLIENTS, "--out", str(out), *extra])
    return code, (so.getvalue() + se.getvalue()).replace(str(out), "OUT").splitlines()


def _tree(root: Path) -> Dict[str, Tuple[bytes, bool]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & stat.S_IXUSR))
            for p in sorted(root.rglob("*")) if p.is_file() and ".agentrc" not in p.parts}


def _memo(cache_dir: Path) -> Dict:
    """Every entry of the one memo under `cache_dir`, as its pickled bytes."""
    [root] = [p for p in cache_dir.iterdir() if p.suffix == ".memo"]
    with open(root / "index", "rb") as f:
        _, index = pickle.load(f)
    store = cache.Store(root, index)
    try:
        return {key: store.raw(key) for key in index}
    finally:
        store.close()


@pytest.fixture()
def registry(tmp_path) -> Path:
    reg = tmp_path / "reg"
    _generator().generate(str(reg), 60)
    return reg


@pytest.fixture()
def counted(monkeypatch):
    """Directories parsed and entries made in this process (a worker's count stays in it)."""
    seen = {"parsed": 0, "made": {}}
    real_parse = load._parse_dir

    def parse(*args, **kwargs):
        seen["parsed"] += 1
        return real_parse(*args, **kwargs)
    monkeypatch.setattr(load, "_parse_dir", parse)
    real_save = cache.save

    def save(path, memo):
        seen["made"] = dict(memo.made)
        return real_save(path, memo)
    monkeypatch.setattr(cache, "save", save)
    monkeypatch.setattr(warm, "MIN_ITEMS", 0)
    return seen


def test_a_cold_build_with_workers_is_the_build_without(registry, tmp_path, monkeypatch, counted):
    one, two = tmp_path / "one", tmp_path / "two"
    seq = _build(registry, one, tmp_path / "c1", monkeypatch, "--jobs", "1")
    parsed_alone, made_alone = counted["parsed"], counted["made"]
    par = _build(registry, two, tmp_path / "c2", monkeypatch, "--jobs", "2")
    assert seq[0] == par[0] == 0
    assert seq[1] == par[1]  # every line printed: diagnostics, summary, counts
    assert _tree(one) == _tree(two)
    # The same entries, pickled to the same bytes, in one pack, each made once.
    assert _memo(tmp_path / "c1") == _memo(tmp_path / "c2")
    assert counted["made"] == made_alone and sum(made_alone.values()) == len(_memo(tmp_path / "c1"))
    for c in ("c1", "c2"):
        [root] = (tmp_path / c).glob("*.memo")
        assert len(list(root.glob("*.pack"))) == 1
    # The build's own process parsed its share alone: the first of two, by cost.
    groups = warm.item_dir_groups(_read(registry))
    own = warm._shares(groups, 2)[0]
    assert counted["parsed"] - parsed_alone == len(own) and 0 < len(own) < len(groups)


def _read(reg: Path):
    from agentrc.inputs.read import read_inputs
    return read_inputs([str(reg)]).tree


def test_the_next_builds_go_as_after_a_build_without_workers(registry, tmp_path, monkeypatch, counted):
    """No change: the recorded result. One edit: replayed, reading and making the same."""
    runs = {}
    for jobs in ("1", "2"):
        out, memo = tmp_path / f"out{jobs}", tmp_path / f"cache{jobs}"
        assert _build(registry, out, memo, monkeypatch, "--jobs", jobs)[0] == 0
        runs[jobs] = [_build(registry, out, memo, monkeypatch)]
    skill = sorted((registry / "skills").iterdir())[3] / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    for jobs in ("1", "2"):
        out, memo = tmp_path / f"out{jobs}", tmp_path / f"cache{jobs}"
        runs[jobs].append(_build(registry, out, memo, monkeypatch))
        last = incremental.LAST
        runs[jobs].append((last.path, last.dirs, last.renders, last.memo_reads, last.written))
        runs[jobs].append(_build(registry, out, memo, monkeypatch))
        runs[jobs].append(_tree(out))
    assert runs["1"] == runs["2"]
    assert "0 created, 0 updated, 0 deleted" in runs["1"][0][1][-1]
    # the edited skill's one shared copy (Copilot and opencode read Claude's: shared-copies)
    assert runs["1"][2][0] == "replay" and " 1 updated" in runs["1"][1][1][-1]


def test_a_failed_worker_costs_only_time(registry, tmp_path, monkeypatch, counted):
    """A worker that stops (here, at its first entry) leaves its share to the build."""
    assert _build(registry, tmp_path / "one", tmp_path / "c1", monkeypatch, "--jobs", "1")[0] == 0
    total = counted["parsed"]

    def fail(self, key, value):
        raise RuntimeError("a worker's failure")
    monkeypatch.setattr(warm._Sink, "put", fail)
    assert _build(registry, tmp_path / "two", tmp_path / "c2", monkeypatch, "--jobs", "2")[0] == 0
    assert counted["parsed"] == 2 * total  # everything parsed here
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")
    assert _memo(tmp_path / "c1") == _memo(tmp_path / "c2")


def test_more_workers_than_cores(registry, tmp_path, monkeypatch, counted):
    assert _build(registry, tmp_path / "one", tmp_path / "c1", monkeypatch, "--jobs", "1")[0] == 0
    made = counted["made"]
    assert _build(registry, tmp_path / "four", tmp_path / "c4", monkeypatch, "--jobs", "4")[0] == 0
    assert counted["made"] == made
    assert _tree(tmp_path / "one") == _tree(tmp_path / "four")
    assert _memo(tmp_path / "c1") == _memo(tmp_path / "c4")


def test_no_worker_is_left_behind(registry, tmp_path, monkeypatch):
    """A build that stops before asking for every entry (an error in the registry) stops
    its workers and reaps them."""
    monkeypatch.setattr(warm, "MIN_ITEMS", 0)
    (registry / "rules" / "broken").mkdir()
    (registry / "rules" / "broken" / "RULE.md").write_text("---\nschema: 1\nname: Not A Name\n---\n")
    started = []
    real = warm._Worker.start

    def start(*args):
        worker = real(*args)
        started.append(worker)
        return worker
    monkeypatch.setattr(warm._Worker, "start", start)
    code, _ = _build(registry, tmp_path / "out", tmp_path / "cache", monkeypatch, "--jobs", "3")
    assert code == 1 and len(started) == 2
    for worker in started:
        with pytest.raises(ChildProcessError):
            os.waitpid(worker.pid, os.WNOHANG)  # reaped already


def test_shares_follow_cost_not_count():
    """Contiguous runs of the sorted directories, the build's own first, split by cost:
    a run of big directories is shorter."""
    groups = {f"r/a{i:03d}": [SourceFile(f"r/a{i:03d}/RULE.md", b"x" * 8000)] for i in range(100)}
    groups.update({f"r/b{i:03d}": [SourceFile(f"r/b{i:03d}/RULE.md", b"x" * 100)] for i in range(100)})
    shares = warm._shares(groups, 2)
    assert [t for s in shares for t in s] == sorted(groups)  # every directory once, in order
    own, other = shares
    assert all(t.startswith("r/a") for t in own) and len(own) < 100 < len(other)
    cost = [sum(warm._cost(groups[t]) for t in s) for s in shares]
    assert abs(cost[0] / cost[1] - warm.OWN_SHARE) < 0.05
    assert warm._shares(groups, 3)[0] == warm._shares(groups, 3)[0]
    assert sum(len(s) for s in warm._shares(groups, 3)) == 200


def test_a_no_change_build_does_not_import_the_workers(tmp_path):
    script = ("import sys; from agentrc.cli.main import main\n"
              "code = main(sys.argv[1:])\n"
              "print(' '.join(sorted(sys.modules)))\n"
              "sys.exit(code)")
    cmd = [sys.executable, "-c", script, "build", str(ROOT / "examples" / "registry"), "--client", CLIENTS,
           "--out", str(tmp_path / "out")]
    env = dict(os.environ, AGENTRC_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT / "src"))
    for _ in range(2):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert "0 created, 0 updated, 0 deleted" in done.stderr
    assert "agentrc.pipeline.warm" not in done.stdout.split()


def test_a_workers_renderings_share_their_items_resources(registry):
    """A skill's supporting file is one bytes object in the item and every client's
    rendering of it, as in a build without workers: a worker's renderings name the
    resources of the item's entry rather than bring copies (three more at three clients)."""
    memo = cache.Memo()  # no spool: `warm` fills it, the second half from the worker
    warm.warm(_read(registry), CLIENTS.split(","), memo, jobs=2, min_items=0)
    resources: Dict[str, list] = {}
    for key, value in memo.data.items():
        if key[0] == "dir":
            for item in value[0]:
                resources.setdefault(item.digest, []).extend(r.content for r in item.resources)
    shared, copied = set(), 0
    worker = {t for t in warm._shares(warm.item_dir_groups(_read(registry)), 2)[1]}
    for key, value in memo.data.items():
        if key[0] != "render":
            continue
        for path, content, *_ in value[0]:
            own = resources.get(key[5], [])
            if any(content is r for r in own):
                shared.add(key[4])
            elif len(content) >= warm.SHARED_MIN and any(content == r for r in own):
                copied += 1
    assert copied == 0
    assert any(any(t.endswith("/" + name) for t in worker) for name in shared)  # the worker's too


def test_the_validators_of_the_kinds_present_are_compiled_before_the_workers_fork(monkeypatch):
    """Each worker compiled the item kinds' schema validators again (12 ms each) while the
    build waited for its first entries; compiled before the fork, they are inherited. Only
    the kinds the tree holds are compiled (a kind it lacks would be 12 ms for nothing)."""
    from agentrc import schemas
    from agentrc.clients import registry as client_registry

    compiled = []
    monkeypatch.setattr(schemas, "prepare", lambda name, definition="", blocks=(): compiled.append(
        (name, definition, tuple(blocks))))
    groups = {"rules/a": [SourceFile("rules/a/RULE.md", b"x")],
              "skills/b": [SourceFile("skills/b/SKILL.md", b"x"), SourceFile("skills/b/ref.md", b"y")]}
    warm._prepare_validators(groups)
    blocks = tuple(client_registry.client_names().blocks)
    assert compiled == [("item", "rule", blocks), ("item", "skill", blocks)]
    # The very key the parser's check asks for (agentrc.portable.checks.schema_ok).
    monkeypatch.undo()
    schemas._compiled.cache_clear()
    warm._prepare_validators(groups)
    before = schemas._compiled.cache_info()
    assert sorted(schemas.errors("item", {"schema": 1, "name": "a", "description": "Use when x"}, "rule",
                                 client_registry.client_names().blocks)) == []
    after = schemas._compiled.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses


def test_a_workers_renderings_come_as_spilled_bytes(registry, tmp_path, monkeypatch, counted):
    """A worker puts its renderings' own files in a spill of its own (made before the fork)
    and names them: the build neither loads nor hashes those bytes, and reads them back as
    it writes. The same tree as one process; supporting files stay shared, not spilled."""
    from agentrc.output import spill

    made = []
    real = spill.Ref.file

    def file(self, path, executable, owner):
        made.append(path)
        return real(self, path, executable, owner)

    monkeypatch.setattr(spill.Ref, "file", file)
    one, two = tmp_path / "one", tmp_path / "two"
    assert _build(registry, one, tmp_path / "c1", monkeypatch, "--jobs", "1")[0] == 0
    assert made == []
    # The writer stages them from the worker's spill with sendfile: none is read back here.
    reads = []
    real_read = spill.Spill.read
    monkeypatch.setattr(spill.Spill, "read", lambda self, at, length: reads.append(at) or real_read(self, at, length))
    assert _build(registry, two, tmp_path / "c2", monkeypatch, "--jobs", "2")[0] == 0
    assert _tree(one) == _tree(two)
    assert len(made) > 20 and all(p.endswith(".md") for p in made) and reads == []
    monkeypatch.setattr(spill.Spill, "read", real_read)
    assert _memo(tmp_path / "c1") == _memo(tmp_path / "c2")
    # Without a spill (a build that keeps none: --no-cache has no workers; a spill that
    # cannot be made), the worker sends the bytes as before.
    made.clear()
    monkeypatch.setattr(spill.Spill, "open_now", lambda self: False)
    three = tmp_path / "three"
    assert _build(registry, three, tmp_path / "c3", monkeypatch, "--jobs", "2")[0] == 0
    assert made == [] and _tree(three) == _tree(one)


def _sent(tree, tmp_path: Path, spill=None) -> list:
    """What a worker computing `tree` into its sink (`warm._Sink`) sends: its entries, as
    the build reads them from the worker's file, chunk by chunk as the pipe announces them."""
    data = os.open(tmp_path / "chunks", os.O_RDWR | os.O_CREAT)
    read, write = os.pipe()
    entries: list = []
    try:
        sink = warm._Sink(data, write, spill)
        warm._compute(tree, CLIENTS.split(","), sink)
        sink.flush()
        os.close(write)
        offset = 0
        while True:
            note = os.read(read, warm._NOTE.size)
            if not note:
                break
            (length,) = warm._NOTE.unpack(note)
            entries.extend(pickle.loads(os.pread(data, length, offset)))
            offset += length
    finally:
        os.close(data)
        os.close(read)
    return entries


def test_a_share_is_parsed_and_rendered_and_no_more(registry, tmp_path, monkeypatch):
    """What a worker (or Pants' `entries`) computes for a share is its memo entries: every
    directory parsed, every item rendered for every client (`plan.render_all`), and not the
    rest of a plan (each rendering's files gathered, the checks across clients), which was
    thrown away with the worker's plan. The entries are those a whole plan makes."""
    from agentrc.output import plan as plan_module

    calls = {"collect": 0, "cross": 0}
    real_collect, real_cross = plan_module._collect, plan_module.cross_discovery

    def collect(*args, **kwargs):
        calls["collect"] += 1
        return real_collect(*args, **kwargs)

    def cross(*args, **kwargs):
        calls["cross"] += 1
        return real_cross(*args, **kwargs)
    monkeypatch.setattr(plan_module, "_collect", collect)
    monkeypatch.setattr(plan_module, "cross_discovery", cross)
    clients = CLIENTS.split(",")
    keys = [key for key, _, _, _ in _sent(_read(registry), tmp_path)]
    entries = warm.entries(_read(registry), clients)
    assert calls == {"collect": 0, "cross": 0}
    items = sum(len(value[0]) for key, value in entries.items() if key[0] == "dir")
    renders = [k for k in keys if k[0] == "render"]
    assert items > 50 and len(renders) == items * len(clients)  # every item, for every client
    assert sorted(keys) == sorted(entries)
    whole = cache.Memo()  # a whole plan of the same share makes the same entries
    registry_, _ = load.load_registry(_read(registry), warm.client_registry.client_names(), (), whole)
    plan_module.plan(registry_, warm.client_registry.get(clients), None, False, whole)
    assert calls["cross"] == 1 and sorted(whole.data) == sorted(entries)


def test_a_share_that_fails_validation_is_parsed_and_not_rendered():
    """The build stops at a validation error before it renders, and the adapters take valid
    items only: a share (or Pants' node for one directory) holding an agent with a tool name
    outside the vocabulary keeps its parse and renders nothing (it raised KeyError, which the
    Pants plugin showed as a traceback in place of AR080)."""
    from agentrc.model import SourceTree

    bad = SourceFile("reg/agents/x/AGENT.md",
                     b"---\nschema: 1\ndescription: Use when x\ntools:\n  - Bash\n---\n\n## X\n\nDo x.\n")
    good = SourceFile("reg/rules/y/RULE.md", b"---\nschema: 1\ndescription: Y\n---\n\n## Y\n\nDo y.\n")
    entries = warm.entries(SourceTree((bad, good)), CLIENTS.split(","))
    assert sorted(key[0] for key in entries) == ["dir", "dir"]
    entries = warm.entries(SourceTree((good,)), CLIENTS.split(","))
    assert sorted(key[0] for key in entries) == ["dir", "render", "render", "render"]


def test_a_worker_sends_each_rendering_pickled_once(registry, tmp_path):
    """What a worker sends for a rendering is the memo's entry (its files as digests) and,
    for each file, where its bytes are: not a second, whole pickle of the rendering (which
    took a Python call per object pickled, an eighth of a worker's time)."""
    tree = _read(registry)
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()
    from agentrc.output.spill import Spill

    spill = Spill(str(spill_dir), limit=0)
    assert spill.open_now()
    try:
        entries = _sent(tree, tmp_path, spill)
    finally:
        spill.close()
    renders = [e for e in entries if e[0][0] == "render"]
    assert renders and all(len(e) == 4 for e in entries)
    kinds = set()
    for key, packed, where, _ in renders:
        files, _report, _frags = pickle.loads(packed)
        assert len(where) == len(files)
        for f, w in zip(files, where):
            assert isinstance(f[1], str) and len(f[1]) == 64  # the memo's entry holds digests
            if type(w) is bytes:  # a small file (or a merged config) travels as it is
                assert len(w) < warm.SPILL_MIN or f[4]
                kinds.add("bytes")
            else:
                assert w[0] in (warm.SPILLED, warm.RESOURCE)
                kinds.add(w[0])
    assert kinds >= {warm.SPILLED, warm.RESOURCE}
    # No second copy: what travels beside the memo's entries is small.
    beside = sum(len(pickle.dumps(where)) for _, _, where, _ in renders)
    assert beside < sum(len(packed) for _, packed, _, _ in renders) / 2


def test_too_few_items_are_not_grouped(registry, monkeypatch):
    """Below the threshold (counted in entrypoints, never fewer than the item directories)
    `warm` says no before grouping the files: a cold 1,000-item build spent 5 ms grouping
    them for nothing."""
    tree = _read(registry)
    entrypoints = warm._entrypoints(tree)
    assert entrypoints >= len(warm.item_dir_groups(tree)) > 0

    def refused(tree):
        raise AssertionError("grouped")

    monkeypatch.setattr(warm, "_groups", refused)
    assert warm.warm(tree, CLIENTS.split(","), cache.Memo(), jobs=2, min_items=entrypoints + 1) is None
    with pytest.raises(AssertionError):
        warm.warm(tree, CLIENTS.split(","), cache.Memo(), jobs=2, min_items=entrypoints)
