"""The bare `cap install`: every lock in the scope's chain restored exactly as recorded, each
artifact that is missing or differs fetched from its locked source, re-verified against its
integrity and put in place by one journaled transaction per scope level. Nothing ever
advances; a failure is reported per artifact, so one bad source does not stop the rest.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import field

from agentrc.capabilities import source as sources
from agentrc.capabilities.model import LOCK_FILE, Lock, LockedCapability
from agentrc.capops import safe as capsafe
from agentrc.capops import txn as captxn
from agentrc.capops.failure import Failure, Outcome, fail, failure_of, noted
from agentrc.capops.package import Staged, fetch_package, load_package, materialize
from agentrc.capops.scope import (
    Ignore,
    Staging,
    absent_anchors,
    carry_out,
    check_scope,
    hash_or_empty,
    installed_dir,
    lock_levels,
    misplaced_diags,
    read_lock,
    recover_here,
    rmtree,
)
from agentrc.classcode import dataclass
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List


def restore(scope: str, notify: Callable[[str], None] = lambda _m: None) -> Outcome:
    """Bare install: every lock in the scope's chain, exactly as recorded. Raises Failure
    when a lock is invalid (before anything changes); per-artifact failures are reported."""
    scope = os.path.abspath(scope)
    notes = recover_here(scope)  # a first install killed after its commit left no lock yet
    levels = lock_levels(scope)
    parsed = [(level, read_lock(level)) for level in levels]  # every lock validated first
    report = _Restored()
    for level, lock in parsed:
        if lock is None:
            continue
        if lock.version != 2:
            report.artifacts.append({"id": None, "kind": "package", "level": level, "status": "legacy",
                                     "reason": "lockfileVersion 1: convert it with `oas migrate`"})
            report.lines.append(f"legacy {os.path.join(level, LOCK_FILE)}: lockfileVersion 1, not restored by agentrc")
            continue
        check_scope(level)
        staging = Staging(level, absent_anchors(level))
        notes += staging.notes
        try:
            _restore_level(level, staging, report, notify)
        except BaseException as exc:
            raise noted(failure_of(exc, level, level), notes) from None
        finally:
            staging.close()
    if not any(lock for _l, lock in parsed):
        report.lines.append("nothing to restore: no oas-lock.json in this scope or above it")
    result = {"boundary": scope, "boundaryKind": "chain", "scopes": [{"scope": scope, "artifacts": report.artifacts}],
              "requirements": [], "failures": report.failures}
    return Outcome(result, report.lines, notes + misplaced_diags(scope, warning=True), failed=bool(report.failures))


@dataclass
class _Restored:
    """What a restore did, artifact by artifact (the --json result's lists, the text lines)."""

    artifacts: List[Dict[str, Any]] = field(default_factory=list)
    lines: List[str] = field(default_factory=list)
    failures: List[Dict[str, Any]] = field(default_factory=list)

    def failed(self, entry: Dict[str, Any], level: str, what: str, exc: Failure) -> None:
        reason = exc.diagnostics[0].message if exc.diagnostics else str(exc)
        self.artifacts.append({**entry, "status": "failed", "reason": reason, "code": exc.kernel_code})
        failure: Dict[str, Any] = {"scope": level, "id": f"package {entry['id']}"}
        if entry.get("capability"):
            failure["capability"] = entry["capability"]
        self.failures.append({**failure, "reason": reason, "code": exc.kernel_code})
        self.lines.append(f"FAILED    {what}: {reason}")


def _restore_level(level: str, staging: Staging, report: _Restored, notify: Callable[[str], None]) -> None:
    """One scope level, under its lock: each artifact that is missing or differs, fetched,
    verified and staged, then all of them put in place by one journaled transaction."""
    lock = read_lock(level) or Lock()  # again, now that this run holds the scope
    if lock.version != 2:
        return
    fetched: Dict[str, Any] = {}
    txn = captxn.Txn(level)
    try:
        for cid, row in lock.capabilities:
            dest = installed_dir(level, cid)
            entry: Dict[str, Any] = {"id": row.package, "capability": cid, "kind": "package", "level": level}
            if os.path.lexists(dest) and hash_or_empty(dest) == row.integrity:
                report.artifacts.append({**entry, "status": "present", "dir": dest})
                report.lines.append(f"ok        {cid} ({os.path.relpath(dest)})")
                continue
            try:
                adir = _restore_one(level, lock, cid, row, staging, fetched, notify)
            except Failure as exc:
                report.failed(entry, level, cid, exc)
                continue
            note = " (replaced a changed copy)" if os.path.lexists(dest) else ""
            txn.tree(dest, adir)
            report.artifacts.append({**entry, "status": "restored", "dir": dest})
            report.lines.append(f"restored  {cid} -> {os.path.relpath(dest)}{note}")
        for pid, _p in lock.packages:
            if not lock.exports(pid):
                entry = {"id": pid, "kind": "package", "level": level}
                report.failed(entry, level, pid, fail(os.path.join(level, LOCK_FILE), "AR161", f"package {pid!r} is "
                                                      "locked but supplies no capability", "capability-list-mismatch"))
        Ignore(level).stage(txn)
        if txn.fd is not None:
            txn.commit()
    except BaseException:
        with contextlib.suppress(OSError):
            txn.discard()
        raise
    if txn.fd is not None:
        carry_out(txn, os.path.join(level, LOCK_FILE))


def _restore_one(level: str, lock: Lock, cid: str, row: LockedCapability, staging: Staging,
                 fetched: Dict[str, Any], notify: Callable[[str], None]) -> str:
    """The locked artifact of `cid`, materialised in staging from its package (fetched once
    per package) and verified against its integrity: its directory. Raises Failure."""
    got = fetched.get(row.package)
    if got is None:
        got = fetched[row.package] = _fetch_locked(lock, row.package, staging, notify)
    if isinstance(got, Failure):
        raise got
    match = [(rel, cdir, cap) for rel, cdir, cap in got.caps if cap.id == cid]
    if not match:
        raise fail(os.path.join(level, LOCK_FILE), "AR161", f"package {row.package!r} no longer exports capability "
                   f"{cid!r}", "capability-list-mismatch")
    rel, cdir, cap = match[0]
    if rel != row.path:
        raise fail(os.path.join(level, LOCK_FILE), "AR161", f"package {row.package!r} exports {cid!r} from {rel!r}, "
                   f"but the lock records {row.path!r}", "capability-list-mismatch")
    adir, integrity = materialize(cap, rel, cdir, got, os.path.join(staging.dir, "artifacts"))
    if integrity != row.integrity:
        rmtree(adir)  # the fetched copy that does not match is never installed
        raise fail(installed_dir(level, cid), "AR161", f"the restored copy of {cid} hashes to {integrity}, not the "
                   f"locked {row.integrity}; it was removed")
    return adir


def _fetch_locked(lock: Lock, pid: str, staging: Staging, notify: Callable[[str], None]):
    """The locked package, staged and verified against its payload integrity (a Staged), or
    the Failure saying why not."""
    row = lock.package(pid)
    assert row is not None  # the lock's rows were checked against each other when it was read
    label = sources.redact(row.source)
    try:
        src = sources.parse_locked(row.source)
        dest = os.path.join(staging.dir, f"pkg-{pid}")
        notify(f"fetching {label}")
        commit, path = fetch_package(src, dest, label, commit="" if src.kind == "path" else row.commit,
                              package_path="" if src.kind == "path" else row.path)
        integrity = captree.tree_hash(dest, payload=True)
        if integrity != row.integrity:
            rmtree(dest)
            return fail(label, "AR161", f"the package payload hashes to {integrity}, not the locked "
                         f"{row.integrity}; the source changed; reinstall it deliberately")
        pkg, caps = load_package(dest, label)
        return Staged(pid, dest, pkg, row.source, row.path, row.commit, integrity, list(row.dependencies), caps)
    except sources.SourceError as exc:
        return fail(label, exc.code, str(exc))
    except (captree.TreeError, capsafe.Escape, RecursionError, Failure) as exc:
        got = failure_of(exc, label, label)
        assert isinstance(got, Failure)
        return got

