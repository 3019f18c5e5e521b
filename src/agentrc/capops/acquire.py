"""`cap install SOURCE`, `cap update` and `cap remove`: the transactions that change which
packages a scope holds.

Install stages the package (and its dependencies) in `installed/.staging-<random>/`
(`package`), then changes the scope by one transaction (`txn`, a plan run by the one
executor, `output/steps`): the new artifacts, the lock's and the ignore file's new bytes
staged in `installed/.agentrc-txn/`, then the commit point recorded in the executor's
journal and the steps after it carried out (artifacts renamed into `installed/<id>/`,
replaced or retired ones set aside, `oas-lock.json` and `.agents/capabilities/.gitignore`
renamed over). All of it under
the scope's lock; a failure before the commit changes nothing, and a killed run is finished
or undone by the next (`scope.recover_leftovers`). The bytes written are those the OAS kernel
writes for the same package, so both tools can work on one scope. Update re-resolves a
locked package and installs it in place; remove retires a package nothing uses.
"""

from __future__ import annotations

import os

from agentrc.capabilities import lock as locks
from agentrc.capabilities import source as sources
from agentrc.capabilities.model import LOCK_FILE, Lock, LockedCapability, LockedPackage
from agentrc.capops import txn as captxn
from agentrc.capops.failure import Failure, Outcome, fail, failure_of, noted
from agentrc.capops.package import Closure, Staged, materialize
from agentrc.capops.scope import (
    Ignore,
    Staging,
    absent_anchors,
    carry_out,
    check_scope,
    hash_or_empty,
    installed_dir,
    locked_at,
    misplaced_diags,
    read_lock,
)
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


def install(scope: str, spec: str, notify: Callable[[str], None] = lambda _m: None, replace: bool = False,
            expect: str = "", gate: Optional[Callable[[Dict[str, "Staged"]], None]] = None) -> Outcome:
    """Acquire the package `spec` names (and its dependencies) into `scope`. Raises Failure.
    `replace` (update): locked packages of the closure may change; `expect`: the package id
    the source must still provide; `gate`: called with the validated closure before
    anything in the scope changes, may raise Failure."""
    scope = os.path.abspath(scope)
    lock_path = os.path.join(scope, LOCK_FILE)
    try:
        root_src = sources.parse(spec)
    except sources.SourceError as exc:
        raise fail(sources.redact(spec), exc.code, str(exc)) from None
    _refuse_legacy(lock_path, read_lock(scope))
    check_scope(scope)
    anchors = absent_anchors(scope)
    staging = Staging(scope, anchors)
    label = sources.redact(spec)
    try:
        existing = _refuse_legacy(lock_path, read_lock(scope))  # again, now that this run holds the scope
        closure = Closure(staging.dir, notify)
        resolved = closure.resolved
        root_id = closure.resolve(root_src, label, [])
        if expect and root_id != expect:
            raise fail(label, "AR164", f"the source now provides package {root_id!r}, not {expect!r}")
        if gate is not None:
            gate(resolved)
        return noted(_commit(scope, existing, resolved, root_id, staging, replace), staging.notes)
    except BaseException as exc:
        raise noted(failure_of(exc, label, scope), staging.notes) from None
    finally:
        staging.close()


def _refuse_legacy(lock_path: str, lock: Optional[Lock]) -> Lock:
    """The scope's lock (an empty one when there is none); AR165 for a version 1 lock, which
    only `cap migrate` converts."""
    if lock is not None and lock.version != 2:
        raise fail(lock_path, "AR165", "is lockfileVersion 1; convert the scope with `oas migrate` before "
                   "installing packages")
    return lock or Lock()


def _commit(scope: str, existing: Lock, resolved: Dict[str, Staged], root_id: str, staging: Staging,
            replace: bool = False) -> Outcome:
    """The validated closure made the scope's, as one journaled transaction (`txn`)."""
    lock_path = os.path.join(scope, LOCK_FILE)
    _check_owners(lock_path, existing, resolved, replace)
    projected = _project(scope, existing, resolved, os.path.join(staging.dir, "artifacts"))
    new_lock = _new_lock(lock_path, existing, resolved, projected)
    staying = {p["cap"].id for p in projected}
    retired = [installed_dir(scope, cid) for cid, c in existing.capabilities
               if c.package in resolved and cid not in staying]
    with captxn.Txn(scope).committing() as txn:
        for p in projected:
            if p["status"] != "kept":
                txn.tree(p["dest"], p["dir"])
        for dest in retired:
            if os.path.lexists(dest):
                txn.retire(dest)
        Ignore(scope).stage(txn)
        txn.put(lock_path, locks.dump(new_lock))
    carry_out(txn, lock_path)
    return _install_report(scope, resolved, projected, root_id)


