"""`pattern`: `re.compile` for the regular expressions agentrc's modules define, their
compiled programs kept as bytecode is.

`re.compile` parses a pattern and compiles it into the program its matcher runs, in every
process: for the 140 patterns agentrc's modules compile when they are imported, about 17
ms of a cold build, 10 ms of a one-edit build and 3 ms of a build with nothing to do
(Python 3.9). The program depends on the pattern's text and flags alone (and on the
interpreter), so it can be kept: here, marshalled, in one file where agentrc's bytecode goes
(`__pycache__/patterns-<version>.<cache tag>.bin`, `<version>` a digest of the interpreter's
full version; or under `sys.pycache_prefix`), read when the first pattern is asked for, and
the pattern made from it as `re.compile` makes it in the end.

How a program is made is the standard library's own business (`sre_compile`, `re._compiler`
since 3.11), so nothing here is trusted further than it is checked: a pattern not kept yet
is compiled by `re.compile` as always; when the file is written (as the process ends, where
bytecode is written and the directory can be, or always by `precompile`) its program is
asked of the compiler, and kept only if the pattern made from that program compares equal
to `re.compile`'s (a pattern's equality compares its flags, its text and its program, word
by word). The file is read only by the interpreter that wrote it (its full version, and
`_sre`'s own magic number and code size, inside the file besides `pycache`'s magic number
and checksum); anything unexpected (a different interpreter, an internal that moved, a
damaged file) is compiled around, by `re.compile`. The file holds the patterns of the
modules the writing process imported (as they used them) and, for the others, what it held.

Only constant patterns defined when a module is imported come here (`tests/test_patterns.py`
checks that no module calls `re.compile` outside a function): a pattern built from input
would grow the file without end.
"""

from __future__ import annotations

import _thread
import atexit
import hashlib
import os
import re
import sys

from agentrc.pycache import cache_path, read_kept, write_kept

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Pattern, Tuple

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

if TYPE_CHECKING:
    Program = Tuple[int, list, int, Dict[str, int], Tuple[Optional[str], ...]]  # `_sre.compile`'s arguments
# A pattern's key: whether it is bytes first (a str and a bytes of the same letters hash
# alike, and comparing them warns under `python -b`), then its text and flags.
if TYPE_CHECKING:
    Key = Tuple[bool, Any, int]

_kept: Dict[str, Dict[Key, Program]] = {}  # module -> key -> program, as read
_loaded = [False]
# Module -> the patterns it made in this process: their programs as read, or None for one
# compiled here, whose program is made only if the file is written (`save`).
_used: Dict[str, Dict[Key, Optional[Program]]] = {}
_added = [0]  # patterns compiled here that the file does not hold
_lock = _thread.RLock()


def _interpreter() -> tuple:
    """What a kept program is valid for: this interpreter, and its matcher's version."""
    return (sys.version, getattr(_sre, "MAGIC", None), getattr(_sre, "CODESIZE", None))


def _path() -> Optional[str]:
    """The file, named after the interpreter's full version as well as its cache tag: two
    builds of one Python version (the same tag) sharing a checkout keep a file each."""
    if _PATH is not None:
        return _PATH
    version = hashlib.sha256(repr(_interpreter()).encode()).hexdigest()[:8]
    return cache_path(__file__, f"patterns-{version}")


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
    key: Key = (isinstance(text, bytes), text, flags)
    with _lock:
        if not _loaded[0]:
            _load()
        used = _used.setdefault(module, {})
        program = _kept.get(module, {}).get(key)
        if program is not None:
            made = _from_program(text, program)
            if made is not None:
                used[key] = program
                return made
        if key not in used:
            used[key] = None
            if not _added[0] and not sys.dont_write_bytecode:
                atexit.register(save)
            _added[0] += 1
        return re.compile(text, flags)


def _from_program(text: Any, program: Any) -> Optional[Pattern[str]]:
    """The pattern `_sre` makes of a kept program, as `re.compile` ends; None if it will not."""
    try:
        flags, code, groups, groupindex, indexgroup = program
        return _sre.compile(text, flags, code, groups, groupindex, indexgroup)
    except Exception:
        return None


def _program(text: Any, flags: int, compiled: Pattern[str]) -> Optional[Program]:
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


def _writable(path: str) -> bool:
    """Whether the file could be written at `path` (its directory, or the nearest one that
    exists): where it cannot (a read-only installation), no program is made for nothing."""
    directory = os.path.dirname(path) or os.curdir
    while not os.path.lexists(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            return False
        directory = parent
    return os.path.isdir(directory) and os.access(directory, os.W_OK)


def save(always: bool = False) -> int:
    """Write the file again with the programs of the modules this process made patterns for
    (the others' as they were read) when it compiled any the file did not hold, unless
    bytecode is not written here, and not `always`; the programs of the patterns compiled
    here are made now (`_program`), only then. How many programs it added."""
    if sys.dont_write_bytecode and not always:
        return 0
    path = _path()
    with _lock:
        if not _added[0] or path is None or not _writable(path):
            return 0
        modules = {m: dict(p) for m, p in _kept.items()}
        added = 0
        for module, made in _used.items():
            programs = modules[module] = {}
            for key, program in made.items():
                if program is None:
                    program = _program(key[1], key[2], re.compile(key[1], key[2]))
                    added += program is not None
                if program is not None:
                    programs[key] = program
        owed, _added[0] = _added[0], 0
    if not added or not write_kept(path, {"interpreter": _interpreter(), "modules": modules}):
        with _lock:
            _added[0] += owed if added else 0  # (none could be made: not tried again)
        return 0
    with _lock:
        _kept.update(modules)
        for module, made in _used.items():
            made.update((k, p) for k, p in modules.get(module, {}).items() if k in made)
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


