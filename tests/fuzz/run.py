"""The long fuzz run, outside pytest: `python tests/fuzz/run.py --cases 100000` (see docs/fuzzing.md).

Without `--target`, the cases go to the CLI scenarios of `fuzzlib`; `--target all` (or a
comma-separated list of `fetchfuzz.TARGETS`) gives them to the fetch surfaces' targets
instead (issue 30), round robin. Prints progress every 500 cases and, at the end, the
outcomes, the allowed crash classes and every crash class with its first case;
`--case N --keep DIR` replays one case into DIR.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fetchfuzz  # noqa: E402
import fuzzlib  # noqa: E402


def _targets(text: str) -> list:
    names = list(fetchfuzz.TARGETS) if text == "all" else [t for t in text.split(",") if t]
    unknown = [t for t in names if t not in fetchfuzz.TARGETS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"targets are all or some of {', '.join(fetchfuzz.TARGETS)}")
    return names


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--cases", type=int, default=int(os.environ.get("AGENTRC_FUZZ_CASES", "1000")))
    p.add_argument("--seed", type=int, default=int(os.environ.get("AGENTRC_FUZZ_SEED", "0")))
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--target", type=_targets, help="fetch-surface targets: all, or NAME[,NAME...]")
    p.add_argument("--case", type=int, help="replay one case")
    p.add_argument("--keep", type=Path, help="with --case: copy the case directory here")
    args = p.parse_args()
    os.environ.setdefault("AGENTRC_CACHE_DIR", tempfile.mkdtemp(prefix="agentrc-fuzz-cache-"))
    if args.case is not None:
        if args.target:
            o = fetchfuzz.run_case(args.target[args.case % len(args.target)], args.seed, args.case, args.keep)
        else:
            o = fuzzlib.run_case(fuzzlib.scenarios(), args.seed, args.case, args.keep)
        print(f"case {o.case} ({o.scenario}): {'; '.join(o.mutations)}\nexit {o.exit} {o.error or ''}\n{o.trace}")
        return 1 if o.error and not o.allowed else 0
    start = time.time()

    def progress(stats: fuzzlib.Stats) -> None:
        print(f"[{time.time() - start:.0f}s] {fuzzlib.report(stats)}", flush=True)

    if args.target:
        stats = fetchfuzz.run(args.cases, args.seed, args.target, args.start, progress)
    else:
        stats = fuzzlib.run(args.cases, args.seed, progress, args.start)
    print(f"done in {time.time() - start:.0f}s\n{fuzzlib.report(stats)}", flush=True)
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
