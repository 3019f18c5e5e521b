"""A content-addressed memo of parsed item directories and rendered items.

Keys are digests of the inputs (an item directory's files, the client, the agentrc
version), so a stale entry can never be returned: an edit changes the key. The core only
sees a dict-like object; the CLI persists it between runs (outside the output tree, as
it is a pickle), and the Pants plugin relies on its own caching instead.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any, Dict, Hashable, Iterable, Optional, Set

from agentrc import __version__
from agentrc.fingerprint import digest


class Memo:
    def __init__(self, data: Optional[Dict[Hashable, Any]] = None, base: Optional[Set[Hashable]] = None):
        self.data: Dict[Hashable, Any] = data or {}
        self.base: Set[Hashable] = base if base is not None else set()  # keys held by the main file
        self.used: Set[Hashable] = set()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> Any:
        value = self.data.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
            self.used.add(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        self.data[key] = value
        self.used.add(key)

    def live(self) -> Dict[Hashable, Any]:
        """Entries used by this run: what the next run can reuse (old ones are dropped)."""
        return {k: self.data[k] for k in self.used}


def location(out: str, sources: Iterable[str]) -> Path:
    base = os.environ.get("AGENTRC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "agentrc")
    key = digest([os.path.abspath(out).encode()] + sorted(os.path.abspath(s).encode() for s in sources))
    return Path(base) / f"build-{key[:24]}.pickle"


def load(path: Path) -> Memo:
    """The main file plus its delta (entries added since the main file was last written)."""
    data = _read(path)
    if data is None:
        return Memo()
    base = set(data)
    delta = _read(path.with_suffix(".delta"))
    if delta:
        data.update(delta)
    return Memo(data, base)


def _read(path: Path) -> Optional[dict]:
    try:
        with open(path, "rb") as f:
            version, data = pickle.load(f)
        if version == __version__ and isinstance(data, dict):
            return data
    except Exception:  # a missing, corrupt or foreign cache is simply a cold start
        pass
    return None


def save(path: Path, memo: Memo) -> None:
    """Append-style: a small build writes only its new entries to the delta file; the main
    file is rewritten (compacted, dropping unused entries) when the delta or the dead weight
    grows past a quarter of what is used."""
    new = {k: memo.data[k] for k in memo.used if k not in memo.base}
    dead = len(memo.base - memo.used)
    if not new and not dead and path.exists():
        return  # nothing new and nothing to forget: the files on disk are already this memo
    used = max(len(memo.used), 1)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and len(new) * 4 <= used and dead * 4 <= used:
            if new:
                _write(path.with_suffix(".delta"), new)
            return
        _write(path, memo.live())
        path.with_suffix(".delta").unlink(missing_ok=True)
    except OSError:  # the cache is an optimisation; failing to save it is not an error
        pass


def _write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        pickle.dump((__version__, data), f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def load_stamp(memo_path: Path) -> Optional[dict]:
    """The record of the last successful build into the same output (a small JSON file)."""
    try:
        return json.loads(memo_path.with_suffix(".stamp.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def save_stamp(memo_path: Path, stamp: dict) -> None:
    try:
        memo_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo_path.with_suffix(".stamp.tmp")
        tmp.write_text(json.dumps(stamp), encoding="utf-8")
        os.replace(tmp, memo_path.with_suffix(".stamp.json"))
    except OSError:
        pass
