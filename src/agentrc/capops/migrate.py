"""`agentrc cap migrate [--dry-run]`: convert one scope's lockfileVersion 1 lock into a
lockfileVersion 2 package lock, as `oas migrate` does (spec 003; the kernel's plan and result
shapes), all or nothing.

The plan maps each v1 entry by its source: `path:DIR` to the package at DIR, `git:URL` to
`URL@COMMIT#.` (a v1 artifact was the repository root), `marketplace:ID` to the catalog id
`ID@v<version>` when the official catalog holds ID; anything else is `manual`, and one
`manual` entry keeps the whole scope at version 1 (a version 2 lock has no place for it). An
empty v1 lock is converted to the empty version 2 lock. `--official` and `--recursive` are
the kernel's guided upgrade (`guided`): official entries only, through the catalog's
aliases, over every lock-owning scope of the deployment.

Applying holds the scope, moves the v1 artifacts aside, writes the empty version 2 lock and
installs each mapped package (`capacquire.install`); the converted capabilities must be
exported by their packages. Any failure restores the original lock bytes and the v1
artifacts and removes what the migration installed. Trust is not carried over: the result's
`trust` names the executable surfaces to approve again. Config activation is not touched.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile

from agentrc.capabilities.model import LOCK_FILE
from agentrc.capops import doctor as capdoctor
from agentrc.capops import failure as capfailure
from agentrc.capops import package as cappackage
from agentrc.capops import scope as capscope
from agentrc.capops.failure import Failure, Outcome, fail
from agentrc.capops.migrating import EMPTY_V2, JOURNAL, MIGRATE_PREFIX, _plan, recover  # noqa: F401 - re-exported
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree
from agentrc.output import steps as executor
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

RETIRED = {"oas.web": "the oas.web web panel was retired (the OAS Desktop app replaced it); remove oas.web from "
                      "oas-config.yaml and from this scope's oas-lock.json"}


def plan(scope: str, official: bool = False) -> Dict[str, Any]:
    """The kernel's migration plan of `scope`: {from, convertible, plan, warnings}. With
    `official` (the guided upgrade) a `marketplace:` entry maps to the package the catalog
    says supplies that capability id (an alias, else the same id) at the catalog's own ref,
    or is `hold` when the catalog has no such package; every other entry is `retain`.
    Raises Failure (an invalid lock or catalog)."""
    scope = os.path.abspath(scope)
    lock = capscope.read_lock(scope)
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
    catalog = cappackage.read_catalog() if any(v["source"].startswith("marketplace:") for v in entries.values()) \
        else None
    for cid, v1 in entries.items():
        steps.append(_step(cid, v1, catalog, official, warnings))
    blocking = [s for s in steps if s["action"] in ("hold", "manual", "retain")]
    return {"from": 1, "convertible": not blocking and any(s["action"] == "acquire" for s in steps), "plan": steps,
            "warnings": warnings}


def _step(cid: str, v1: Dict[str, Any], catalog: Any, official: bool, warnings: List[str]) -> Dict[str, Any]:
    """The plan's step for one v1 entry, by its source (appending to `warnings`)."""
    src = v1["source"]
    if cid in RETIRED:
        warnings.append(f"{cid}: retired — {RETIRED[cid]}")
        return {"capabilityId": cid, "v1": v1, "package": None, "action": "retain" if official else "manual"}
    if src.startswith("marketplace:") and catalog is not None:
        return _marketplace_step(cid, v1, catalog, official, warnings)
    if official:
        warnings.append(f"{cid}: not an official capability ({src}) — kept unchanged; `agentrc cap migrate` "
                        "without --official maps custom sources")
        return {"capabilityId": cid, "v1": v1, "package": None, "action": "retain"}
    if src.startswith("git:"):
        url = src[4:]
        spec = f"{url}@{v1['commit']}#." if v1.get("commit") else f"{url}#."
        if not v1.get("commit"):
            warnings.append(f"{cid}: v1 lock has no commit — the migration acquire will resolve and pin the "
                            "source's current state")
        return {"capabilityId": cid, "v1": v1, "package": {"id": None, "source": src, "spec": spec},
                "action": "acquire"}
    if src.startswith("path:"):
        return {"capabilityId": cid, "v1": v1, "package": {"id": None, "source": src, "spec": src[5:]},
                "action": "acquire"}
    warnings.append(f"{cid}: unknown v1 source \"{src}\" — migrate manually")
    return {"capabilityId": cid, "v1": v1, "package": None, "action": "manual",
            "reason": f"unknown v1 source \"{src}\""}


