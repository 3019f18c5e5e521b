"""`agentrc cap retire INSTANCE` (spec 003, retire and the cleanup contract), as the OAS kernel
retires: the home found (in the team scope's other agents roots too), then a plan of steps
(`plan.run`): the retire hooks, the instance spliced out of the lineage graph, the worktree
removed (and with --delete-branch its branch), a quarantine's debts re-verified, the home
removed.

A quarantined home (one a spawn's rollback kept, with `.oas-rollback-incomplete.json`, cleanup
contract version 1) is removed only when every outstanding retire hook ran and reported
success and the git steps it owes were redone and verified; `--force` removes it anyway and
returns what the operator now owns. A home with no `instance.json` and no usable cleanup
descriptor fails closed (E_UNIDENTIFIED_INSTANCE_HOME) unless `--force`. Retire never runs a
command string read from the home: it runs the retire hooks of the capabilities the home
records, as they resolve and are trusted now.
"""

from __future__ import annotations

import os
import shutil

from agentrc.capops import doctor as capdoctor
from agentrc.capops import instances as ci
from agentrc.capops import plan
from agentrc.capops.home import now
from agentrc.capops.hooks import binding_levels, run_hooks, runtime_caps, runtime_warnings, unfinished
from agentrc.capops.install import Failure, Outcome, fail
from agentrc.diagnostics import Diagnostics

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

CLEANUP_VERSION = 1
MARKER = ".oas-rollback-incomplete.json"
INSTANCE_FILE = ci.INSTANCE_FILE
WORK_MODES = ("worktree", "checkout", "attached", "workspace")
GIT_DEBT = ("worktree", "branch")


def find_instance(scope: str, name: str) -> Optional[Tuple[str, str, str]]:
    """(agent name, home, agents root) of instance `name`: the first `<agent>/instances/<name>`
    of agents/ then local-agents/ under the agents root above `scope` that is a real directory
    there, else the first in the team scope's other agents roots."""
    root = ci.agents_root(scope)
    team = ci.team_of_dir(scope)
    candidates = ci.roots_of(root, team) if root else (ci.team_roots(team["scope"]) if team else [])
    for r in candidates:
        hits = ci.instance_homes(r, name)
        if hits:
            return hits[0][0], hits[0][1], r
    return None


