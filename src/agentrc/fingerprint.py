"""Content digests salted with the code's own fingerprint.

Everything keyed by these digests (parsed item directories, renderings, the no-change
stamp) is then never reused by other code: a development checkout, a reinstall of the
same version. Used by the loader (each item's digest) and the memo.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

from agentrc import __version__

_CODE: list = []


def code_fingerprint() -> bytes:
    """The version plus a hash of agentrc's own sources and schemas: a memo written by other
    code (a development checkout, a reinstall of the same version) is never reused."""
    if not _CODE:
        h = hashlib.sha256(__version__.encode())
        pkg = Path(__file__).parent
        for p in sorted(pkg.rglob("*")):
            if p.suffix in (".py", ".json") and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(pkg)).encode() + b"\0" + p.read_bytes())
        _CODE.append(h.digest())
    return _CODE[0]


def digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256(code_fingerprint())
    for p in parts:
        h.update(len(p).to_bytes(8, "big"))
        h.update(p)
    return h.hexdigest()
