"""A module imported when one of its attributes is first used.

PyYAML costs about 20 ms of start-up, a third of a build with nothing to do on a small
registry; that build reads no YAML. `lazy_module("yaml")` gives the module object at
once and runs its code on first attribute access (`importlib.util.LazyLoader`); a module
already imported is returned as it is.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:  # pragma: no cover - a missing dependency fails where it is used
        raise ImportError(f"no module named {name!r}")
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