def _marketplace_step(cid: str, v1: Dict[str, Any], catalog: Any, official: bool,
                      warnings: List[str]) -> Dict[str, Any]:
    """A `marketplace:` entry through the catalog: with `official` the package that
    supplies the id (an alias, else the same id), else the same id at the entry's version."""
    src = v1["source"]
    legacy = re.sub(r"@[^@]*$", "", src[len("marketplace:"):])
    if official:
        pid, via = catalog.package_of(cid)
        pkg = {"id": pid, "source": src, "spec": pid, "via": via, "legacyId": legacy}
        if catalog.resolve(pid) is not None:
            return {"capabilityId": cid, "v1": v1, "package": pkg, "action": "acquire"}
        alias = f" (alias of {cid})" if via == "alias" else ""
        warnings.append(f"{cid}: official package \"{pid}\" is not in the package catalog yet — this scope "
                        "is held, nothing is converted")
        return {"capabilityId": cid, "v1": v1, "package": pkg, "action": "hold",
                "reason": f"the official package catalog does not resolve \"{pid}\"{alias} yet"}
    selector = f"v{v1['version']}" if v1.get("version") else ""
    spec = f"{legacy}@{selector}" if selector else legacy
    pkg = {"id": legacy, "source": src, "spec": spec}
    if catalog.resolve(legacy, selector) is not None:
        return {"capabilityId": cid, "v1": v1, "package": pkg, "action": "acquire"}
    warnings.append(f"{cid}: official package \"{legacy}\" is not in the package catalog yet — this scope "
                    "stays lockfileVersion 1 until it can be mapped")
    return {"capabilityId": cid, "v1": v1, "package": pkg, "action": "manual",
            "reason": f"the official package catalog does not resolve \"{legacy}\" yet"}


def migrate(scope: str, dry_run: bool = False, notify=lambda _m: None, official: bool = False,
            recursive: bool = False) -> Outcome:
    """Plan (`dry_run`) or apply the conversion of `scope`'s v1 lock; with `official` or
    `recursive`, the guided upgrade (`guided`). Raises Failure; on failure the scope is as it
    was."""
    if official or recursive:
        return guided(scope, dry_run, official, recursive, notify)
    scope = os.path.abspath(scope)
    if dry_run:
        p = plan(scope)
        lines = [f"{s['action']:<14} {s['note']}" if s["action"] == "convert-format" else
                 f"{s['action']:<10} {s['capabilityId']}" + (f"  → {s['package']['spec']}" if s["package"] else "")
                 for s in p["plan"]] or ["Nothing to migrate at this scope."]
        lines += [f"WARNING: {w}" for w in p["warnings"]]
        return Outcome({"dryRun": True, "plan": p["plan"], "warnings": p["warnings"]}, lines)
    return _held_apply(scope, notify, False)


def _held_apply(scope: str, notify, official: bool) -> Outcome:
    lock_path = os.path.join(scope, LOCK_FILE)
    if not os.path.lexists(lock_path):
        raise fail(lock_path, "AR178", f"no {LOCK_FILE} at {scope}", "legacy-lock")
    capscope.check_scope(scope)
    anchors = capscope.absent_anchors(scope)
    held = capscope.ScopeLock(scope).lend()  # what a killed run left is recovered first
    try:
        return capfailure.noted(_apply(scope, lock_path, notify, official), held.notes)
    except Failure as exc:
        raise capfailure.noted(exc, held.notes) from None
    finally:
        held.release()
        for d in anchors:
            try:
                os.rmdir(d)
            except OSError:
                break


