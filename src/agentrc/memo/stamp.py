"""The record of the last successful build into an output (the no-change stamp), on disk,
and where it and the memo go (`location`).

It lives in the user's cache beside the memo, outside any output. It is marshalled: its
values are plain (dicts, lists, tuples, strings, bytes, numbers), which `marshal` writes
and reads faster than `pickle` (at 5,000 items a 3 MB record: 5.9 against 7.3 ms to read,
3.0 against 5.5 ms to write, a one-edit build doing both), and a build with nothing to do
reads it without importing `pickle`. The file starts with `HEAD`, the interpreter's
bytecode magic number (marshal's format is the interpreter's: another one's is no stamp,
and the build reads its sources) and the sha256 of the rest. A record holding a value
marshal cannot write is kept as a pickle, as every record of earlier versions was; those
are read as before.
"""

from __future__ import annotations

import os

from agentrc import pycache
from agentrc.fdio import read_regular
from agentrc.fingerprint import digest

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Iterable, Optional

    from agentrc.fdio import StrPath

HEAD = b"agentrc stamp\n"
LIMIT = 1 << 30  # bytes read at most: a larger file is not a stamp


def base() -> str:
    """The directory of the CLI's caches: $AGENTRC_CACHE_DIR, else $XDG_CACHE_HOME/agentrc
    (~/.cache/agentrc)."""
    return os.environ.get("AGENTRC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "agentrc")


def location(out: str, sources: Iterable[str]) -> str:
    """The memo's path for a build of `sources` into `out` (the stamp and the replay record
    go beside it): keyed by their absolute paths."""
    key = digest([os.path.abspath(out).encode()] + sorted(os.path.abspath(s).encode() for s in sources))
    return os.path.join(base(), f"build-{key[:24]}.pickle")


def beside(memo_path: StrPath, suffix: str) -> str:
    """The file beside the memo at `memo_path` with `suffix` in place of its own (as
    `pathlib.Path.with_suffix`, without importing `pathlib`: 2 ms of every command)."""
    return os.path.splitext(os.fspath(memo_path))[0] + suffix


def load_stamp(memo_path: StrPath) -> Optional[dict]:
    """The record kept beside the memo at `memo_path` (`.stamp`); None when there is none,
    or it is damaged, foreign or another interpreter's."""
    try:
        data = read_regular(beside(memo_path, ".stamp"), LIMIT)[0]
        stamp = _decoded(data)
    except Exception:  # missing, damaged or foreign: no stamp, the build reads its sources
        return None
    return stamp if isinstance(stamp, dict) else None


def _decoded(data: bytes) -> Any:
    if data.startswith(HEAD):  # another interpreter's, or damaged: None, never handed to marshal
        return pycache.decoded(memoryview(data)[len(HEAD):])
    from agentrc import pickling  # a record of an earlier version, or one marshal could not write

    return pickling.loads(data)


def encoded(stamp: dict) -> bytes:
    """`stamp` as `save_stamp` writes it: `HEAD`, then as `agentrc.pycache` keeps its files
    (marshalled behind the magic number and the sha256 of the record: a bit flipped on the
    disk makes no stamp, where marshal would read a record of another shape, or crash); or,
    holding a value marshal cannot write, pickled."""
    kept = pycache.encoded(stamp)
    if kept is not None:
        return HEAD + kept
    from agentrc import pickling

    return pickling.dumps(stamp, protocol=pickling.PROTOCOL)


def save_stamp(memo_path: StrPath, stamp: dict) -> None:
    """`stamp` kept beside the memo at `memo_path`, replacing the last atomically; nothing on
    a file system error (the stamp is an optimisation)."""
    try:
        os.makedirs(os.path.dirname(os.fspath(memo_path)) or ".", exist_ok=True)
        tmp = beside(memo_path, ".stamp.tmp")
        parts = pycache.encoded_parts(stamp)
        with open(tmp, "wb") as fh:  # as `encoded` lays it out, its parts written one after the other
            if parts is None:
                fh.write(encoded(stamp))
            else:
                for part in (HEAD, *parts):
                    fh.write(part)
        os.replace(tmp, beside(memo_path, ".stamp"))
        legacy = beside(memo_path, ".stamp.json")  # the JSON record of earlier versions
        if os.path.lexists(legacy):
            os.unlink(legacy)
    except OSError:
        pass
