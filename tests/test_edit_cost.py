"""The cost of one edit: the pieces of a build that run once per output or per item must be
cheap and exact (issue 13, "one edit"), and an edited registry built on an earlier build's
memo and output must give the tree a build from scratch gives."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import random
import shutil
import stat
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest

from agentrc.cli.main import main
from agentrc.memo import cache
from agentrc.output import writer
from agentrc.building import incremental
from agentrc.portable import discovery
from helpers import ROOT


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


def _generator():
    spec = importlib.util.spec_from_file_location("gen_registry", ROOT / "bench" / "gen_registry.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_registry", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _tree(root: Path) -> Dict[str, Tuple[bytes, bool]]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".agentrc/"):
            out[rel] = (path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR))
    return out


def _build(reg: Path, out: Path, *extra: str) -> None:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out), "--jobs", "1",
                     *extra])
    assert code == 0, err.getvalue()[-3000:]


def _alone(reg: Path, item: Path) -> bool:
    """Whether nothing outside the item's directory names it (a bundle, another item)."""
    name = item.name
    for path in reg.rglob("*"):
        if path.is_file() and item not in path.parents and name in path.read_text(encoding="utf-8"):
            return False
    return True


NEW_RULE = ("---\nschema: 1\nname: {name}\ndescription: A rule added between two builds\nlicense: proprietary\n"
            "scope:\n  paths:\n    - \"src/**/*.{ext}\"\n---\n\n## Added\n\nRound {n}.\n")
NEW_SKILL = ("---\nschema: 1\nname: {name}\ndescription: A skill added between two builds, round {n}\n"
             "license: proprietary\n---\n\n## Steps\n\nDo the thing, round {n}.\n")


