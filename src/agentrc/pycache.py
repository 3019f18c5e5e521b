"""Files agentrc keeps beside its own bytecode: where they go, and how they are written and read.

agentrc keeps three things about its own code that every process would otherwise compute
again: the code of its dataclasses' generated methods (`classcode`), the fingerprint of
its source files (`fingerprint`) and its compiled schema validators (`schemas`, also kept
in the build's cache directory). They go where Python puts the modules' bytecode (the
module's directory's `__pycache__`, or the mirror of that directory under
`sys.pycache_prefix`), under the interpreter's cache tag, and are trusted as that bytecode
is, and checked as it is: the interpreter's magic number heads each file, then the sha256 of
what follows (a marshalled value). A file that does not match, a link or anything but a
regular file reads as nothing.
"""

from __future__ import annotations

import _thread
import hashlib
import marshal
import os
import sys

from agentrc.fdio import read_regular

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Optional, Tuple

LIMIT = 16 << 20  # a file larger than this is not ours: ignored

# The build's cache directory, where this process also keeps the validators it compiles
# (`agentrc.schemas.use_code_cache`; None: only beside the schemas). Held here, not in
# `agentrc.schemas`, so that a build names it without importing the schemas for that: they
# are imported by what validates a document.
code_dir: Optional[str] = None


def _magic() -> bytes:
    """The interpreter's bytecode magic number (as `importlib.util.MAGIC_NUMBER`, without
    importing importlib.util: 7 ms)."""
    magic = getattr(sys.modules.get("_frozen_importlib_external"), "MAGIC_NUMBER", None)
    if isinstance(magic, bytes):
        return magic
    from importlib.util import MAGIC_NUMBER
    return MAGIC_NUMBER


def cache_path(source: str, name: str) -> Optional[str]:
    """Where a file named `<name>.<cache tag>.bin` kept for the module file `source` goes: its
    directory's `__pycache__`, or the mirror of that directory under `sys.pycache_prefix`, as
    its bytecode does. None where the interpreter keeps no bytecode (no cache tag)."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    directory = os.path.dirname(os.path.abspath(source))
    prefix = getattr(sys, "pycache_prefix", None)
    if prefix:
        where = os.path.join(prefix, os.path.splitdrive(directory)[1].lstrip(os.sep))
    else:
        where = os.path.join(directory, "__pycache__")
    return os.path.join(where, f"{name}.{tag}.bin")


def read_kept(path: Optional[str]) -> Any:
    """What `write_kept` wrote at `path`: None when there is nothing, or something else (a
    damaged file, another interpreter's, a link, a FIFO)."""
    if path is None:
        return None
    try:
        return decoded(read_regular(path, LIMIT)[0])
    except (OSError, ValueError):
        return None


def encoded(value: Any) -> Optional[bytes]:
    """`value` as a kept file holds it: marshalled behind the interpreter's magic number and
    the sha256 of the marshalled bytes; None for a value marshal cannot write."""
    parts = encoded_parts(value)
    return None if parts is None else parts[0] + parts[1]


def encoded_parts(value: Any) -> Optional[Tuple[bytes, bytes]]:
    """`encoded(value)` as its head (the magic number and the checksum) and the marshalled
    bytes, for a caller that writes them one after the other instead of joining them (the
    build's stamp: 3.7 MB at 5,000 items, copied twice to be joined)."""
    try:
        blob = marshal.dumps(value)
    except ValueError:
        return None
    return _magic() + hashlib.sha256(blob).digest(), blob


def decoded(data: bytes) -> Any:
    """What `encoded` made `data` from: None when it is anything else (another interpreter's,
    damaged, cut short). Marshal reads only bytes whose checksum matched."""
    magic = _magic()
    blob = memoryview(data)[len(magic) + 32:]
    if data[:len(magic)] != magic or hashlib.sha256(blob).digest() != data[len(magic):len(magic) + 32]:
        return None
    try:
        return marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None


def write_kept(path: str, value: Any, mode: int = 0o644,
               keep: Optional[Callable[[os.stat_result], bool]] = None) -> bool:
    """`value` marshalled at `path` behind the magic number and its sha256: written to a
    temporary file of this process and thread, and renamed; or not at all. `mode`: readable
    by all, as bytecode is, unless the caller keeps it in a directory of its own. `keep`:
    asked, with the written temporary file's status (the file system's clock), whether to
    rename it into place at all; no other process ever sees a file it refuses."""
    data = encoded(value)
    if data is None:  # not a value marshal can write: nothing kept
        return False
    tmp = f"{path}.{os.getpid()}.{_thread.get_ident()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            fd = os.open(tmp, flags, mode)
        except FileExistsError:  # left by a killed process of the same number
            os.unlink(tmp)
            fd = os.open(tmp, flags, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            wanted = keep is None or keep(os.fstat(fh.fileno()))
        if not wanted:
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
