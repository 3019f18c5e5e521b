"""Whether a CPU is free for a second process: a cold build forks its workers only then
(agentrc.pipeline.warm).

A forked process costs the build its page tables, a copy of every page either process then
writes (reference counts included) and the handing over of its results; it pays for that
only on a CPU nobody else uses. When other work keeps every CPU busy it shares one, finishes
no sooner, and the build spends more CPU for the same wall time or worse.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List

LOADAVG = "/proc/loadavg"  # Linux: the load averages, then the tasks runnable now / all tasks


def available() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def busy(cpus: int) -> bool:
    """Whether other work keeps every one of `cpus` CPUs busy, over the last minute (the load
    average) and now (the tasks runnable besides this one), as `make -l` declines to start
    jobs. Measured on 2 CPUs loaded by other builds (load 3-4): a cold 5,000-item build took
    5.4-6.2 s of CPU and 5.3-6.5 s with a worker against 4.5-4.9 s and 4.6-5.4 s without.
    False when the system does not say (no /proc): as before, a second process."""
    fields = _loadavg()
    try:
        average, now = float(fields[0]), _others_runnable(fields)
    except (ValueError, IndexError):
        return False
    return average >= cpus and now >= cpus


def spare(cpus: int) -> bool:
    """Whether a CPU is idle right now besides this process's: the tasks runnable now, this
    one aside, fewer than `cpus - 1`. The minute's load average does not say it: a benchmark
    or a script running builds back to back keeps it near 1 by itself. False when the system
    does not say (no /proc), or on one CPU."""
    if cpus < 2:
        return False
    try:
        return _others_runnable(_loadavg()) < cpus - 1
    except (ValueError, IndexError):
        return False


def _loadavg() -> List[bytes]:
    """The fields of `LOADAVG`: the three load averages, runnable/all tasks, the last pid;
    none when it cannot be read (no /proc)."""
    try:
        with open(LOADAVG, "rb") as fh:
            return fh.read(256).split()
    except OSError:
        return []


def _others_runnable(fields: List[bytes]) -> int:
    """The tasks runnable now besides this process (IndexError or ValueError: not said)."""
    return int(fields[3].split(b"/")[0]) - 1
