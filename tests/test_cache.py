"""The build memo is an optimisation only: with it, every build equals a --no-cache build."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path
from typing import List

import pytest
from helpers import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrc.cli.main import main


def _files(root: Path):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_memo_builds_equal_fresh_builds(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples" / "registry", "reg")
    assert main(["build", "reg", "--out", "cached"]) == 0
    # Edit one item, add a warning, delete another item: the memo must notice all three.
    rule = Path("reg/rules/commit-style/RULE.md")
    rule.write_text(rule.read_text().replace("Conventional Commits form", "Conventional Commits 1.0 form"))
    agent = Path("reg/agents/triage/AGENT.md")
    agent.write_text(agent.read_text().replace("model: haiku", "model: gpt-5"))
    shutil.rmtree("reg/skills/release-notes")
    capsys.readouterr()
    assert main(["build", "reg", "--out", "cached"]) == 0
    cached_err = capsys.readouterr().err
    assert main(["build", "reg", "--out", "fresh", "--no-cache"]) == 0
    fresh_err = capsys.readouterr().err
    cached, fresh = _files(Path("cached")), _files(Path("fresh"))
    cached.pop(".agentrc/manifest.json"), fresh.pop(".agentrc/manifest.json")
    assert cached == fresh
    assert "Conventional Commits 1.0 form" in cached[".claude/rules/commit-style.md"].decode()
    assert not any("release-notes" in p for p in cached)
    # Warnings of memoised items are reported again, the same as without the memo.
    assert "warning[AR081]" in cached_err and "warning[AR081]" in fresh_err
    assert main(["build", "reg", "--out", "cached"]) == 0
    assert "warning[AR081]" in capsys.readouterr().err


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_builds_in_one_process_keep_no_descriptor_of_the_memo_open(tmp_path, monkeypatch, capsys):
    """Each build that read the memo kept one of its packs open (the suite, on two workers,
    ran out of descriptors below 1024): a process that builds again and again (--watch, a
    host program) holds none of them between builds."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples" / "registry", "reg")
    assert main(["build", "reg", "--out", "out"]) == 0  # cold: the memo saved
    before = _open_descriptors()
    for _ in range(3):
        shutil.rmtree("out")  # not a build with nothing to do: the memo is read
        assert main(["build", "reg", "--out", "out"]) == 0
    capsys.readouterr()
    assert _open_descriptors() == before


def test_no_change_fast_path_never_hides_changes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples" / "registry", "reg")
    assert main(["build", "reg", "--out", "out"]) == 0
    first = capsys.readouterr().err
    assert main(["build", "reg", "--out", "out"]) == 0
    again = capsys.readouterr().err
    # Same warnings and summary as the full run, and nothing rewritten.
    assert again.count("warning[") == first.count("warning[") > 0
    assert "0 created, 0 updated, 0 deleted" in again
    # An edited output is noticed even though the sources did not change.
    target = Path("out/.claude/rules/commit-style.md")
    target.write_text(target.read_text() + "\nhand edit\n")
    assert main(["build", "reg", "--out", "out"]) == 1
    assert "error[AR094]" in capsys.readouterr().err
    target.unlink()
    assert main(["build", "reg", "--out", "out"]) == 0
    assert "1 created" in capsys.readouterr().err
    # A chmod alone is noticed too.
    script = Path("out/.claude/skills/pr-summary/scripts/summarize.sh")
    script.chmod(0o644)
    assert main(["build", "reg", "--out", "out"]) == 0
    assert "1 updated" in capsys.readouterr().err
    assert script.stat().st_mode & 0o100


def test_parallel_warm_equals_sequential(monkeypatch):
    from agentrc.pipeline import warm as parallel
    from agentrc.memo.cache import Memo
    from agentrc.inputs.tree import read_tree

    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    clients = ["claude", "copilot", "opencode"]
    forked, sequential = Memo(), Memo()
    parallel.warm(tree, clients, forked, jobs=2, min_items=0)
    parallel.warm(tree, clients, sequential, jobs=1, min_items=0)  # jobs=1: does nothing
    assert sequential.data == {}
    expected = parallel._entries(tree, clients)
    # 19 item directories (one holds a skill and a rule) and 20 items rendered for 3 clients.
    assert forked.data.keys() == expected.keys() and len(expected) == 19 + 20 * 3
    assert forked.data == expected


