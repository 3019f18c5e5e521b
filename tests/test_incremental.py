"""An edit replayed onto the last build (agentrc.building.incremental) gives exactly what the
whole build gives: the output tree, every line printed, the exit code, and the next
no-change build. Each edit kind goes the way expected (`incremental.LAST`), so the tests
cannot pass by always falling back."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest

from agentrc.building import incremental
from agentrc.cli.main import main
from agentrc.inputs import stamp
from agentrc.memo import cache
from agentrc.output import writer
from test_edit_cost import _alone, _generator

REPLAY, FULL = "replay", "full"


def _run(reg: Path, out: Path, clients: str, *extra: str) -> Tuple[int, List[str]]:
    """The exit code and every line the build printed (the output path written OUT)."""
    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        code = main(["build", str(reg), "--client", clients, "--out", str(out), "--jobs", "1", *extra])
    text = (so.getvalue() + "\n--stderr--\n" + se.getvalue()).replace(str(out), "OUT")
    return code, text.splitlines()


def _tree(root: Path) -> Dict[str, Tuple[bytes, bool]]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".agentrc/"):
            out[rel] = (path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR))
    return out


def _owned(root: Path) -> dict:
    """The manifest without the statuses (they are the files' times)."""
    data = json.loads((root / writer.MANIFEST).read_text(encoding="utf-8"))
    data.pop("stat")
    return data


def _item(reg: Path, kind: str, i: int = 0, supporting: bool = False) -> Path:
    dirs = sorted(p for p in (reg / kind).iterdir() if p.is_dir()
                  and (not supporting or any(q.is_dir() for q in p.iterdir())))
    return dirs[i]


def _entry(d: Path) -> Path:
    return next(p for p in sorted(d.iterdir()) if p.name in ("RULE.md", "SKILL.md", "AGENT.md"))


def _append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def _sub(path: Path, pattern: str, repl: str) -> None:
    text = path.read_text(encoding="utf-8")
    new = re.sub(pattern, repl, text, count=1, flags=re.M)
    assert new != text, (path, pattern)
    path.write_text(new, encoding="utf-8")


def body_rule(reg: Path) -> str:
    _append(_entry(_item(reg, "rules", 1)), "\nOne more line for the rule.\n")
    return REPLAY


def body_skill(reg: Path) -> str:
    _append(_entry(_item(reg, "skills", 2)), "\nOne more step.\n")
    return REPLAY


def body_agent(reg: Path) -> str:
    _append(_entry(_item(reg, "agents", 0)), "\nReport in French.\n")
    return REPLAY


def supporting_file(reg: Path) -> str:
    d = _item(reg, "skills", 0, supporting=True)
    f = next(p for p in sorted(d.rglob("*")) if p.is_file() and p.name != "SKILL.md")
    _append(f, "\nA supporting line.\n")
    return REPLAY


def two_items_at_once(reg: Path) -> str:
    _append(_entry(_item(reg, "rules", 3)), "\nA.\n")
    _append(_entry(_item(reg, "skills", 4)), "\nB.\n")
    return REPLAY


def restore_rule(reg: Path) -> str:
    """Back to the bytes of two builds ago: both sides from the memo."""
    path = _entry(_item(reg, "rules", 1))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\nOne more line for the rule.\n", ""), encoding="utf-8")
    return REPLAY


def frontmatter(reg: Path) -> str:
    _sub(_entry(_item(reg, "rules", 2)), r"^description: .*$", "description: A description changed by the test")
    return FULL


def warning(reg: Path) -> str:
    """A preloaded skill that is not in the registry: AR072, a warning."""
    _sub(_entry(_item(reg, "agents", 1)), r"^license: proprietary$", "license: proprietary\npreload-skills:\n"
         "  - no-such-skill")
    return FULL


def client_block(reg: Path) -> str:
    """A body edit for one client alone: another client that loads the copy sees it differ."""
    _append(_entry(_item(reg, "skills", 3)), "\n<!-- @client:claude -->\nClaude only.\n<!-- @endclient -->\n")
    return ""  # either way, as long as the result is the full build's


def rename(reg: Path) -> str:
    d = next(p for p in sorted((reg / "rules").iterdir()) if _alone(reg, p))  # no bundle names it
    new = d.with_name("zz-renamed-rule")
    d.rename(new)
    _sub(_entry(new), r"^name: .*$", "name: zz-renamed-rule")
    return FULL


def add_item(reg: Path) -> str:
    d = reg / "rules" / "zz-added-rule"
    d.mkdir()
    (d / "RULE.md").write_text("---\nschema: 1\nname: zz-added-rule\ndescription: Added by the test\n"
                               "license: proprietary\n---\n\n## Added\n\nBody.\n", encoding="utf-8")
    return FULL


def remove_item(reg: Path) -> str:
    shutil.rmtree(reg / "rules" / "zz-added-rule")
    return FULL


def bundle(reg: Path) -> str:
    path = sorted((reg / "bundles").iterdir())[0]
    _sub(path, r"^description: .*$", "description: A bundle edited by the test")
    return FULL


def collide(reg: Path) -> str:
    """Two skills with one name: their outputs collide (an error, nothing written)."""
    first, second = _item(reg, "skills", 5), _item(reg, "skills", 6)
    _sub(_entry(second), r"^name: .*$", f"name: {first.name}")
    return FULL


def uncollide(reg: Path) -> str:
    second = _item(reg, "skills", 6)
    _sub(_entry(second), r"^name: .*$", f"name: {second.name}")
    return ""  # the sources of the last successful build again: its stamp stands (no-change)


def unclosed_block(reg: Path) -> str:
    """An error in a body (AR030): nothing is written, the exit code is 1."""
    _append(_entry(_item(reg, "rules", 5)), "\n<!-- @client:claude -->\nNever closed.\n")
    return FULL


def closed_block(reg: Path) -> str:
    """The error fixed: against the last successful build, only that body changed."""
    _append(_entry(_item(reg, "rules", 5)), "<!-- @endclient -->\n")
    return ""


EDITS: List[Callable[[Path], str]] = [body_rule, body_skill, body_agent, supporting_file, two_items_at_once,
                                      restore_rule, frontmatter, warning, client_block, rename, add_item, remove_item,
                                      bundle, collide, uncollide, unclosed_block, closed_block]


@pytest.mark.parametrize("clients", ["claude,copilot,opencode", "codex,gemini,cursor"])
def test_each_edit_builds_alone_or_whole_to_exactly_what_the_whole_build_gives(tmp_path, monkeypatch, clients):
    """After each edit: the incremental build (memo, stamp, replay record) and a `--no-cache`
    build of the same sources over the same previous output print the same lines and exit
    alike; both trees equal a `--no-cache` build into an empty directory; the manifests own
    the same files; and the next build of the incremental side is a no-change one that
    prints what the whole build prints."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "MAX_ADDITIONS", 2)  # replays' index additions folded in on the way
    reg, inc, ref = tmp_path / "reg", tmp_path / "inc", tmp_path / "ref"
    _generator().generate(str(reg), 60, seed=3)
    assert _run(reg, inc, clients)[0] == 0
    assert _run(reg, ref, clients, "--no-cache")[0] == 0
    ways: Dict[str, str] = {}
    for edit in EDITS:
        expected = edit(reg)
        incremental.LAST = incremental.Outcome()
        got = _run(reg, inc, clients)
        way = incremental.LAST.path
        ways[edit.__name__] = way
        assert got == _run(reg, ref, clients, "--no-cache"), edit.__name__
        if expected:
            assert way == expected, (edit.__name__, incremental.LAST)
        fresh = tmp_path / f"fresh-{edit.__name__}"
        if got[0] == 0:
            _run(reg, fresh, clients, "--no-cache")
            assert _tree(inc) == _tree(ref) == _tree(fresh), edit.__name__
            assert _owned(inc) == _owned(ref) == _owned(fresh), edit.__name__
        else:
            assert _tree(inc) == _tree(ref), edit.__name__
        incremental.LAST = incremental.Outcome()
        again = _run(reg, inc, clients)
        assert again == _run(reg, ref, clients, "--no-cache"), edit.__name__
        if got[0] == 0:
            assert incremental.LAST.path == "", (edit.__name__, incremental.LAST)  # the no-change stamp
    assert list(ways.values()).count(REPLAY) >= 6, ways
    assert list(ways.values()).count(FULL) >= 8, ways


def test_a_replayed_manifest_is_the_one_the_whole_write_would_encode(tmp_path, monkeypatch):
    """The manifest `Output.replay` patches line by line is byte for byte what
    `_manifest_bytes` encodes of the same entries."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 30, seed=5)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    two_items_at_once(reg)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    assert incremental.LAST.path == REPLAY and incremental.LAST.written >= 4, incremental.LAST
    raw = (out / writer.MANIFEST).read_bytes()
    assert writer._manifest_bytes(json.loads(raw)) == raw


def test_the_replay_decodes_the_recorded_entries_of_the_files_it_writes_as_the_whole_decoding_does(
        tmp_path, monkeypatch):
    """`Output.replay` decodes only the recorded entries of the paths it writes (and the
    merged files, and every path for its directories): the same entries, for those paths, as
    `_recorded_manifest` decodes for all of them."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 30, seed=5)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    (stamp,) = (tmp_path / "cache").glob("*.stamp")
    recorded = cache.load_stamp(stamp.with_suffix(".pickle"))["outputs"]
    whole = writer._recorded_manifest(recorded)
    merged = sorted(whole.merged)
    assert merged and len(whole.owned) > 10
    wanted = set(sorted(whole.owned)[3:7]) | {merged[0], "not/an/output.md"}
    part, paths = writer._replay_manifest(recorded, wanted)
    assert paths == list(whole.stats)
    assert part.stats == {p: whole.stats[p] for p in wanted if p in whole.stats}
    assert part.owned == {p: whole.owned[p] for p in wanted if p in whole.owned}
    assert (part.merged, part.dirs) == (whole.merged, whole.dirs)
    everything, _ = writer._replay_manifest(recorded, set(paths))
    assert everything == whole


def test_the_replay_s_one_pass_over_the_directories_finds_what_the_three_passes_found(tmp_path, monkeypatch):
    """`_recent_dirs` lstats each output directory once (up to the root, excluded), refuses
    a link or a file in the place of any of them, and gives the directories holding outputs
    whose mtime is not older than `since`: what `_directories`, an lstat of each and
    `_sweep`'s choice gave in three passes."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 30, seed=5)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    (stamp,) = (tmp_path / "cache").glob("*.stamp")
    paths = writer._replay_manifest(cache.load_stamp(stamp.with_suffix(".pickle"))["outputs"], set())[1]
    base = str(out) + os.sep
    directories = writer._directories(paths)
    parents = {p.rpartition("/")[0] for p in paths} - {""}
    assert len(parents) > 10 and len(directories) > len(parents)
    mtimes = {d: os.lstat(base + d).st_mtime_ns for d in directories}
    looked = []
    lstat = os.lstat
    monkeypatch.setattr(writer.os, "lstat", lambda path: (looked.append(path), lstat(path))[1])
    for since in (None, 0, sorted(mtimes.values())[len(mtimes) // 2], max(mtimes.values()) + 1):
        looked.clear()
        recent = writer._recent_dirs(base, paths, since)
        assert sorted(looked) == sorted(base + d for d in directories)  # each once
        assert recent is not None and len(recent) == len(set(recent))
        assert set(recent) == {d for d in parents if since is None or mtimes[d] >= since}, since
    monkeypatch.undo()
    deep = max(directories, key=lambda d: d.count("/"))
    for d in (deep, deep.rpartition("/")[0]):
        moved = tmp_path / "moved"
        (out / d).rename(moved)
        (out / d).symlink_to(moved)
        assert writer._recent_dirs(base, paths, None) is None
        (out / d).unlink()
        (out / d).write_text("in the way")
        assert writer._recent_dirs(base, paths, None) is None
        (out / d).unlink()
        moved.rename(out / d)
        assert writer._recent_dirs(base, paths, None) is not None


def test_a_patch_of_a_missing_entry_is_refused():
    data = writer._manifest_bytes({"version": 1, "files": {"a": "0" * 64}, "stat": {"a": [1, 2, 3]}})
    assert writer._patch(data, [("files", "b", '"x"')]) is None
    assert writer._patch(data, [("nope", "a", '"x"')]) is None
    assert writer._patch(data, [("stat", "a", "[4, 5, 6]")]) == data.replace(b"[1, 2, 3]", b"[4, 5, 6]")
    assert writer._patch(data, [("stat", "a", "[4, 5, 6]"), ("files", "a", '"' + "1" * 64 + '"')]) == \
        writer._manifest_bytes({"version": 1, "files": {"a": "1" * 64}, "stat": {"a": [4, 5, 6]}})


# --- a fault or a kill during a replayed write ----------------------------------------------


def _replay_scenario(tmp_path: Path):
    """A built registry (cache and output kept as templates) with one rule's body edited
    since, and the tree a whole `--no-cache` build of the edit gives over the same output."""
    from test_output_safety import _small_registry, _without_stat
    from test_output_safety import _tree as full_tree

    reg = _small_registry(tmp_path / "reg")
    out, template, cache = tmp_path / "out", tmp_path / "template", tmp_path / "cache-template"
    (out / ".claude").mkdir(parents=True)
    (out / ".claude" / "settings.json").write_text('{\n  // mine\n  "model": "opus",\n}\n')
    (out / "README.md").write_text("the user's\n")
    os.environ["AGENTRC_CACHE_DIR"] = str(cache)
    assert _run(reg, out, "claude,copilot")[0] == 0  # at the path of the builds to come: the cache is by path
    out.rename(template)
    _append(reg / "rules" / "commit-style" / "RULE.md", "\nOne more line.\n")
    clean = tmp_path / "clean"
    shutil.copytree(template, clean, symlinks=True)
    assert _run(reg, clean, "claude,copilot", "--no-cache")[0] == 0
    return reg, template, cache, _without_stat(full_tree(clean))


@pytest.mark.parametrize("fault", ["EIO", "kill"])
def test_a_fault_at_any_step_of_a_replayed_write_then_a_rebuild_gives_the_clean_tree(tmp_path, monkeypatch, fault):
    """The fault injection of test_output_safety, at every call the writer makes to the disk
    during a replayed edit: the build fails (or is killed), and the next build gives exactly
    the tree a whole build of the edit gives."""
    import errno

    from test_output_safety import _FaultyOS, _Killed, _without_stat
    from test_output_safety import _tree as full_tree

    monkeypatch.setenv("AGENTRC_CACHE_DIR", "")
    reg, template, cache, expected = _replay_scenario(tmp_path)
    error = _Killed if fault == "kill" else errno.EIO

    def fresh(k: int):
        out, where = tmp_path / "out", tmp_path / "cache"
        for d in (out, where):
            shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(template, out, symlinks=True)  # copy2: the recorded statuses are kept
        shutil.copytree(cache, where)
        monkeypatch.setenv("AGENTRC_CACHE_DIR", str(where))
        faulty = _FaultyOS(k, error)
        monkeypatch.setattr(writer, "os", faulty)
        return out, faulty

    out, counter = fresh(0)
    incremental.LAST = incremental.Outcome()
    assert _run(reg, out, "claude,copilot")[0] == 0
    assert incremental.LAST.path == REPLAY and incremental.LAST.written == 2, incremental.LAST
    total = counter.count
    assert total > 10, total
    monkeypatch.setattr(writer, "os", os)
    assert _without_stat(full_tree(out)) == expected
    for k in range(1, total + 1):
        out, faulty = fresh(k)
        incremental.LAST = incremental.Outcome()
        try:
            code = _run(reg, out, "claude,copilot")[0]
            left = {p: v for p, v in _without_stat(full_tree(out)).items() if p != ".agentrc/lock"}
            assert code != 0 or left == expected, f"step {k}: the fault was not reported"
        except _Killed:
            pass
        finally:
            faulty.close_leaked()
        assert incremental.LAST.path == REPLAY, (k, incremental.LAST)
        monkeypatch.setattr(writer, "os", _FaultyOS(0, error))
        assert _run(reg, out, "claude,copilot")[0] == 0, f"step {k}: the next build failed"
        monkeypatch.setattr(writer, "os", os)
        # (A lock file whose removal failed stays until a build opens the directory again.)
        left = {p: v for p, v in _without_stat(full_tree(out)).items() if p != ".agentrc/lock"}
        assert left == expected, f"step {k}: the rebuild differs from a clean build"
        incremental.LAST = incremental.Outcome()
        assert _run(reg, out, "claude,copilot")[0] == 0
        assert incremental.LAST.path == "", (k, incremental.LAST)  # and the stamp is the tree's


@pytest.mark.parametrize("extra", [("--check",), ("--report", "REPORT")], ids=["check", "report"])
def test_check_and_report_builds_are_never_replayed(tmp_path, monkeypatch, extra):
    """`--check` writes nothing and `--report` writes the whole fidelity report: both take the
    full build after an edit (and print what a `--no-cache` build prints)."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, inc, ref = tmp_path / "reg", tmp_path / "inc", tmp_path / "ref"
    _generator().generate(str(reg), 20, seed=6)
    assert _run(reg, inc, "claude,copilot,opencode")[0] == 0
    assert _run(reg, ref, "claude,copilot,opencode", "--no-cache")[0] == 0
    body_rule(reg)
    args = tuple(str(tmp_path / "report.json") if a == "REPORT" else a for a in extra)
    incremental.LAST = incremental.Outcome()
    got = _run(reg, inc, "claude,copilot,opencode", *args)
    assert incremental.LAST.path in ("", "full"), incremental.LAST
    assert got == _run(reg, ref, "claude,copilot,opencode", "--no-cache", *args)
    assert _tree(inc) == _tree(ref)


def test_a_link_in_place_of_an_output_directory_is_left_to_the_full_build(tmp_path, monkeypatch):
    """The replay compares the output's statuses through its directories: a directory
    swapped for a link to a copy (same sizes, times and modes) sends the build to the full
    path, which refuses it (AR140), as test_edit_cost checks."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 20, seed=7)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    agents = out / ".claude" / "agents"
    shutil.copytree(agents, tmp_path / "elsewhere")
    shutil.rmtree(agents)
    agents.symlink_to(tmp_path / "elsewhere")
    body_rule(reg)
    incremental.LAST = incremental.Outcome()
    code, lines = _run(reg, out, "claude,copilot,opencode")
    assert code == 1 and any("AR140" in line for line in lines), lines[-5:]
    assert incremental.LAST.path == "full" and "under the lock" in incremental.LAST.reason, incremental.LAST


def test_the_manifest_is_hashed_before_the_lock_and_compared_under_it(tmp_path, monkeypatch):
    """The replay hashes the last build's manifest once, before the lock (`untouched_manifest`),
    and compares the one it reads under the lock with those bytes (3.6 MB at 5,000 items);
    a manifest changed between the two sends the build to the full path."""
    from agentrc.output import directory, recorded, recovery

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 20, seed=11)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    before = (out / ".agentrc" / "manifest.json").read_bytes()
    hashed: List[bytes] = []
    for module in (directory, recorded, recovery):
        real = module.sha
        monkeypatch.setattr(module, "sha", lambda data, real=real: hashed.append(bytes(data)) or real(data))
    body_rule(reg)
    incremental.LAST = incremental.Outcome()
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    assert incremental.LAST.path == "replay", incremental.LAST
    assert hashed.count(before) == 1

    real_untouched = writer.untouched_manifest
    monkeypatch.setattr(writer, "untouched_manifest",
                        lambda *args: (lambda raw: raw and raw + b" ")(real_untouched(*args)))  # as if it changed since
    body_rule(reg)
    incremental.LAST = incremental.Outcome()
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    assert incremental.LAST.path == "full" and "under the lock" in incremental.LAST.reason, incremental.LAST


def test_a_warning_about_the_last_write_is_not_repeated_by_the_builds_after_it(tmp_path, monkeypatch):
    """AR094's warning that agentrc added a removed entry again is about that write: the
    no-change build and the replayed edit after it print what a whole build prints (no
    warning), not the last build's record of it."""
    from test_output_safety import _small_registry

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = _small_registry(tmp_path / "reg"), tmp_path / "out"
    assert _run(reg, out, "claude")[0] == 0
    settings = out / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    code, lines = _run(reg, out, "claude")
    assert code == 0 and any("warning[AR094]" in line for line in lines), lines
    for edit in (None, lambda: _append(reg / "rules" / "commit-style" / "RULE.md", "\nOne more line.\n")):
        if edit is not None:
            edit()
        ref = tmp_path / f"ref-{edit is None}"
        shutil.copytree(out, ref, symlinks=True)
        incremental.LAST = incremental.Outcome()
        got = _run(reg, out, "claude")
        assert incremental.LAST.path == ("" if edit is None else REPLAY), incremental.LAST
        want = _run(reg, ref, "claude", "--no-cache")
        assert [line for line in got[1] if "AR094" in line] == [] == [line for line in want[1] if "AR094" in line]


def test_a_replay_whose_items_are_loaded_differently_by_other_clients_is_built_whole(tmp_path, monkeypatch):
    """The sightings of the edited items (AR095, `also_loaded_by`) are compared, not assumed:
    when they differ the build is the full one. (A body edit that changes them also changes
    a report in today's adapters; the comparison is checked here on its own.)"""
    from agentrc.output import plan as planning

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 20, seed=8)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    body_skill(reg)
    real, calls = planning.cross_discovery, []

    def differing(clients, items, entries):
        calls.append(len(items))
        found = real(clients, items, entries)
        return found + [planning.Sighting("x", ("y",), items[0].kind, "z", "p", planning.ONLY)] \
            if len(calls) == 2 else found
    monkeypatch.setattr(planning, "cross_discovery", differing)
    incremental.LAST = incremental.Outcome()
    got = _run(reg, out, "claude,copilot,opencode")
    assert incremental.LAST.path == FULL and "differently" in incremental.LAST.reason, incremental.LAST
    assert calls[:2] == [1, 1] and len(calls) == 3, calls  # the old and new sides, then the full plan
    monkeypatch.undo()
    ref = tmp_path / "ref"
    assert _run(reg, ref, "claude,copilot,opencode", "--no-cache")[0] == got[0] == 0
    assert _tree(out) == _tree(ref)


def test_a_fallback_goes_on_with_what_the_replay_parsed_and_rendered(tmp_path, monkeypatch):
    """A frontmatter edit is compared, found to reach further, and built whole: the full
    build takes the directory the replay parsed and the items it rendered from the memo it
    hands over, so each is parsed once and rendered once per client."""
    from agentrc.clients.base import ClientAdapter
    from agentrc.portable import load

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 20, seed=9)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    frontmatter(reg)
    parsed, rendered = [], []
    real_parse, real_render = load._parse_dir, ClientAdapter.render
    monkeypatch.setattr(load, "_parse_dir", lambda d, *a: parsed.append(d) or real_parse(d, *a))
    monkeypatch.setattr(ClientAdapter, "render", lambda self, item, ctx: rendered.append(item.name)
                        or real_render(self, item, ctx))
    incremental.LAST = incremental.Outcome()
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    assert incremental.LAST.path == FULL and incremental.LAST.dirs == 1, incremental.LAST
    assert len(parsed) == 1 and len(rendered) <= 3, (parsed, rendered)


