"""`dataclass`: the standard library's, with its generated methods' code kept as bytecode is.

`dataclasses.dataclass` writes each method it generates (`__init__`, `__repr__`, `__eq__`,
`__hash__`, a frozen class's `__setattr__` and `__delattr__`) as source text and compiles
it, on every start of every process: about 250 compiles for the classes a build imports,
a third of the 110 ms a cold build spent importing, a tenth of a build with nothing to do
at 1,000 items (Python 3.9). The text depends on the class's fields and options alone (the
values it uses are passed in when the code runs), so its code object can be kept: here,
marshalled, one file per module where the module's own bytecode goes
(`__pycache__/<module>.classes.<cache tag>.bin`, or under `sys.pycache_prefix`), read when
the module's first class is made. A text not kept yet is compiled as before and the file
written again when the process ends, where bytecode is written (`sys.dont_write_bytecode`),
or always by `precompile` (for a read-only installation, or the benchmarks' copy of the
code, as `compileall` compiles the modules). A file holds the texts its module's classes
used when it was written: a class changed since leaves no stale text behind.

The classes are made by the standard library's own decorator: `fields`, `replace`, `asdict`,
pickling and mypy (which sees `dataclasses.dataclass` through the import at the end) find no
difference. Only `exec`, as `dataclasses` looks it up while one of agentrc's classes is
made, is this module's, and only for the thread making it: another thread's dataclass made
meanwhile (pantsd runs rules on several) is compiled as `dataclasses` compiles it. The files
are trusted as the bytecode beside them is, and checked as it is: the interpreter's magic
number and the sha256 of their contents head each one; a file that does not match, that is
not a mapping of texts to code, a link or not a regular file is compiled around.
"""

from __future__ import annotations

import _thread
import atexit
import builtins
import dataclasses
import os
import sys
from types import CodeType

from agentrc.pycache import cache_path, read_kept, write_kept

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set

_DIRECTORY: Optional[str] = None  # where the files go instead of beside the modules (tests)

_known: Dict[str, Dict[str, Any]] = {}  # module -> text -> code object, as read from its file
_used: Dict[str, Set[str]] = {}  # module -> the texts its classes used in this process
_added: Dict[str, Dict[str, Any]] = {}  # module -> text -> code object compiled by this process
_making: Dict[int, List[str]] = {}  # thread -> the modules of the classes it is making (innermost last)
_lock = _thread.RLock()  # (re-entrant: a signal handler that made a class while it is held would wait for good)
_users = [0]  # classes being made by any thread: `exec` is ours in `dataclasses` while above 0


def _path(module: str) -> Optional[str]:
    """The file of `module`'s classes (None: a module without a file of its own), named after
    its source file as its bytecode is (`__init__` for a package: `x/__init__.py` and
    `x/x.py` each have their own)."""
    if _DIRECTORY is not None:
        return os.path.join(_DIRECTORY, f"{module}.classes.{sys.implementation.cache_tag}.bin")
    source = getattr(sys.modules.get(module), "__file__", None)
    if not source:
        return None
    return cache_path(source, os.path.splitext(os.path.basename(source))[0] + ".classes")


def _load(module: str) -> Dict[str, Any]:
    """The code objects kept for `module` (none when its file is missing or not as written:
    then its classes are compiled as usual)."""
    data = read_kept(_path(module))
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, CodeType)
                                             for k, v in data.items()):
        return {}
    return data


def _exec(source: Any, globals: Optional[dict] = None, locals: Optional[dict] = None) -> None:  # noqa: A002
    """`exec` for `dataclasses`: a text it generated for a class this thread makes runs
    from its kept code object; any other text is compiled as `dataclasses` compiles it."""
    if isinstance(source, str):
        stack = _making.get(_thread.get_ident())
        source = _code(stack[-1], source) if stack else compile(source, "<string>", "exec", dont_inherit=True)
    builtins.exec(source, globals, locals)  # noqa: S102 - the code dataclasses generated


def _code(module: str, text: str) -> Any:
    """The code object of `text` for a class of `module`: kept, compiled by this process
    already, or compiled now (once, whichever threads ask at the same time)."""
    with _lock:
        known = _known.get(module)
        if known is None:
            known = _known[module] = _load(module)
        added = _added.setdefault(module, {})
        _used.setdefault(module, set()).add(text)
        code = known.get(text) or added.get(text)
        if code is None:
            # Not this module's `from __future__ import annotations`: as `dataclasses` compiles it.
            code = compile(text, "<string>", "exec", dont_inherit=True)
            if not any(_added.values()):
                atexit.register(save)
            added[text] = code
        return code


def _dataclass(cls: Any = None, **options: Any) -> Any:
    """`dataclasses.dataclass(cls, **options)`, its methods' code kept (`_exec`)."""

    def make(cls: Any) -> Any:
        ident = _thread.get_ident()
        pushed = False
        try:
            with _lock:
                _making.setdefault(ident, []).append(cls.__module__)
                _users[0] += 1
                pushed = True
                vars(dataclasses)["exec"] = _exec
            return dataclasses.dataclass(cls, **options)
        finally:
            if pushed:
                _done(ident)

    return make if cls is None else make(cls)


def _done(ident: int) -> None:
    """A class made (or not: it raised) by thread `ident`: its entry popped, and `exec` given
    back to `dataclasses` when no thread is making one."""
    with _lock:
        stack = _making[ident]
        stack.pop()
        if not stack:
            del _making[ident]
        _users[0] -= 1
        if not _users[0]:
            vars(dataclasses).pop("exec", None)  # `builtins.exec` again, for every other class


def save(always: bool = False) -> int:
    """Write again the file of each module whose classes compiled a text here (unless
    bytecode is not written here, and not `always`), with the texts they used: none left
    from a class since changed. How many texts were added."""
    if sys.dont_write_bytecode and not always:
        return 0
    count = 0
    for module in list(_added):
        with _lock:  # copies: other threads may be making classes (pantsd, as it exits)
            added = dict(_added[module])
            known = dict(_known.get(module, {}))
            used = set(_used.get(module, ()))
        path = _path(module)
        if not added or path is None:
            continue
        texts = {t: added.get(t) or known[t] for t in used if t in added or t in known}
        if write_kept(path, texts):
            count += len(added)
            with _lock:
                _known.setdefault(module, {}).update(added)
                for text in added:
                    _added[module].pop(text, None)
    return count


def precompile() -> int:
    """Import every module of agentrc and keep its classes' code (`save(always=True)`),
    whatever the interpreter says of bytecode: `python -c "from agentrc import classcode;
    classcode.precompile()"`, as `python -m compileall` compiles the modules. How many
    texts were added."""
    import_all()
    return save(always=True)


def import_all() -> None:
    """Every module of agentrc imported (but `__main__`s, which run their program)."""
    import importlib
    import pkgutil

    import agentrc

    for module in pkgutil.walk_packages(agentrc.__path__, "agentrc."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    dataclass = _dataclass
