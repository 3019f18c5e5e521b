"""`cap list`: the packages and capabilities the locks of a scope's chain hold, each
capability with its health and trust as the OAS kernel's `oas list` reports them (missing,
drifted, provenance mismatch, untrusted with the remedy, or ok), its layer and its
executable surface; artifacts without a lock row and misplaced capabilities as diagnostics.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Tuple

from agentrc.capabilities.model import CAPABILITY_FILE, LOCK_FILE
from agentrc.capops.failure import Failure, Outcome
from agentrc.capops.scope import hash_or_empty, installed_dir, lock_levels, misplaced_diags, read_lock, store_dir
from agentrc.diagnostics import Diagnostic, Diagnostics


def list_scope(scope: str) -> Outcome:
    scope = os.path.abspath(scope)
    packages_json: List[Dict[str, Any]] = []
    caps_json: List[Dict[str, Any]] = []
    legacy: List[Dict[str, Any]] = []
    lines: List[str] = []
    for level in lock_levels(scope):
        lock = read_lock(level)
        if lock is None:
            continue
        if lock.version != 2:
            legacy.append({"file": os.path.join(level, LOCK_FILE), "level": level, "lockfileVersion": 1,
                           "capabilities": list(lock.legacy)})
            lines.append(f"legacy lock {os.path.join(level, LOCK_FILE)}: {', '.join(lock.legacy) or '(empty)'}")
            continue
        for pid, p in lock.packages:
            exported = sorted(lock.exports(pid))
            packages_json.append({"package": pid, "version": p.version, "level": level, "source": p.source,
                                  "path": p.path, "commit": p.commit, "integrity": p.integrity, "locked": True,
                                  "dependencies": list(p.dependencies), "capabilities": exported})
            lines.append(f"{pid}@{p.version}  ({level})")
            lines.append(f"  source {p.source}  path {p.path}  commit {p.commit}")
            for cid in exported:
                c = lock.capability(cid)
                assert c is not None
                dest = installed_dir(level, cid)
                installed = os.path.isfile(os.path.join(dest, CAPABILITY_FILE))
                actual = hash_or_empty(dest) if os.path.lexists(dest) else ""
                status = "missing" if not installed else "ok" if actual == c.integrity else "integrity-drift"
                caps_json.append({"capability": cid, "version": c.version, "package": pid, "level": level,
                                  "path": c.path, "dir": dest, "integrity": c.integrity,
                                  "installedIntegrity": actual or None, "trusted": c.trusted,
                                  "installed": installed, "status": status})
                state = "" if status == "ok" else f"  {status.upper()}"
                lines.append(f"  capability {cid}@{c.version}{'  [trusted]' if c.trusted else ''}{state}")
    if not packages_json and not legacy:
        lines.append("no installed packages in this scope or above it")
    problems = misplaced_diags(scope, warning=False) + _unlocked(scope)
    return Outcome({"packages": packages_json, "capabilities": caps_json, "legacy": legacy}, lines, problems,
                   failed=any(d.is_error for d in problems))


def _unlocked(scope: str) -> Tuple[Diagnostic, ...]:
    """Artifacts under a scope's installed/ with no row in its lock: spec 003 makes the lock
    the trust boundary, so such a directory is reported (warning), never used as locked."""
    d = Diagnostics()
    store = store_dir(scope)
    try:
        names = sorted(n for n in os.listdir(store) if not n.startswith("."))
    except OSError:
        return ()
    try:
        lock = read_lock(scope)
    except Failure:
        return ()
    locked = {cid for cid, _c in lock.capabilities} | set(lock.legacy) if lock is not None else set()
    for name in names:
        if name not in locked:
            d.warning(os.path.relpath(os.path.join(store, name)), (0, 0), "AR161", "is under installed/ but has no "
                      "row in oas-lock.json; it is not a locked capability: remove it, or install its package")
    return tuple(d.items)

