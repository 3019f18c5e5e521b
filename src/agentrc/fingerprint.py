"""Content digests salted with the code's own fingerprint.

Everything keyed by these digests (parsed item directories, renderings, the no-change
stamp) is then never reused by other code: a development checkout, a reinstall of the
same version. Used by the loader (each item's digest) and the memo.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable, List, Tuple

from agentrc import __version__

_CODE: list = []


PACKAGE = Path(__file__).parent  # this module sits at the top of the agentrc package


def code_files() -> List[Path]:
    """Every source and schema file of the agentrc package, sub-packages included."""
    return [PACKAGE.joinpath(*parts) for parts in _code_parts()]


def _code_parts() -> List[Tuple[str, ...]]:
    """`code_files` as path components, in `Path` order, listed with `os.scandir`: every
    command hashes the package, and `Path.rglob` plus a `Path` per file was 5-8 ms of a
    no-change build."""
    found: List[Tuple[str, ...]] = []
    pending: List[Tuple[str, ...]] = [()]
    while pending:
        parts = pending.pop()
        with os.scandir(os.path.join(PACKAGE, *parts)) as entries:
            for entry in entries:
                name = entry.name
                if name == "__pycache__":
                    continue
                if entry.is_dir():
                    pending.append(parts + (name,))
                dot = name.rfind(".")
                if 0 < dot < len(name) - 1 and name[dot:] in (".py", ".json"):  # Path.suffix's rule
                    found.append(parts + (name,))
    return sorted(found)


def code_fingerprint() -> bytes:
    """The version plus a hash of agentrc's own sources and schemas: a memo written by other
    code (a development checkout, a reinstall of the same version) is never reused."""
    if not _CODE:
        h = hashlib.sha256(__version__.encode())
        root = str(PACKAGE)
        for parts in _code_parts():
            with open(os.path.join(root, *parts), "rb") as fh:
                h.update(os.sep.join(parts).encode() + b"\0" + fh.read())
        _CODE.append(h.digest())
    return _CODE[0]


def digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256(code_fingerprint())
    for p in parts:
        h.update(len(p).to_bytes(8, "big"))
        h.update(p)
    return h.hexdigest()
