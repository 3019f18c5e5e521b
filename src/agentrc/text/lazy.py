"""A module imported when one of its attributes is first used.

PyYAML costs about 20 ms of start-up, a third of a build with nothing to do on a small
registry; that build reads no YAML, and an edit that reparses one item seldom does.
`lazy_module("yaml")` gives a stand-in at once (`_LazyModule`) that imports the module on
first attribute access; a module already imported is returned as it is. The stand-in is
not put in `sys.modules`: an `import yaml` anywhere gets the real module. (Not
`importlib.util.LazyLoader`: on Python 3.9 `importlib.util` imports `importlib.abc`, and
with it `typing`, 3 ms of every edit; see docs/architecture.md, "Start-up".)
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class _LazyModule(ModuleType):
    """The module named `__name__`, imported by the first attribute asked of it (`__getattr__`
    is asked only for names the stand-in lacks: all of the module's)."""

    def __getattr__(self, attr: str) -> Any:
        module = self.__dict__.get("_module")
        if module is None:
            module = self.__dict__["_module"] = importlib.import_module(self.__name__)
        return getattr(module, attr)


def lazy_module(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    return _LazyModule(name)
