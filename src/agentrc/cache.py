"""A content-addressed memo of parsed item directories and rendered items.

Keys are digests of the inputs (an item directory's files, the client, the agentrc
version), so a stale entry can never be returned: an edit changes the key. The core only
sees a dict-like object; the CLI persists it between runs (outside the output tree, as
it is a pickle), and the Pants plugin relies on its own caching instead.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path
from typing import Any, Dict, Hashable, Iterable, Optional, Set

from agentrc import __version__


class Memo:
    def __init__(self, data: Optional[Dict[Hashable, Any]] = None):
        self.data: Dict[Hashable, Any] = data or {}
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


def digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256(__version__.encode())
    for p in parts:
        h.update(len(p).to_bytes(8, "big"))
        h.update(p)
    return h.hexdigest()


def location(out: str, sources: Iterable[str]) -> Path:
    base = os.environ.get("AGENTRC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "agentrc")
    key = digest([os.path.abspath(out).encode()] + sorted(os.path.abspath(s).encode() for s in sources))
    return Path(base) / f"build-{key[:24]}.pickle"


def load(path: Path) -> Memo:
    try:
        with open(path, "rb") as f:
            version, data = pickle.load(f)
        if version == __version__ and isinstance(data, dict):
            return Memo(data)
    except Exception:  # a missing, corrupt or foreign cache is simply a cold start
        pass
    return Memo()


def save(path: Path, memo: Memo) -> None:
    if memo.misses == 0 and set(memo.data) == memo.used and path.exists():
        return  # nothing new and nothing to forget: the file on disk is already this memo
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            pickle.dump((__version__, memo.live()), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:  # the cache is an optimisation; failing to save it is not an error
        pass


def load_stamp(memo_path: Path) -> Optional[dict]:
    """The record of the last successful build into the same output (a small JSON file)."""
    try:
        import json

        return json.loads(memo_path.with_suffix(".stamp.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def save_stamp(memo_path: Path, stamp: dict) -> None:
    import json

    try:
        memo_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo_path.with_suffix(".stamp.tmp")
        tmp.write_text(json.dumps(stamp), encoding="utf-8")
        os.replace(tmp, memo_path.with_suffix(".stamp.json"))
    except OSError:
        pass
