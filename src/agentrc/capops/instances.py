"""Instances of souls, for `agentrc cap spawn` and `agentrc cap retire` (spec 003): where
agents roots and instance homes are, the team scope's roots, spawn lineage (`--parent`,
`--relation`, `--relative-to`, the attached work tree's owner) and its splice at retire, and
the git steps of a worktree instance with their verification, as the OAS kernel does them.
Reads and writes instance.json files; runs git."""

from __future__ import annotations

import json
import os
import re
import subprocess

from agentrc.capops import doctor as capdoctor
from agentrc.capops.install import Failure, fail
from agentrc.classcode import dataclass
from agentrc.fdio import NotRegular, read_regular
from agentrc.inputs import captree
from agentrc.output import atomic
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

INSTANCE_FILE = "instance.json"
RELATIONS = ("child", "sibling", "parent", "unrelated")
NAME = pattern(r"[a-z0-9][a-z0-9-]*\Z")


def agents_root(context: str) -> Optional[str]:
    d = os.path.abspath(context)
    while True:
        if os.path.basename(d) == "agents" and os.path.isdir(d):
            return d
        if os.path.isdir(os.path.join(d, "agents")) or os.path.isdir(os.path.join(d, "local-agents")):
            return os.path.join(d, "agents")
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def write_file(path: str, data: bytes, root: Optional[str] = None) -> None:
    """Write `path` whole or not at all, through no symbolic link (`output.atomic`): a link at
    the file, at its temporary name or at a directory between `root` (by default the file's
    own directory) and it is refused (atomic.UnsafeWrite, AR224). Hooks run in instance
    homes and souls, so whatever they leave there is never written through."""
    atomic.write_atomic(path, data, root=root)


def json_bytes(doc: Any) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def read_json(path: str) -> Tuple[bool, Any]:
    """(present, parsed or None when unreadable). A link, a FIFO or anything else not a
    regular file is not present (never followed, never blocked on)."""
    try:
        raw, _ = read_regular(path, captree.MAX_MANIFEST_BYTES)
    except NotRegular:
        return False, None
    except OSError:  # present as before: a regular file, not a link, that could not be read
        return os.path.isfile(path) and not os.path.islink(path), None
    if len(raw) > captree.MAX_MANIFEST_BYTES:
        return True, None
    try:
        return True, json.loads(raw.decode("utf-8"))
    except ValueError:
        return True, None


@dataclass(frozen=True)
class SpawnOptions:
    """The flags of `oas spawn` agentrc takes. `work` overrides the soul's work mode;
    `work_dir` is the owner's `<home>/work` of an attached instance; `branch` the worktree's
    branch (default `agents/<instance>`); `purpose` names the instance `<soul>-<purpose>`;
    `parent` is `relative_to` with relation `child`; `relative_root` picks the agents root
    of an anchor whose name several roots hold. `task_file` is read when `task` is empty;
    `repo`, `runtime` and `model` override the soul's `repo:`, `runtime:` and `model:`;
    `instructions_file` (an AGENTS.md) or `def_file` (front matter + body) create or update
    the local soul under local-agents/ first."""

    task: str = ""
    task_file: str = ""
    repo: str = ""
    runtime: str = ""
    model: str = ""
    instructions_file: str = ""
    def_file: str = ""
    work: str = ""
    work_dir: str = ""
    branch: str = ""
    purpose: str = ""
    parent: str = ""
    relation: str = ""
    relative_to: str = ""
    relative_root: str = ""


def slug(s: str) -> str:
    """The kernel's slug: lower case, runs of anything else than [a-z0-9] become one '-'."""
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "agent"


def _lineage_fail(path: str, message: str, kernel_code: str = "E_BAD_ARGS") -> Failure:
    return fail(path, "AR250", message, kernel_code)


def work_fail(path: str, message: str) -> Failure:
    return fail(path, "AR251", message, "E_SPAWN_FAILED")


