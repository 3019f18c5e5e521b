#!/usr/bin/env python3
"""Time the Pants backend on a generated registry: cold, no-op and one-item edits, with
pantsd, in-process and in process mode; count how many generation processes an edit
reruns (process mode), which is how "only that item's nodes rerun" is measured.

    python bench/pants_bench.py [--items 1000] [--reps 3] [--modes in-process process]
                                [--launchers native python]

Works in a scratch copy of the repository under bench/out/tmpfs/pants/ (a tmpfs it mounts
when run as root, like bench/run.py; bench/out/pants/ on the disk otherwise): copies the
`./pants` launcher, 3rdparty/python, pants.toml, pants-plugins/ and src/ (from the committed
HEAD, or the working tree with --src worktree), generates the registry with gen_registry.py, runs `./pants tailor ::`, then measures. Every Pants run goes
through the copied `./pants`, as users run it (pointed at this checkout's .pants-venv with
AGENTRC_PANTS_VENV): `native` is its default, Pants' native client talking to pantsd;
`python` is the same launcher with PANTS_NO_NATIVE_CLIENT=1, i.e. `python -m pants`. The
launchers are interleaved run by run, so machine noise hits both alike.

Two edits are timed: appending a line to the first rule (by path; no other item references
it) and to the most-referenced rule (in a bundle and required by skills, so several
targets re-assemble). Each Pants run is bounded by a timeout; pantsd is stopped at the end.
Prints the load average, the commit and a markdown table for docs/benchmarks.md.
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
VENV = ROOT / ".pants-venv"
sys.path.insert(0, str(ROOT / "bench"))

from gen_registry import main as generate  # noqa: E402

LAUNCHERS = {
    "native": "./pants (Pants' native client, the launcher's default)",
    "python": "./pants with PANTS_NO_NATIVE_CLIENT=1 (python -m pants)",
}


def pants(repo: Path, *args: str, launcher: str = "native", timeout: int = 900) -> tuple:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo / ".home"), "LANG": "C.UTF-8",
           "AGENTRC_PANTS_VENV": str(VENV)}
    if launcher == "python":
        env["PANTS_NO_NATIVE_CLIENT"] = "1"
    start = time.monotonic()
    proc = subprocess.run([str(repo / "pants"), f"--pants-workdir={repo / '.pants.d'}",
                           f"--local-store-dir={repo / '.store'}", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=timeout)
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"pants {' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return elapsed, proc.stdout + proc.stderr


def load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


COPIED = ("pants", "pants.toml", "3rdparty/python", "pants-plugins", "src")


def copy_code(repo: Path, source: str) -> str:
    """Copy the launcher, the backend and the core into `repo` once, so colleagues editing
    the checkout during a run cannot change the code under test midway: from the committed
    HEAD (`head`), or as they are now (`worktree`). Returns a label naming the commit."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    if source == "head":
        archive = subprocess.run(["git", "archive", "HEAD", *COPIED], cwd=ROOT, check=True, stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(repo)], input=archive.stdout, check=True)
        label = f"{head} (HEAD)"
    else:
        for name in COPIED:
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(ROOT / name, repo / name)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", *COPIED], cwd=ROOT, capture_output=True,
                               text=True).stdout.strip()
        label = f"{head} + working tree" + (" (with uncommitted changes)" if dirty else "")
    for pattern in ("*_test.py", "testutil.py", "conftest.py"):  # the backend's tests are no part of it
        for path in (repo / "pants-plugins").rglob(pattern):
            path.unlink()
    return label


def mount_tmpfs(path: Path) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    if os.path.ismount(path):
        return True
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4g", "tmpfs", str(path)]).returncode == 0


def most_referenced_rule(registry: Path) -> Path:
    """The rule named in the most bundle `items`, skill `requires` and agent lists: an edit
    to it re-assembles the most targets."""
    counts: dict = {}
    for f in [*registry.rglob("*.bundle.yaml"), *registry.rglob("SKILL.md"), *registry.rglob("AGENT.md")]:
        for name in re.findall(r"^\s*- (\S+)\s*$", f.read_text(), re.M):
            counts[name] = counts.get(name, 0) + 1
    rules = sorted(registry.rglob("RULE.md"))
    return min(rules, key=lambda p: (-counts.get(p.parent.name, 0), str(p)))


def counter(output: str, name: str) -> int:
    m = re.search(rf"\b{name}: (\d+)", output)
    return int(m.group(1)) if m else 0