def _text(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def usable_descriptor(marker: Any) -> bool:
    """The cleanup contract (version 1), checked to the depth a retry consumes it."""
    c = marker.get("cleanup") if isinstance(marker, dict) else None
    if not isinstance(c, dict) or c.get("version") != CLEANUP_VERSION or type(c.get("version")) is not int:
        return False
    if not _text(c.get("repo")) or c.get("work") not in WORK_MODES:
        return False
    if c.get("work") == "worktree" and not _text(c.get("branch")):
        return False
    if "branch" in c and c["branch"] is not None and not _text(c["branch"]):
        return False
    if "capabilityMeta" in c and not isinstance(c["capabilityMeta"], dict):
        return False
    runtime = c.get("capabilityRuntime")
    if not isinstance(runtime, list) or not runtime or not all(isinstance(r, dict) and _text(r.get("id"))
                                                               for r in runtime):
        return False
    return _usable_outstanding(c, {r["id"] for r in runtime})


def _usable_outstanding(c: Dict[str, Any], ids: set) -> bool:
    """The descriptor's `outstanding`: hooks of recorded capabilities and git debts a
    worktree can owe, not both empty."""
    out = c.get("outstanding")
    if not isinstance(out, dict) or not isinstance(out.get("hooks"), list) or not isinstance(out.get("git"), list):
        return False
    if not all(_text(h) for h in out["hooks"]) or not all(g in GIT_DEBT for g in out["git"]):
        return False
    if out["git"] and c["work"] != "worktree":
        return False
    if not out["hooks"] and not out["git"]:
        return False
    return all(h in ids for h in out["hooks"])


class _Retiring:
    """One retire: the home found and identified, then what each step did."""

    def __init__(self, name: str, agent: str, home: str, root: str, meta: Dict[str, Any],
                 quarantine: Optional[Dict[str, Any]], force: bool, delete_branch: bool):
        self.name, self.agent, self.home, self.root = name, agent, home, root
        self.meta, self.quarantine, self.force, self.delete_branch = meta, quarantine, force, delete_branch
        self.repo = meta.get("repo") if isinstance(meta.get("repo"), str) else ""
        self.branch = str(meta["branch"]) if isinstance(meta.get("branch"), str) else ""
        self.work_path = os.path.join(home, "work")
        self.worktree = False
        self.canonical = ""
        self.hook_results: Optional[Dict[str, Any]] = None
        self.warnings: List[str] = []
        self.relinked: List[Dict[str, str]] = []
        self.worktree_removed = False
        self.branch_deleted = False
        self.still: Optional[List[str]] = None
        self.removed = False

    @property
    def forced(self) -> bool:
        return bool(self.still and self.force)


def _identify(scope: str, name: str, force: bool, delete_branch: bool) -> _Retiring:
    """The home of `name` and what it records (instance.json, else its cleanup descriptor):
    AR177 when there is none, AR175 when neither identifies it (unless `force`)."""
    hit = find_instance(scope, name)
    if hit is None:
        raise fail(scope, "AR177", f"no instance named {name!r} under the agents root above {scope}",
                   "E_UNKNOWN_INSTANCE")
    agent, home, root = hit
    _present, live = ci.read_json(os.path.join(home, INSTANCE_FILE))
    live = live if isinstance(live, dict) else None
    marker_present, marker = ci.read_json(os.path.join(home, MARKER))
    quarantine = marker if marker_present and usable_descriptor(marker) else None
    unusable = marker_present and quarantine is None
    if not force and (unusable or (live is None and quarantine is None)):
        why = ("carries a rollback marker that cannot drive a retry (unreadable, or missing the cleanup descriptor "
               "fields the retry consumes)") if unusable else "has no readable instance.json and no cleanup descriptor"
        raise fail(home, "AR175", f"{home} {why}, so what external state still depends on it is unknown; inspect it, "
                   "then run again with --force to remove it anyway", "E_UNIDENTIFIED_INSTANCE_HOME")
    meta: Dict[str, Any] = dict(live or (quarantine or {}).get("cleanup") or {})
    if not meta.get("capabilityMeta") and quarantine and isinstance(quarantine["cleanup"].get("capabilityMeta"), dict):
        meta["capabilityMeta"] = quarantine["cleanup"]["capabilityMeta"]
    return _Retiring(name, agent, home, root, meta, quarantine, force, delete_branch)


def _run_retire_hooks(r: _Retiring) -> None:
    """The retire hooks of the recorded capabilities as they resolve (and are trusted) now;
    never a command string read from the home. Not when the recorded repository is gone."""
    if not (r.repo and os.path.isdir(r.repo)):
        return
    recorded = [c["id"] for c in r.meta.get("capabilityRuntime") or [] if isinstance(c, dict)
                and isinstance(c.get("id"), str)]
    team: Optional[Dict[str, str]] = None
    try:
        outcome = capdoctor.doctor(r.repo, r.agent, any_soul=True)
        chain = capdoctor.config_chain(r.repo)
        found = capdoctor.acquired(chain)
        team = ci.team_of(chain)
        current = {c["id"]: c for c in runtime_caps(outcome, found, binding_levels(r.repo, r.agent, chain, found))}
    except Failure as exc:
        current = {}
        r.warnings.append("the capabilities could not be resolved: " + "; ".join(d.message for d in exc.diagnostics))
    caps = [current[cid] for cid in recorded if cid in current]
    prior: Dict[str, Any] = r.meta["capabilityMeta"] if isinstance(r.meta.get("capabilityMeta"), dict) else {}
    env = {"OAS_INSTANCE": r.name, "OAS_INSTANCE_HOME": r.home, "OAS_HOME": r.home, "OAS_AGENT": r.agent,
           "OAS_ROOT": r.root, "OAS_SOUL": os.path.join(os.path.dirname(os.path.dirname(r.home)), "soul"),
           "OAS_CONTEXT": r.repo, "OAS_WORKSPACE": os.path.dirname(r.root),
           "OAS_TEAM_NAME": (team or {}).get("name", ""), "OAS_TEAM_ID": (team or {}).get("id", ""),
           "OAS_TEAM_SCOPE": (team or {}).get("scope", "")}
    r.hook_results = run_hooks("retire", list(reversed(caps)), env, r.home, prior)
    # As at spawn, the kernel's warnings before the hooks': a required command not on PATH, an
    # executable surface not trusted (checked now, where the kernel repeats spawn's record).
    r.warnings += runtime_warnings(list(reversed(caps))) + r.hook_results["warnings"]


def _relink(r: _Retiring) -> None:
    where = r.repo if r.repo and os.path.isdir(r.repo) else os.path.dirname(r.root)
    r.relinked = ci.relink(ci.roots_of(r.root, ci.team_of_dir(where)), r.name, r.home, r.meta)


def _remove_worktree(r: _Retiring) -> None:
    """As the kernel, then verified: a worktree git still lists (a locked one) or a branch
    still there is reported, not claimed removed. What `work` is, is read now (after the
    retire hooks, which run in the home)."""
    r.worktree = r.meta.get("work") == "worktree" or (os.path.isdir(r.work_path) and not os.path.islink(r.work_path))
    r.canonical = os.path.realpath(r.work_path)
    r.worktree_removed = r.worktree
    if not (r.worktree and r.repo):
        return
    ci.git_run(r.repo, "worktree", "remove", "--force", r.work_path)
    ci.git_run(r.repo, "worktree", "prune")
    listed, why = ci.worktree_registered(r.repo, r.canonical)
    if listed is not False:
        r.worktree_removed = False
        r.warnings.append(f"git worktree {r.canonical}: still registered after `git worktree remove --force` "
                          f"({why or 'locked?'}); the home is removed anyway: run `git worktree unlock` and `git "
                          f"worktree prune` in {r.repo}")
    if r.delete_branch and r.branch:
        ci.git_run(r.repo, "branch", "-D", r.branch)
        exists, why = ci.branch_exists(r.repo, r.branch)
        r.branch_deleted = exists is False
        if not r.branch_deleted:
            r.warnings.append(f"git branch {r.branch}: not deleted ({why or 'still exists'})")


def _reverify(r: _Retiring) -> None:
    """A quarantine retry: every debt its descriptor lists redone or proven paid; what is not
    stays in the marker (`still`), and the home with it."""
    if r.quarantine is None:
        return
    results = r.hook_results or {}
    failures = [f"retire hook {f['capability']}: {f['message']}" for f in results.get("failures", [])]
    if r.meta.get("work") == "worktree" and r.repo:
        # The quarantine may exist because the git steps failed: redo and verify them.
        more, debt = ci.git_cleanup(r.repo, r.work_path, r.canonical, r.branch)
        failures += more
        r.branch_deleted = r.branch_deleted or bool(r.branch and "branch" not in debt)
    failures += [message for _cid, message in unfinished(results.get("meta", {}))]
    outstanding = r.quarantine["cleanup"]["outstanding"]
    if outstanding["git"] and not (r.meta.get("work") == "worktree" and r.repo):
        failures.append(f"git {', '.join(outstanding['git'])}: not re-verified on this retry, so the cleanup they owed "
                        "is unverified")
    ran = set(results.get("order", []))
    failures += [f"retire hook {cid}: did not run on this retry (not active, not trusted, or it declares no retire "
                 "hook), so the cleanup it owed is unverified" for cid in outstanding["hooks"] if cid not in ran]
    if r.hook_results is None:
        failures.append("retire hooks could not be rerun (the cleanup descriptor's repository is gone)")
    if failures:
        r.still = failures
        try:
            ci.write_file(os.path.join(r.home, MARKER), ci.json_bytes({**r.quarantine, "incomplete": failures,
                                                                      "lastRetryAt": now()}))
        except OSError:
            pass


def _remove_home(r: _Retiring) -> None:
    if not r.still or r.forced:
        shutil.rmtree(r.home)
        r.removed = True


def retire(scope: str, name: str, force: bool = False, delete_branch: bool = False) -> Outcome:
    """Retire instance `name`: retire hooks, lineage spliced, the worktree removed (and with
    `delete_branch` its branch), then the home removed. Raises Failure (AR177: no such
    instance; AR175: E_UNIDENTIFIED_INSTANCE_HOME). A quarantine retry that cannot prove its
    cleanup keeps the home and returns a failed Outcome (AR176); with `force` the home goes
    and `forcedIncomplete` lists what the operator now owns."""
    r = _identify(os.path.abspath(scope), name, force, delete_branch)
    plan.run([plan.Call("retire hooks", lambda: _run_retire_hooks(r)), plan.Call("lineage", lambda: _relink(r)),
              plan.Call("worktree", lambda: _remove_worktree(r)), plan.Call("quarantine", lambda: _reverify(r)),
              plan.Call("home", lambda: _remove_home(r))])
    return _outcome(r)


def _outcome(r: _Retiring) -> Outcome:
    result: Dict[str, Any] = {"retired": r.name, "agent": r.agent, "worktreeRemoved": r.worktree_removed,
                              "branchDeleted": r.branch_deleted, "removedDir": r.removed, "harvested": []}
    if r.still and not r.forced:
        result["rollbackIncomplete"] = r.still
        result["retainedHome"] = r.home
    if r.forced:
        result["forcedIncomplete"] = r.still
    if r.relinked:
        result["relinked"] = r.relinked
    if r.hook_results is not None:
        result["capabilityMeta"] = r.hook_results["meta"]
    if r.warnings:
        result["warnings"] = r.warnings
    lines: List[str] = []
    diags: Tuple[Any, ...] = ()
    if r.forced:
        lines.append(f"Removed {r.name} under --force with cleanup INCOMPLETE; this external state was NOT cleaned "
                     "up and is now yours to remove by hand:")
        lines += [f"  {f}" for f in r.still or []]
    elif r.still:
        d = Diagnostics()
        d.error(r.home, (0, 0), "AR176", f"cleanup for {r.name} is INCOMPLETE; the home is kept at {r.home}: "
                + "; ".join(r.still))
        diags = tuple(d.items)
    else:
        lines.append(f"Retired {r.name} (agent {r.agent})")
        lines += [f"  relinked {x['instance']}: parent {x.get('parentInstance', '-')}, sibling "
                  f"{x.get('siblingInstance', '-')}" for x in r.relinked]
    return Outcome(result, lines, diags, failed=bool(r.still and not r.forced))