def team_of(chain: List[Any]) -> Optional[Dict[str, str]]:
    """The closest `team:` of the chain with the scope declaring it, as the kernel records
    it in instance.json: {name, id?, scope}."""
    cfg = next((c for c in chain if c.team), None)
    if cfg is None:
        return None
    team = {"name": cfg.team[0]}
    if cfg.team[1]:
        team["id"] = cfg.team[1]
    team["scope"] = cfg.level
    return team


def team_roots(scope: str) -> List[str]:
    """The agents roots of a team scope: its own `agents/` and each member directory's, where
    that directory (or the local-agents/ beside it) exists; as the kernel enumerates them."""
    def counts(p: str) -> bool:
        return (os.path.isdir(p) and not os.path.islink(p)) or os.path.isdir(
            os.path.join(os.path.dirname(p), "local-agents"))

    roots = [os.path.join(scope, "agents")] if counts(os.path.join(scope, "agents")) else []
    try:
        names = sorted(os.listdir(scope))
    except OSError:
        return roots
    for name in names:
        d = os.path.join(scope, name)
        if name.startswith(".") or name in ("agents", "local-agents", "node_modules") or not os.path.isdir(d) \
                or os.path.islink(d):
            continue
        if counts(os.path.join(d, "agents")):
            roots.append(os.path.join(d, "agents"))
    return roots


def team_of_dir(directory: str) -> Optional[Dict[str, str]]:
    try:
        return team_of(capdoctor.config_chain(directory))
    except Failure:
        return None


def roots_of(root: str, team: Optional[Dict[str, str]]) -> List[str]:
    """The local agents root, then the team scope's other roots (each once)."""
    out = [root]
    for r in team_roots(team["scope"]) if team else []:
        if os.path.realpath(r) not in {os.path.realpath(x) for x in out}:
            out.append(r)
    return out


def instance_homes(root: str, name: str) -> List[Tuple[str, str]]:
    """(agent, home) of every instance called `name` under one agents root (agents/, then the
    local-agents/ beside it), each a real directory directly in its agent's instances/."""
    out: List[Tuple[str, str]] = []
    if not NAME.match(name or ""):
        return out
    seen = set()
    for agent, instances in _instance_dirs(root):
        home = os.path.join(instances, name)
        if os.path.islink(home) or not os.path.isdir(home) or os.path.islink(instances):
            continue
        real = os.path.realpath(home)
        if os.path.dirname(real) == os.path.realpath(instances) and real not in seen:
            seen.add(real)
            out.append((agent, home))
    return out


def _instance_dirs(root: str) -> Iterator[Tuple[str, str]]:
    """(agent, its instances/ directory) under one agents root: agents/, then the
    local-agents/ beside it; an unreadable base is skipped."""
    for base in (root, os.path.join(os.path.dirname(root), "local-agents")):
        try:
            agents = sorted(os.listdir(base))
        except OSError:
            continue
        for agent in agents:
            yield agent, os.path.join(base, agent, "instances")


def all_homes(root: str) -> List[Tuple[str, str]]:
    """(instance name, home) of every instance under one agents root."""
    out = []
    for _agent, instances in _instance_dirs(root):
        if os.path.islink(instances) or not os.path.isdir(instances):
            continue
        for name in sorted(os.listdir(instances)):
            home = os.path.join(instances, name)
            if NAME.match(name) and os.path.isdir(home) and not os.path.islink(home):
                out.append((name, home))
    return out


def resolve_name(root: str, name: str) -> Optional[str]:
    """The home a lineage name stands for seen from `root`: that root first, then its team."""
    hits = instance_homes(root, name)
    if hits:
        return hits[0][1]
    team = team_of_dir(os.path.dirname(root))
    for r in roots_of(root, team)[1:]:
        hits = instance_homes(r, name)
        if hits:
            return hits[0][1]
    return None


def soul_dir(root: str, soul: str) -> Optional[str]:
    for base in (root, os.path.join(os.path.dirname(root), "local-agents")):
        d = os.path.join(base, soul)
        if os.path.isfile(os.path.join(d, "soul", "soul.yaml")):
            return d
    return None