def test_a_cold_build_starts_workers_unless_told_not_to(tmp_path, monkeypatch):
    """Workers are on by default (one per CPU, at most 4: `--jobs 0`) for a cold build of a
    large registry (here every registry: MIN_ITEMS is 0); `--jobs N` asks for N, `--jobs 1`
    for none (docs/cli/build.md "The build cache")."""
    from agentrc.pipeline import warm as parallel

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parallel, "MIN_ITEMS", 0)
    monkeypatch.setattr(parallel.cpus_free, "busy", lambda cpus: False)  # idle, whatever runs beside
    calls = []
    real = parallel.warm
    monkeypatch.setattr(parallel, "warm", lambda tree, clients, memo, jobs, min_items=0, **kw:
                        calls.append(jobs) or real(tree, clients, memo, jobs, min_items, **kw))
    build = ["build", str(ROOT / "examples" / "registry"), "--client", "claude"]
    for extra, out in (([], "a"), (["--jobs", "2"], "b"), (["--jobs", "0"], "c"), (["--jobs", "1"], "d")):
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            assert main(build + ["--out", str(tmp_path / out)] + extra) == 0
    assert calls == [parallel.cpus(), 2, parallel.cpus()], calls  # --jobs 1 called no worker

    def files(root: Path) -> dict:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and ".agentrc" not in p.parts}
    assert files(tmp_path / "a") == files(tmp_path / "b") == files(tmp_path / "c") == files(tmp_path / "d")


def test_small_builds_add_a_pack_and_dead_entries_compact(tmp_path):
    from agentrc.memo import cache

    path = tmp_path / "memo.pickle"
    root = path.with_suffix(".memo")
    memo = cache.Memo()
    for i in range(8):
        memo.put(("k", i), i)
    cache.save(path, memo)
    packs = sorted(p.name for p in root.iterdir() if p.suffix == ".pack")
    assert len(packs) == 1 and (root / "index").exists()
    again = cache.load(path)
    assert again.store is not None and again.store.reads == 0  # loading reads the index alone
    for i in range(8):
        assert again.get(("k", i)) == i
    assert again.store.reads == 8
    again.put(("k", "new"), "v")  # one new entry of nine used: a new pack, the old one untouched
    cache.save(path, again)
    assert packs[0] in {p.name for p in root.iterdir()} and len(list(root.glob("*.pack"))) == 2
    third = cache.load(path)
    assert third.get(("k", "new")) == "v"
    for i in range(2):  # only two of nine used now: compaction rewrites one pack
        third.get(("k", i))
    cache.save(path, third)
    assert len(list(root.glob("*.pack"))) == 1
    fourth = cache.load(path)
    assert fourth.store is not None and set(fourth.store.index) == {("k", 0), ("k", 1), ("k", "new")}
    assert [fourth.get(("k", i)) for i in (0, 1, "new")] == [0, 1, "v"]


def test_a_killed_save_or_a_damaged_pack_is_a_miss_never_a_wrong_entry(tmp_path):
    from agentrc.memo import cache

    path = tmp_path / "memo.pickle"
    root = path.with_suffix(".memo")
    memo = cache.Memo()
    for i in range(4):
        memo.put(("k", i), f"value {i}")
    cache.save(path, memo)
    # A save killed after writing its pack, before the index: the pack is named by no index.
    (root / ("0" * 32 + ".pack")).write_bytes(b"half a pack")
    # (a pid above the kernel's limit, 2**22: no process can hold it, unlike 99 on a fresh machine)
    (root / "index.4194305.tmp").write_bytes(b"half an index")
    loaded = cache.load(path)
    assert [loaded.get(("k", i)) for i in range(4)] == [f"value {i}" for i in range(4)]
    loaded.put(("k", 9), "nine")
    cache.save(path, loaded)
    assert not (root / ("0" * 32 + ".pack")).exists() and not (root / "index.4194305.tmp").exists()
    # A damaged or missing pack: its entries are misses (the build parses and renders again).
    store = cache.load(path).store
    assert store is not None
    name, offset, length, _ = store.index[("k", 0)]
    data = bytearray((root / name).read_bytes())
    data[offset + length - 3] ^= 0x01  # one bit of one entry: the checksum tells
    (root / name).write_bytes(bytes(data))
    damaged = cache.load(path)
    assert damaged.get(("k", 0)) is None and damaged.misses == 1
    assert damaged.get(("k", 1)) == "value 1"
    for pack in root.glob("*.pack"):
        pack.unlink()
    assert cache.load(path).get(("k", 9)) is None
    (root / "index").write_bytes(b"not a pickle")
    assert cache.load(path).empty


