"""`oas-lock.json`: read strictly, written in exactly the bytes the OAS kernel writes.

Reading validates the whole document before anything uses it (schema `oas-lock`, then
the rules between rows: every capability's package and every dependency is a row of the
same lock, no package depends on itself or in a cycle, a path: source has commit "local"
and path ".", a git or catalog source an exact commit, paths canonical). A lock that fails
is an error (AR159), never repaired or read in part. The earlier draft of version 2 that
kept capability lists on package rows is refused the same way.

Writing: `{"lockfileVersion": 2, "packages": ..., "capabilities": ...}`, both maps in the
order JavaScript gives sorted keys, rows with their keys in the contract's order, two-space
indent and a final newline (`dump`), so a lock agentrc writes is byte for byte the one
`oas install` writes for the same packages.
"""

from __future__ import annotations

import json

from agentrc import schemas
from agentrc.capabilities import source as sources
from agentrc.capabilities.jsonread import read, schema_message
from agentrc.capabilities.manifest import MATERIAL_ID
from agentrc.capabilities.model import Installation, Lock, LockedCapability, LockedPackage
from agentrc.diagnostics import Diagnostics

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

_TRANSITIONAL = ("capabilities", "trustedCapabilities", "depsIntegrity")


def parse(path: str, raw: bytes, diags: Diagnostics) -> Optional[Lock]:
    """The lock in `raw`, or None with AR159 errors."""
    doc = read(path, raw, "AR159", diags)
    if not doc.ok:
        return None
    data = doc.data
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # an escaped lone surrogate: no lock written back could hold it
        diags.error(path, (1, 1), "AR159", "holds an escaped lone surrogate (\\ud800-\\udfff), which is not text")
        return None
    except (RecursionError, ValueError):
        diags.error(path, (1, 1), "AR159", "nested too deeply")
        return None
    if not isinstance(data, dict):
        diags.error(path, (1, 1), "AR159", "must be a JSON object")
        return None
    before = len(diags.items)
    if data.get("lockfileVersion") == 2 and isinstance(data.get("packages"), dict):
        state_free = not data["packages"] and not data.get("capabilities")
        if not state_free and "capabilities" not in data:
            diags.error(path, (1, 1), "AR159", "is the superseded draft of lockfileVersion 2 (no top-level "
                        "capabilities map); delete it and install the packages again")
            return None
        for pid, row in data["packages"].items():
            tells = [f for f in _TRANSITIONAL if isinstance(row, dict) and f in row]
            if tells:
                diags.error(path, doc.pos(("packages", pid)), "AR159", f"package {pid!r} carries {', '.join(tells)}: "
                            "the superseded draft of lockfileVersion 2; delete the lock and install again")
                return None
        if state_free and "capabilities" not in data:
            data = {**data, "capabilities": {}}
    for err in schemas.errors("oas-lock", data):
        diags.error(path, doc.pos(tuple(err.absolute_path)), "AR159", _lock_message(err))
    if len(diags.items) > before:
        return None
    if data["lockfileVersion"] == 1:
        return Lock(version=1, legacy=tuple(data["capabilities"]))
    packages = {pid: LockedPackage(r["source"], r["path"], r["version"], r["commit"], r["integrity"],
                                   tuple(r["dependencies"])) for pid, r in data["packages"].items()}
    capabilities = {cid: LockedCapability(r["version"], r["package"], r["path"], r["integrity"], r["trusted"])
                    for cid, r in data["capabilities"].items()}
    for problem, where in check(packages, capabilities):
        diags.error(path, doc.pos(where), "AR159", problem)
    if len(diags.items) > before:
        return None
    return Lock(2, tuple(packages.items()), tuple(capabilities.items()))


def _lock_message(err) -> str:
    if err.validator == "oneOf" and not err.absolute_path:
        # Say what is wrong with the version the document claims, not that it matches neither.
        best = [e for e in err.context if e.relative_schema_path and e.relative_schema_path[0] == 0]
        if best:
            return schema_message(min(best, key=lambda e: len(e.absolute_path)))
    return schema_message(err)