def _check_flags(opts: SpawnOptions, work: str, scope: str) -> Tuple[str, str]:
    """(relation, relative to) from the lineage flags, checked as `oas spawn` checks them."""
    relation, relative_to = opts.relation.strip(), opts.relative_to.strip()
    if opts.relation and not relation:
        raise _lineage_fail(scope, "--relation needs a value: child|sibling|parent|unrelated")
    if relation and relation not in RELATIONS:
        raise _lineage_fail(scope, f"unknown --relation {relation!r} (child|sibling|parent|unrelated)")
    if opts.parent and not opts.parent.strip():
        raise _lineage_fail(scope, "--parent needs an instance name")
    if relation and relation != "unrelated" and not relative_to:
        raise _lineage_fail(scope, f"--relation {relation} requires --relative-to <instance>")
    if relative_to and not relation:
        raise _lineage_fail(scope, "--relative-to requires --relation child|sibling|parent")
    if relation == "unrelated" and relative_to:
        raise _lineage_fail(scope, "--relation unrelated takes no --relative-to")
    if opts.parent.strip() and (relation or relative_to):
        raise _lineage_fail(scope, "--parent is sugar for --relative-to <instance> --relation child; use one form")
    if opts.parent.strip():
        relation, relative_to = "child", opts.parent.strip()
    if work == "attached" and relation and relation != "child":
        raise _lineage_fail(scope, "attached agents are always children of the work-tree owner: only --parent "
                            "<instance> (or --relation child) is valid with --work attached")
    if opts.relative_root.strip() and not relative_to:
        raise _lineage_fail(scope, "--relative-root only qualifies --relative-to/--parent")
    return relation, relative_to


def _attached_owner(roots: List[str], work_dir: str, scope: str) -> Optional[str]:
    """The instance whose `<home>/work` `work_dir` is: its own path (a checkout instance's
    link), or the same real tree when that work is not a link."""
    wd = os.path.abspath(work_dir)
    if not os.path.exists(wd):
        return None
    lexical = os.path.join(os.path.realpath(os.path.dirname(wd)), os.path.basename(wd))
    real = os.path.realpath(wd)
    for root in roots:
        for name, home in all_homes(root):
            work = os.path.join(home, "work")
            if os.path.join(os.path.realpath(home), "work") == lexical or (
                    os.path.isdir(work) and not os.path.islink(work) and os.path.realpath(work) == real):
                back = resolve_name(roots[0], name)
                if back is None or os.path.realpath(back) != os.path.realpath(home):
                    raise _lineage_fail(scope, f"attached work dir {wd} belongs to instance {name!r} ({home}), but "
                                        "that name resolves to another instance from this deployment root",
                                        "E_SPAWN_FAILED")
                return name
    return None


def _anchor(roots: List[str], relative_to: str, relative_root: str, scope: str, relation: str,
            instance: str) -> Tuple[str, str]:
    """(agents root, home) of the instance a relation is anchored to: the one match in the
    deployment, or the one under `relative_root`. The name must lead back to that home from
    the new instance's root (else the recorded edge would name another instance), and for
    relation parent the new name must not exist yet from the anchor's root."""
    hits = [(r, h) for r in roots for _a, h in instance_homes(r, relative_to)]
    if not hits:
        raise _lineage_fail(scope, f"instance {relative_to!r} was not found in this deployment",
                            "E_RELATIVE_NOT_FOUND")
    wanted = os.path.abspath(relative_root) if relative_root.strip() else ""
    if len(hits) == 1:
        chosen = hits[0]
        if wanted and os.path.abspath(chosen[0]) != wanted:
            raise _lineage_fail(scope, f"--relative-to {relative_to!r} does not home under --relative-root "
                                f"{relative_root} (found at {chosen[1]})", "E_RELATIVE_AMBIGUOUS")
    else:
        in_root = [h for h in hits if os.path.abspath(h[0]) == wanted]
        if len(in_root) != 1:
            raise _lineage_fail(scope, f"--relative-to {relative_to!r} matches {len(hits)} instances "
                                f"({', '.join(h for _r, h in hits)}); pass --relative-root <agents-root> to pick one"
                                if not in_root else f"--relative-to {relative_to!r} matches several instances under "
                                f"{relative_root}; retire or rename one", "E_RELATIVE_AMBIGUOUS")
        chosen = in_root[0]
    back = resolve_name(roots[0], relative_to)
    if back is None or os.path.realpath(back) != os.path.realpath(chosen[1]):
        raise _lineage_fail(scope, f"--relative-to {relative_to!r} at {chosen[1]} is shadowed by a same-named "
                            "instance closer to this deployment root; the recorded link would name the wrong "
                            "instance", "E_RELATIVE_AMBIGUOUS")
    if relation == "parent" and resolve_name(chosen[0], instance) is not None:
        raise _lineage_fail(scope, f"relation parent: an instance named {instance!r} already exists seen from the "
                            "anchor's root, so the anchor's re-pointed link would name it; pick another --purpose",
                            "E_RELATIVE_AMBIGUOUS")
    return chosen


