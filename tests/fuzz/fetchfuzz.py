"""The runner of the fetch surfaces' fuzz targets (issue 30; the targets are in
`fetchtargets` and `captargets`, the fence in `guard`).

Case N of target T under seed S always draws the same mutations
(`random.Random(f"{T}:{S}:{N}")`); `run(cases, seed, targets)` gives case N to target
`targets[N % len(targets)]`, so a long run spreads its cases evenly. An outcome is a
failure when anything escapes the entry point: a traceback, the fence (`Escaped`: a read or
write outside the case, a process other than git), the time budget (`TimedOut`), or an
oracle (`Oracle`: a file the case may not change was changed, a round trip differed).
"""

from __future__ import annotations

import os
import random
import shutil
import stat
import tempfile
import traceback
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import captargets
import fetchtargets
import fuzzlib
import guard

# A target lays its case out in the directory, runs it, and records what it did in the list
# as it goes (so a case that fails still says what it was); "=> X" last is its verdict.
Target = Callable[[Path, random.Random, List[str]], List[str]]
TARGETS: Dict[str, Target] = {
    "source-layout": fetchtargets.run_source_layout,
    "lock": fetchtargets.run_lock,
    "oas-capability": captargets.run_capability,
    "oas-package": captargets.run_package,
    "oas-lock": captargets.run_oas_lock,
    "oas-config": captargets.run_config,
    "source-strings": captargets.run_source_strings,
    "cap-scope": captargets.run_cap_scope,
}


# The default run's cases per target: a few seconds each on two cores (parsers take a few
# milliseconds a case, the targets that lay out a tree and run a command 20-50 ms).
DEFAULT_CASES: Dict[str, int] = {"source-layout": 60, "lock": 80, "oas-capability": 300, "oas-package": 300,
                                 "oas-lock": 300, "oas-config": 200, "source-strings": 500, "cap-scope": 80}

# Known crash classes in code other branches own, each with the xfail(strict=True) test in
# test_fuzz_regressions.py that flips when it is fixed: (exception type, module it escaped
# from) -> that test. Counted apart in every report ("allowed"); delete a row with its mark.
KNOWN: Dict[Tuple[str, str], str] = {}  # none open: every class found is fixed (test_fuzz_regressions.py)
# The same for broken promises (`Oracle`): every fragment found in the failure -> the test.
KNOWN_ORACLES: List[Tuple[Tuple[str, ...], str]] = []


def known(error: str) -> bool:
    return any(all(f in error for f in fragments) for fragments, _ in KNOWN_ORACLES)


def run_case(target: str, seed: int, case: int, keep: Optional[Path] = None) -> fuzzlib.Outcome:
    if not os.environ.get("AGENTRC_CACHE_DIR"):  # the fence lets a case write only there and in its directory
        os.environ["AGENTRC_CACHE_DIR"] = tempfile.mkdtemp(prefix="agentrc-fuzz-cache-")
    rng = random.Random(f"{target}:{seed}:{case}")
    tmp = Path(tempfile.mkdtemp(prefix="agentrc-fuzz-", dir=fuzzlib.TMP)).resolve()
    outcome = fuzzlib.Outcome(case, target, [])
    fetchtargets.CASE_SECRETS.clear()
    try:
        TARGETS[target](tmp, rng, outcome.mutations)
        last = outcome.mutations[-1] if outcome.mutations else ""
        outcome.exit = last[3:] if last.startswith("=> ") else "ok"
    except (guard.Escaped, guard.TimedOut, fetchtargets.Oracle) as exc:
        outcome.error = f"{type(exc).__name__}: {exc}"[:300]
        outcome.allowed = isinstance(exc, fetchtargets.Oracle) and known(str(exc))
        outcome.trace = traceback.format_exc()
    except BaseException as exc:  # noqa: B902 - the harness reports every escape
        if isinstance(exc, KeyboardInterrupt):
            raise
        outcome.error, module = fuzzlib._where(exc)
        outcome.allowed = (type(exc).__name__, module) in KNOWN
        outcome.trace = traceback.format_exc()
    finally:
        if guard._FENCE.hits and outcome.error is None:  # something caught the fence's exception
            outcome.error = f"Escaped (swallowed): {guard._FENCE.hits[0]}"[:300]
        if keep is not None:
            shutil.copytree(tmp, keep, symlinks=True, dirs_exist_ok=True)
        _remove(tmp)
    return outcome


def _remove(tmp: Path) -> None:
    """The case directory, whatever the case left in it (a directory it made unreadable)."""
    def retry(func, path, _exc):
        try:
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            func(path)
        except OSError:
            pass
    shutil.rmtree(tmp, onerror=retry)


def run(cases: int, seed: int = 0, targets: Sequence[str] = tuple(TARGETS), start: int = 0,
        progress: Optional[Callable[[fuzzlib.Stats], None]] = None) -> fuzzlib.Stats:
    stats = fuzzlib.Stats()
    for case in range(start, start + cases):
        stats.add(run_case(targets[case % len(targets)], seed, case))
        if progress is not None and stats.cases % 500 == 0:
            progress(stats)
    return stats
