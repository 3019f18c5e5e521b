"""A status line while long work runs (a build, an import, fetching sources), on a terminal
only: what is being done and for how long, drawn by tqdm on stderr and erased when the
work ends, so what the command prints next starts on a clean line.

Nothing is drawn, imported or started when stderr is not a terminal (piped, redirected, CI),
when TERM is `dumb`, with AGENTRC_PROGRESS=0, or for work that ends within `DELAY` seconds:
a build with nothing to do prints exactly what it printed before. Messages the work sends
meanwhile (`Activity.say`: "waiting for another agentrc run ...") are printed above the
line, which is drawn again under them.

The pipeline reports no per-item counts to its callers (a `progress(done, total)` callback
in agentrc.building.build and the fetcher would make this a bar over N items), so the line
shows the phase and the time taken, refreshed ten times a second by a daemon thread.
"""

from __future__ import annotations

import os
import sys

from agentrc.cli.common import say as _say

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Optional

DELAY = 0.5  # seconds before the line appears (AGENTRC_PROGRESS_DELAY overrides)
REFRESH = 0.1
_LOCK: Any = None  # every draw and message holds it; a fork waits for it (`_lock`)


def _lock() -> Any:
    """The one lock of the status line. A build forks (warm workers, a large write's second
    process): a fork while the drawing thread is inside a write to stderr would leave the
    child a stderr lock nobody releases, so each fork takes this lock first, and the child
    gets it released."""
    global _LOCK
    if _LOCK is None:
        import threading

        _LOCK = threading.Lock()
        os.register_at_fork(before=_LOCK.acquire, after_in_parent=_LOCK.release, after_in_child=_LOCK.release)
    return _LOCK


def enabled() -> bool:
    """A terminal on stderr, not dumb, and not switched off."""
    if os.environ.get("AGENTRC_PROGRESS", "") == "0" or os.environ.get("TERM", "") == "dumb":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Activity:
    """`with Activity("building"):` the work; `say` for its messages."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.on = enabled()
        self.bar: Any = None
        self._stop: Any = None
        self._thread: Any = None
        self._lock: Any = None

    def __enter__(self) -> "Activity":
        if self.on:
            import threading  # only on a terminal

            self._stop, self._lock = threading.Event(), _lock()
            self._thread = threading.Thread(target=self._draw, name="agentrc-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        with self._lock:
            if self.bar is not None:
                self.bar.close()  # leave=False: the line is erased
                self.bar = None

    def say(self, message: str) -> None:
        """A message of the work, above the status line."""
        if self._lock is None:
            _say(message)
            return
        with self._lock:
            if self.bar is None:
                _say(message)
            else:
                from agentrc.diagnostics import printable

                self.bar.write(printable(message), file=sys.stderr)

    def _draw(self) -> None:
        try:
            delay = float(os.environ.get("AGENTRC_PROGRESS_DELAY", DELAY))
        except ValueError:
            delay = DELAY
        if self._stop.wait(delay):
            return
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - a dependency of the package
            return
        tqdm.monitor_interval = 0  # no monitor thread of its own: this one refreshes
        with self._lock:
            if self._stop.is_set():
                return
            self.bar = tqdm(total=None, desc=f"agentrc: {self.what}", file=sys.stderr, leave=False,
                            bar_format="{desc} [{elapsed}]", dynamic_ncols=True)
        while not self._stop.wait(REFRESH):
            with self._lock:
                if self.bar is not None:
                    self.bar.refresh()


def activity(what: str, on: Optional[bool] = None) -> Activity:
    """An `Activity`; `on=False` keeps it silent whatever the terminal (JSON output)."""
    act = Activity(what)
    if on is False:
        act.on = False
    return act