# --- the guided upgrade (--official, --recursive) -----------------------------------------

PRUNED = (".git", "node_modules", "vendor", ".venv", "venv", "bower_components", ".direnv", ".agents", "local-agents")


def _declares_team(directory: str) -> bool:
    raw = captree.read_manifest(directory, "oas-config.yaml")
    if raw is None:
        return False
    try:
        data = load_yaml(raw.decode("utf-8", "replace")).data
    except YamlError:
        return False
    return isinstance(data, dict) and bool(data.get("team"))


def workspace_scopes(boundary: str) -> List[str]:
    """The scopes (a directory with oas-config.yaml or oas-lock.json) below `boundary`, in
    path order, as the kernel discovers them: not descending into .git, .agents,
    local-agents, dependency and virtualenv trees, an agent's instances/, links, or a
    directory that declares its own team: (which is its own boundary)."""
    out: List[str] = []

    def walk(d: str) -> None:
        try:
            names = sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n))
                           and not os.path.islink(os.path.join(d, n)))
        except OSError:
            return
        for name in names:
            child = os.path.join(d, name)
            if name in PRUNED or (name == "instances" and os.path.exists(os.path.join(d, "soul"))):
                continue
            if _declares_team(child):
                continue
            if os.path.isfile(os.path.join(child, "oas-config.yaml")) or os.path.isfile(os.path.join(child, LOCK_FILE)):
                out.append(child)
            walk(child)

    walk(boundary)
    return out


def migration_scopes(start: str, team_scope: Optional[str]) -> List[str]:
    """Every lock-owning scope a guided migration considers: `start` and the directories
    above it, the team boundary, and the scopes below the boundary; sorted, so an ancestor
    comes before its descendants."""
    found = {d for d in capscope.lock_levels(start) if os.path.isfile(os.path.join(d, LOCK_FILE))}
    boundary = os.path.abspath(team_scope or start)
    if os.path.isfile(os.path.join(boundary, LOCK_FILE)):
        found.add(boundary)
    found.update(os.path.abspath(x) for x in workspace_scopes(boundary)
                 if os.path.isfile(os.path.join(x, LOCK_FILE)))
    return sorted(found)


def _level_kind(d: str) -> str:
    if os.path.abspath(d) == os.path.abspath(os.path.expanduser("~")):
        return "laptop"
    return "repo" if os.path.exists(os.path.join(d, ".git")) else "workspace"


def _row(step: Dict[str, Any]) -> Dict[str, Any]:
    pkg = step.get("package") or {}
    return {"capability": step["capabilityId"], "action": step["action"], "package": pkg.get("id"),
            "spec": pkg.get("spec"), "via": pkg.get("via"), "source": (step.get("v1") or {}).get("source"),
            "reason": step.get("reason"), "note": step.get("note")}


