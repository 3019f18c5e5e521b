"""Content digests salted with the code's own fingerprint.

Everything keyed by these digests (parsed item directories, renderings, the no-change
stamp) is then never reused by other code: a development checkout, a reinstall of the
same version. Used by the loader (each item's digest) and the memo.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable, List

from agentrc import __version__

_CODE: list = []


PACKAGE = Path(__file__).parent  # this module sits at the top of the agentrc package


def code_files() -> List[Path]:
    """Every source and schema file of the agentrc package, sub-packages included."""
    return [p for p in sorted(PACKAGE.rglob("*"))
            if p.suffix in (".py", ".json") and "__pycache__" not in p.parts]


def code_fingerprint() -> bytes:
    """The version plus a hash of agentrc's own sources and schemas: a memo written by other
    code (a development checkout, a reinstall of the same version) is never reused."""
    if not _CODE:
        h = hashlib.sha256(__version__.encode())
        for p in code_files():
            h.update(str(p.relative_to(PACKAGE)).encode() + b"\0" + p.read_bytes())
        _CODE.append(h.digest())
    return _CODE[0]


def digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256(code_fingerprint())
    for p in parts:
        h.update(len(p).to_bytes(8, "big"))
        h.update(p)
    return h.hexdigest()