def _edit_reads(tmp_path, monkeypatch, rules: int):
    """What a one-rule edit reads and renders in a registry of `rules` rules."""
    from agentrc.clients.base import ClientAdapter
    from agentrc.memo import cache

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg = tmp_path / "reg"
    for i in range(rules):
        d = reg / "rules" / f"rule-{i:04d}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"---\ndescription: Rule {i}.\n---\n\n" + f"Guidance {i}, at length.\n" * 60)
    argv = ["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(tmp_path / "out"), "--jobs", "1"]
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    rule = reg / "rules" / "rule-0002" / "RULE.md"
    rule.write_text(rule.read_text() + "One more line.\n")
    renders, loads = [], []
    real_render, real_load = ClientAdapter.render, cache.load
    monkeypatch.setattr(ClientAdapter, "render", lambda self, item, ctx: renders.append(item.name)
                        or real_render(self, item, ctx))
    monkeypatch.setattr(cache, "load", lambda path: loads.append(real_load(path)) or loads[-1])
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    monkeypatch.undo()
    store = loads[0].store
    held = sum(p.read_bytes().count(b"Guidance 7, at length.") for p in (tmp_path / "cache").rglob("*.pack"))
    return renders, store.reads, store.bytes_read, held


def test_a_one_item_edit_renders_that_item_and_reads_no_rendered_bytes(tmp_path, monkeypatch):
    """The memo keeps digests of rendered files, not their bytes, and is read entry by entry:
    an edit renders the edited item alone (once per client), and what it reads per item does
    not grow with the registry."""
    small = _edit_reads(tmp_path / "small", monkeypatch, 30)
    large = _edit_reads(tmp_path / "large", monkeypatch, 120)
    for renders, reads, read_bytes, held in (small, large):
        assert renders == ["rule-0002"] * 3, renders
        # The rule's body (60 lines) is in the memo once, in the parsed item; its three
        # rendered files are digests (they were 3 more copies).
        assert held == 60, held
    # Entries read: the edited rule's last parsed directory and its three renderings, which
    # the edit is compared with (agentrc.building.incremental), at any registry size.
    assert (small[1], large[1]) == (4, 4) and small[2] == large[2], (small, large)


def test_the_code_fingerprint_covers_every_module_of_the_package():
    """A memo must not survive a change to any of agentrc's modules or schemas, wherever
    in the package it sits."""
    from agentrc import fingerprint

    hashed = {p.relative_to(fingerprint.PACKAGE).as_posix() for p in fingerprint.code_files()}
    package = ROOT / "src" / "agentrc"
    every = {p.relative_to(package).as_posix() for p in package.rglob("*")
             if p.suffix in (".py", ".json") and "__pycache__" not in p.parts}
    assert hashed == every
    assert {"clients/base.py", "portable/load.py", "schemas/item.schema.json", "fingerprint.py"} <= hashed
    # The fingerprint lists the package with os.scandir (it runs on every command): the same
    # files, in the same order, hashed as `Path.rglob` and `Path.read_bytes` would give them.
    import hashlib

    from agentrc import __version__
    reference = hashlib.sha256(__version__.encode())
    for p in sorted(package.rglob("*")):
        if p.suffix in (".py", ".json") and "__pycache__" not in p.parts:
            reference.update(str(p.relative_to(package)).encode() + b"\0" + p.read_bytes())
    fingerprint._CODE.clear()
    assert fingerprint.code_fingerprint() == reference.digest()


# --- the memo never changes a result: warm builds equal --no-cache builds -------------------
EDITS = ("body", "add-rule", "remove-item", "user-claude-md", "user-settings", "clients", "user-agents-md")


def _tree(root: Path) -> dict:
    files = _files(root)
    manifest = files.pop(".agentrc/manifest.json", None)
    if manifest is not None:  # the manifest's mtimes differ between two trees; its claims must not
        data = json.loads(manifest)
        data.pop("stat", None)
        files[".agentrc/manifest.json"] = json.dumps(data, sort_keys=True).encode()
    return files


def _apply(edit: str, step: int, reg: Path, outs, clients: list) -> list:
    """One edit of the sources, of users' files in both output trees, or of the flags."""
    if edit == "body":
        rule = reg / "rules" / "commit-style" / "RULE.md"
        rule.write_text(rule.read_text() + f"\nMore guidance {step}.\n")
    elif edit == "add-rule":
        d = reg / "rules" / f"extra-{step}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "RULE.md").write_text(f"---\ndescription: Extra rule {step}.\n---\n\nDo thing {step}.\n")
    elif edit == "remove-item":
        victims = sorted(p for p in (reg / "rules").iterdir() if p.name.startswith("extra-"))
        shutil.rmtree(victims[0] if victims else reg / "skills" / "release-notes", ignore_errors=True)
    elif edit in ("user-claude-md", "user-agents-md"):
        name = "CLAUDE.md" if edit == "user-claude-md" else "AGENTS.md"
        for out in outs:
            f = out / name
            if f.exists():
                f.write_text(f"# Team notes {step}\n\nWritten by a person.\n\n" + f.read_text())
    elif edit == "user-settings":
        for out in outs:
            f = out / ".claude" / "settings.json"
            if f.exists():
                data = json.loads(f.read_text())
                data[f"userKey{step}"] = step
                f.write_text(json.dumps(data, indent=2) + "\n")
    elif edit == "clients":
        clients = ["claude", "cursor"] if clients == ["claude", "codex"] else ["claude", "codex"]
    return clients


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.sampled_from(EDITS), min_size=1, max_size=4))
def test_warm_builds_equal_no_cache_builds_over_edit_sequences(edits, tmp_path_factory):
    """After any sequence of edits to the sources, to users' own files and to the flags, a
    build with the memo (and the no-change stamp) writes exactly what --no-cache writes."""
    work = tmp_path_factory.mktemp("seq")
    reg = work / "reg"
    shutil.copytree(ROOT / "examples" / "registry", reg)
    warm, cold = work / "warm", work / "cold"
    clients = ["claude", "codex"]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        codes = [main(["build", str(reg), "--client", ",".join(clients), "--out", str(warm)]),
                 main(["build", str(reg), "--client", ",".join(clients), "--out", str(cold), "--no-cache"])]
        for step, edit in enumerate(edits):
            clients = _apply(edit, step, reg, (warm, cold), clients)
            codes += [main(["build", str(reg), "--client", ",".join(clients), "--out", str(warm)]),
                      main(["build", str(reg), "--client", ",".join(clients), "--out", str(cold), "--no-cache"])]
            assert codes[-2] == codes[-1], f"exit codes differ after {edits[:step + 1]}"
            assert _tree(warm) == _tree(cold), f"trees differ after {edits[:step + 1]}"