def stop_pantsd(repo: Path) -> None:
    for pidfile in (repo / ".pids").glob("*/pantsd/pid"):
        try:
            os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def scenario(repo: Path, edits: dict, mode: str, reps: int, launchers: list) -> dict:
    """Cold (daemon start included, through the first launcher), then per repetition a
    no-op and each edit with every launcher in turn."""
    flags = [f"--agentrc-execution={mode}", "--stats-log"]
    shutil.rmtree(repo / "dist", ignore_errors=True)
    shutil.rmtree(repo / ".store", ignore_errors=True)
    stop_pantsd(repo)
    cold, _ = pants(repo, *flags, "package", "::", launcher=launchers[0])  # starts pantsd
    pants(repo, *flags, "package", "::", launcher=launchers[0])  # untimed warm-up
    runs = {launcher: {"noop": [], **{name: [] for name in edits}} for launcher in launchers}
    reruns = {name: [] for name in edits}
    originals = {name: path.read_text() for name, path in edits.items()}
    for i in range(reps):
        for launcher in launchers:
            t, _ = pants(repo, *flags, "package", "::", launcher=launcher)
            runs[launcher]["noop"].append(t)
        for name, path in edits.items():
            for launcher in launchers:
                path.write_text(originals[name] + f"\nEdited line {mode} {launcher} {i}.\n")
                t, out = pants(repo, *flags, "package", "::", launcher=launcher)
                runs[launcher][name].append(t)
                reruns[name].append(counter(out, "local_cache_requests_uncached"))
    for name, path in edits.items():
        path.write_text(originals[name])
    stop_pantsd(repo)
    return {"cold": cold, "cold_launcher": launchers[0], "runs": runs,
            "median": {launcher: {k: statistics.median(v) for k, v in r.items()} for launcher, r in runs.items()},
            "reruns": {k: statistics.median(v) for k, v in reruns.items()} if mode == "process" else None}


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
        t, out = pants(repo, "--no-pantsd", *flags, "package", "::")  # native client falls back at once
        return {"cold_remote_no_pantsd": t, "remote_hits": counter(out, "remote_cache_requests_cached"),
                "remote_requests": counter(out, "remote_cache_requests")}
    finally:
        subprocess.run([str(ROOT / "tools" / "buildgrid" / "stop.sh")], capture_output=True, timeout=60,
                       env={**os.environ, "BUILDGRID_STATE_DIR": str(repo / ".bgd")})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--port", type=int, default=50099, help="loopback port for BuildGrid")
    ap.add_argument("--modes", nargs="+", default=["in-process", "process"], choices=["in-process", "process"],
                    help="execution modes to measure (process mode runs one sandboxed process per item "
                         "directory: minutes for a cold 1,000-item registry)")
    ap.add_argument("--launchers", nargs="+", default=["native", "python"], choices=list(LAUNCHERS),
                    help="how ./pants reaches pantsd: " + "; ".join(f"{k}: {v}" for k, v in LAUNCHERS.items()))
    ap.add_argument("--no-tmpfs", action="store_true", help="work under bench/out/pants on the disk")
    ap.add_argument("--src", choices=["head", "worktree"], default="head",
                    help="measure the launcher, backend and core of the committed HEAD (default) or as they are "
                         "in the working tree now")
    args = ap.parse_args()
    # Like bench/run.py: on this VM's ext4 (mounted with `discard`), rewriting thousands of
    # small files in dist/ dominates every run, so the repo goes on a tmpfs.
    tmpfs = ROOT / "bench" / "out" / "tmpfs"
    on_tmpfs = not args.no_tmpfs and mount_tmpfs(tmpfs)
    base = tmpfs if on_tmpfs else ROOT / "bench" / "out"
    repo = base / "pants" / f"n{args.items}"
    where = "tmpfs" if on_tmpfs else "disk" + ("" if args.no_tmpfs else " (tmpfs mount failed: not root?)")
    print(f"repository copy: {repo} ({where})", file=sys.stderr)
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    code = copy_code(repo, args.src)
    (repo / "BUILD").write_text("")
    generate(["--items", str(args.items), "--out", str(repo / "registry")])
    load_start = load()
    pants(repo, "--no-pantsd", "tailor", "::")
    targets = sum(1 for _ in (repo / "registry").rglob("BUILD"))
    edits = {"edit": sorted((repo / "registry").rglob("RULE.md"))[0],
             "edit_referenced": most_referenced_rule(repo / "registry")}
    results = {mode: scenario(repo, edits, mode, args.reps, args.launchers) for mode in args.modes}
    remote = remote_scenario(repo, args.port) if "process" in args.modes else {"skipped": "process mode not measured"}
    load_end = load()
    print(json.dumps({"items": args.items, "build_files": targets, "commit": code, "filesystem": where,
                      "load_average": {"start": load_start, "end": load_end},
                      "edited": {k: str(v.relative_to(repo)) for k, v in edits.items()},
                      "launchers": {k: LAUNCHERS[k] for k in args.launchers},
                      "results": results, "remote": remote}, indent=1))
    print(f"\nagentrc {code}, {args.items} items ({targets} BUILD files), {where}, medians of {args.reps}; "
          f"load average {load_start} at the start, {load_end} at the end.")
    print(f"Edits: {edits['edit'].relative_to(repo)} (referenced by nothing else); "
          f"{edits['edit_referenced'].relative_to(repo)} (the most-referenced rule).")
    for launcher in args.launchers:
        print(f"Launcher {launcher}: {LAUNCHERS[launcher]}")
    print("\n| execution | launcher | cold (s) | no-op (s) | one edit (s) | one edit, most-referenced rule (s) "
          "| generation processes rerun by the edits |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for mode, r in results.items():
        rerun = "—" if r["reruns"] is None else f"{r['reruns']['edit']:.0f} / {r['reruns']['edit_referenced']:.0f}"
        for launcher in args.launchers:
            m = r["median"][launcher]
            cold = f"{r['cold']:.1f}" if launcher == r["cold_launcher"] else "—"
            print(f"| {mode} | {launcher} | {cold} | {m['noop']:.2f} | {m['edit']:.2f} | "
                  f"{m['edit_referenced']:.2f} | {rerun} |")
    if "skipped" not in remote:
        print(f"\nProcess mode, fresh local store, warm BuildGrid, without pantsd: "
              f"{remote['cold_remote_no_pantsd']:.1f} s, {remote['remote_hits']} of "
              f"{remote['remote_requests']} remote cache requests hit.")
    else:
        print(remote["skipped"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
