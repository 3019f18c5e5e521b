"""What each client's import wrote into a registry: `.agentrc/imports.json` beside the
output manifest, so that an import of other clients adds to a registry (never deleting what
those brought) while a new import of the same clients replaces what they wrote last time
(a rule deleted from `.claude/rules` leaves the registry too).

The record is the output directory's own file, so it may be hostile like the manifest: it is
read bounded and never through a link, and a path it names counts only when the manifest
owns it (`kept` intersects with what the writer owns). A record that cannot be read is none:
the import then adds to everything agentrc wrote there.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import AbstractSet, Dict, Iterable, Sequence, Set

from agentrc.output import atomic

RECORD = ".agentrc/imports.json"
MAX_RECORD = 8 << 20


def read(out: Path) -> Dict[str, Set[str]]:
    """{client: paths its last import wrote}, or {} when there is no readable record."""
    path = os.path.join(os.fspath(out), *RECORD.split("/"))
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_RECORD:
            return {}
        data = json.loads(os.read(fd, MAX_RECORD + 1).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    finally:
        os.close(fd)
    clients = data.get("clients") if isinstance(data, dict) else None
    if not isinstance(clients, dict):
        return {}
    return {c: {p for p in paths if isinstance(p, str)} for c, paths in clients.items()
            if isinstance(c, str) and isinstance(paths, list)}


def kept(record: Dict[str, Set[str]], clients: Sequence[str], owned: AbstractSet[str]) -> Set[str]:
    """The owned paths an import of `clients` leaves as they are: all but those only these
    clients' last import wrote (without a record, all)."""
    others: Set[str] = set()
    mine: Set[str] = set()
    for client, paths in record.items():
        (mine if client in clients else others).update(paths)
    return {p for p in owned if p not in mine or p in others}


def shared_with_others(record: Dict[str, Set[str]], clients: Sequence[str], path: str) -> bool:
    """Whether another client's import wrote `path` too (then its text is joined, not replaced)."""
    return any(path in paths for client, paths in record.items() if client not in clients) or not record


def recorded(record: Dict[str, Set[str]], clients: Sequence[str], paths: Iterable[str]) -> Dict[str, Set[str]]:
    """The record after an import of `clients` wrote `paths`."""
    new = {c: set(p) for c, p in record.items()}
    for client in clients:
        new[client] = set(paths)
    return new


def write(out: Path, record: Dict[str, Set[str]]) -> None:
    """The record, written whole or not at all, never through a link (a failure is not the
    import's: the files are written; the next import then adds to everything)."""
    data = json.dumps({"version": 1, "clients": {c: sorted(p) for c, p in sorted(record.items())}},
                      indent=1, sort_keys=True) + "\n"
    try:
        atomic.write_atomic(Path(out) / RECORD, data.encode("utf-8"), root=out)
    except OSError:
        pass
