"""`dataclass`: the standard library's, with its generated methods' code kept as bytecode is.

`dataclasses.dataclass` writes each method it generates (`__init__`, `__repr__`, `__eq__`,
`__hash__`, a frozen class's `__setattr__` and `__delattr__`) as source text and compiles
it, on every start of every process: about 250 compiles for the classes a build imports,
a third of the 110 ms a cold build spent importing, a tenth of a build with nothing to do
at 1,000 items (Python 3.9). The text depends on the class's fields and options alone (the
values it uses are passed in when the code runs), so its code object can be kept: here,
marshalled, one file per module beside the module's own bytecode
(`__pycache__/<module>.classes.<cache tag>.bin`), read when the module's first class is
made. A text not kept yet is compiled as before and added when the process ends, where
bytecode is written (`sys.dont_write_bytecode`), or always by `precompile` (for a read-only
installation, or the benchmarks' copy of the code, as `compileall` compiles the modules).

The classes are made by the standard library's own decorator: `fields`, `replace`, `asdict`,
pickling and mypy (which sees `dataclasses.dataclass` through the import at the end) find no
difference. Only `exec`, as `dataclasses` looks it up while one of agentrc's classes is
made, is this module's. The files are trusted as the bytecode beside them is; one that is
damaged, not a mapping of texts to code, a link or not a regular file is compiled around.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import marshal
import os
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from agentrc.fdio import read_regular

_LIMIT = 16 << 20  # a file larger than this is not ours: ignored
_CodeType = type(compile("", "<string>", "exec"))
_DIRECTORY: Optional[str] = None  # where the files go instead of beside the modules (tests)

_known: Dict[str, Dict[str, Any]] = {}  # module -> text -> code object, as read from its file
_added: Dict[str, Dict[str, Any]] = {}  # module -> text -> code object compiled by this process
_making: List[str] = []  # the module of the class being made (innermost last)


def _path(module: str) -> Optional[str]:
    """The file of `module`'s classes (None: a module without a file of its own)."""
    if _DIRECTORY is not None:
        return os.path.join(_DIRECTORY, f"{module}.classes.{sys.implementation.cache_tag}.bin")
    source = getattr(sys.modules.get(module), "__file__", None)
    if not source:
        return None
    name = module.rpartition(".")[2]
    return os.path.join(os.path.dirname(source), "__pycache__", f"{name}.classes.{sys.implementation.cache_tag}.bin")


def _load(module: str) -> Dict[str, Any]:
    """The code objects kept for `module` (none when the file is missing, unreadable or not
    a mapping of texts to code objects: then its classes are compiled as usual)."""
    path = _path(module)
    try:
        data = marshal.loads(read_regular(path, _LIMIT)[0]) if path else None
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, _CodeType)
                                             for k, v in data.items()):
        return {}
    return data


def _exec(source: Any, globals: Optional[dict] = None, locals: Optional[dict] = None) -> None:  # noqa: A002
    """`exec` for `dataclasses`: a text it generated runs from its kept code object."""
    if isinstance(source, str) and _making:
        module = _making[-1]
        known = _known.get(module)
        if known is None:
            known = _known[module] = _load(module)
        added = _added.setdefault(module, {})
        code = known.get(source) or added.get(source)
        if code is None:
            # Not this module's `from __future__ import annotations`: as `dataclasses` compiles it.
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if not any(_added.values()):
                atexit.register(save)
            added[source] = code
        source = code
    builtins.exec(source, globals, locals)  # noqa: S102 - the text dataclasses generated


def _dataclass(cls: Any = None, **options: Any) -> Any:
    """`dataclasses.dataclass(cls, **options)`, its methods' code kept (`_exec`)."""

    def make(cls: Any) -> Any:
        namespace = vars(dataclasses)
        namespace["exec"] = _exec
        _making.append(cls.__module__)
        try:
            return dataclasses.dataclass(cls, **options)
        finally:
            _making.pop()
            if not _making:
                namespace.pop("exec", None)  # `builtins.exec` again, for every other class

    return make if cls is None else make(cls)


def save(always: bool = False) -> int:
    """Add this process's new code objects to their modules' files (unless bytecode is not
    written here, and not `always`): merged with what each holds, written to a temporary
    file and renamed, or not at all. How many texts were added."""
    if sys.dont_write_bytecode and not always:
        return 0
    count = 0
    for module, added in list(_added.items()):
        path = _path(module)
        if added and path and _write(path, {**_load(module), **added}):
            count += len(added)
            _known.setdefault(module, {}).update(added)
            added.clear()
    return count


def _write(path: str, texts: Dict[str, Any]) -> bool:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(marshal.dumps(texts))
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def precompile() -> int:
    """Import every module of agentrc and keep its classes' code (`save(always=True)`),
    whatever the interpreter says of bytecode: `python -c "from agentrc import classcode;
    classcode.precompile()"`, as `python -m compileall` compiles the modules. How many
    texts were added."""
    import importlib
    import pkgutil

    import agentrc

    for module in pkgutil.walk_packages(agentrc.__path__, "agentrc."):
        if not module.name.endswith(".__main__"):  # (each runs its program)
            importlib.import_module(module.name)
    return save(always=True)


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    dataclass = _dataclass
