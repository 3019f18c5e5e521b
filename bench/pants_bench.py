#!/usr/bin/env python3
"""Time the Pants backend on a generated registry: cold, no-op and one-item edits, with
pantsd, in-process and in process mode; count how many generation processes an edit
reruns (process mode), which is how "only that item's nodes rerun" is measured.

    python bench/pants_bench.py [--items 1000] [--reps 3] [--modes in-process process]
                                [--launchers native python] [--src head|worktree|COMMIT ...]

Works in a scratch copy of the repository under bench/out/tmpfs/pants/ (a tmpfs it mounts
when run as root, like bench/run.py; bench/out/pants/ on the disk otherwise): copies the
`./pants` launcher, 3rdparty/python, pants.toml, pants-plugins/ and src/ once (from the
committed HEAD; --src worktree or --src COMMIT for others), generates the registry with
gen_registry.py, runs `./pants tailor ::`, then measures. Every Pants run goes through the
copied `./pants`, as users run it (pointed at this checkout's .pants-venv with
AGENTRC_PANTS_VENV): `native` is its default, Pants' native client talking to pantsd;
`python` is the same launcher with PANTS_NO_NATIVE_CLIENT=1, i.e. `python -m pants` (a
commit older than the native-client launcher is measured as `python` only). Several --src
are measured side by side, each in its own repository with its own pantsd. Launchers and
code versions are interleaved run by run, so noise on this shared machine hits all alike.

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
from dataclasses import dataclass
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
    env.update({k: v for k, v in os.environ.items() if k.startswith("MALLOC_")})  # glibc's allocator, for pantsd
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


# .gitignore too: Pants reads it (pants_ignore_use_gitignore), and without it pantsd's
# invalidation globs took in the __pycache__ files it writes under src/ (106 of 286 files).
COPIED = ("pants", "pants.toml", ".gitignore", "3rdparty/python", "pants-plugins", "src")


def copy_code(repo: Path, source: str) -> str:
    """Copy the launcher, the backend and the core into `repo` once, so colleagues editing
    the checkout during a run cannot change the code under test midway: from the committed
    HEAD (`head`), or as they are now (`worktree`). Returns a label naming the commit."""
    rev = "HEAD" if source in ("head", "worktree") else source
    head = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, check=True,
                          text=True).stdout.strip()
    if source != "worktree":
        archive = subprocess.run(["git", "archive", rev, *COPIED], cwd=ROOT, check=True, stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(repo)], input=archive.stdout, check=True)
        label = f"{head} (HEAD)" if source == "head" else head
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


# A scratch repository at its largest (registry, dist/, the local store, .pants.d): about
# 1.05 GB at 10,000 items on 2026-12-04.
SCRATCH_BYTES_PER_ITEM = 110_000


def check_room(base: Path, items: int, copies: int) -> None:
    """Stop before Pants does, saying what to remove: on a full tmpfs a failed write to the
    local store surfaced halfway through a cold run as "Missing digest ... not present in the
    local store" (two 10,000-item copies beside bench/run.py's leftovers, 2026-12-04)."""
    need = items * copies * SCRATCH_BYTES_PER_ITEM
    free = shutil.disk_usage(base).free
    if free < need:
        raise SystemExit(f"{base}: {free // 2**20} MiB free, about {need // 2**20} MiB needed for {copies} "
                         f"repository copies of {items} items; remove what earlier benchmarks left there "
                         "(bench/out/tmpfs/n*: bench/run.py's; bench/out/tmpfs/pants/p*: bench/pants_rss.py's)")


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