def test_an_unchanged_items_deleted_output_is_rendered_again_from_the_item(tmp_path, monkeypatch):
    """The memo has the digest of an unchanged rule's files, not their bytes: when one of
    them must be written again, that rule is rendered again (for that client alone), and the
    tree is what --no-cache writes."""
    from agentrc.clients.base import ClientAdapter

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg = tmp_path / "reg"
    for i in range(5):
        d = reg / "rules" / f"rule-{i}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"---\ndescription: Rule {i}.\n---\n\nGuidance {i}.\n")
    build = ["build", str(reg), "--client", "claude,copilot"]
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(build + ["--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    (tmp_path / "out" / ".claude" / "rules" / "rule-3.md").unlink()
    renders = []
    real = ClientAdapter.render
    monkeypatch.setattr(ClientAdapter, "render", lambda self, item, ctx: renders.append((self.name, item.name))
                        or real(self, item, ctx))
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(build + ["--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    monkeypatch.undo()
    assert renders == [("claude", "rule-3")]
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(build + ["--out", str(tmp_path / "fresh"), "--no-cache"]) == 0
    built, fresh = _files(tmp_path / "out"), _files(tmp_path / "fresh")
    built.pop(".agentrc/manifest.json"), fresh.pop(".agentrc/manifest.json")
    assert built == fresh


def test_a_render_entry_held_unpacked_is_taken_as_it_is():
    """`plan.unpacked`: what the Pants plugin's item directory nodes hold, so that a plan
    over the registry does not unpack every entry again; an entry whose files are kept as
    digests (the CLI's memo on disk) stays packed, its bytes read when needed."""
    from agentrc.clients.base import Rendered
    from agentrc.fidelity import ItemReport
    from agentrc.files import OutputFile
    from agentrc.output import plan as plan_output

    rendered = Rendered((OutputFile(".claude/rules/a.md", b"A\n", False, "rule a"),),
                        ItemReport("claude", "rule", "a", "reg/rules/a/RULE.md", True, (".claude/rules/a.md",), ()))
    packed = plan_output._pack(rendered)
    assert plan_output.unpacked(packed) == rendered
    assert plan_output.unpacked(plan_output._pack(rendered, digests=True)) is None

    class Held:
        def get(self, key):
            return rendered

    class Item:
        digest, kind, name, label = "d", plan_output.Kind.RULE, "a", "rule a"

    class Adapter:
        name, layout = "claude", ""

        def render(self, item, ctx):
            raise AssertionError("a held rendering is not rendered again")

    ctx = type("Ctx", (), {"clients": frozenset({"claude"}), "renamed": {}})()
    assert plan_output._render(Adapter(), Item(), ctx, Held()) is rendered


def test_a_cpu_is_spare_when_no_other_task_is_runnable_now(tmp_path, monkeypatch):
    """`memo.cpus.spare` (whether a cold build saves its memo in a child beside the write)
    reads the tasks runnable now, this process aside, not the minute's average: builds run
    back to back keep that near 1 by themselves. One CPU, garbage or no /proc: none spare."""
    from agentrc.memo import cpus as free

    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(free, "LOADAVG", str(loadavg))
    for text, cpus, spare in (("1.90 1.10 0.80 1/155 21617\n", 2, True), ("0.10 0.10 0.10 2/155 1\n", 2, False),
                              ("0.10 0.10 0.10 3/155 1\n", 4, True), ("0.10 0.10 0.10 1/155 1\n", 1, False),
                              ("garbled\n", 2, False)):
        loadavg.write_text(text)
        assert free.spare(cpus) is spare, (text, cpus)
    loadavg.unlink()
    assert free.spare(2) is False


def test_a_busy_machine_gets_no_worker(tmp_path, monkeypatch):
    """`--jobs 0` forks no worker while other work keeps every CPU busy, over the last minute
    and now (`memo.cpus.busy`, as `make -l`): a worker would share a CPU, finish no sooner,
    and cost its fork and hand-over (a cold 5,000-item build on 2 loaded CPUs: 5.4-6.2 s of
    CPU with a worker, 4.5-4.9 s without). `--jobs N` is obeyed whatever the load, and a
    machine with a CPU idle now, or a system that does not say, gets its workers."""
    from agentrc.memo import cpus as free
    from agentrc.pipeline import warm as parallel

    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(free, "LOADAVG", str(loadavg))
    monkeypatch.setattr(free, "available", lambda: 2)
    for text, busy in (("3.40 3.10 2.90 4/155 21617\n", True), ("1.10 0.90 0.80 1/120 5000\n", False),
                       ("3.40 3.10 2.90 2/155 21617\n", False), ("0.20 3.10 2.90 5/155 21617\n", False),
                       ("garbled\n", False)):
        loadavg.write_text(text)
        assert free.busy(2) is busy, text
        assert parallel.cpus() == (1 if busy else 2), text
    loadavg.unlink()
    assert free.busy(2) is False and parallel.cpus() == 2

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parallel, "MIN_ITEMS", 0)
    workers: List[int] = []
    real = parallel._Worker.start

    def start(*args, **kwargs):
        workers.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(parallel._Worker, "start", start)
    build = ["build", str(ROOT / "examples" / "registry"), "--client", "claude"]
    for load, extra, out, expected in (("3.40 3.10 2.90 4/155 1\n", [], "a", 0),
                                       ("3.40 3.10 2.90 4/155 1\n", ["--jobs", "2"], "b", 1),
                                       ("0.10 0.10 0.10 1/155 1\n", [], "c", 1)):
        loadavg.write_text(load)
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            assert main(build + ["--out", str(tmp_path / out)] + extra) == 0
        assert len(workers) == expected, (extra, load, workers)
        workers.clear()
    built = [{k: v for k, v in _files(tmp_path / out).items() if not k.startswith(".agentrc")} for out in "abc"]
    assert built[0] == built[1] == built[2]
