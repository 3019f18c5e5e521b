"""bench/gen_registry.py makes the registry issue 13 measures: it lints clean, and it has
the stated shape (40% rules, half path-scoped; 40% skills, some with supporting files;
20% agents; 5 MCP servers in bundles; bodies of 1-6 KiB), byte-identical for one seed."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys

from helpers import ROOT

from agentrc.cli.main import main


def _generator():
    spec = importlib.util.spec_from_file_location("gen_registry", ROOT / "bench" / "gen_registry.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_registry", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_generated_registry_lints_clean_and_has_the_stated_shape(tmp_path):
    gen = _generator()
    files = gen.generate(str(tmp_path / "reg"), 250, seed=3)
    assert files == gen.render(gen.plan(250, 3), 3)  # deterministic
    entry = {kind: [p for p in files if p.endswith(f"/{kind}.md")] for kind in ("RULE", "SKILL", "AGENT")}
    assert [len(entry[k]) for k in ("RULE", "SKILL", "AGENT")] == [100, 100, 50]
    scoped = [p for p in entry["RULE"] if "\nscope:\n  paths:" in files[p]]
    assert len(scoped) == 50
    with_files = {p.split("/")[1] for p in files if p.startswith("skills/") and not p.endswith("/SKILL.md")}
    assert 50 <= len(with_files) <= 85  # about two thirds
    bodies = [len(files[p].split("\n---\n", 1)[1].encode()) for ps in entry.values() for p in ps]
    assert min(bodies) >= 1024 and max(bodies) <= 6144
    bundles = [text for p, text in files.items() if p.endswith(".bundle.yaml")]
    assert len(bundles) >= 3
    servers = [m for text in bundles for m in re.findall(r"^  ([a-z-]+):\n    (?:local|remote):", text, re.M)]
    assert len(servers) == len(set(servers)) == 5
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["lint", str(tmp_path / "reg")])
    assert code == 0 and "0 error(s), 0 warning(s)" in err.getvalue(), err.getvalue()[-2000:]


def test_a_cold_build_of_the_registry_imports_neither_pyyaml_nor_tempfile(tmp_path):
    """What a cold build of common content imports: its bundles (flow sequences, `requires`
    mappings, paths) are read by the line reader, opencode's `permission:` maps written by
    the emitter, and its spill made without tempfile, so neither PyYAML (10-15 ms, in each
    process) nor tempfile with shutil, bz2 and lzma (6 ms) is imported."""
    import subprocess

    _generator().generate(str(tmp_path / "reg"), 400, seed=5)
    code = ("import sys; from agentrc.cli.main import main; "
            f"rc = main(['build', {str(tmp_path / 'reg')!r}, '--out', {str(tmp_path / 'out')!r}, "
            "'--client', 'claude,copilot,opencode']); "
            # Lazy modules stand in sys.modules unexecuted: what their execution imports tells.
            "print(rc, sorted(m for m in ('yaml.reader', 'shutil', 'bz2') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin",
                               "AGENTRC_CACHE_DIR": str(tmp_path / "cache")})
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout + done.stderr
    assert len(list((tmp_path / "out" / ".opencode" / "agents").iterdir())) > 50


def _bench_run():
    _generator()  # bench/run.py imports it by name
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_counts_the_repetitions_within_each_target_pair_by_pair():
    """bench/run.py's table says how many interleaved repetitions are within issue 13's
    targets, each agentrc run against ruler's of the same repetition (the medians' ratio
    alone hid that a 0.662x stood for runs from 0.64x to 0.72x)."""
    run = _bench_run()

    def scenario(*runs):
        return {"median_s": sorted(runs)[len(runs) // 2], "runs_s": list(runs)}

    res = {"summary": {"agentrc": {"cold": scenario(4.5, 4.5, 4.4), "no-change": scenario(0.3, 0.3, 0.3)},
                       "ruler": {"cold": scenario(6.0, 7.0, 6.8), "no-change": scenario(6.0, 2.0, 6.0)}}}
    lines = run.against_targets(res)
    cold = next(line for line in lines if line.startswith("| cold |"))
    assert cold == "| cold | 0.75, 0.64, 0.65 | 0.662× | 0.66× | 2 of 3 |"
    assert "| no-change | 0.05, 0.15, 0.05 | 0.050× | 0.10× | 2 of 3 |" in lines
    assert not any(line.startswith("| one-edit |") for line in lines)  # not measured: not shown
    assert run.against_targets({"summary": {"agentrc": res["summary"]["agentrc"]}}) == []  # no ruler


def test_the_pants_bench_stops_before_a_full_tmpfs_with_what_to_remove(tmp_path, monkeypatch):
    """A full tmpfs made Pants fail halfway through a cold run with "Missing digest ... not
    present in the local store"; the bench now says so before it starts, naming the
    leftovers of the other benchmarks."""
    import shutil as shutil_module

    import pytest

    _generator()  # bench/pants_bench.py imports it by name
    spec = importlib.util.spec_from_file_location("pants_bench", ROOT / "bench" / "pants_bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "pants_bench", bench)  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    usage = shutil_module.disk_usage(tmp_path)
    monkeypatch.setattr(bench.shutil, "disk_usage", lambda path: usage._replace(free=2 * 2**30))
    bench.check_room(tmp_path, 5000, 2)  # 1.1 GB: room
    with pytest.raises(SystemExit, match=r"2048 MiB free, about 2098 MiB needed for 2 repository copies of "
                                         r"10000 items; .*bench/out/tmpfs/n\*"):
        bench.check_room(tmp_path, 10000, 2)
