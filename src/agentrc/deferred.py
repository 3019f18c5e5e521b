"""`dataclasses` imported without `inspect`, by the package's first import (`agentrc/__init__`).

`dataclasses` imports `inspect` at its top (with it `ast`, `dis`, `tokenize`, `linecache`:
8 of the 65 ms a build with nothing to do spent importing, Python 3.9) and asks it for one
thing, when a class is made: the signature that becomes the docstring of a class written
without one. agentrc's classes all have one (tests/test_classcode.py), so a process of
agentrc's never needs `inspect` for them; one that does (a class of someone else's) gets it
then. From Python 3.12 `dataclasses` also asks `inspect` for every class's annotations:
there the real module is imported with the first class, as before, and nothing is saved.
Done here, before any of agentrc's modules imports `dataclasses` (each does before its
own imports, in the order isort keeps).
"""

from __future__ import annotations

import sys
import types

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class _DeferredInspect(types.ModuleType):
    """`inspect` as `dataclasses` holds it: the standard library's module, imported the first
    time one of its names is asked for (`__getattr__` is asked only for names the module
    object lacks: its `__spec__`, None, is what an `import` of it looks at)."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("inspect") is self:  # asked while `dataclasses` is imported
            del sys.modules["inspect"]
        import inspect

        return getattr(inspect, name)


def import_dataclasses() -> Any:
    """`dataclasses`, with `_DeferredInspect` in `inspect`'s place while it is imported (in
    `sys.modules`, which its `import inspect` reads first; taken out at once, so that every
    other `import inspect` imports the real module). Where either is imported already (pantsd,
    pytest), nothing is put anywhere."""
    if "dataclasses" not in sys.modules and "inspect" not in sys.modules:
        deferred = _DeferredInspect("inspect")
        sys.modules["inspect"] = deferred
        try:
            import dataclasses
        finally:
            if sys.modules.get("inspect") is deferred:
                del sys.modules["inspect"]
    import dataclasses

    return dataclasses

