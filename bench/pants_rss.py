#!/usr/bin/env python3
"""One sequence of `./pants package ::` runs on a generated registry, with pantsd's resident
memory read after each run: what docs/benchmarks.md's "pantsd's memory" table comes from.

    python bench/pants_rss.py --items 5000 --setup [--src worktree|head|COMMIT]
    python bench/pants_rss.py --items 5000 --runs cold,noop,noop,edit,noop
    python bench/pants_rss.py --items 5000 --setup --workunits bench/out/workunits   # + the slowest rules
    python bench/pants_rss.py --items 5000 --runs cold --sample   # + where pantsd's memory peaked

`--setup` makes the scratch repository like bench/pants_bench.py does (bench/out/tmpfs/pants/
p<items>, on the tmpfs when run as root: the code, gen_registry.py's registry, `./pants
tailor ::`); later calls reuse it and its pantsd. `cold` stops pantsd and clears dist/ first;
`edit` appends a line to the first rule by path (restored at the end). Each run prints one
JSON line: seconds, the load average, pantsd's VmRSS / VmHWM (peak) / RssAnon in MiB, and the
number of files under dist/. A
pid that changes between runs is a daemon Pants restarted (e.g. over
`pantsd_max_memory_usage`), and the next run was cold.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import pants_bench as pb  # noqa: E402


def status(repo: Path) -> dict:
    out: dict = {}
    for pidfile in (repo / ".pids").glob("*/pantsd/pid"):
        pid = pidfile.read_text().strip()
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith(("VmRSS", "VmHWM", "RssAnon")):
                        key, value = line.split(":")
                        out[key] = int(value.split()[0]) // 1024
            out["pid"] = int(pid)
        except (OSError, ValueError):
            pass
    return out


def with_workunit_logger(toml: Path, logdir: Path) -> None:
    """Pants' own workunit logger (a backend shipped with 2.17) in the scratch repository:
    every rule's start and duration, per run, as JSON in `logdir`."""
    logdir.mkdir(parents=True, exist_ok=True)
    text, ours = toml.read_text(), 'backend_packages = ["agentrc_pants"]'
    if ours not in text:  # else Pants would stop at the `[workunit-logger]` scope it does not know
        raise SystemExit(f"{toml}: no `{ours}` line to add the workunit logger's backend to")
    text = text.replace(ours, ours[:-1] + ', "pants.backend.experimental.tools.workunit_logger"]')
    toml.write_text(text + f'\n[workunit-logger]\nenabled = true\nlogdir = "{logdir}"\n')


def _newest_rules(logdir: Path) -> list:
    """The workunits of the newest run logged in `logdir`, below the goal itself."""
    runs = sorted(logdir.glob("*.json"), key=lambda p: p.stat().st_mtime)
    if not runs:
        return []
    return [u for u in json.loads(runs[-1].read_text())
            if u["name"] not in ("select", "pants.core.goals.package.package_asset")]


def _seconds(unit: dict) -> float:
    return unit.get("duration_secs", 0) + unit.get("duration_nanos", 0) / 1e9


class Sampler:
    """pantsd's anonymous memory every quarter second while a run goes on (a thread): the
    run's peak, when it came, and (with the workunit logger) the rules under way then. The
    peak VmHWM says how high; this says where (the index's peeks, all under way at once, were
    1.4 GB of a 10,000-item cold run's peak: `agentrc_pants/rounds.py`)."""

    def __init__(self, repo: Path, interval: float = 0.25):
        self.repo, self.interval = repo, interval
        self.samples: list = []  # (epoch seconds, RssAnon MiB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            anon = status(self.repo).get("RssAnon")
            if anon is not None:
                self.samples.append((time.time(), anon))

    def peak(self, start: float, logdir: Optional[Path]) -> dict:
        if not self.samples:
            return {}
        at, anon = max(self.samples, key=lambda s: s[1])
        out: dict = {"anon_peak": anon, "anon_peak_at": round(at - start, 2)}
        if logdir is not None:
            out["under_way_at_peak"] = rules_under_way(logdir, at)
        return out