@pytest.mark.parametrize("seed", [1, 2])
def test_an_edited_registry_builds_on_the_last_build_to_the_tree_a_build_from_scratch_gives(tmp_path, monkeypatch,
                                                                                           seed):
    """Random edits, additions and removals of items between builds: the build that reuses the
    memo, the source stamp and the output of the last one writes exactly the files (bytes and
    modes) a `--no-cache` build into an empty directory writes."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 60, seed=seed)
    _build(reg, out)
    before = _tree(out)
    rng = random.Random(seed)
    for n in range(4):
        items = sorted(p for kind in ("rules", "skills", "agents") for p in (reg / kind).iterdir() if p.is_dir())
        for _ in range(rng.randint(1, 3)):
            what = rng.choice(("edit", "edit", "add-rule", "add-skill", "remove"))
            if what == "edit":
                entry = next(p for p in sorted(rng.choice(items).iterdir()) if p.name.isupper() or p.suffix == ".md")
                with open(entry, "a", encoding="utf-8") as fh:
                    fh.write(f"\nEdited in round {n}.\n")
            elif what == "add-rule":
                name = f"zz-rule-{n}-{rng.randint(0, 999):03d}"
                (reg / "rules" / name).mkdir(exist_ok=True)
                (reg / "rules" / name / "RULE.md").write_text(NEW_RULE.format(name=name, n=n, ext=rng.choice(
                    ("ts", "py"))), encoding="utf-8")
            elif what == "add-skill":
                name = f"zz-skill-{n}-{rng.randint(0, 999):03d}"
                (reg / "skills" / name).mkdir(exist_ok=True)
                (reg / "skills" / name / "SKILL.md").write_text(NEW_SKILL.format(name=name, n=n), encoding="utf-8")
            else:
                gone = [p for p in items if p.exists() and _alone(reg, p)]
                if gone:
                    shutil.rmtree(rng.choice(gone))
        _build(reg, out)
        fresh = tmp_path / f"fresh-{n}"
        _build(reg, fresh, "--no-cache")
        after = _tree(out)
        assert after == _tree(fresh), f"round {n}"
        assert after != before, f"round {n} changed nothing"  # the edits reached the output
        before = after


def _edit_counts(tmp_path: Path, monkeypatch, items: int) -> Dict[str, int]:
    """One rule's body edited after a build of `items` items: what the next build computed
    (memo entries put: directories parsed, items rendered), read back (memo entries, and
    their bytes), and did in the output (directories listed for leftovers, files looked at
    the careful way, through their directory's descriptor, and read)."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / f"cache-{items}"))
    reg, out = tmp_path / f"reg-{items}", tmp_path / f"out-{items}"
    _generator().generate(str(reg), items, seed=4)
    _build(reg, out)
    rule = sorted((reg / "rules").iterdir())[0] / "RULE.md"
    with open(rule, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    seen = []
    save, append = cache.save, cache.append
    monkeypatch.setattr(cache, "save", lambda path, memo: (seen.append(memo), save(path, memo))[1])
    monkeypatch.setattr(cache, "append", lambda path, memo: (seen.append(memo), append(path, memo))[1])
    counts = {"listed": 0, "careful": 0, "read": 0, "paths sorted into item directories": 0}
    item_dirs = discovery.item_dirs

    def sorting(paths):
        paths = list(paths)
        counts["paths sorted into item directories"] += len(paths)
        return item_dirs(paths)

    def counting(name, real):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)
        return wrapper

    # Aging the output (as the seconds between two builds by hand do): `_sweep` lists only
    # directories changed since the manifest, give or take the file system clock's slack.
    monkeypatch.setattr(writer, "SWEEP_SLACK_NS", 0)
    monkeypatch.setattr(writer, "SWEEP_SLACK_FINE_NS", 0)
    monkeypatch.setattr(writer.os, "listdir", counting("listed", writer.os.listdir))
    monkeypatch.setattr(writer._Tree, "lstat", counting("careful", writer._Tree.lstat))
    monkeypatch.setattr(writer._Tree, "read", counting("read", writer._Tree.read))
    monkeypatch.setattr(discovery, "item_dirs", sorting)
    incremental.LAST = incremental.Outcome()
    _build(reg, out)
    monkeypatch.undo()
    memo = seen[0]
    last = incremental.LAST
    assert last.path == "replay", last
    return {"computed": sum(memo.made.values()), "parsed": sum(n for k, n in memo.made.items() if k != "render"),
            "entries": memo.store.reads if memo.store is not None else 0,
            "entry bytes": memo.store.bytes_read if memo.store is not None else 0,
            "replayed": (last.dirs, last.renders, last.memo_reads, last.written), **counts}


def test_one_edit_parses_and_renders_only_the_edited_item_at_any_registry_size(tmp_path, monkeypatch):
    """The edited rule's directory is parsed once and rendered once per client (3), whatever
    the registry's size. In the output, what the edit reaches is looked at with care and read
    (the rule's three files), and only the directories written are listed for leftover
    temporary files; every other output costs one lstat by path (the size, mtime and mode
    recorded). What is read back from the memo grows with the edit, not the registry: the
    edited directory's last entry and its three last renderings, which the edit is compared
    with (agentrc.building.incremental), at any size."""
    small, large = (_edit_counts(tmp_path, monkeypatch, n) for n in (40, 160))
    assert small["computed"] == large["computed"] == 4, (small, large)
    assert small["parsed"] == large["parsed"] == 1, (small, large)
    for key in ("listed", "careful", "read", "entries"):
        assert small[key] == large[key], (key, small, large)
    assert large["listed"] <= 8 and large["careful"] <= 12 and large["read"] <= 12, large
    # The edited directory's files alone are sorted into item directories, not the registry's.
    assert small["paths sorted into item directories"] <= 8 and large["paths sorted into item directories"] <= 8
    assert small["entries"] == 4, small  # 1 directory + 3 renderings, read to be compared
    assert small["replayed"] == large["replayed"] == (1, 3, 4, 3), (small, large)


def _listed_by_an_edit(tmp_path: Path, monkeypatch, fine_slack_ns: int) -> Tuple[int, int]:
    """A build whose output directories were last changed half a second before its manifest
    (as a build's write does), one rule edited, built again: the directories that build
    listed for leftovers, and how many output directories there are."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 40, seed=4)
    _build(reg, out)
    made = (out / ".agentrc" / "manifest.json").stat().st_mtime_ns
    dirs = [Path(d) for d, _, _ in os.walk(out) if Path(d) != out and ".agentrc" not in Path(d).parts]
    for d in dirs:
        os.utime(d, ns=(made - 5 * 10**8, made - 5 * 10**8))
    with open(sorted((reg / "rules").iterdir())[0] / "RULE.md", "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    listed = []
    real = writer.os.listdir
    with monkeypatch.context() as m:
        m.setattr(writer, "SWEEP_SLACK_FINE_NS", fine_slack_ns)
        m.setattr(writer.os, "listdir", lambda fd: (listed.append(fd), real(fd))[1])
        _build(reg, out)
    return len(listed), len(dirs)


def test_the_first_edit_after_a_build_lists_only_the_directories_it_writes(tmp_path, monkeypatch):
    """Leftovers are looked for in directories changed since the manifest, less the clock's
    slack. With two seconds of slack on every file system, an edit within two seconds of a
    build listed every directory that build had made (13,600 at 5,000 items, a fifth of the
    edit's time in the benchmark); where the file system keeps sub-second times the slack is
    20 ms, so the edit lists the directories it writes, the root and `.agentrc`."""
    listed, dirs = _listed_by_an_edit(tmp_path / "fine", monkeypatch, writer.SWEEP_SLACK_FINE_NS)
    assert listed <= 8, (listed, dirs)
    coarse, dirs = _listed_by_an_edit(tmp_path / "coarse", monkeypatch, writer.SWEEP_SLACK_NS)
    assert coarse > dirs * 3 // 4, (coarse, dirs)  # what two seconds everywhere listed: nearly all


def test_the_sweep_slack_is_two_seconds_where_the_clock_keeps_whole_seconds(tmp_path):
    assert writer._sweep_since(str(tmp_path) + "/") is None  # no manifest: every directory is listed
    manifest = tmp_path / ".agentrc" / "manifest.json"
    manifest.parent.mkdir()
    manifest.write_text("{}", encoding="utf-8")
    base = str(tmp_path) + "/"
    os.utime(manifest, ns=(1_700_000_000 * 10**9, 1_700_000_000 * 10**9))
    assert writer._sweep_since(base) == 1_700_000_000 * 10**9 - 2 * 10**9
    os.utime(manifest, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    assert writer._sweep_since(base) == 1_700_000_000_123_456_789 - writer.SWEEP_SLACK_FINE_NS


def test_a_no_change_build_imports_no_client_adapter_and_no_parser(tmp_path):
    """The no-change build prints the last result: it checks the sources' and the outputs'
    statuses and stops. Importing the adapters cost more than all of that (issue 13), so the
    command line checks --client against agentrc.clients.names and prints the totals with
    agentrc.output.totals; the planner, the adapters and the parsers are never imported."""
    import subprocess

    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 12, seed=3)
    script = ("import sys; from agentrc.cli.main import main\n"
              "code = main(sys.argv[1:])\n"
              "print(' '.join(sorted(m for m in sys.modules if m.startswith('agentrc'))))\n"
              "sys.exit(code)")
    cmd = [sys.executable, "-c", script, "build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out),
           "--jobs", "1"]
    env = dict(os.environ, AGENTRC_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT / "src"))
    first = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "agentrc.clients.claude" in first.stdout.split()  # the first build renders
    second = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    # The same diagnostics and totals; only the last line's counts differ (nothing was written).
    assert second.stderr.splitlines()[:-1] == first.stderr.splitlines()[:-1]
    loaded = second.stdout.split()
    unexpected = [m for m in loaded if m.startswith(("agentrc.clients.", "agentrc.portable", "agentrc.pipeline.stages",
                                                      "agentrc.output.plan", "agentrc.output.merge", "agentrc.text"))
                  and m != "agentrc.clients.names"]
    assert not unexpected, unexpected


def test_a_build_takes_the_manifest_from_the_stamp_only_while_its_digest_matches(tmp_path, monkeypatch):
    """The stamp keeps what the manifest records (the manifest's digest vouches for it), so
    neither a no-change build nor an edit decodes the manifest; a manifest changed since is
    decoded and checked (AR093 for an unsafe path). A no-change build still lstat's every
    output, and an output edited since (another size or mtime) makes the build a real one,
    which refuses (AR094)."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 30, seed=5)
    _build(reg, out)
    decoded = []
    real = writer._load_json
    monkeypatch.setattr(writer, "_load_json", lambda raw, what: (decoded.append(what), real(raw, what))[1])
    _build(reg, out)
    assert decoded == []
    source = sorted((reg / "rules").iterdir())[0] / "RULE.md"
    with open(source, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    _build(reg, out)  # an edit: the manifest on disk is the one recorded, its content taken from the stamp
    assert decoded == []
    manifest = out / ".agentrc" / "manifest.json"
    original = manifest.read_bytes()
    data = json.loads(original)
    data["files"]["../outside.md"] = "0" * 64  # a manifest changed behind agentrc's back is read, and checked
    manifest.write_text(json.dumps(data), encoding="utf-8")
    with open(source, "a", encoding="utf-8") as fh:
        fh.write("\nAnd another.\n")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out), "--jobs", "1"])
    assert code == 1 and "AR093" in err.getvalue() and decoded, err.getvalue()[-2000:]
    decoded.clear()
    manifest.write_bytes(original)  # the recorded one again: taken from the stamp
    _build(reg, out)
    assert decoded == []
    rule = next(p for p in sorted(out.rglob("*.md")) if ".claude/rules/" in p.as_posix())
    rule.write_text(rule.read_text(encoding="utf-8") + "A user's line.\n", encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out), "--jobs", "1"])
    assert code == 1 and "AR094" in err.getvalue(), err.getvalue()[-2000:]