def check(packages: Dict[str, LockedPackage], capabilities: Dict[str, LockedCapability]
          ) -> List[Tuple[str, Tuple[Any, ...]]]:
    """The rules between rows: (problem, key path) for each one broken."""
    out: List[Tuple[str, Tuple[Any, ...]]] = []
    for pid, p in packages.items():
        where: Tuple[Any, ...] = ("packages", pid)
        try:
            src = sources.parse_locked(p.source)
        except sources.SourceError as exc:
            out.append((f"package {pid!r}: source {p.source!r}: {exc}", where + ("source",)))
            continue
        if not sources.is_canonical(p.path):
            out.append((f"package {pid!r}: path {p.path!r} is not in canonical form", where + ("path",)))
        if src.kind == "path" and (p.commit != "local" or p.path != "."):
            out.append((f"package {pid!r}: a path: source has commit \"local\" and path \".\"", where))
        if src.kind != "path" and p.commit == "local":
            out.append((f"package {pid!r}: a {src.kind} source needs the exact 40-hex commit", where + ("commit",)))
        for dep in p.dependencies:
            if dep == pid:
                out.append((f"package {pid!r} depends on itself", where + ("dependencies",)))
            elif dep not in packages:
                out.append((f"package {pid!r} depends on {dep!r}, which is not a row of this lock",
                            where + ("dependencies",)))
    cycle = _cycle(packages)
    if cycle:
        out.append(("packages depend on each other in a cycle: " + " -> ".join(cycle), ("packages",)))
    for cid, c in capabilities.items():
        where = ("capabilities", cid)
        if not MATERIAL_ID.fullmatch(cid):
            out.append((f"capability id {cid!r} cannot name a directory under installed/", where))
        if c.package not in packages:
            out.append((f"capability {cid!r}: its package {c.package!r} is not a row of this lock",
                        where + ("package",)))
        if not sources.is_canonical(c.path):
            out.append((f"capability {cid!r}: path {c.path!r} is not in canonical form", where + ("path",)))
    return out


def _cycle(packages: Dict[str, LockedPackage]) -> List[str]:
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(pid: str) -> List[str]:
        state[pid] = 1
        stack.append(pid)
        for dep in packages[pid].dependencies:
            if dep not in packages or dep == pid:
                continue
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[pid] = 2
        return []

    for pid in sorted(packages):
        if pid not in state:
            found = visit(pid)
            if found:
                return found
    return []


def js_key_order(keys: Sequence[str]) -> List[str]:
    """`keys` sorted, then in the order a JavaScript object keeps them: integer-like keys
    ("0", "42") first, ascending by value; the rest as inserted."""
    ordered = sorted(keys)

    def index(k: str) -> Optional[int]:
        if k.isdigit() and (k == "0" or not k.startswith("0")) and int(k) < 2 ** 32 - 1:
            return int(k)
        return None

    ints = sorted((k for k in ordered if index(k) is not None), key=lambda k: int(k))
    return ints + [k for k in ordered if index(k) is None]


def to_json(lock: Lock) -> Dict[str, Any]:
    packages = dict(lock.packages)
    capabilities = dict(lock.capabilities)
    return {
        "lockfileVersion": 2,
        "packages": {pid: {"source": packages[pid].source, "path": packages[pid].path,
                           "version": packages[pid].version, "commit": packages[pid].commit,
                           "integrity": packages[pid].integrity,
                           "dependencies": sorted(packages[pid].dependencies)}
                     for pid in js_key_order(list(packages))},
        "capabilities": {cid: {"version": capabilities[cid].version, "package": capabilities[cid].package,
                               "path": capabilities[cid].path, "integrity": capabilities[cid].integrity,
                               "trusted": capabilities[cid].trusted}
                         for cid in js_key_order(list(capabilities))},
    }


def dump(lock: Lock) -> bytes:
    """The lock's bytes (see the module docstring)."""
    return (json.dumps(to_json(lock), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def installation_bytes(rec: Installation) -> bytes:
    """`.oas-installation.json`: exactly these keys in this order, two-space JSON, newline."""
    doc = {"schemaVersion": 1, "capability": rec.capability, "version": rec.version, "package": rec.package,
           "packageVersion": rec.package_version, "source": rec.source, "commit": rec.commit,
           "packagePath": rec.package_path, "capabilityPath": rec.capability_path}
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