def rules_under_way(logdir: Path, at: float, most: int = 5) -> list:
    """The rules of the newest logged run whose workunits spanned the moment `at` (epoch
    seconds), the most instances first."""
    counts: Dict[str, int] = {}
    for u in _newest_rules(logdir):
        start = u.get("start_secs", 0) + u.get("start_nanos", 0) / 1e9
        if start <= at <= start + _seconds(u):
            name = u["name"].rsplit(".", 1)[-1]
            counts[name] = counts.get(name, 0) + 1
    return [f"{name} x{n}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1])[:most]]


def slowest_rules(logdir: Path, most: int = 6) -> dict:
    """The longest workunits (below the goal itself) of the newest run logged in `logdir`,
    in seconds; a rule's time includes what it waited for."""
    timed = sorted(((_seconds(u), u["name"]) for u in _newest_rules(logdir)), reverse=True)
    slowest: dict = {}
    for seconds, name in timed:  # each rule once, at its longest
        slowest.setdefault(name.rsplit(".", 1)[-1], round(seconds, 3))
        if len(slowest) == most:
            break
    return slowest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--src", default="worktree", metavar="worktree|head|COMMIT")
    ap.add_argument("--setup", action="store_true", help="(re)create the scratch repository first")
    ap.add_argument("--runs", default="cold,noop,noop,edit,noop", help="comma-separated: cold, noop, edit")
    ap.add_argument("--tag", default="", help="a suffix for the scratch repository's name (p<items><tag>), so two "
                    "versions can be measured side by side, each with its own pantsd")
    ap.add_argument("--stop", action="store_true", help="stop the repository's pantsd after the runs")
    ap.add_argument("--flag", action="append", default=[], help="an extra Pants flag for every run")
    ap.add_argument("--sample", action="store_true", help="sample pantsd's anonymous memory during each run: its "
                    "peak, when, and (with --workunits) the rules under way then")
    ap.add_argument("--workunits", metavar="DIR", help="with --setup: Pants' workunit logger writes each run's "
                    "workunits to DIR, and each run's line names the slowest rules (where the time goes)")
    args = ap.parse_args()
    base = ROOT / "bench" / "out" / "tmpfs"
    pb.mount_tmpfs(base)
    repo = base / "pants" / f"p{args.items}{args.tag}"
    if args.setup:
        shutil.rmtree(repo, ignore_errors=True)
        repo.mkdir(parents=True)
        print(json.dumps({"code": pb.copy_code(repo, args.src)}), flush=True)
        (repo / "BUILD").write_text("")
        pb.generate(["--items", str(args.items), "--out", str(repo / "registry")])
        # A registry root, as a monorepo holding teams' registries has: `pants package ::` writes its
        # tree, and `pants tailor` puts one recursive agentrc_items in its BUILD file.
        (repo / "registry" / "agentrc-registry.yaml").write_text("schema: 1\n")
        pb.pants(repo, "--no-pantsd", "tailor", "::", timeout=3600)
        if args.workunits:
            with_workunit_logger(repo / "pants.toml", Path(args.workunits).resolve())
    flags = list(args.flag)
    if args.workunits:
        flags.append("--streaming-workunits-level=trace")
    edit = sorted((repo / "registry").rglob("RULE.md"))[0]
    original = edit.read_text()
    try:
        for kind in filter(None, args.runs.split(",")):
            if kind == "cold":
                pb.stop_pantsd(repo)
                time.sleep(2)
                shutil.rmtree(repo / "dist", ignore_errors=True)
            elif kind == "edit":
                edit.write_text(original + f"\nEdited at {time.time()}.\n")
            started = time.time()
            with (Sampler(repo) if args.sample else contextlib.nullcontext()) as sampler:
                seconds, _ = pb.pants(repo, *flags, "package", "::", timeout=3600)
            dist = sum(len(files) for _, _, files in os.walk(repo / "dist"))
            logdir = Path(args.workunits) if args.workunits else None
            slowest = {"slowest": slowest_rules(logdir)} if logdir else {}
            sampled = sampler.peak(started, logdir) if sampler is not None else {}
            print(json.dumps({"run": kind, "s": round(seconds, 2), "load": pb.load(), "dist_files": dist,
                              **status(repo), **slowest, **sampled}), flush=True)
    finally:
        if edit.read_text() != original:  # a rewrite of the same bytes would still be a change to Pants' watcher
            edit.write_text(original)
        if args.stop:
            pb.stop_pantsd(repo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