def _check_owners(lock_path: str, existing: Lock, resolved: Dict[str, Staged], replace: bool) -> None:
    """AR152 for a capability two packages export, AR161 for a locked package that would
    move or change on a plain install."""
    owner = {cid: c.package for cid, c in existing.capabilities if c.package not in resolved}
    d = Diagnostics()
    for pid, st in resolved.items():
        for _rel, _dir, cap in st.caps:
            if cap.id in owner and owner[cap.id] != pid:
                d.error(lock_path, (0, 0), "AR152", f"capability {cap.id!r} is exported by both package "
                        f"{owner[cap.id]!r} and package {pid!r}")
            owner[cap.id] = pid
        prior = None if replace else existing.package(pid)
        if prior is not None and prior.path != st.path:
            d.error(lock_path, (0, 0), "AR161", f"package {pid!r} resolves to the package path {st.path!r}, but the "
                    f"lock records {prior.path!r}; a locked package never moves on install (remove it, then "
                    "install again)")
        elif prior is not None and prior.integrity != st.integrity:
            d.error(lock_path, (0, 0), "AR161", f"package {pid!r} resolves to {st.integrity}, but the lock records "
                    f"{prior.integrity}; a locked package never changes on install (remove it, then install again)")
    if d.has_errors:
        raise Failure(d.items)


def _project(scope: str, existing: Lock, resolved: Dict[str, Staged], artifacts: str) -> List[Dict[str, Any]]:
    """Each capability materialised in staging, hashed, and compared with what the scope
    holds: installed (new), kept (the same artifact is there) or replaced."""
    projected: List[Dict[str, Any]] = []
    for pid, st in resolved.items():
        for rel, cdir, cap in st.caps:
            adir, integrity = materialize(cap, rel, cdir, st, artifacts)
            prior_cap = existing.capability(cap.id)
            same = prior_cap is not None and prior_cap.integrity == integrity and prior_cap.package == pid
            dest = installed_dir(scope, cap.id)
            if not os.path.lexists(dest):
                status = "installed"
            elif same and hash_or_empty(dest) == integrity:
                status = "kept"
            else:
                status = "replaced"
            projected.append({"cap": cap, "rel": rel, "pid": pid, "dir": adir, "dest": dest, "integrity": integrity,
                              "trusted": bool(same and prior_cap is not None and prior_cap.trusted),
                              "status": status})
    return projected


def _new_lock(lock_path: str, existing: Lock, resolved: Dict[str, Staged], projected: List[Dict[str, Any]]) -> Lock:
    """The lock after the install: the resolved packages' rows replace theirs (AR159 when
    the result would be an invalid lock)."""
    packages = {pid: p for pid, p in existing.packages}
    capabilities = {cid: c for cid, c in existing.capabilities if c.package not in resolved}
    for pid, st in resolved.items():
        packages[pid] = LockedPackage(st.source, st.path, st.package.version, st.commit, st.integrity,
                                      tuple(st.deps))
    for p in projected:
        capabilities[p["cap"].id] = LockedCapability(p["cap"].version, p["pid"], p["rel"], p["integrity"],
                                                     p["trusted"])
    problems = locks.check(packages, capabilities)
    if problems:
        raise fail(lock_path, "AR159", f"the lock this install would write is invalid: {problems[0][0]}")
    return Lock(2, tuple(packages.items()), tuple(capabilities.items()))


def _install_report(scope: str, resolved: Dict[str, Staged], projected: List[Dict[str, Any]],
                    root_id: str) -> Outcome:
    """The --json result and the text report of an install."""
    lock_path = os.path.join(scope, LOCK_FILE)
    installed = []
    for pid, st in resolved.items():
        ids = [cap.id for _r, _d, cap in st.caps]
        installed.append({"package": pid, "version": st.package.version, "source": st.source, "path": st.path,
                          "commit": st.commit, "integrity": st.integrity, "dependencies": st.deps,
                          "capabilities": ids,
                          "kept": all(p["status"] == "kept" for p in projected if p["pid"] == pid)})
    caps_json: List[Dict[str, Any]] = [{
                  "capability": p["cap"].id, "version": p["cap"].version, "package": p["pid"], "path": p["rel"],
                  "integrity": p["integrity"], "dir": p["dest"], "trusted": p["trusted"], "status": p["status"],
                  "layer": p["cap"].layer or None,
                  "executableSurface": {"commands": [n for n, _c in p["cap"].commands],
                                        "hooks": [h.event for h in p["cap"].hooks]}} for p in projected]
    lines = []
    for item in installed:
        lines.append(f"{'ok' if item['kept'] else 'installed'} {item['package']}@{item['version']} "
                     f"({item['source']}, path {item['path']}, {item['integrity']})")
        for cj in caps_json:
            if cj["package"] == item["package"]:
                layer = f" layer {cj['layer']}" if cj["layer"] else ""
                lines.append(f"  capability {cj['capability']}@{cj['version']}{layer} -> "
                             f"{os.path.relpath(cj['dir'])} ({cj['integrity']}, {cj['status']})")
    lines.append(f"locked in {os.path.relpath(lock_path)}; nothing activated")
    untrusted = [cj["capability"] for cj in caps_json
                 if (cj["executableSurface"]["commands"] or cj["executableSurface"]["hooks"]) and not cj["trusted"]]
    if untrusted:
        lines.append("commands and hooks stay blocked until trusted: " + ", ".join(untrusted))
    warnings = misplaced_diags(scope, warning=True)
    return Outcome({"root": root_id, "installed": installed, "capabilities": caps_json, "lockFile": lock_path,
                    "depWarnings": []}, lines, warnings)


