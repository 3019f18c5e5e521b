"""`cap list`: the packages and capabilities the locks of a scope's chain hold, each
capability with its health as the OAS kernel's `oas list` reports it (missing, drifted,
provenance that disagrees with the lock, an executable surface not approved with the command
that approves it, or ok), its layer and its executable surface, so a capability whose
commands or hooks are blocked is never shown as an ordinary usable row. Artifacts without a
lock row and misplaced capabilities are diagnostics.
"""

from __future__ import annotations

import os

from agentrc.capabilities.manifest import parse_capability
from agentrc.capabilities.model import CAPABILITY_FILE, INSTALLATION_FILE, LOCK_FILE, Capability, Lock
from agentrc.capops.failure import Failure, Outcome
from agentrc.capops.scope import hash_or_empty, installed_dir, lock_levels, misplaced_diags, read_lock, store_dir
from agentrc.capops.trust import provenance_agrees
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple


def capability_health(level: str, lock: Lock, cid: str, cap: Optional[Capability]) -> Dict[str, Any]:
    """`status`, `code`, `detail` and the artifact's `integrity` of one locked capability, in
    the kernel's order: a missing artifact cannot be hashed, drifted bytes make an approval
    meaningless (so trust is not also reported), provenance is read once the bytes are the
    locked ones, then the approval of an executable surface. `cap` is its installed manifest."""
    row = lock.capability(cid)
    assert row is not None
    dest = installed_dir(level, cid)
    if not os.path.isfile(os.path.join(dest, CAPABILITY_FILE)) or os.path.islink(dest):
        return {"status": "missing", "code": "missing-capability-artifact", "integrity": None,
                "detail": f"capability {cid} is locked but not materialized — run `agentrc cap install` to "
                          "re-materialize it"}
    actual = hash_or_empty(dest)
    if not actual:
        return {"status": "broken", "code": "invalid-capability-artifact", "integrity": None,
                "detail": f"capability {cid}: its artifact cannot be read or hashed"}
    if actual != row.integrity:
        return {"status": "drifted", "code": "integrity-drift", "integrity": actual,
                "detail": f"capability {cid}: artifact integrity drift — installed {actual}, locked {row.integrity}; "
                          "its executable approval is invalid"}
    if not provenance_agrees(level, lock, cid):
        return {"status": "provenance-mismatch", "code": "invalid-lock", "integrity": actual,
                "detail": f"capability {cid}: its {INSTALLATION_FILE} does not agree with the lock rows it claims "
                          "to come from"}
    if cap is not None and cap.executable and not row.trusted:
        return {"status": "untrusted", "code": "untrusted-surface", "integrity": actual,
                "detail": f"capability {cid}: executable surface UNTRUSTED — `agentrc cap trust {cid}`"}
    return {"status": "ok", "code": None, "integrity": actual, "detail": None}


def installed_manifest(level: str, cid: str) -> Optional[Capability]:
    """The installed capability's `oas.json`, None when it is missing or invalid."""
    dest = installed_dir(level, cid)
    raw = captree.read_manifest(dest, CAPABILITY_FILE)
    return parse_capability(os.path.join(dest, CAPABILITY_FILE), raw, Diagnostics(), exported=True) \
        if raw is not None else None


def _capability_row(level: str, lock: Lock, pid: str, cid: str) -> Dict[str, Any]:
    """One capability of `oas list --json`: its lock row, layer, executable surface and health."""
    c = lock.capability(cid)
    assert c is not None
    dest = installed_dir(level, cid)
    cap = installed_manifest(level, cid)
    health = capability_health(level, lock, cid, cap)
    return {"capability": cid, "version": c.version, "package": pid, "level": level, "path": c.path, "dir": dest,
            "integrity": c.integrity, "installedIntegrity": health["integrity"],
            "layer": (cap.layer or None) if cap is not None else None, "trusted": c.trusted,
            "installed": os.path.isfile(os.path.join(dest, CAPABILITY_FILE)),
            "executableSurface": {"commands": [n for n, _c in cap.commands] if cap is not None else [],
                                  "hooks": [h.event for h in cap.hooks] if cap is not None else []},
            "status": health["status"], "code": health["code"], "detail": health["detail"]}


def _capability_lines(row: Dict[str, Any]) -> List[str]:
    """The text of one capability, as `oas list` prints it: its layer, whether its commands
    and hooks are approved or need approving, and what is wrong with it when anything is."""
    surface = row["executableSurface"]
    trust = ("  [trusted]" if row["trusted"] else "  [executable — needs agentrc cap trust]") \
        if surface["commands"] or surface["hooks"] else ""
    layer = f"  layer: {row['layer']}" if row["layer"] else ""
    lines = [f"  capability {row['capability']}@{row['version']}{layer}{trust}"]
    if row["status"] not in ("ok", "untrusted"):
        lines.append(f"    {row['status'].upper()}: {row['detail']}")
    return lines


def list_scope(scope: str) -> Outcome:
    """`cap list`: every lock of the scope's chain, outermost first."""
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
                caps_json.append(_capability_row(level, lock, pid, cid))
                lines.extend(_capability_lines(caps_json[-1]))
            if p.dependencies:
                lines.append(f"  depends on: {', '.join(p.dependencies)}")
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