def test_an_edit_of_an_item_a_bundle_selection_leaves_out_is_replayed_to_no_change(tmp_path, monkeypatch):
    """With `--bundle`, the items outside the selection are parsed (their diagnostics count)
    but not rendered: an edit of one is replayed and writes nothing; an edit of a selected
    one writes its files. Both print what a `--no-cache` build prints."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, inc, ref = tmp_path / "reg", tmp_path / "inc", tmp_path / "ref"
    _generator().generate(str(reg), 40, seed=10)
    name = sorted((reg / "bundles").iterdir())[0].name[:-len(".bundle.yaml")]
    args = ("--bundle", name)
    assert _run(reg, inc, "claude,copilot,opencode", *args)[0] == 0
    assert _run(reg, ref, "claude,copilot,opencode", "--no-cache", *args)[0] == 0
    listed = {Path(p).stem for p in _tree(ref) if p.startswith(".claude/rules/")}  # the rules built
    rules = sorted(p for p in (reg / "rules").iterdir() if p.is_dir())
    assert listed and len(listed) < len(rules)
    for rule, writes in ((next(p for p in rules if p.name not in listed), 0),
                         (next(p for p in rules if p.name in listed), 3)):
        _append(_entry(rule), "\nEdited.\n")
        incremental.LAST = incremental.Outcome()
        got = _run(reg, inc, "claude,copilot,opencode", *args)
        assert incremental.LAST.path == REPLAY and incremental.LAST.written == writes, (rule, incremental.LAST)
        assert got == _run(reg, ref, "claude,copilot,opencode", "--no-cache", *args)
        assert _tree(inc) == _tree(ref)


def test_replays_in_a_row_rewrite_neither_the_memo_index_nor_its_packs(tmp_path, monkeypatch):
    """Each replay keeps every memo entry and adds a few: it appends them (`cache.append`),
    where its save wrote the whole index again and, every MAX_PACKS replays, copied every
    entry into a new pack. Ten replays later the full build's index and pack are the files
    it wrote, and every entry of the last build is still there for the next."""
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 30, seed=3)
    assert _run(reg, out, "claude,copilot,opencode")[0] == 0
    (root,) = (tmp_path / "cache").glob("*.memo")

    def files():
        return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in root.iterdir()}

    first = files()
    assert len(first) == 2  # the index and the full build's pack
    for n in range(cache.MAX_PACKS + 2):
        _append(_entry(_item(reg, "rules", n % 3)), f"\nLine {n}.\n")
        incremental.LAST = incremental.Outcome()
        assert _run(reg, out, "claude,copilot,opencode")[0] == 0
        assert incremental.LAST.path == REPLAY, incremental.LAST
    now = files()
    assert {k: now[k] for k in first} == first
    assert sum(name.endswith(cache.ADDITION) for name in now) == cache.MAX_PACKS + 2
    memo = cache.load(root.with_suffix(".pickle"))
    assert memo.store is not None and len(memo.store.index) == 4 * 30 + 4 * (cache.MAX_PACKS + 2)


def test_an_edited_file_s_item_directory_is_found_from_its_ancestors_as_discovery_finds_it(tmp_path):
    """The replay looks up the entrypoints of an edited file's ancestors (`_owner`), instead
    of listing the item directories of the whole registry: the same directory for every file,
    nested item directories, files outside any and the registry marker included."""
    from agentrc.names import REGISTRY_MARKER
    from agentrc.portable import discovery

    reg = tmp_path / "reg"
    _generator().generate(str(reg), 40, seed=3)
    skill = _item(reg, "skills", 0, supporting=True)
    (skill / "nested").mkdir(exist_ok=True)
    (skill / "nested" / "SKILL.md").write_text("---\nname: nested\n---\nx\n", encoding="utf-8")
    (skill / "nested" / "deeper").mkdir()
    (skill / "nested" / "deeper" / "notes.md").write_text("x\n", encoding="utf-8")
    (reg / "loose").mkdir()
    (reg / "loose" / "notes.md").write_text("x\n", encoding="utf-8")
    (reg / "loose" / REGISTRY_MARKER).write_text("", encoding="utf-8")
    paths = sorted(p.relative_to(reg).as_posix() for p in reg.rglob("*") if p.is_file())
    files = dict.fromkeys(paths)
    dirs = discovery.item_dirs(p for p in paths if not p.endswith(REGISTRY_MARKER))
    assert [incremental.owner(p, files) for p in paths] == [discovery.owner(p, dirs) for p in paths]
    assert incremental.owner("loose/notes.md", files) is None
    assert incremental.owner(f"{skill.relative_to(reg).as_posix()}/nested/deeper/notes.md", files) == \
        f"{skill.relative_to(reg).as_posix()}/nested"


def test_the_sources_record_is_read_through_one_pair_of_functions():
    """`_changed` reads the sources' record through `recorded_files` and `_recorded_file`
    alone (one place to adapt when its layout changes): bytes changed are listed, a mode
    changed, a file added or a malformed record fall back, the order of paths does not
    matter; in the same order, the digests are compared a block at a time."""
    def record(**files):
        return stamp.record(0, {p: stamp.STATUS.pack(0, 0, 0, 0, 0, mode) for p, (mode, _) in files.items()},
                            {p: sha.encode() * 32 for p, (_, sha) in files.items()}, None, "")

    old = record(a=(0o644, "a"), b=(0o644, "b"))
    assert incremental._recorded_file(stamp.recorded_files(old), "a") == (0o644, b"a" * 32)
    assert incremental._recorded_file(stamp.recorded_files(old), "c") is None
    assert incremental._recorded_file(None, "a") is None
    def changed(old, new):
        return incremental._changed(stamp.recorded_files(old), stamp.recorded_files(new))

    assert changed(old, record(b=(0o644, "b"), a=(0o644, "c"))) == ["a"]
    assert changed(old, record(a=(0o644, "c"), b=(0o644, "b"))) == ["a"]
    for new in (record(a=(0o755, "c"), b=(0o644, "b")), record(a=(0o755, "a"), b=(0o644, "b")),
                record(b=(0o755, "b"), a=(0o644, "c")), record(a=(0o644, "c")),
                record(a=(0o644, "c"), b=(0o644, "b"), c=(0o644, "c")), dict(old, shas=b"x"), None, old):
        with pytest.raises(incremental.Fallback):
            changed(old, new)
    many = {f"d{i:04}": (0o644, "a") for i in range(300)}
    edited = dict(many, d0070=(0o644, "b"), d0299=(0o644, "c"))
    assert changed(record(**many), record(**edited)) == ["d0070", "d0299"]