def guided(start: str, dry_run: bool, official: bool, recursive: bool, notify=lambda _m: None) -> Outcome:
    """`migrate --official` and/or `--recursive`, as the kernel's guided upgrade: plan every
    lock-owning scope first (with --recursive: the scope's ancestors, its team boundary and
    the scopes below it; without: the scope itself), then apply scope by scope, each all or
    nothing on its own. A held (the catalog has no package for an official capability),
    blocked (official work beside entries that must stay version 1) or failed scope leaves
    that scope as it was and fails the command (AR178, E_MIGRATE_FAILED)."""
    start = os.path.abspath(start)
    warnings: List[str] = []
    team_scope = _team_scope(start, warnings) if recursive else None
    scopes = migration_scopes(start, team_scope) if recursive else (
        [start] if os.path.isfile(os.path.join(start, LOCK_FILE)) else [])
    planned = [_plan_scope(scope, official) for scope in scopes]
    rows = [{"level": x["scope"], "levelKind": _level_kind(x["scope"]), "file": os.path.join(x["scope"], LOCK_FILE),
             "status": x["status"], "plan": [_row(s) for s in x["plan"]], "warnings": x["warnings"],
             "error": x["error"]} for x in planned]
    flags = (" --official" if official else "") + (" --recursive" if recursive else "")
    result: Dict[str, Any] = {"mode": "official" if official else "generic", "recursive": recursive,
                              "dryRun": dry_run, "boundary": start, "scopes": rows, "trust": [],
                              "requirements": [], "nextCommands": [], "warnings": warnings}
    lines = _plan_lines(start, flags, scopes, planned, warnings)
    d = Diagnostics()
    if dry_run:
        ready = [x for x in planned if x["status"] == "ready"]
        result["nextCommands"] = [f"agentrc cap migrate{flags} --dir {shlex.quote(start)}"] if ready else []
        _dry_run_problems(planned, d)
        lines.append(f"Dry run — nothing was changed. {len(ready)} scope{'' if len(ready) == 1 else 's'} ready.")
        return Outcome(result, lines, tuple(d.items), failed=d.has_errors)
    for x, row in zip(planned, rows):
        lines += _apply_scope(x, row, result, official, notify, d)
    result["nextCommands"] = [t["command"] for t in result["trust"]] + [
        f"agentrc cap install --dir {shlex.quote(start)}"]
    lines.append("Next: " + "; ".join(result["nextCommands"]))
    return Outcome(result, lines, tuple(d.items), failed=d.has_errors)


def _team_scope(start: str, warnings: List[str]) -> Optional[str]:
    """The team boundary above `start`, or None (a config chain that cannot be read is a
    warning: discovery then covers the scope and its lock-owning ancestors only)."""
    try:
        chain = capdoctor.config_chain(start)
    except Failure as exc:
        warnings.append(f"team boundary not resolved from {start} ("
                        + "; ".join(d.message for d in exc.diagnostics) + ") — discovery covers this scope and its "
                        "lock-owning ancestors only")
        return None
    team_cfg = next((c for c in chain if c.team), None)
    return team_cfg.level if team_cfg else None


def _plan_scope(scope: str, official: bool) -> Dict[str, Any]:
    """One scope's plan and its status: held, ready, blocked, nothing, or failed."""
    try:
        p = plan(scope, official)
    except Failure as exc:
        return {"scope": scope, "status": "failed", "plan": [], "warnings": [], "keep": [],
                "error": {"code": exc.kernel_code or "invalid-lock",
                          "message": "; ".join(d.message for d in exc.diagnostics)}}
    steps = p["plan"]
    held = [x for x in steps if x["action"] == "hold"]
    acquire = [x for x in steps if x["action"] == "acquire"]
    fmt = any(x["action"] == "convert-format" for x in steps)
    keep = [x for x in steps if x["action"] in ("retain", "manual")]
    convertible = bool(acquire) or fmt or (not official and bool(steps))
    status = "held" if held else "ready" if convertible and not keep else "blocked" if convertible else "nothing"
    return {"scope": scope, "status": status, "plan": steps, "warnings": p["warnings"], "keep": keep, "held": held,
            "error": None}


def _plan_lines(start: str, flags: str, scopes: List[str], planned: List[Dict[str, Any]],
                warnings: List[str]) -> List[str]:
    lines = [f"agentrc cap migrate{flags} — {len(scopes)} lock-owning scope{'' if len(scopes) == 1 else 's'} "
             f"from {start}"] + [f"WARNING: {w}" for w in warnings]
    if not scopes:
        lines.append("  (no oas-lock.json found — nothing to migrate)")
    for x in planned:
        lines.append(f"  {x['scope']}  [{_level_kind(x['scope'])}]  {x['status']}")
        for st in x["plan"]:
            what = st["note"] if st["action"] == "convert-format" else st["capabilityId"]
            to = f" → package {st['package']['spec']}" if st["action"] == "acquire" and st.get("package") else ""
            lines.append(f"    {st['action']:<14} {what}{to}" + (f" — {st['reason']}" if st.get("reason") else ""))
    return lines


