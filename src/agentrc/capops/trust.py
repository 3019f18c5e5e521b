"""`cap trust`: approving a capability's commands and hooks, bound to the integrity it is
installed at, after checking the artifact hashes to its lock row and its provenance file
agrees with the lock. A capability without commands or hooks needs no approval.
"""

from __future__ import annotations

import dataclasses
import json
import os

from agentrc.capabilities import lock as locks
from agentrc.capabilities.manifest import parse_capability
from agentrc.capabilities.model import CAPABILITY_FILE, INSTALLATION_FILE, LOCK_FILE, Capability, Installation, Lock
from agentrc.capops.failure import Failure, Outcome, fail, noted
from agentrc.capops.scope import ScopeLock, hash_or_empty, installed_dir, lock_levels, read_lock, write_in
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional


def trust(scope: str, target: str, all_capabilities: bool = False,
          notify: Callable[[str], None] = lambda _m: None) -> Outcome:
    """Approve the commands and hooks of one capability (or, with `all_capabilities`, of every
    capability package `target` supplies) at exactly its installed integrity. Refused unless
    each artifact hashes to its locked integrity and its `.oas-installation.json` agrees
    with the lock rows; a capability without commands or hooks needs no approval (skipped)."""
    scope = os.path.abspath(scope)
    level, lock = None, None
    for candidate in reversed(lock_levels(scope)):
        found = read_lock(candidate)
        if found is None or found.version != 2:
            continue
        if (found.package(target) if all_capabilities else found.capability(target)) is not None:
            level, lock = candidate, found
            break
    if level is None or lock is None:
        what = "package" if all_capabilities else "capability"
        raise fail(target, "AR166", f"no locked {what} {target!r} in this scope or above it"
                    + ("" if all_capabilities else " (a package takes --all-capabilities)"))
    held = ScopeLock(level)
    try:
        again = read_lock(level)  # again, now that this run holds the scope
        if again is None or again.version != 2 or (
                again.package(target) if all_capabilities else again.capability(target)) is None:
            raise fail(target, "AR166", f"{target!r} is no longer locked in {os.path.join(level, LOCK_FILE)}")
        return noted(_trust(level, again, target, all_capabilities, notify), held.notes)
    except Failure as exc:
        raise noted(exc, held.notes) from None
    finally:
        held.release()


def _trust(level: str, lock: Lock, target: str, all_capabilities: bool, notify: Callable[[str], None]) -> Outcome:
    lock_path = os.path.join(level, LOCK_FILE)
    row0 = lock.capability(target)
    package_id = target if all_capabilities else (row0.package if row0 else "")
    targets = list(lock.exports(package_id)) if all_capabilities else [target]
    d = Diagnostics()
    surface: Dict[str, Dict[str, List[str]]] = {}
    approved: List[str] = []
    skipped: List[str] = []
    for cid in targets:
        cap = _verified(level, lock, cid, d)
        if cap is None:
            continue
        surface[cid] = {"commands": [n for n, _c in cap.commands], "hooks": [h.event for h in cap.hooks]}
        (approved if cap.executable else skipped).append(cid)
    if d.has_errors:
        first = d.items[0].code
        # The kernel's codes: a locked capability without its artifact is missing-capability-artifact.
        kernel = "invalid-lock" if first == "AR159" else "missing-capability-artifact" if first == "AR166" else ""
        raise Failure(d.items, kernel)
    if all_capabilities:
        pkg_row = lock.package(package_id)
        notify(f"package {package_id}@{pkg_row.version if pkg_row else '?'}: the whole executable surface")
        for cid in targets:
            s = surface.get(cid, {"commands": [], "hooks": []})
            commands, hooks = ", ".join(s["commands"]) or "none", ", ".join(s["hooks"]) or "none"
            notify(f"  {cid}: commands [{commands}], hooks [{hooks}]")
    if approved:
        rows = tuple((cid, dataclasses.replace(c, trusted=True) if cid in approved else c)
                     for cid, c in lock.capabilities)
        write_in(level, lock_path, locks.dump(Lock(2, lock.packages, rows)))
    integrities = {cid: c.integrity for cid, c in lock.capabilities if cid in approved}
    lines = [f"trusted {cid} (package {package_id}, artifact {integrities[cid]})" for cid in approved]
    if skipped:
        lines.append(f"no commands or hooks, nothing to approve: {', '.join(skipped)}")
    return Outcome({"package": package_id, "level": level, "approved": approved, "skipped": skipped,
                    "approvedIntegrity": integrities, "executableSurface": surface, "file": lock_path}, lines)


def _verified(level: str, lock: Lock, cid: str, d: Diagnostics) -> Optional[Capability]:
    """The installed capability `cid`, when its artifact hashes to its lock row and its
    provenance file agrees with the lock; else None, with the error in `d`."""
    row = lock.capability(cid)
    assert row is not None  # the lock was checked whole when read
    dest = installed_dir(level, cid)
    if not os.path.isdir(dest) or os.path.islink(dest):
        d.error(dest, (0, 0), "AR166", f"{cid} is locked but not installed; run `agentrc cap install` first")
        return None
    actual = hash_or_empty(dest)
    if actual != row.integrity:
        d.error(dest, (0, 0), "AR161", f"{cid} hashes to {actual or '(unreadable)'}, not the locked "
                f"{row.integrity}; restore or reinstall it before trusting")
        return None
    if not provenance_agrees(level, lock, cid):
        d.error(os.path.join(dest, INSTALLATION_FILE), (0, 0), "AR159", f"{cid}: the provenance file does not "
                "agree with the lock rows it claims to come from; refusing to trust it")
        return None
    raw = captree.read_manifest(dest, CAPABILITY_FILE)
    cd = Diagnostics()
    cap = parse_capability(os.path.join(dest, CAPABILITY_FILE), raw or b"", cd, exported=True)
    if cap is None:
        d.extend(cd.items)
    return cap


def provenance_agrees(level: str, lock: Lock, cid: str) -> bool:
    """Whether the installed artifact's `.oas-installation.json` says what the lock rows it
    claims to come from say (compared as JSON values, as the kernel compares them)."""
    row = lock.capability(cid)
    pkg_row = lock.package(row.package) if row else None
    assert row is not None and pkg_row is not None  # the lock was checked whole when read
    expected = locks.installation_bytes(Installation(cid, row.version, row.package, pkg_row.version,
                                                     pkg_row.source, pkg_row.commit, pkg_row.path, row.path))
    record = captree.read_manifest(installed_dir(level, cid), INSTALLATION_FILE)
    return record is not None and _json_or_none(record) == _json_or_none(expected)


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None