def update(scope: str, package_id: str, notify: Callable[[str], None] = lambda _m: None) -> Outcome:
    """Re-resolve a locked package from its source (a git ref again, or the default branch
    for a source locked at a commit; a directory as it is now), validate everything in
    staging, and replace all of its capabilities and rows at once. Trust stays only on a
    capability whose integrity did not change; a capability the package no longer exports
    is removed unless oas-config.yaml still names it (then nothing changes, AR162)."""
    scope = os.path.abspath(scope)
    level, lock = locked_at(scope, package_id)
    row = lock.package(package_id)
    assert row is not None
    spec = _update_spec(row)
    before_caps = sorted(lock.exports(package_id))
    trusted_before = sorted(c for c in before_caps if (lock.capability(c) or LockedCapability("", "", "", "")).trusted)

    def gate(resolved: Dict[str, Staged]) -> None:
        staged = {cap.id for _r, _d, cap in resolved[package_id].caps} if package_id in resolved else set()
        removed = [c for c in before_caps if c not in staged]
        d = Diagnostics()
        for cfg, cid, layer in config_references(scope):
            if cid in removed:
                where = f" (the {layer} layer)" if layer else ""
                d.error(cfg, (0, 0), "AR162", f"references capability {cid!r}{where}, which {package_id!r} no "
                        "longer exports; remove the reference first, then update")
        if d.has_errors:
            raise Failure(d.items)

    outcome = install(level, spec, notify, replace=True, expect=package_id, gate=gate)
    after = next(p for p in outcome.result["installed"] if p["package"] == package_id)
    new_caps = {c["capability"]: c for c in outcome.result["capabilities"]}
    removed = [c for c in before_caps if c not in after["capabilities"]]
    before = {"version": row.version, "commit": row.commit, "integrity": row.integrity, "path": row.path,
              "capabilities": before_caps, "trustedCapabilities": trusted_before}
    result = {"package": package_id, "level": level, "changed": after["integrity"] != row.integrity,
              "pathChanged": after["path"] != row.path, "before": before, "after": after,
              "installed": outcome.result["installed"], "capabilities": outcome.result["capabilities"],
              "addedCapabilities": [c for c in after["capabilities"] if c not in before_caps],
              "removedCapabilities": removed, "retiredArtifacts": removed,
              "invalidatedApprovals": [c for c in trusted_before if not (c in new_caps and new_caps[c]["trusted"])]}
    return Outcome(result, _update_lines(package_id, row, after, result, _repairs(lock, package_id,
                                                                              outcome.result["capabilities"])))


def _update_spec(row: LockedPackage) -> str:
    """The source an update re-resolves a locked package from: a git ref again (the default
    branch for one locked at a commit), a catalog entry by its id (the catalog owns the
    path: an update adopts a moved root), a directory as it is now."""
    src = sources.parse_locked(row.source)
    if src.kind == "catalog":
        return src.catalog_id + (f"@{src.selector}" if src.selector else "")
    if src.kind == "git":
        pinned = src.ref and not (len(src.ref) == 40 and all(c in "0123456789abcdef" for c in src.ref))
        return (f"{src.url}@{src.ref}" if pinned else src.url) + f"#{row.path}"
    return src.path


def _update_lines(package_id: str, row: LockedPackage, after: Dict[str, Any], result: Dict[str, Any],
                  repaired: List[str]) -> List[str]:
    """The text report of an update."""
    if not result["changed"] and not repaired:
        lines = [f"{package_id} is up to date ({after['version']}, {after['integrity']})"]
    elif not result["changed"]:
        lines = [f"{package_id} is at its locked version ({after['version']}, {after['integrity']}); what the "
                 "scope held was not:"] + [f"  {r}" for r in repaired]
    else:
        lines = [f"updated {package_id}: {row.version} ({row.commit}) -> {after['version']} ({after['commit']})",
                 f"  integrity {row.integrity} -> {after['integrity']}"]
    if result["addedCapabilities"]:
        lines.append(f"  + capabilities: {', '.join(result['addedCapabilities'])}")
    if result["removedCapabilities"]:
        lines.append(f"  - capabilities: {', '.join(result['removedCapabilities'])}")
    if result["invalidatedApprovals"]:
        lines.append(f"  approvals reset (integrity changed): {', '.join(result['invalidatedApprovals'])}; review "
                     "and trust again")
    return lines