def _problem(d: Diagnostics, scope: str, message: str) -> None:
    d.error(os.path.join(scope, LOCK_FILE), (0, 0), "AR178", message)


def _dry_run_problems(planned: List[Dict[str, Any]], d: Diagnostics) -> None:
    """AR178 for each scope a run would leave as it is: held, blocked, or not plannable."""
    for x in planned:
        if x["status"] == "held":
            _problem(d, x["scope"], "held: no official package mapping yet for " + ", ".join(
                s["capabilityId"] for s in x["held"]) + "; the scope stays at version 1 and keeps working")
        elif x["status"] == "blocked":
            _problem(d, x["scope"], "blocked: entries that must stay lockfileVersion 1 (" + ", ".join(
                s["capabilityId"] for s in x["keep"]) + ") sit beside convertible ones, and a version 2 lock has "
                "no place for them; the whole scope stays at version 1")
        elif x["status"] == "failed":
            _problem(d, x["scope"], f"could not be planned: {x['error']['message']}")


def _apply_scope(x: Dict[str, Any], row: Dict[str, Any], result: Dict[str, Any], official: bool, notify,
                 d: Diagnostics) -> List[str]:
    """Apply one planned scope (all or nothing), recording its outcome in `row` and its
    trust in `result`; a scope that cannot be applied is AR178 in `d`. Its text lines."""
    if x["status"] == "failed":
        _problem(d, x["scope"], f"could not be planned: {x['error']['message']}")
        return []
    if x["status"] == "held":
        _problem(d, x["scope"], "held: no official package mapping yet for " + ", ".join(
            f"{s['capabilityId']} ({s['reason']})" for s in x["held"]) + "; left unchanged, its version 1 "
            "capabilities keep working")
        return []
    if x["status"] == "nothing":
        row["status"] = "skipped"
        if x["keep"]:
            row["retained"] = [s["capabilityId"] for s in x["keep"] if s["capabilityId"]]
        return []
    try:
        out = _held_apply(x["scope"], notify, official)
    except Failure as exc:
        row["status"] = "failed"
        row["error"] = {"code": exc.kernel_code or "legacy-lock",
                        "message": "; ".join(dd.message for dd in exc.diagnostics)}
        d.extend(exc.diagnostics)
        return [f"FAILED    {x['scope']} — {row['error']['message']}"]
    r = out.result
    row["status"] = "skipped" if r.get("skipped") else "format-converted" if r.get("formatConverted") \
        else "migrated"
    row["migrated"] = r["migrated"]
    if r.get("retained"):
        row["retained"] = r["retained"]
    row["warnings"] = r["warnings"]
    for t in r["trust"]:
        result["trust"].append({**t, "command": f"agentrc cap trust {t['capability']} --dir "
                                                f"{shlex.quote(x['scope'])}"})
    return [f"  {x['scope']}:"] + [f"    {ln}" for ln in out.lines]


