"""`agentrc cap migrate [--dry-run]`: convert one scope's lockfileVersion 1 lock into a
lockfileVersion 2 package lock, as `oas migrate` does (spec 003; the kernel's plan and result
shapes), all or nothing.

The plan maps each v1 entry by its source: `path:DIR` to the package at DIR, `git:URL` to
`URL@COMMIT#.` (a v1 artifact was the repository root); `marketplace:ID` entries (catalog ids,
which agentrc does not resolve yet) and unknown sources are `manual`, and one `manual` entry
keeps the whole scope at version 1 (a version 2 lock has no place for it). An empty v1 lock
is converted to the empty version 2 lock.

Applying holds the scope, moves the v1 artifacts aside, writes the empty version 2 lock and
installs each mapped package (`capinstall.install`); the converted capabilities must be
exported by their packages. Any failure restores the original lock bytes and the v1
artifacts and removes what the migration installed. Trust is not carried over: the result's
`trust` names the executable surfaces to approve again. Config activation is not touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Any, Dict, List

from agentrc.capabilities.model import LOCK_FILE
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree
from agentrc.output.writer import write_atomic
from agentrc.pipeline import capinstall
from agentrc.pipeline.capinstall import Failure, Outcome, fail

EMPTY_V2 = (json.dumps({"lockfileVersion": 2, "packages": {}, "capabilities": {}}, indent=2) + "\n").encode()


def plan(scope: str) -> Dict[str, Any]:
    """The kernel's migration plan of `scope`: {from, convertible, plan, warnings}. Raises
    Failure (an invalid lock)."""
    scope = os.path.abspath(scope)
    lock = capinstall.read_lock(scope)
    steps: List[Dict[str, Any]] = []
    warnings: List[str] = []
    if lock is None:
        return {"from": None, "convertible": False, "plan": steps, "warnings": ["no oas-lock.json at this scope"]}
    if lock.version == 2:
        return {"from": 2, "convertible": False, "plan": steps,
                "warnings": ["already a capability-materialization lock — nothing to migrate"]}
    raw = captree.read_manifest(scope, LOCK_FILE) or b"{}"
    entries: Dict[str, Any] = json.loads(raw.decode("utf-8")).get("capabilities") or {}  # validated by read_lock
    if not entries:
        steps.append({"capabilityId": None, "v1": None, "package": None, "action": "convert-format",
                      "note": "empty lockfileVersion 1 → canonical { lockfileVersion: 2, packages: {}, "
                              "capabilities: {} }"})
        return {"from": 1, "convertible": True, "plan": steps, "warnings": warnings}
    for cid, v1 in entries.items():
        src = v1["source"]
        if src.startswith("git:"):
            url = src[4:]
            spec = f"{url}@{v1['commit']}#." if v1.get("commit") else f"{url}#."
            if not v1.get("commit"):
                warnings.append(f"{cid}: v1 lock has no commit — the migration acquire will resolve and pin the "
                                "source's current state")
            steps.append({"capabilityId": cid, "v1": v1, "package": {"id": None, "source": src, "spec": spec},
                          "action": "acquire"})
        elif src.startswith("path:"):
            steps.append({"capabilityId": cid, "v1": v1, "package": {"id": None, "source": src, "spec": src[5:]},
                          "action": "acquire"})
        elif src.startswith("marketplace:"):
            steps.append({"capabilityId": cid, "v1": v1, "package": None, "action": "manual",
                          "reason": "agentrc does not resolve catalog ids yet (run `oas migrate` for this scope)"})
            warnings.append(f"{cid}: {src} is a catalog capability — this scope stays lockfileVersion 1 until "
                            "it can be mapped")
        else:
            steps.append({"capabilityId": cid, "v1": v1, "package": None, "action": "manual",
                          "reason": f"unknown v1 source {src!r}"})
            warnings.append(f"{cid}: unknown v1 source {src!r} — migrate manually")
    blocking = [s for s in steps if s["action"] != "acquire"]
    return {"from": 1, "convertible": not blocking, "plan": steps, "warnings": warnings}


def migrate(scope: str, dry_run: bool = False, notify=lambda _m: None) -> Outcome:
    """Plan (`dry_run`) or apply the conversion of `scope`'s v1 lock. Raises Failure; on
    failure the scope is as it was."""
    scope = os.path.abspath(scope)
    lock_path = os.path.join(scope, LOCK_FILE)
    if dry_run:
        p = plan(scope)
        lines = [f"{s['action']:<14} {s['note']}" if s["action"] == "convert-format" else
                 f"{s['action']:<10} {s['capabilityId']}" + (f"  → {s['package']['spec']}" if s["package"] else "")
                 for s in p["plan"]] or ["Nothing to migrate at this scope."]
        lines += [f"WARNING: {w}" for w in p["warnings"]]
        return Outcome({"dryRun": True, "plan": p["plan"], "warnings": p["warnings"]}, lines)
    if not os.path.lexists(lock_path):
        raise fail(lock_path, "AR178", f"no {LOCK_FILE} at {scope}", "legacy-lock")
    capinstall._check_scope(scope)
    anchors = capinstall.absent_anchors(scope)
    held = capinstall.ScopeLock(scope).lend()
    try:
        return _apply(scope, lock_path, notify)
    finally:
        held.release()
        for d in anchors:
            try:
                os.rmdir(d)
            except OSError:
                break


def _apply(scope: str, lock_path: str, notify) -> Outcome:
    p = plan(scope)  # again, now that this run holds the scope
    if p["from"] == 2:
        return Outcome({"from": 2, "migrated": [], "warnings": ["already a capability-materialization lock"],
                        "file": lock_path, "trust": []}, [f"{lock_path} is already lockfileVersion 2"])
    manual = [s for s in p["plan"] if s["action"] == "manual"]
    if manual:
        d = Diagnostics()
        for s in manual:
            d.error(lock_path, (0, 0), "AR178", f"{s['capabilityId']} cannot be converted yet ({s['reason']}); the "
                    "scope was left unchanged and its version 1 lock keeps working")
        raise Failure(d.items, "legacy-lock")
    original = open(lock_path, "rb").read()
    if p["plan"] and p["plan"][0]["action"] == "convert-format":
        write_atomic(capinstall._path(lock_path), EMPTY_V2)
        return Outcome({"from": 1, "migrated": [], "warnings": p["warnings"], "file": lock_path, "trust": [],
                        "formatConverted": True},
                       [f"{lock_path} was an empty lockfileVersion 1 file — converted to lockfileVersion 2."])
    store = capinstall._store(scope)
    ignore = capinstall._Ignore(scope)  # ensured first, as the kernel does; restored on failure
    aside = tempfile.mkdtemp(prefix=".migrate-", dir=store)
    moved: List[str] = []
    created: List[str] = []
    migrated: List[Dict[str, Any]] = []
    trust: List[Dict[str, Any]] = []
    try:
        for s in p["plan"]:
            cdir = os.path.join(store, s["capabilityId"])
            if os.path.lexists(cdir):
                os.rename(cdir, os.path.join(aside, s["capabilityId"]))
                moved.append(s["capabilityId"])
        write_atomic(capinstall._path(lock_path), EMPTY_V2)
        groups: Dict[str, List[Dict[str, Any]]] = {}
        for s in p["plan"]:
            groups.setdefault(s["package"]["spec"], []).append(s)
        for spec, steps in groups.items():
            notify(f"acquiring {spec}")
            outcome = capinstall.install(scope, spec, notify)
            created += [c["dir"] for c in outcome.result["capabilities"] if c["status"] != "kept"]
            for s in steps:
                provider = next((i for i in outcome.result["installed"] if s["capabilityId"] in i["capabilities"]),
                                None)
                if provider is None:
                    raise fail(lock_path, "AR178", f"the migrated source {spec} does not export capability "
                               f"{s['capabilityId']!r}", "capability-list-mismatch")
                migrated.append({"capability": s["capabilityId"], "package": provider["package"],
                                 "version": provider["version"]})
            for c in outcome.result["capabilities"]:
                surface = c["executableSurface"]
                if (surface["commands"] or surface["hooks"]) and not any(t["capability"] == c["capability"]
                                                                        for t in trust):
                    trust.append({"capability": c["capability"], "package": c["package"], "level": scope})
    except BaseException as exc:
        with contextlib.suppress(OSError):
            write_atomic(capinstall._path(lock_path), original)
        for made in created:
            capinstall._rmtree(made)
        for cid in moved:
            with contextlib.suppress(OSError):
                dest = os.path.join(store, cid)
                if os.path.lexists(dest):
                    capinstall._rmtree(dest)
                os.rename(os.path.join(aside, cid), dest)
        capinstall._rmtree(aside)
        ignore.rollback()
        if isinstance(exc, Failure):
            rolled = Diagnostics()
            rolled.error(lock_path, (0, 0), "AR178", "the migration failed and was rolled back (the version 1 lock "
                         "and its artifacts are as they were)")
            raise Failure(tuple(rolled.items) + exc.diagnostics, exc.kernel_code or "legacy-lock") from None
        raise
    capinstall._rmtree(aside)
    lines = [f"migrated  {m['capability']} → package {m['package']}@{m['version']}" for m in migrated]
    lines += [f"WARNING: {w}" for w in p["warnings"]]
    lines.append(f"{lock_path} is now lockfileVersion 2. Config activation is unchanged; trust executable "
                 "capabilities again (`agentrc cap trust`): approvals are not carried over.")
    return Outcome({"from": 1, "migrated": migrated, "warnings": p["warnings"], "file": lock_path, "trust": trust},
                   lines)