def lineage_of(opts: SpawnOptions, work: str, root: str, roots: List[str], scope: str, instance: str
             ) -> Dict[str, Any]:
    """The new instance's lineage: parentInstance, siblingInstance, relation, relativeTo,
    and for relation parent the anchor's instance.json to re-point (path and document)."""
    relation, relative_to = _check_flags(opts, work, scope)
    if relative_to and not any(instance_homes(r, relative_to) for r in roots):
        raise _lineage_fail(scope, f"{'--parent' if opts.parent.strip() else '--relative-to'} {relative_to!r} does "
                            "not match any known instance",
                            "E_PARENT_NOT_FOUND" if opts.parent.strip() else "E_RELATIVE_NOT_FOUND")
    if relation == "unrelated":
        relation, relative_to = "", ""
    if relative_to and relative_to == instance:
        # Lineage links are bare names: a link to an instance of one's own name cannot be
        # told from a link to oneself (the kernel drops it and keeps the relation).
        raise _lineage_fail(scope, f"the new instance would be named {instance!r} too, so its link to {relative_to!r} "
                            "would name itself; give it another name with --purpose", "E_RELATIVE_AMBIGUOUS")
    owner = _attached(opts, work, roots, scope, relation, relative_to)
    out: Dict[str, Any] = {"parentInstance": None, "siblingInstance": None, "relation": relation or None,
                           "relativeTo": relative_to or None, "anchorPath": None, "anchorDoc": None}
    anchor_doc: Optional[Dict[str, Any]] = None
    if relative_to:
        anchor_root, anchor_home = _anchor(roots, relative_to, opts.relative_root, scope, relation, instance)
        path = os.path.join(anchor_home, INSTANCE_FILE)
        _present, doc = read_json(path)
        anchor_doc = doc if isinstance(doc, dict) else None
        if relation in ("sibling", "parent") and anchor_doc is None:
            raise _lineage_fail(scope, f"relation {relation!r} needs the anchor's recorded lineage, but instance "
                                f"{relative_to!r} has no readable instance.json", "E_SPAWN_FAILED")
        out["anchorPath"], out["anchorDoc"] = path, anchor_doc
        out["anchorRoot"] = anchor_root
    _inherit(out, anchor_doc, relation, relative_to)
    if not relation and owner and owner != instance:
        out["parentInstance"] = owner
    if relation in ("sibling", "parent"):
        _same_from_both_roots(out, root, scope, relation, relative_to, instance)
    for key in ("parentInstance", "siblingInstance"):
        if out[key] == instance:
            out[key] = None
    return out


def _attached(opts: SpawnOptions, work: str, roots: List[str], scope: str, relation: str, relative_to: str
              ) -> Optional[str]:
    """For an attached work mode, the instance owning the work tree (attached agents are
    always its children: the relation flags may only say so); None otherwise."""
    if work != "attached":
        return None
    owner = _attached_owner(roots, opts.work_dir, scope)
    if owner is not None:
        if relation and not (relation == "child" and relative_to == owner):
            raise _lineage_fail(scope, f"attached agents are always children of the work-tree owner ({owner}): "
                                "drop the relation flags", "E_SPAWN_FAILED")
    elif not relation:
        raise _lineage_fail(scope, f"attached work dir {opts.work_dir} is not a known instance's <home>/work: name "
                            "the owning instance with --parent <instance>", "E_SPAWN_FAILED")
    else:
        owner = relative_to
    if opts.relation.strip() == "unrelated":
        raise _lineage_fail(scope, "attached agents are always children of the work-tree owner", "E_SPAWN_FAILED")
    return owner