def _apply(scope: str, lock_path: str, notify, official: bool = False) -> Outcome:
    p = plan(scope, official)  # again, now that this run holds the scope
    if p["from"] == 2:
        return Outcome({"from": 2, "migrated": [], "warnings": ["already a capability-materialization lock"],
                        "file": lock_path, "trust": []}, [f"{lock_path} is already lockfileVersion 2"])
    skipped = _refuse_unconvertible(p, lock_path, official)
    if skipped is not None:
        return skipped
    original = captree.read_manifest(scope, LOCK_FILE)  # as `plan` read it: inside the scope, bounded
    if original is None:
        raise fail(lock_path, "AR178", f"{LOCK_FILE} at {scope} changed while the migration was planned",
                   "legacy-lock")
    if p["plan"] and p["plan"][0]["action"] == "convert-format":
        capscope.write_in(scope, lock_path, EMPTY_V2)
        return Outcome({"from": 1, "migrated": [], "warnings": p["warnings"], "file": lock_path, "trust": [],
                        "formatConverted": True},
                       [f"{lock_path} was an empty lockfileVersion 1 file — converted to lockfileVersion 2."])
    migrated: List[Dict[str, Any]] = []
    trust: List[Dict[str, Any]] = []
    aside = tempfile.mkdtemp(prefix=MIGRATE_PREFIX, dir=capscope.store_dir(scope))
    try:
        executor.run(_plan(scope, lock_path, aside, original, p["plan"], notify, migrated, trust),
                  executor.Journal(os.path.join(aside, JOURNAL), scope, "cap migrate"))
    except executor.Failed as failed:
        exc = failed.cause
        if not failed.incomplete:  # undone: the journal is gone, the v1 artifacts are back
            capscope.rmtree(aside)
        if failed.incomplete or not isinstance(exc, Failure):
            raise exc from None
        rolled = Diagnostics()
        rolled.error(lock_path, (0, 0), "AR178", "the migration failed and was rolled back (the version 1 lock "
                     "and its artifacts are as they were)")
        raise Failure(tuple(rolled.items) + exc.diagnostics, exc.kernel_code or "legacy-lock") from None
    capscope.rmtree(aside)
    lines = [f"migrated  {m['capability']} → package {m['package']}@{m['version']}" for m in migrated]
    lines += [f"WARNING: {w}" for w in p["warnings"]]
    lines.append(f"{lock_path} is now lockfileVersion 2. Config activation is unchanged; trust executable "
                 "capabilities again (`agentrc cap trust`): approvals are not carried over.")
    return Outcome({"from": 1, "migrated": migrated, "warnings": p["warnings"], "file": lock_path, "trust": trust},
                   lines)


def _refuse_unconvertible(p: Dict[str, Any], lock_path: str, official: bool) -> Optional[Outcome]:
    """Raise Failure (AR178) for a plan with held, manual or (beside official work) retained
    entries; the skipped Outcome when --official finds no official work here; else None."""
    for action, kernel, why in (
            ("hold", "official-mapping-unavailable", lambda s: f"{s['capabilityId']}: guided official migration is "
             f"not available yet ({s['reason']}); the scope was left unchanged and its version 1 lock keeps working"),
            ("manual", "legacy-lock", lambda s: f"{s['capabilityId']} cannot be converted yet"
             + (f" ({s['reason']})" if s.get("reason") else "") + "; the scope was left unchanged and its version 1 "
             "lock keeps working")):
        found = [s for s in p["plan"] if s["action"] == action]
        if found:
            d = Diagnostics()
            for s in found:
                d.error(lock_path, (0, 0), "AR178", why(s))
            raise Failure(d.items, kernel)
    retained = [s for s in p["plan"] if s["action"] == "retain"]
    if official and not any(s["action"] in ("acquire", "convert-format") for s in p["plan"]):
        ids = [s["capabilityId"] for s in retained if s["capabilityId"]]
        return Outcome({"from": 1, "migrated": [], "retained": ids, "warnings": p["warnings"], "file": lock_path,
                        "trust": [], "skipped": True}, [f"retained   {c}  (no official work here)" for c in ids])
    if retained:
        d = Diagnostics()
        for s in retained:
            d.error(lock_path, (0, 0), "AR178", f"{s['capabilityId']} ({(s.get('v1') or {}).get('source')}) is kept "
                    "unchanged by the guided upgrade, beside official capabilities; a version 2 lock has no place for "
                    "it, so nothing was changed (`agentrc cap migrate` without --official converts custom sources)")
        raise Failure(d.items, "legacy-lock")
    return None
