"""Giving memory that pantsd's threads freed back to the system.

Measured on a 1,000-item registry (docs/benchmarks.md, "pantsd's memory"): after a cold
`pants dependencies ::` pantsd held 827 MB resident, of which `malloc_trim(0)` returned 530 MB
at once; after two `pants package ::` runs more, 1,130 MB of which 638 MB. Pants' engine runs rules and file I/O on
many threads, glibc gives each thread group an arena of its own, and memory freed inside an
arena stays resident; the live data is under half of the RSS. Pants restarts a daemon whose
RSS crosses `[GLOBAL].pantsd_max_memory_usage` (4 GiB by default), and the next run is cold:
at 5,000 items that happened on every run.

`watch()` starts (once per process) a daemon thread that reads the process's RSS every
second and calls glibc's `malloc_trim(0)` whenever the RSS grew by `step` bytes since the last
trim. Elsewhere than glibc Linux it does nothing. The backend starts it from its rules, so it
runs in pantsd (and in the `--no-pantsd` process) only once an agentrc rule has run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from typing import Callable, Optional

STEP = 256 * 1024 * 1024
_lock = threading.Lock()
_started = False
_stop = threading.Event()
trims = 0  # how many times the watcher trimmed (tests read it)


def _page_size() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4096


def rss() -> Optional[int]:
    """This process's resident set size in bytes, None where /proc is missing."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _page_size()
    except (OSError, ValueError, IndexError):
        return None


def _trim_function() -> Optional[Callable[[int], int]]:
    if not os.path.exists("/proc/self/statm"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim  # glibc only: musl and others have no such symbol
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def trim() -> bool:
    """Return freed heap memory to the system now; False where that is not possible."""
    global trims
    function = _trim_function()
    if function is None:
        return False
    function(0)
    trims += 1
    return True


def _watch(step: int, interval: float, floor: int) -> None:
    function = _trim_function()
    if function is None:
        return
    global trims
    while not _stop.wait(interval):
        now = rss()
        if now is None:
            return
        if now > floor + step:
            function(0)
            trims += 1
            floor = rss() or now
        elif now < floor:
            floor = now


def watch(step: int = STEP, interval: float = 1.0) -> bool:
    """Start the watcher thread unless it runs already; True when this call started it."""
    global _started
    with _lock:
        if _started or _trim_function() is None:
            return False
        _started = True
        _stop.clear()
    # The floor is the RSS when watch() is called, not when the thread first runs: growth
    # between the two (the thread may start late) still counts.
    threading.Thread(target=_watch, args=(step, interval, rss() or 0), name="agentrc-malloc-trim",
                     daemon=True).start()
    return True


def stop() -> None:
    """Stop the watcher thread (tests); a later `watch()` in a fresh state starts another."""
    _stop.set()
