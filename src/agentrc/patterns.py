"""`pattern`: `re.compile` for the regular expressions agentrc's modules define, their
compiled programs kept as bytecode is.

`re.compile` parses a pattern and compiles it into the program its matcher runs, in every
process: for the 140 patterns agentrc's modules compile when they are imported, about 17
ms of a cold build, 10 ms of a one-edit build and 3 ms of a build with nothing to do
(Python 3.9). The program depends on the pattern's text and flags alone (and on the
interpreter), so it can be kept: here, marshalled, in one file where agentrc's bytecode goes
(`__pycache__/patterns.<cache tag>.bin`, or under `sys.pycache_prefix`), read when the first
pattern is asked for, and the pattern made from it as `re.compile` makes it in the end.

How a program is made is the standard library's own business (`sre_compile`, `re._compiler`
since 3.11), so nothing here is trusted further than it is checked: a pattern not kept yet
is compiled by `re.compile` as always, and its program is kept only if the pattern made from
that program compares equal to `re.compile`'s (a pattern's equality compares its flags, its
text and its program, word by word); the file is read only by the interpreter that wrote it
(its full version, and `_sre`'s own magic number and code size, inside the file besides
`pycache`'s magic number and checksum); anything unexpected (a different interpreter, an
internal that moved, a damaged file) is compiled around, by `re.compile`. The file is
written again when the process ends, where bytecode is written, or always by `precompile`,
with the patterns of the modules this process imported (others kept as they were).

Only constant patterns defined when a module is imported come here (`tests/test_patterns.py`
checks that no module calls `re.compile` outside a function): a pattern built from input
would grow the file without end.
"""

from __future__ import annotations

import _thread
import atexit
import re
import sys
from typing import Any, Dict, List, Optional, Pattern, Tuple

from agentrc.pycache import cache_path, read_kept, write_kept

try:  # the standard library's pattern compiler: its parser, its code generator, its matcher
    import _sre

    if sys.version_info >= (3, 11):
        from re import _compiler as _sre_compile  # type: ignore[attr-defined]
        from re import _parser as _sre_parse  # type: ignore[attr-defined]
    else:
        import sre_compile as _sre_compile
        import sre_parse as _sre_parse
except ImportError:  # pragma: no cover - another implementation: every pattern by re.compile
    _sre = None

_PATH: Optional[str] = None  # where the file goes instead of beside the package (tests)

Program = Tuple[int, list, int, Dict[str, int], Tuple[Optional[str], ...]]  # `_sre.compile`'s arguments

_kept: Dict[str, Dict[Tuple[str, int], Program]] = {}  # module -> (text, flags) -> program, as read
_loaded = [False]
_used: Dict[str, Dict[Tuple[str, int], Program]] = {}  # module -> the programs its patterns used here
_added = [0]  # programs this process made that the file does not hold
_lock = _thread.RLock()


def _interpreter() -> tuple:
    """What a kept program is valid for: this interpreter, and its matcher's version."""
    return (sys.version, getattr(_sre, "MAGIC", None), getattr(_sre, "CODESIZE", None))


def _path() -> Optional[str]:
    return _PATH if _PATH is not None else cache_path(__file__, "patterns")


def _load() -> None:
    """The file's programs into `_kept` (none when it is missing, damaged or another
    interpreter's)."""
    _loaded[0] = True
    data = read_kept(_path())
    if not isinstance(data, dict) or data.get("interpreter") != _interpreter():
        return
    modules = data.get("modules")
    if isinstance(modules, dict):
        _kept.update((m, p) for m, p in modules.items() if isinstance(m, str) and isinstance(p, dict))


def pattern(text: str, flags: int = 0) -> Pattern[str]:
    """`re.compile(text, flags)`, made from its kept program when there is one. For a
    module's constant patterns only (see the module's docstring)."""
    flags = int(flags)
    module = sys._getframe(1).f_globals.get("__name__", "")
    key = (text, flags)
    with _lock:
        if not _loaded[0]:
            _load()
        program = _kept.get(module, {}).get(key)
        if program is not None:
            made = _from_program(text, program)
            if made is not None:
                _used.setdefault(module, {})[key] = program
                return made
        compiled = re.compile(text, flags)
        program = _program(text, flags, compiled)
        used = _used.setdefault(module, {})
        if program is not None and key not in used:
            used[key] = program
            if not _added[0]:
                atexit.register(save)
            _added[0] += 1
        return compiled


def _from_program(text: str, program: Any) -> Optional[Pattern[str]]:
    """The pattern `_sre` makes of a kept program, as `re.compile` ends; None if it will not."""
    try:
        flags, code, groups, groupindex, indexgroup = program
        return _sre.compile(text, flags, code, groups, groupindex, indexgroup)
    except Exception:
        return None


def _program(text: str, flags: int, compiled: Pattern[str]) -> Optional[Program]:
    """The program `re.compile` made of `text` (as its compiler makes it), or None when it
    cannot be had here or the pattern made from it is not `compiled`'s equal."""
    if _sre is None:
        return None
    try:
        parsed = _sre_parse.parse(text, flags)
        code = [int(op) for op in _sre_compile._code(parsed, flags)]  # type: ignore[attr-defined]  # (int subclasses)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: List[Optional[str]] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        program: Program = (flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex,
                            tuple(indexgroup))
    except Exception:
        return None
    made = _from_program(text, program)
    return program if made is not None and made == compiled else None


def save(always: bool = False) -> int:
    """Write the file again with the programs of the modules this process compiled patterns
    for (the others' as they were read) when it made any the file did not hold, unless
    bytecode is not written here, and not `always`. How many programs it added."""
    if (sys.dont_write_bytecode and not always) or not _added[0]:
        return 0
    path = _path()
    if path is None:
        return 0
    with _lock:
        modules = {m: dict(p) for m, p in _kept.items()}
        modules.update((m, dict(p)) for m, p in _used.items())
        added = _added[0]
    if not write_kept(path, {"interpreter": _interpreter(), "modules": modules}):
        return 0
    with _lock:
        _kept.update(modules)
        _added[0] -= added
    return added


def precompile() -> int:
    """Import every module of agentrc and keep its patterns' programs (`save(always=True)`),
    whatever the interpreter says of bytecode, as `classcode.precompile` keeps its classes'
    code. How many programs were added."""
    from agentrc import classcode

    classcode.import_all()
    return save(always=True)


def reset(path: Optional[str] = None) -> None:
    """Forget what was read and made, and keep the file at `path` from now on (None: beside
    the package): for the tests."""
    global _PATH
    with _lock:
        _PATH = path
        _kept.clear()
        _used.clear()
        _loaded[0] = False
        _added[0] = 0


