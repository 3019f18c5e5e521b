#!/usr/bin/env python3
"""Which steps of a build grow faster than the registry: call counts at two sizes.

    nice python bench/scaling.py --items 1000 --items 4000 [--clients claude,copilot,opencode]

For each size it generates a registry (bench/gen_registry.py), then runs agentrc's build in
this process under cProfile, scenario by scenario, into one output directory that holds a
user's own `opencode.json`, `.vscode/mcp.json` and `.claude/settings.json` (so the merges
run on files agentrc shares with a user):

  cold      empty output and empty memo (one process: --jobs 1)
  no-op     the same build again (the no-change stamp)
  one-edit  one rule's body gets a line
  add       one path-scoped rule added
  remove    that rule removed again

It prints, per scenario, the functions whose call count or own time grew more than
`--ratio` times the growth of the registry (4000/1000 = 4: a ratio of 1.5 flags counts that
grew more than 6x), with both counts: a linear step grows with the registry, a quadratic
one with its square. Counts, not times, are what to read on a busy machine; times are
printed for orientation. Profiles go to bench/out/scaling/<items>/<scenario>.prof.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import shutil
import sys
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))
import gen_registry  # noqa: E402

from agentrc.cli.main import main  # noqa: E402

SCENARIOS = ("cold", "no-op", "one-edit", "add", "remove")
USER_FILES = {
    "opencode.json": '{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "dark"\n}\n',
    ".vscode/mcp.json": '{\n  // mine\n  "servers": {\n    "mine": {"type": "stdio", "command": "mine"}\n  }\n}\n',
    ".claude/settings.json": '{\n  "model": "opus"\n}\n',
}
NEW_RULE = ("---\nschema: 1\nname: zz-added-rule\ndescription: A rule added between two builds\n"
            "license: proprietary\nscope:\n  paths:\n    - \"src/**/*.ts\"\n---\n\n## Added\n\nOne more rule.\n")

Stats = Dict[Tuple[str, int, str], Tuple[int, float]]  # (file, line, function) -> (calls, own time)


def run(items: int, clients: str, work: str) -> Dict[str, Stats]:
    base = os.path.join(work, str(items))
    shutil.rmtree(base, ignore_errors=True)
    reg, out, cache = (os.path.join(base, d) for d in ("reg", "out", "cache"))
    gen_registry.generate(reg, items)
    for rel, text in USER_FILES.items():
        os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
        with open(os.path.join(out, rel), "w") as fh:
            fh.write(text)
    os.environ["AGENTRC_CACHE_DIR"] = cache
    argv = ["build", reg, "--client", clients, "--out", out, "--jobs", "1"]
    rule = sorted(d for d in os.listdir(os.path.join(reg, "rules")))[0]
    added = os.path.join(reg, "rules", "zz-added-rule")
    results = {}
    for scenario in SCENARIOS:
        if scenario == "one-edit":
            with open(os.path.join(reg, "rules", rule, "RULE.md"), "a") as fh:
                fh.write("\nOne more line.\n")
        elif scenario == "add":
            os.makedirs(added)
            with open(os.path.join(added, "RULE.md"), "w") as fh:
                fh.write(NEW_RULE)
        elif scenario == "remove":
            shutil.rmtree(added)
        prof = cProfile.Profile()
        with contextlib.redirect_stderr(io.StringIO()) as err:
            prof.enable()
            code = main(argv)
            prof.disable()
        if code != 0:
            raise SystemExit(f"{scenario} at {items} items failed:\n{err.getvalue()[-3000:]}")
        path = os.path.join(base, f"{scenario}.prof")
        prof.dump_stats(path)
        st = pstats.Stats(path)
        results[scenario] = {k: (v[1], v[2]) for k, v in st.stats.items()}  # type: ignore[attr-defined]
        total = sum(t for _, t in results[scenario].values())
        print(f"{items:>6} items  {scenario:<9} {total:7.2f} s (profiled)", file=sys.stderr)
    return results


def compare(small: int, large: int, a: Dict[str, Stats], b: Dict[str, Stats], ratio: float, top: int) -> None:
    growth = large / small
    for scenario in SCENARIOS:
        rows: List[Tuple[float, str]] = []
        for key, (calls_b, time_b) in b[scenario].items():
            calls_a, time_a = a[scenario].get(key, (0, 0.0))
            grew = calls_b / max(calls_a, 1)
            if calls_b >= 50 and grew > growth * ratio:
                name = f"{os.path.relpath(key[0], ROOT) if key[0].startswith(ROOT) else key[0]}:{key[1]}({key[2]})"
                rows.append((grew, f"  {name}: calls {calls_a} -> {calls_b} (x{grew:.1f}), "
                                   f"own time {time_a:.3f} -> {time_b:.3f} s"))
        print(f"\n## {scenario}: {len(rows)} functions whose calls grew more than x{growth * ratio:.1f} "
              f"(registry x{growth:.1f})")
        for _, line in sorted(rows, reverse=True)[:top]:
            print(line)


def main_(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, action="append", help="two sizes (default 1000 and 4000)")
    ap.add_argument("--clients", default="claude,copilot,opencode")
    ap.add_argument("--ratio", type=float, default=1.5)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--work", default=os.path.join(HERE, "out", "scaling"))
    args = ap.parse_args(argv)
    small, large = sorted(args.items or [1000, 4000])
    a = run(small, args.clients, args.work)
    b = run(large, args.clients, args.work)
    compare(small, large, a, b, args.ratio, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main_())