def test_a_no_change_build_rewrites_the_stamp_only_when_it_read_a_file(tmp_path, monkeypatch):
    """Its record of the sources is rewritten when files had to be read (a touched file, one
    changed close to the recording): then they are vouched for next time. Otherwise the
    stamp on disk already says everything, and a no-change build writes nothing at all."""
    from agentrc.inputs import tree as treeread

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 12, seed=6)
    _build(reg, out)
    saved = []
    from agentrc.memo import stamp as stampfile

    real = stampfile.save_stamp
    monkeypatch.setattr(stampfile, "save_stamp", lambda path, stamp: (saved.append(stamp), real(path, stamp))[1])
    _build(reg, out)
    _build(reg, out)
    assert saved == []
    touched = sorted((reg / "rules").iterdir())[0] / "RULE.md"
    st = touched.stat()
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns - 10 ** 9))  # same bytes, another mtime: read once
    _build(reg, out)
    assert len(saved) == 1
    _build(reg, out)
    assert len(saved) == 1


def test_a_link_in_place_of_an_output_directory_is_refused_even_where_nothing_changes(tmp_path, monkeypatch):
    """diff's cheap check (one lstat by path per output) covers only files whose directories
    are directories: `.claude/agents` swapped for a link to a copy with the same sizes,
    mtimes and modes is still refused (AR140), though the edit is elsewhere."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 30, seed=7)
    _build(reg, out)
    agents = out / ".claude" / "agents"
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(agents, elsewhere)  # copy2: sizes, mtimes and modes kept
    shutil.rmtree(agents)
    agents.symlink_to(elsewhere)
    with open(sorted((reg / "rules").iterdir())[0] / "RULE.md", "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out), "--jobs", "1"])
    assert code == 1 and "AR140" in err.getvalue() and ".claude/agents" in err.getvalue(), err.getvalue()[-2000:]