def _inherit(out: Dict[str, Any], anchor_doc: Optional[Dict[str, Any]], relation: str, relative_to: str) -> None:
    """The lineage edges the relation gives; only names are inherited from the anchor's file
    (it is read, not trusted)."""
    a = {k: v for k, v in (anchor_doc or {}).items()
         if k in ("parentInstance", "siblingInstance") and isinstance(v, str) and NAME.match(v)}
    if relation == "child":
        out["parentInstance"] = relative_to
    elif relation == "sibling":
        if a.get("parentInstance"):
            out["parentInstance"] = a["parentInstance"]
        else:
            out["siblingInstance"] = relative_to
    elif relation == "parent":
        out["parentInstance"] = a.get("parentInstance") or None
        out["siblingInstance"] = a.get("siblingInstance") or None


def _same_from_both_roots(out: Dict[str, Any], root: str, scope: str, relation: str, relative_to: str,
                          instance: str) -> None:
    """An inherited edge must name the same instance from the anchor's root and from ours."""
    for inherited in (out["parentInstance"], out["siblingInstance"]):
        if not isinstance(inherited, str) or inherited in (relative_to, instance):
            continue
        there, here = resolve_name(out["anchorRoot"], inherited), resolve_name(root, inherited)
        if (there or here) and (not there or not here or os.path.realpath(there) != os.path.realpath(here)):
            raise _lineage_fail(scope, f"relation {relation!r}: inherited lineage {inherited!r} resolves to "
                                f"{there or 'nothing'} from the anchor's root but {here or 'nothing'} from this "
                                "deployment root", "E_RELATIVE_AMBIGUOUS")


def worktree_registered(repo: str, canonical: str) -> Tuple[Optional[bool], str]:
    """Whether git still lists the worktree at `canonical` (None: could not tell), and why not."""
    rc, out, err = git_run(repo, "worktree", "list", "--porcelain", "-z")
    if rc != 0:
        return None, err or "worktree list failed"
    return canonical in [f[len("worktree "):] for f in out.split("\0") if f.startswith("worktree ")], ""


