"""The health of what a deployment has installed, for `cap doctor`: the `packages` section
(each locked package of the scope and the scopes above it, and each capability it exported
checked as the OAS kernel's doctor checks it: missing, drifted, provenance that disagrees
with the lock, an executable surface not approved), the version 1 locks waiting for
`cap migrate`, and the `trust` object of one capability (`trusted`, `reason`, `integrity`,
`lock`, `package`). Reads only; a lock that cannot be read is `lockError`, never a
traceback.

Enters: a context directory (and, for trust, one acquired capability). Leaves: the JSON
rows of `oas doctor --json` (`packages`, `legacyLockFiles`, `lockError`, a capability's
`trust`) and their text lines.
"""

from __future__ import annotations

import json
import os

from agentrc.capabilities.model import CAPABILITY_FILE, INSTALLATION_FILE, LOCK_FILE, Capability, LockedCapability
from agentrc.capops import listing
from agentrc.capops.failure import Failure
from agentrc.capops.scope import hash_or_empty, installed_dir, lock_levels, read_lock
from agentrc.capops.trust import provenance_agrees
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List


def _lock_row(level: str, row: LockedCapability) -> Dict[str, Any]:
    return {"version": row.version, "package": row.package, "path": row.path, "integrity": row.integrity,
            "trusted": row.trusted, "_file": os.path.join(level, LOCK_FILE), "_level": level}


def _executable(level: str, cid: str) -> bool:
    raw = captree.read_manifest(installed_dir(level, cid), CAPABILITY_FILE)
    try:
        doc = json.loads(raw) if raw is not None else None
    except ValueError:
        return False
    return isinstance(doc, dict) and bool(doc.get("commands") or doc.get("hooks"))


def packages(ctx: str) -> Dict[str, Any]:
    """`packages`, `legacyLockFiles` and `lockError` of `oas doctor --json` for `ctx`."""
    rows: List[Dict[str, Any]] = []
    legacy_files: List[Dict[str, Any]] = []
    for level in lock_levels(ctx):
        try:
            lock = read_lock(level)
        except Failure as exc:
            first = exc.diagnostics[0] if exc.diagnostics else None
            return {"packages": rows, "legacyLockFiles": legacy_files,
                    "lockError": {"code": "invalid-lock", "message": first.message if first else "invalid lock",
                                  "file": os.path.join(level, LOCK_FILE)}}
        if lock is None:
            continue
        if lock.version != 2:
            legacy_files.append({"file": os.path.join(level, LOCK_FILE), "level": level, "lockfileVersion": 1,
                                 "empty": not lock.legacy, "status": "pending-format-migration",
                                 "action": f"agentrc cap migrate --dir {level}"})
            continue
        for pid, p in lock.packages:
            exported = sorted(lock.exports(pid))
            health = (listing.capability_health(level, lock, cid, listing.installed_manifest(level, cid))
                      for cid in exported)
            problems = [{"code": h["code"], "detail": h["detail"]} for h in health if h["status"] != "ok"]
            rows.append({"id": pid, "version": p.version, "level": level, "source": p.source, "path": p.path,
                         "commit": p.commit, "capabilities": exported, "dependencies": list(p.dependencies),
                         "status": "broken" if problems else "ok", "problems": problems})
    return {"packages": rows, "legacyLockFiles": legacy_files, "lockError": None}


def package_lines(doc: Dict[str, Any]) -> List[str]:
    """The text of the `packages` section, as the kernel's doctor prints it."""
    lines = ["installed packages:"]
    error = doc.get("lockError")
    if error:
        lines.append(f"  ERROR: {error['message']} [{error['code']}]")
    if not error and not doc["packages"] and not doc["legacyLockFiles"]:
        lines.append("  (none)")
    for p in doc["packages"]:
        lines.append(f"  {p['id']}@{p['version']}  [{p['level']}]")
        for prob in p["problems"]:
            lines.append(f"    {prob['detail']}" if prob["code"] == "untrusted-surface"
                         else f"    ERROR: {prob['detail']} [{prob['code']}]")
    for x in doc["legacyLockFiles"]:
        what = f"an empty lockfileVersion {x['lockfileVersion']} file" if x["empty"] else \
            f"lockfileVersion {x['lockfileVersion']}"
        lines.append(f"  WARNING: {x['file']} is {what} — `{x['action']}` maps it to packages")
    return lines


def trust(cid: str, cap: Capability, origin: str, cdir: str) -> Dict[str, Any]:
    """The `trust` object of an active capability, as the kernel's doctor reports it:
    owned capabilities are trusted with their scope; an installed one needs its lock row,
    the locked bytes, provenance that agrees and, with commands or hooks, an approval."""
    if origin.startswith("owned:"):
        return {"trusted": True, "configOwned": True}
    if not origin.startswith("installed:"):
        return {"trusted": False, "reason": f"not locked in {LOCK_FILE}"}
    level = origin.split(":", 1)[1]
    try:
        lock = read_lock(level)
    except Failure as exc:
        return {"trusted": False, "reason": "; ".join(d.message for d in exc.diagnostics)}
    if lock is not None and lock.version == 1:
        return _legacy_trust(level, cid, cdir)
    row = lock.capability(cid) if lock is not None else None
    if lock is None or row is None:
        return {"trusted": False, "reason": f"capability {cid} is not locked in {LOCK_FILE}"}
    integrity = hash_or_empty(cdir)
    out: Dict[str, Any] = {"trusted": False, "integrity": integrity, "lock": _lock_row(level, row)}
    if integrity != row.integrity:
        out["reason"] = f"capability {cid} artifact integrity differs from {os.path.join(level, LOCK_FILE)}"
    elif not provenance_agrees(level, lock, cid):
        out["reason"] = f"capability {cid}: its {INSTALLATION_FILE} does not agree with the lock rows"
    elif cap.executable and not row.trusted:
        out["reason"] = f"executable commands/hooks need `agentrc cap trust {cid}`"
    else:
        out.update(trusted=True, package=row.package)
    return out


def _legacy_trust(level: str, cid: str, cdir: str) -> Dict[str, Any]:
    """A lockfileVersion 1 capability: its row's integrity (approval is the row's
    `trustedExecutables`, which agentrc does not grant: migrate the scope)."""
    raw = captree.read_manifest(level, LOCK_FILE)
    rows = (json.loads(raw) if raw is not None else {}).get("capabilities") or {}
    row = rows.get(cid)
    if not isinstance(row, dict):
        return {"trusted": False, "reason": f"not locked in {LOCK_FILE}"}
    integrity = hash_or_empty(cdir)
    lock_row = dict(row, _file=os.path.join(level, LOCK_FILE))
    if row.get("integrity") != integrity:
        return {"trusted": False, "reason": f"integrity differs from {lock_row['_file']}", "integrity": integrity,
                "lock": lock_row}
    executable = _executable(level, cid)
    if executable and row.get("trustedExecutables") is not True:
        return {"trusted": False, "reason": "executable commands/hooks need `oas trust`", "integrity": integrity,
                "lock": lock_row}
    return {"trusted": True, "integrity": integrity, "lock": lock_row}