def _repairs(lock: Lock, package_id: str, caps: List[Dict[str, Any]]) -> List[str]:
    """What an update of an unchanged package put right: a capability whose artifact was
    missing or differed from the lock, or whose locked integrity was not its content's."""
    out = []
    for c in caps:
        if c["package"] != package_id:
            continue
        row = lock.capability(c["capability"])
        if row is not None and row.integrity != c["integrity"]:
            out.append(f"capability {c['capability']}: the lock recorded {row.integrity}, its content hashes to "
                       f"{c['integrity']}; locked and installed again")
        elif c["status"] == "installed":
            out.append(f"capability {c['capability']}: its artifact was missing; installed again")
        elif c["status"] == "replaced":
            out.append(f"capability {c['capability']}: its artifact differed from the lock; replaced")
    return out


def remove(scope: str, package_id: str) -> Outcome:
    """Remove a package and every capability it supplied, unless something still uses it:
    the artifacts retired and the lock rewritten by one journaled transaction."""
    scope = os.path.abspath(scope)
    level, _ = locked_at(scope, package_id)
    lock_path = os.path.join(level, LOCK_FILE)
    check_scope(level)
    staging = Staging(level)
    try:
        again = read_lock(level)  # again, now that this run holds the scope
        if again is None or again.version != 2 or again.package(package_id) is None:
            raise fail(package_id, "AR166", f"package {package_id!r} is no longer locked in {lock_path}")
        exported = again.exports(package_id)
        _check_unused(scope, lock_path, again, package_id, exported)
        new_lock = Lock(2, tuple((k, v) for k, v in again.packages if k != package_id),
                        tuple((k, v) for k, v in again.capabilities if k not in exported))
        with captxn.Txn(level).committing() as txn:
            for cid in exported:
                if os.path.lexists(installed_dir(level, cid)):
                    txn.retire(installed_dir(level, cid))
            txn.put(lock_path, locks.dump(new_lock))
        carry_out(txn, lock_path)
    except BaseException as exc:
        raise noted(failure_of(exc, lock_path, level), staging.notes) from None
    finally:
        staging.close()
    lines = [f"removed package {package_id} from {os.path.relpath(lock_path)}"]
    lines.append(f"  capabilities removed: {', '.join(exported)}" if exported else "  it supplied no capabilities")
    return noted(Outcome({"package": package_id, "level": level, "capabilities": list(exported),
                          "lockFile": lock_path}, lines), staging.notes)


def _check_unused(scope: str, lock_path: str, lock: Lock, package_id: str, exported: Sequence[str]) -> None:
    """AR162 when another package depends on `package_id` or a config names one of its
    capabilities."""
    d = Diagnostics()
    for pid, p in lock.packages:
        if pid != package_id and package_id in p.dependencies:
            d.error(lock_path, (0, 0), "AR162", f"package {pid!r} depends on {package_id!r}")
    for cfg, cid, layer in config_references(scope):
        if cid in exported:
            where = f" (the {layer} layer)" if layer else ""
            d.error(cfg, (0, 0), "AR162", f"references capability {cid!r}{where}, which {package_id!r} supplies")
    if d.has_errors:
        raise Failure(d.items)


def config_references(scope: str) -> List[Tuple[str, str, str]]:
    """(config file, capability id, layer or "") for every capability oas-config.yaml files
    in the scope's chain name. Raises Failure for a config that cannot be read."""
    out = []
    d = os.path.abspath(scope)
    while True:
        cfg = os.path.join(d, "oas-config.yaml")
        if os.path.isfile(cfg):
            raw = captree.read_manifest(d, "oas-config.yaml")
            try:
                data = load_yaml(raw.decode("utf-8") if raw is not None else "").data
            except (UnicodeDecodeError, YamlError) as exc:
                raise fail(cfg, "AR001", f"cannot be read: {exc}", "remove-blocked") from None
            caps = data.get("capabilities") if isinstance(data, dict) else None
            if isinstance(caps, dict):
                for layer, entry in (caps.get("layers") or {}).items() if isinstance(caps.get("layers"), dict) else ():
                    if isinstance(entry, dict) and isinstance(entry.get("capability"), str):
                        out.append((cfg, entry["capability"], str(layer)))
                additive = caps.get("additive")
                if isinstance(additive, dict):
                    out.extend((cfg, str(cid), "") for cid in additive)
        parent = os.path.dirname(d)
        if parent == d:
            return out
        d = parent