def branch_exists(repo: str, branch: str) -> Tuple[Optional[bool], str]:
    """Whether refs/heads/`branch` exists (None: could not tell), and why not."""
    rc, _out, err = git_run(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
    if rc == 0:
        return True, ""
    if rc == 1 and not err:
        return False, ""
    return None, err or f"rev-parse exit {rc}"


def git_cleanup(repo: str, wt: str, canonical: str, branch: str) -> Tuple[List[str], List[str]]:
    """Remove the worktree at `wt` and delete `branch`, then verify both, as the kernel's
    rollback does: (what is still outstanding, described; the git debts: worktree, branch)."""
    incomplete: List[str] = []
    debt: List[str] = []
    git_run(repo, "worktree", "remove", "--force", wt)
    git_run(repo, "worktree", "prune")
    listed, why = worktree_registered(repo, canonical)
    if listed is None:
        incomplete.append(f"git worktree {canonical or wt}: could not verify removal ({why})")
        debt.append("worktree")
    elif canonical and listed:
        incomplete.append(f"git worktree {canonical}: still registered")
        debt.append("worktree")
    if branch:
        git_run(repo, "branch", "-D", branch)
        exists, why = branch_exists(repo, branch)
        if exists:
            incomplete.append(f"git branch {branch}: still exists")
            debt.append("branch")
        elif exists is None:
            incomplete.append(f"git branch {branch}: could not verify deletion ({why})")
            debt.append("branch")
    return incomplete, debt


def git_run(repo: str, *args: str) -> Tuple[int, str, str]:
    """(exit status, stdout, stderr) of `git -C repo ARGS`; -1 when git could not run."""
    try:
        proc = subprocess.run(["git", "-C", repo, *args], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return -1, "", str(exc)[:200]
    return (proc.returncode, proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace").strip()[:500])


def workspace_root(chain: List[Any], team: Optional[Dict[str, str]]) -> Optional[str]:
    """Where a workspace instance's work points: the team scope, else the closest config
    scope that is not the laptop level (HOME)."""
    if team:
        return team["scope"]
    home = os.path.abspath(os.path.expanduser("~"))
    return next((c.level for c in chain if os.path.abspath(c.level) != home), None)


def work_setup(chain: List[Any], mode: str) -> Optional[str]:
    for cfg in chain:
        for m, setup in cfg.work_setups:
            if m == mode:
                return setup if os.path.isabs(setup) else os.path.join(cfg.level, setup)
    return None


def find_soul(scope: str, soul: str, notify: Callable[[str], None]) -> Tuple[str, str]:
    """(agents root, agent directory) of `soul`: under the agents root above `scope`, else,
    in a team scope, under the one member repository that holds it (AR252 when several do)."""
    root = agents_root(scope)
    agent_dir = soul_dir(root, soul) if root else None
    if root is not None and agent_dir is not None:
        return root, agent_dir
    team = team_of_dir(scope)
    if team:
        local = os.path.realpath(root) if root else ""
        hits = [(r, d) for r in team_roots(team["scope"]) if os.path.realpath(r) != local
                for d in [soul_dir(r, soul)] if d]
        if len(hits) > 1:
            raise fail(scope, "AR252", f"soul {soul!r} is in several repositories of team {team['name']!r}: "
                       + ", ".join(r for r, _d in hits) + "; spawn it with --dir <that repository>", "E_AMBIGUOUS_SOUL")
        if hits:
            notify(f"(cross-repo: soul {soul!r} found at {hits[0][0]}; the instance homes there)")
            return hits[0]
    raise fail(scope, "AR166", f"no soul {soul!r} under an agents/ or local-agents/ directory above {scope}",
               "E_UNKNOWN_AGENT")


def relink(roots: List[str], name: str, home: str, meta: Dict[str, Any]) -> List[Dict[str, str]]:
    """Splice the retiring instance out of the lineage graph, as the kernel does: every
    instance whose parentInstance or siblingInstance names it (and that name, seen from that
    instance's root, is this home) drops the edge and inherits the retiree's own parent and
    sibling links. Returns what was re-pointed."""
    retiree = os.path.realpath(home)
    def link(key: str) -> Optional[str]:
        v = meta.get(key)
        return v if isinstance(v, str) and NAME.match(v) and v != name else None

    parent, sibling = link("parentInstance"), link("siblingInstance")
    relinked: List[Dict[str, str]] = []
    for root in roots:
        for _n, other in all_homes(root):
            if os.path.realpath(other) == retiree:
                continue
            path = os.path.join(other, INSTANCE_FILE)
            _present, m = read_json(path)
            if not isinstance(m, dict) or name not in (m.get("parentInstance"), m.get("siblingInstance")):
                continue
            seen = resolve_name(root, name)
            if seen is None or os.path.realpath(seen) != retiree:
                continue  # the same name, another instance
            if m.get("parentInstance") == name:
                del m["parentInstance"]
            if m.get("siblingInstance") == name:
                del m["siblingInstance"]
            if not m.get("parentInstance") and parent and parent != m.get("instance"):
                m["parentInstance"] = parent
            if not m.get("siblingInstance") and sibling and sibling != m.get("instance"):
                m["siblingInstance"] = sibling
            try:
                write_file(path, json_bytes(m))
            except OSError:
                continue
            relinked.append({k: v for k, v in (("instance", m.get("instance")), ("parentInstance",
                                                m.get("parentInstance")), ("siblingInstance", m.get("siblingInstance")))
                             if v is not None})
    return relinked
