#!/usr/bin/env python3
"""Time the Pants backend on a generated registry: cold, no-op and one-item edit, with
pantsd, in-process and in process mode; count how many generation processes an edit
reruns (process mode), which is how "only that item's nodes rerun" is measured.

    python bench/pants_bench.py [--items 1000] [--reps 3]

Works in a scratch copy of the repository under bench/out/pants/ (gitignored): copies
pants.toml, pants-plugins/ and src/, generates the registry with gen_registry.py, runs
`pants tailor ::`, then measures. Each Pants run is bounded by a timeout; pantsd is
stopped at the end. Prints a markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / ".pants-venv" / "bin" / "python"
sys.path.insert(0, str(ROOT / "bench"))

from gen_registry import main as generate  # noqa: E402


def pants(repo: Path, *args: str, timeout: int = 900) -> tuple:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo / ".home"), "NO_SCIE_WARNING": "1",
           "LANG": "C.UTF-8"}
    start = time.monotonic()
    proc = subprocess.run([str(PY), "-m", "pants", f"--pants-workdir={repo / '.pants.d'}",
                           f"--local-store-dir={repo / '.store'}", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=timeout)
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"pants {' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return elapsed, proc.stdout + proc.stderr


def counter(output: str, name: str) -> int:
    m = re.search(rf"\b{name}: (\d+)", output)
    return int(m.group(1)) if m else 0


def stop_pantsd(repo: Path) -> None:
    for pidfile in (repo / ".pids").glob("*/pantsd/pid"):
        try:
            os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def scenario(repo: Path, edit: Path, mode: str, reps: int) -> dict:
    flags = [f"--agentrc-execution={mode}", "--stats-log"]
    shutil.rmtree(repo / "dist", ignore_errors=True)
    shutil.rmtree(repo / ".store", ignore_errors=True)
    stop_pantsd(repo)
    cold, _ = pants(repo, *flags, "package", "::")  # starts pantsd
    noop, edits, reruns = [], [], []
    original = edit.read_text()
    for i in range(reps):
        t, _ = pants(repo, *flags, "package", "::")
        noop.append(t)
        edit.write_text(original + f"\nEdited line {mode} {i}.\n")
        t, out = pants(repo, *flags, "package", "::")
        edits.append(t)
        reruns.append(counter(out, "local_cache_requests_uncached"))
    edit.write_text(original)
    stop_pantsd(repo)
    return {"cold": cold, "noop": statistics.median(noop), "edit": statistics.median(edits),
            "reruns": statistics.median(reruns) if mode == "process" else None}


def remote_scenario(repo: Path, port: int) -> dict:
    """Process mode, empty local store, BuildGrid already holding every result: the cold
    build of a fresh clone on a machine whose team has built the same sources before."""
    started = subprocess.run([str(ROOT / "tools" / "buildgrid" / "start.sh"), str(port)], capture_output=True,
                             text=True, timeout=300, env={**os.environ, "BUILDGRID_STATE_DIR": str(repo / ".bgd")})
    if started.returncode != 0:
        return {"skipped": f"BuildGrid did not start: {started.stderr.strip()[-300:]}"}
    flags = ["--agentrc-execution=process", "--stats-log", *started.stdout.split()]
    try:
        stop_pantsd(repo)
        shutil.rmtree(repo / ".store", ignore_errors=True)
        pants(repo, "--no-pantsd", *flags, "package", "::")  # fills the remote cache
        shutil.rmtree(repo / ".store", ignore_errors=True)
        shutil.rmtree(repo / "dist", ignore_errors=True)
        t, out = pants(repo, "--no-pantsd", *flags, "package", "::")
        return {"cold_remote_no_pantsd": t, "remote_hits": counter(out, "remote_cache_requests_cached"),
                "remote_requests": counter(out, "remote_cache_requests")}
    finally:
        subprocess.run([str(ROOT / "tools" / "buildgrid" / "stop.sh")], capture_output=True, timeout=60,
                       env={**os.environ, "BUILDGRID_STATE_DIR": str(repo / ".bgd")})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--port", type=int, default=50099, help="loopback port for BuildGrid")
    ap.add_argument("--modes", nargs="+", default=["in-process", "process"], choices=["in-process", "process"],
                    help="execution modes to measure (process mode packages every target in its own "
                         "sandboxed process: minutes for a cold 1,000-item registry)")
    args = ap.parse_args()
    # Like bench/run.py: on this VM's ext4 (mounted with `discard`), rewriting thousands of
    # small files in dist/ dominates every run, so the repo goes on a tmpfs when one is
    # mounted at bench/out/tmpfs (bench/run.py mounts it).
    tmpfs = ROOT / "bench" / "out" / "tmpfs"
    base = tmpfs if os.path.ismount(tmpfs) else ROOT / "bench" / "out"
    repo = base / "pants" / f"n{args.items}"
    print(f"repository copy: {repo} ({'tmpfs' if base == tmpfs else 'disk'})", file=sys.stderr)
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    shutil.copy(ROOT / "pants.toml", repo / "pants.toml")
    (repo / "BUILD").write_text("")
    ignore = shutil.ignore_patterns("__pycache__", "*_test.py", "testutil.py", "conftest.py")
    shutil.copytree(ROOT / "pants-plugins", repo / "pants-plugins", ignore=ignore)
    shutil.copytree(ROOT / "src", repo / "src", ignore=ignore)
    generate(["--items", str(args.items), "--out", str(repo / "registry")])
    pants(repo, "--no-pantsd", "tailor", "::")
    targets = sum(1 for _ in (repo / "registry").rglob("BUILD"))
    edit = next(sorted((repo / "registry").rglob("RULE.md")).__iter__())
    results = {mode: scenario(repo, edit, mode, args.reps) for mode in args.modes}
    remote = remote_scenario(repo, args.port) if "process" in args.modes else {"skipped": "process mode not measured"}
    print(json.dumps({"items": args.items, "build_files": targets, "edited": str(edit.relative_to(repo)),
                      "results": results, "remote": remote}, indent=1))
    print(f"\n| execution | cold (s) | no-op (s) | one edit (s) | generation processes rerun by the edit |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for mode, r in results.items():
        rerun = "—" if r["reruns"] is None else f"{r['reruns']:.0f}"
        print(f"| {mode} | {r['cold']:.1f} | {r['noop']:.2f} | {r['edit']:.2f} | {rerun} |")
    if "skipped" not in remote:
        print(f"\nProcess mode, fresh local store, warm BuildGrid, without pantsd: "
              f"{remote['cold_remote_no_pantsd']:.1f} s, {remote['remote_hits']} of "
              f"{remote['remote_requests']} remote cache requests hit.")
    else:
        print(remote["skipped"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
