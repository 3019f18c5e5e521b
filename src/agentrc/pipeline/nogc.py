"""The cyclic garbage collector paused while the pipeline runs, in any process.

A build allocates its items, renderings and plan as acyclic tuples and frozen dataclasses,
which reference counting frees; each full collection walks every object the process holds.
In the CLI that is the build's own data (at 4,000 items those walks were a third of a
one-edit build). In pantsd it is the daemon's whole graph as well: at 5,000 items the
registry's plan over its directories' entries ran 0.55 s without collections and 0.69 s
with them in a process holding those entries alone, and pantsd holds a gigabyte more.

Pants runs rules on several threads at once, so the pause is counted: the collector is
turned off by the first caller in and back on by the last caller out, if it was on when
the first came in. Only synchronous calls into the core are wrapped (never an `await`),
so a pause lasts one call.
"""

from __future__ import annotations

import _thread
import contextlib
import gc

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Iterator

_lock = _thread.allocate_lock()  # threading's Lock, without importing threading
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