def pantsd_rss(repo: Path) -> int:
    """Resident MiB of the repository's pantsd (0 when none runs): read after each run, so a
    daemon growing toward `pantsd_max_memory_usage` (and restarting cold) shows."""
    for pidfile in (repo / ".pids").glob("*/pantsd/pid"):
        try:
            with open(f"/proc/{int(pidfile.read_text().strip())}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) // 1024
        except (OSError, ValueError):
            pass
    return 0


def stop_pantsd(repo: Path) -> None:
    for pidfile in (repo / ".pids").glob("*/pantsd/pid"):
        try:
            os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


@dataclass
class Variant:
    """One thing measured: a copy of the code (its own scratch repository and pantsd),
    reached through one launcher."""

    src: str
    repo: Path
    launcher: str

    @property
    def name(self) -> str:
        return f"{self.src} / {self.launcher}"


def scenario(variants: list, edits: dict, mode: str, reps: int) -> dict:
    """Per repository: cold (daemon start included, through its first launcher) and an
    untimed warm-up; then per repetition a no-op and each edit for every variant in turn,
    so noise on this shared machine hits every variant alike."""
    # --stats-log only where its counters are read (process mode), as users run no-ops without it.
    flags = [f"--agentrc-execution={mode}"] + (["--stats-log"] if mode == "process" else [])
    cold = {}
    for v in variants:
        if v.repo in cold:
            continue
        shutil.rmtree(v.repo / "dist", ignore_errors=True)
        shutil.rmtree(v.repo / ".store", ignore_errors=True)
        stop_pantsd(v.repo)
        cold[v.repo] = (pants(v.repo, *flags, "package", "::", launcher=v.launcher)[0], v.launcher)  # starts pantsd
        pants(v.repo, *flags, "package", "::", launcher=v.launcher)  # untimed warm-up
    runs = {v.name: {"noop": [], **{name: [] for name in edits}} for v in variants}
    rss = {v.name: [pantsd_rss(v.repo)] for v in variants}  # MiB after the cold run, then after each run
    reruns = {v.name: {name: [] for name in edits} for v in variants}
    originals = {name: (variants[0].repo / rel).read_text() for name, rel in edits.items()}  # identical registries
    for i in range(reps):
        for v in variants:
            runs[v.name]["noop"].append(pants(v.repo, *flags, "package", "::", launcher=v.launcher)[0])
            rss[v.name].append(pantsd_rss(v.repo))
        for name, rel in edits.items():
            for v in variants:
                (v.repo / rel).write_text(originals[name] + f"\nEdited line {mode} {v.launcher} {i}.\n")
                t, out = pants(v.repo, *flags, "package", "::", launcher=v.launcher)
                runs[v.name][name].append(t)
                rss[v.name].append(pantsd_rss(v.repo))
                reruns[v.name][name].append(counter(out, "local_cache_requests_uncached"))
    for v in variants:
        for name, rel in edits.items():
            (v.repo / rel).write_text(originals[name])
        stop_pantsd(v.repo)
    return {v.name: {"cold": cold[v.repo][0] if cold[v.repo][1] == v.launcher else None, "runs": runs[v.name],
                     "median": {k: statistics.median(x) for k, x in runs[v.name].items()},
                     "pantsd_rss_mib": rss[v.name],
                     "reruns": {k: statistics.median(x) for k, x in reruns[v.name].items()} if mode == "process"
                     else None}
            for v in variants}


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
    ap.add_argument("--src", nargs="+", default=["head"], metavar="head|worktree|COMMIT",
                    help="the launcher, backend and core to measure: the committed HEAD (default), the working tree "
                         "as it is now, or a commit; several are measured side by side, each in its own repository "
                         "with its own pantsd")
    args = ap.parse_args()
    # Like bench/run.py: on this VM's ext4 (mounted with `discard`), rewriting thousands of
    # small files in dist/ dominates every run, so the repos go on a tmpfs.
    tmpfs = ROOT / "bench" / "out" / "tmpfs"
    on_tmpfs = not args.no_tmpfs and mount_tmpfs(tmpfs)
    base = tmpfs if on_tmpfs else ROOT / "bench" / "out"
    where = "tmpfs" if on_tmpfs else "disk" + ("" if args.no_tmpfs else " (tmpfs mount failed: not root?)")
    variants, labels = [], {}
    repos = [base / "pants" / (f"n{args.items}" if i == 0 else f"n{args.items}-{i}") for i in range(len(args.src))]
    for repo in repos:
        shutil.rmtree(repo, ignore_errors=True)
    check_room(base, args.items, len(repos))
    for i, (src, repo) in enumerate(zip(args.src, repos)):
        print(f"repository copy {i}: {repo} ({where})", file=sys.stderr)
        repo.mkdir(parents=True)
        labels[repo] = label = copy_code(repo, src)
        (repo / "BUILD").write_text("")
        generate(["--items", str(args.items), "--out", str(repo / "registry")])
        # A registry root, as a monorepo holding teams' registries has: `pants package ::` writes its
        # tree, and `pants tailor` puts one recursive agentrc_items in its BUILD file.
        (repo / "registry" / "agentrc-registry.yaml").write_text("schema: 1\n")
        has_native = "native_client" in (repo / "pants").read_text()
        for launcher in args.launchers:
            if launcher == "native" and not has_native:
                print(f"{label}: its ./pants has no native-client support; measuring it as `python` only",
                      file=sys.stderr)
                continue
            variants.append(Variant(label, repo, launcher))
    variants = [v for i, v in enumerate(variants) if v.name not in {w.name for w in variants[:i]}]
    load_start = load()
    for repo in labels:
        pants(repo, "--no-pantsd", "tailor", "::")
    first = variants[0].repo
    targets = sum(1 for _ in (first / "registry").rglob("BUILD"))
    edits = {"edit": sorted((first / "registry").rglob("RULE.md"))[0].relative_to(first),
             "edit_referenced": most_referenced_rule(first / "registry").relative_to(first)}
    results = {mode: scenario(variants, edits, mode, args.reps) for mode in args.modes}
    remote = (remote_scenario(first, args.port) if "process" in args.modes
              else {"skipped": "process mode not measured"})
    load_end = load()
    print(json.dumps({"items": args.items, "build_files": targets, "code": [v.src for v in variants],
                      "filesystem": where, "load_average": {"start": load_start, "end": load_end},
                      "edited": {k: str(v) for k, v in edits.items()},
                      "launchers": {k: LAUNCHERS[k] for k in args.launchers},
                      "results": results, "remote": remote}, indent=1))
    print(f"\n{args.items} items ({targets} BUILD files), {where}, medians of {args.reps}; "
          f"load average {load_start} at the start, {load_end} at the end.")
    print(f"Edits: {edits['edit']} (referenced by nothing else); "
          f"{edits['edit_referenced']} (the most-referenced rule).")
    for launcher in args.launchers:
        print(f"Launcher {launcher}: {LAUNCHERS[launcher]}")
    print("\n| agentrc | execution | launcher | cold (s) | no-op (s) | one edit (s) "
          "| one edit, most-referenced rule (s) | generation processes rerun by the edits "
          "| pantsd RSS, after cold / at most (MiB) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode, by_variant in results.items():
        for v in variants:
            r = by_variant[v.name]
            m = r["median"]
            rerun = "—" if r["reruns"] is None else f"{r['reruns']['edit']:.0f} / {r['reruns']['edit_referenced']:.0f}"
            cold = "—" if r["cold"] is None else f"{r['cold']:.1f}"
            print(f"| {v.src} | {mode} | {v.launcher} | {cold} | {m['noop']:.2f} | {m['edit']:.2f} | "
                  f"{m['edit_referenced']:.2f} | {rerun} | {r['pantsd_rss_mib'][0]} / {max(r['pantsd_rss_mib'])} |")
    if "skipped" not in remote:
        print(f"\nProcess mode ({variants[0].src}), fresh local store, warm BuildGrid, without pantsd: "
              f"{remote['cold_remote_no_pantsd']:.1f} s, {remote['remote_hits']} of "
              f"{remote['remote_requests']} remote cache requests hit.")
    else:
        print(remote["skipped"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
