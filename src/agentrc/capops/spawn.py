"""`agentrc cap spawn SOUL` (spec 003, "Exact runtime composition", hooks and rollback), with
the OAS kernel's home layout and cleanup contract; and the facade of the modules a spawn and a
retire are made of (`hooks`, `souls`, `home`, `launch`, `retire`, run by `plan`).

Spawn prepares everything it can before it writes: the soul (`souls`: a capability-defined
agent, or a local soul written from --instructions-file/--def-file), its composition
(`capdoctor.doctor`: the active capabilities, skills, instruction blocks, trust and runtime
packages, each checked), the instance's lineage and its work target. Then a plan of steps
(`plan.run`), each knowing how to undo itself:

1. the home, staged beside the others and renamed into place (`home.stage_home`); undone by
   removing it, unless an undo before it did not finish: then it stays as a quarantine, with
   `.oas-rollback-incomplete.json` (cleanup contract version 1, the kernel's shape, so either
   tool's retire retries it);
2. its `work`: for worktree mode `git worktree add` on branch `agents/<instance>` (undone by
   removing the worktree and its branch, verified), else the branch of the linked checkout;
3. the spawn hooks of trusted capabilities, outer scope to inner, then by id (undone by their
   retire hooks, in reverse order);
4. a required hook that failed fails the plan;
5. `TASK.md`, 6. `instance.json` (its lineage worked out by `instances`), 7. for relation parent, the anchor re-pointed.

No runtime is launched: agentrc stops where the kernel starts tmux.

The kernel's own part of every home is composed as the kernel composes it, with agentrc's
own texts (`agentrc/data/`): the skills `oas`, `oas-config` and `oas-packages` (source
`kernel`, subject to `skill-overrides` like any other), and, before the capability blocks,
`kernel:oas` (or the file `oas.injection-override` names, or none), `kernel:local-soul` (a
soul of kind local), `kernel:instance-boundary` and `work-mode:MODE`.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from agentrc.capops import doctor as capdoctor
from agentrc.capops import install as capinstall
from agentrc.capops import instances as ci
from agentrc.capops import legacy as caplegacy
from agentrc.capops import plan
from agentrc.capops import reqs as capreqs
from agentrc.capops.home import (  # noqa: F401 - the facade's names
    POSTURE,
    STAGE,
    composition,
    git,
    instance_name,
    now,
    primary_checkout_path,
    recover_instances,
    stage_home,
    task_md,
)
from agentrc.capops.home import copy_skill as _copy_skill
from agentrc.capops.hooks import (  # noqa: F401 - the facade's names
    HOOK_TIMEOUT,
    MAX_HOOK_OUTPUT,
    binding_levels,
    hook_argv,
    kernel_runtime,
    missing_requires,
    run_hooks,
    runtime_caps,
    runtime_warnings,
    unfinished,
)
from agentrc.capops.install import Failure, Outcome, fail
from agentrc.capops.instances import SpawnOptions
from agentrc.capops.launch import RUNTIMES, TMUX_SESSION, launch_command, model_preference  # noqa: F401
from agentrc.capops.retire import (  # noqa: F401 - the facade's names
    CLEANUP_VERSION,
    GIT_DEBT,
    INSTANCE_FILE,
    MARKER,
    WORK_MODES,
    find_instance,
    retire,
    usable_descriptor,
)
from agentrc.capops.souls import (  # noqa: F401 - the facade's names
    MAX_TASK_BYTES,
    SCAFFOLD_OWNERS,
    capability_agent,
    read_task,
    scaffold_soul,
    upsert_local_soul,
    yaml_map,
)
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple


class _Spawning:
    """One spawn: what preparing it found, then what each step did. Attributes are filled in
    the order of the preparation and the plan."""

    def __init__(self, scope: str, soul: str, opts: SpawnOptions, notify: Callable[[str], None]):
        self.scope, self.soul, self.opts, self.notify = scope, soul, opts, notify
        self.provider: Optional[Tuple[str, Any, str]] = None
        self.root = self.agent_dir = self.soul_dir = self.work = self.task = self.runtime = self.model = ""
        self.repo = self.workspace = self.work_target = self.kind = self.text = self.instances = ""
        self.soul_meta: Dict[str, Any] = {}
        self.agents_md = b""
        self.outcome: Outcome = Outcome({}, [])
        self.chain: List[Any] = []
        self.found: Dict[str, Tuple[Any, str, str]] = {}
        self.team: Optional[Dict[str, str]] = None
        self.lineage: Dict[str, Any] = {}
        self.skills: List[Tuple[str, str, str]] = []
        self.own: List[Tuple[str, str]] = []
        self.levels: Dict[str, str] = {}
        self.caps: List[Dict[str, Any]] = []
        self.blocks: List[Dict[str, str]] = []
        self.runtime_packages: List[Dict[str, Any]] = []
        self.scaffold_warnings: List[str] = []
        # What the plan's steps did.
        self.held: Any = None
        self.instance = self.home = self.branch = self.canonical = ""
        self.warnings: List[str] = []
        self.base: Dict[str, str] = {}
        self.hooks: Dict[str, Any] = {"meta": {}, "briefs": [], "warnings": [], "order": [], "failures": [],
                                      "launch": {}}
        self.required: List[Dict[str, Any]] = []
        self.doc: Dict[str, Any] = {}


# --- before anything is written -----------------------------------------------------------


def _locate(scope: str, soul: str, opts: SpawnOptions, notify: Callable[[str], None]) -> _Spawning:
    """The soul's name checked, the scope moved to the primary checkout, a local soul written
    from its flags, and the soul found: in the agents roots, else a capability-defined agent
    (read-only in its package; its instances home under the scope's local-agents/<name>/)."""
    if opts.instructions_file or opts.def_file:
        soul = ci.slug(soul)  # a local soul is named by the slug, as the kernel names it
    if not ci.NAME.match(soul or ""):
        raise fail(scope, "AR166", f"{soul!r} is not a soul name", "E_UNKNOWN_AGENT")
    primary = primary_checkout_path(scope)
    if primary != scope:
        notify(f"(linked git worktree: the instance homes in the primary checkout, {primary})")
        scope = primary
    if opts.instructions_file or opts.def_file:
        upsert_local_soul(scope, soul, opts, notify)
    s = _Spawning(scope, soul, opts, notify)
    local_root = ci.agents_root(scope)
    if local_root is None or ci.soul_dir(local_root, soul) is None:
        s.provider = capability_agent(scope, soul)
    if s.provider is not None:
        s.root = local_root or os.path.join(scope, "agents")
        s.agent_dir = os.path.join(os.path.dirname(s.root), "local-agents", soul)
        s.soul_dir = s.provider[2]
        notify(f"(capability agent: {soul!r} from {s.provider[0]}; fresh soul, instances home locally)")
    else:
        s.root, s.agent_dir = ci.find_soul(scope, soul, notify)
        s.soul_dir = os.path.join(s.agent_dir, "soul")
    return s


def _read_soul(s: _Spawning) -> None:
    """The soul's settings (soul.yaml under the flags): work mode, task, runtime, model,
    repository, and its instructions. Refusals are AR251/AR254 (E_BAD_ARGS) and AR174."""
    opts, scope = s.opts, s.scope
    s.soul_meta = yaml_map(captree.read_manifest(s.soul_dir, "soul.yaml") or b"")
    s.work = opts.work or s.soul_meta.get("work") or "checkout"
    if s.work not in WORK_MODES:
        raise ci.work_fail(scope if opts.work else os.path.join(s.soul_dir, "soul.yaml"),
                           f"unknown work mode {s.work!r} ({'|'.join(WORK_MODES)})")
    if s.work == "attached" and not opts.work_dir:
        raise ci.work_fail(scope, "attached mode needs --work-dir, the owning instance's <home>/work")
    s.task = opts.task
    if opts.task_file and not opts.task:
        s.task = read_task(scope, opts.task_file)
    elif opts.task_file and not os.path.isfile(opts.task_file):
        raise fail(scope, "AR254", f"--task-file not found: {opts.task_file}", "E_BAD_ARGS")
    if opts.runtime and opts.runtime not in RUNTIMES:
        raise fail(scope, "AR254", f"unknown --runtime {opts.runtime!r} (pi|claude)", "E_BAD_ARGS")
    repo_value = opts.repo or s.soul_meta.get("repo")
    s.workspace = os.path.dirname(s.root)
    s.repo = scope
    if isinstance(repo_value, str) and repo_value:
        s.repo = repo_value if os.path.isabs(repo_value) else os.path.normpath(os.path.join(s.workspace, repo_value))
    if not os.path.isdir(s.repo):
        raise fail(scope if opts.repo else os.path.join(s.soul_dir, "soul.yaml"), "AR174",
                   f"repo not found: {s.repo}", "E_SPAWN_FAILED")
    agents_md = captree.read_manifest(s.soul_dir, "AGENTS.md")
    if agents_md is None:
        raise fail(s.soul_dir, "AR174", f"canonical soul instructions missing: {s.soul_dir}/AGENTS.md",
                   "E_SPAWN_FAILED")
    s.agents_md = agents_md
    s.runtime = str(opts.runtime or (s.soul_meta["runtime"] if s.soul_meta.get("runtime") in RUNTIMES else "pi"))
    soul_model = s.soul_meta.get("model")
    s.model = model_preference(opts.model or (soul_model if isinstance(soul_model, str) else ""), str(s.runtime))


def spawn_failure(exc: Failure) -> Failure:
    """A resolution failure as the kernel's spawn reports it: an error of the package engine
    (its lower-case codes: `integrity-drift`, `invalid-source`, ...) is E_SPAWN_FAILED,
    the diagnostics (what drifted, what is invalid) kept; the kernel's own E_* codes stay."""
    if exc.kernel_code.startswith("E_"):
        return exc
    return Failure(exc.diagnostics, "E_SPAWN_FAILED")


def _resolve(s: _Spawning) -> None:
    """The soul's composition at its repository (doctor's outcome, config chain, acquired),
    its team, lineage and work target."""
    try:
        s.outcome = capdoctor.doctor(s.repo, s.soul, any_soul=s.provider is not None)
        s.chain = capdoctor.config_chain(s.repo)
        s.found = capdoctor.acquired(s.chain)
        ids = [c["id"] for c in s.outcome.result["capabilities"]]
        if s.provider is not None and s.provider[0] in s.found:
            ids.append(s.provider[0])
        caplegacy.require(s.found, ids, "E_SPAWN_FAILED")  # a v1 entry whose skills ship with the kernel
    except Failure as exc:
        raise spawn_failure(exc) from None
    if s.provider is not None:
        # Ephemeral service agents carry no memory protocol: no knowledge-layer injection.
        result = s.outcome.result
        knowledge = {f"capability:{c['id']}" for c in result["capabilities"] if c.get("layer") == "knowledge"}
        result["instructionBlocks"] = [b for b in result["instructionBlocks"] if b["source"] not in knowledge]
    s.team = ci.team_of(s.chain)
    s.instances = os.path.join(s.agent_dir, "instances")
    s.lineage = ci.lineage_of(s.opts, s.work, s.root, ci.roots_of(s.root, s.team), s.scope,
                              instance_name(s.instances, s.soul, s.opts.purpose))
    s.work_target = _work_target(s)


def _work_target(s: _Spawning) -> str:
    """What `work` links to: the owner's work tree (attached), the workspace root
    (workspace), the checkout (checkout); "" for a worktree, added once the home exists."""
    if s.work == "attached":
        if not os.path.isdir(s.opts.work_dir):
            raise ci.work_fail(s.scope, f"attached mode needs an existing work dir (got: {s.opts.work_dir})")
        return os.path.abspath(s.opts.work_dir)
    if s.work == "workspace":
        target = ci.workspace_root(s.chain, s.team) or ""
        if not target:
            raise ci.work_fail(s.scope, "workspace mode needs a declared boundary: a team: block (or a "
                               "workspace-scope oas-config.yaml) so ./work has a root")
        return target
    if s.work == "checkout":
        return s.repo
    if ci.git_run(s.repo, "rev-parse", "--git-dir")[0] != 0:
        raise ci.work_fail(s.repo, f"worktree mode needs a git repository: {s.repo} is not one")
    return ""


def _inject_disabled(chain: List[Any], cid: str) -> bool:
    for cfg in chain:
        for entry in cfg.entries:
            if entry.id == cid and entry.injection_override is not None:
                return bool(entry.injection_override == "none")
    return False


def _check_resources(s: _Spawning) -> None:
    """Every skill tree and injection the composition promises exists (AR174), agentrc's own
    kernel skills included, as the kernel checks its own."""
    missing = Diagnostics()
    for name in capdoctor.KERNEL_SKILLS:
        if not os.path.isfile(os.path.join(capdoctor.KERNEL_SKILLS_DIR, name, "SKILL.md")):
            missing.error(os.path.join(capdoctor.KERNEL_SKILLS_DIR, name), (0, 0), "AR174", f"agentrc's own skill "
                          f"{name!r} is missing from its installation; reinstall agentrc")
    for row in s.outcome.result["capabilities"]:
        cap, _origin, cdir = s.found[row["id"]]
        for declared in cap.skills:
            if not capdoctor.skill_entries(os.path.join(cdir, declared)):
                missing.error(os.path.join(cdir, declared), (0, 0), "AR174", f"{cap.id!r} declares the skill tree "
                              f"{declared!r}, which holds no skill (no SKILL.md, and no child directory with one)")
        if cap.inject and not row["inject"] and not _inject_disabled(s.chain, cap.id):
            missing.error(cdir, (0, 0), "AR174", f"{cap.id!r} declares the injection {cap.inject!r}, which does not "
                          "exist")
    if missing.has_errors:
        raise Failure(missing.items, "E_SPAWN_FAILED")


def _pick_skills(s: _Spawning) -> None:
    """The skills of the home: the kernel's, the soul's, the active capabilities' (and a
    capability agent's own, active or not), one winner per name (AR171)."""
    caps = s.outcome.result["capabilities"]
    sources = [("kernel", os.path.join(capdoctor.KERNEL_SKILLS_DIR, n)) for n in capdoctor.KERNEL_SKILLS]
    sources += [("soul", os.path.join(s.soul_dir, "skills"))]
    sources += [(c["id"], tree) for c in caps for tree in c["skills"]]
    if s.provider is not None and s.provider[0] not in {c["id"] for c in caps}:
        s.own = [(s.provider[0], os.path.join(s.found[s.provider[0]][2], tree)) for tree in s.provider[1].skills]
        sources += s.own
    s.skills = capdoctor.pick_skills(sources, capdoctor.skill_overrides(s.chain),
                                     s.chain[0].path if s.chain else s.scope, "<source>", "E_SPAWN_FAILED")


def _team_env(team: Optional[Dict[str, str]]) -> Dict[str, str]:
    return {"OAS_TEAM_NAME": (team or {}).get("name", ""), "OAS_TEAM_ID": (team or {}).get("id", ""),
            "OAS_TEAM_SCOPE": (team or {}).get("scope", "")}


def _compose(s: _Spawning) -> None:
    """The runtime capabilities (a local soul's soul-scaffold hooks run now, as the kernel's
    writeSoul), their trust and runtime packages checked, and the composed AGENTS.md."""
    s.levels = binding_levels(s.repo, s.soul, s.chain, s.found)
    s.caps = runtime_caps(s.outcome, s.found, s.levels)
    if s.provider is None and (s.opts.instructions_file or s.opts.def_file):
        s.scaffold_warnings = scaffold_soul(s.soul_dir, s.soul, s.caps, {
            "OAS_INSTANCE": s.soul, "OAS_INSTANCE_HOME": s.soul_dir, "OAS_HOME": s.soul_dir, "OAS_AGENT": s.soul,
            "OAS_SOUL": s.soul_dir, "OAS_CONTEXT": s.repo, "OAS_WORKSPACE": os.path.dirname(s.root),
            "OAS_ROOT": s.root, **_team_env(s.team)})
    untrusted = [c["id"] for c in s.caps if c["requiredHooks"] and not c["trusted"]]
    if untrusted:
        d = Diagnostics()
        for cid in untrusted:
            d.error(s.found[cid][2], (0, 0), "AR172", f"{cid!r} declares a required hook, but its executable surface "
                    f"is not trusted: run `agentrc cap trust {cid} --dir {s.found[cid][1].split(':', 1)[1]}`")
        raise Failure(d.items, "E_SPAWN_FAILED")
    # A runtime package is verified in the runtime's own list, never installed here.
    s.runtime_packages = capreqs.verify_for_spawn(str(s.runtime), [
        (row["id"], s.found[row["id"]][0], s.found[row["id"]][2]) for row in s.outcome.result["capabilities"]], s.repo)
    # The soul's kind as the kernel reads it: soul.yaml's `kind:` (tmp is local), else persistent.
    kind = "capability" if s.provider is not None else str(s.soul_meta.get("kind") or "persistent")
    s.kind = "local" if kind == "tmp" else kind
    s.blocks = capdoctor.kernel_blocks(s.chain, str(s.work), s.kind)
    s.blocks += [b for b in s.outcome.result["instructionBlocks"]
                 if not b["source"].startswith(("kernel:", "work-mode:"))]
    s.text = capdoctor.compose(s.agents_md.decode("utf-8", "replace"), s.blocks)


# --- the plan -----------------------------------------------------------------------------


class _Compensate(Exception):
    """A required step failed after the home exists (`_Spawning.required` says which): the
    spawn is undone and reported as AR173."""


class _StageHome(plan.Step):
    """The home, staged and renamed into place under the instances directory's lock."""

    name = "instance home"

    def __init__(self, s: _Spawning):
        self.s = s

    def do(self) -> None:
        s = self.s
        for p in (s.agent_dir, s.instances):
            if os.path.islink(p) or (os.path.exists(p) and not os.path.isdir(p)):
                raise fail(p, "AR174", f"{p} is a link or not a directory; an instance home is created only in the "
                           "agent's own directory", "E_NO_CANONICAL_ROOT")
        os.makedirs(s.instances, exist_ok=True)
        instances = s.instances
        s.held = capinstall.ScopeLock(s.agent_dir, instances, lambda: recover_instances(instances))
        try:
            # The copier by this module's name, looked up now (a test stands in for it).
            s.instance, s.home = stage_home(instances, s.soul, s.opts.purpose, s.soul_dir, s.text, s.skills,
                                            s.work_target, copy=_copy_skill)
        finally:
            s.held.release()
        for key in ("parentInstance", "siblingInstance"):
            if s.lineage[key] == s.instance:
                s.lineage[key] = None

    def undo(self, undone: plan.Undone) -> None:
        """The home removed; kept (the quarantine) when an undo before did not finish, or when
        a required hook failed that reported state (its receipt is in the home) and declares
        no retire hook that could undo it."""
        s = self.s
        for f in s.required:
            cap = next((c for c in s.caps if c["id"] == f["capability"]), None)
            if cap is None or cap["hooks"].get("retire") or not s.hooks["meta"].get(f["capability"]):
                continue
            undone.incomplete.append(f"{f['capability']}: its {f['event']} hook is declared required and reported "
                                     "state it created, but the capability declares no retire hook, so nothing can "
                                     "undo it")
            undone.outstanding.append(f["capability"])
        if undone.incomplete:
            return
        shutil.rmtree(s.home, ignore_errors=True)
        if os.path.lexists(s.home):
            undone.left = s.home


class _AttachWork(plan.Step):
    """For worktree mode, `git worktree add` on the instance's branch (and the config's setup
    command, which only warns); else the branch of the linked checkout."""

    name = "work tree"

    def __init__(self, s: _Spawning):
        self.s = s

    def do(self) -> None:
        s = self.s
        if s.work != "worktree":
            if s.work != "workspace":
                _ok, s.branch = git(s.work_target, "rev-parse", "--abbrev-ref", "HEAD")
            return
        s.branch = s.opts.branch or f"agents/{s.instance}"
        work = os.path.join(s.home, "work")
        rc, _out, err = ci.git_run(s.repo, "worktree", "add", work, "-b", s.branch)
        if rc != 0:
            raise ci.work_fail(s.repo, f"git worktree add failed: {err or f'exit {rc}'}; nothing was kept")
        s.canonical = os.path.realpath(work)
        setup = ci.work_setup(s.chain, "worktree")
        if setup:
            try:
                proc = subprocess.run([setup], cwd=work, capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
                if proc.returncode != 0:
                    raise OSError(f"exit {proc.returncode}: " + proc.stderr.decode("utf-8", "replace").strip())
            except (OSError, subprocess.SubprocessError) as exc:
                s.warnings.append(f"worktree setup command failed (continuing): {str(exc)[:200]}")

    def undo(self, undone: plan.Undone) -> None:
        """The worktree removed and its branch deleted, both verified (what is not, is owed)."""
        s = self.s
        if s.work == "worktree":
            more, debt = ci.git_cleanup(s.repo, os.path.join(s.home, "work"), s.canonical, s.branch)
            undone.incomplete += more
            undone.git += debt


class _SpawnHooks(plan.Step):
    """The spawn hooks, with the spawn's facts and no OAS_ROOT (as the kernel)."""

    name = "spawn hooks"

    def __init__(self, s: _Spawning):
        self.s = s

    def do(self) -> None:
        s = self.s
        s.base = {"OAS_INSTANCE": s.instance, "OAS_INSTANCE_HOME": s.home, "OAS_HOME": s.home, "OAS_AGENT": s.soul,
                  "OAS_SOUL": s.soul_dir, "OAS_CONTEXT": s.repo, "OAS_WORKSPACE": s.workspace, **_team_env(s.team)}
        env = dict(s.base, OAS_ROOT="", OAS_TASK=s.task, OAS_REPO=s.repo, OAS_BRANCH=s.branch, OAS_WORK=str(s.work),
                   OAS_RUNTIME=str(s.runtime), OAS_KIND=s.kind)
        s.hooks = run_hooks("spawn", s.caps, env, s.home, {})
        s.warnings = runtime_warnings(s.caps) + s.warnings + s.scaffold_warnings + s.hooks["warnings"]

    def undo(self, undone: plan.Undone) -> None:
        """The retire hooks, in reverse order, with OAS_ROOT and not the spawn's facts: each
        that failed, or reported it did not finish, still owes its cleanup."""
        s = self.s
        comp = run_hooks("retire", list(reversed(s.caps)), dict(s.base, OAS_ROOT=s.root), s.home, s.hooks["meta"])
        for f in comp["failures"]:
            undone.incomplete.append(f"retire hook {f['capability']}: {f['message']}")
            undone.outstanding.append(f["capability"])
        for cid, message in unfinished(comp["meta"], " — external state may remain"):
            undone.incomplete.append(message)
            undone.outstanding.append(cid)


class _Write(plan.Step):
    """A step that writes one thing inside the home (undone with the home)."""

    def __init__(self, name: str, fn: Callable[[_Spawning], None], s: _Spawning):
        self.name, self.fn, self.s = name, fn, s

    def do(self) -> None:
        self.fn(self.s)


def _require_hooks(s: _Spawning) -> None:
    s.required = [f for f in s.hooks["failures"] if f["required"]]
    if s.required:
        raise _Compensate()


def _write_task(s: _Spawning) -> None:
    briefs = "".join("\n" + b for b in s.hooks["briefs"])
    ci.write_file(os.path.join(s.home, "TASK.md"), task_md(s.instance, s.soul, s.home, s.work, s.repo, s.branch,
                                                           s.opts.work_dir, s.team, briefs, s.task))


def _write_instance(s: _Spawning) -> None:
    s.doc = _instance_doc(s)
    ci.write_file(os.path.join(s.home, INSTANCE_FILE), ci.json_bytes(s.doc))


def _repoint_anchor(s: _Spawning) -> None:
    """Last, as the kernel: for relation parent, the anchor now sits below the new instance."""
    if s.lineage["relation"] != "parent" or s.lineage["anchorDoc"] is None:
        return
    anchor = dict(s.lineage["anchorDoc"], parentInstance=s.instance)
    anchor.pop("siblingInstance", None)
    try:
        ci.write_file(s.lineage["anchorPath"], ci.json_bytes(anchor))
    except OSError as exc:
        s.required = [{"capability": "oas.kernel", "event": "spawn", "required": True,
                       "message": f"relation parent: failed to re-point anchor {s.lineage['relativeTo']!r} ({exc})"}]
        raise _Compensate() from exc


def _instance_doc(s: _Spawning) -> Dict[str, Any]:
    """instance.json, in the kernel's shape (a None value is left out)."""
    relation = s.lineage["relation"]
    result = s.outcome.result
    doc: Dict[str, Any] = {
        "agent": s.soul, "kind": s.kind, "instance": s.instance, "home": s.home, "repo": s.repo, "work": s.work,
        "branch": s.branch or None, "runtime": s.runtime, "model": s.model or None, "team": s.team,
        "parentInstance": s.lineage["parentInstance"], "siblingInstance": s.lineage["siblingInstance"],
        "relation": relation, "relativeTo": s.lineage["relativeTo"] if relation else None,
        "spawnOrigin": "instance" if relation or s.lineage["parentInstance"] else "operator",
        "capabilityMeta": s.hooks["meta"] or None,
        "layers": {layer: p["provenance"] for layer, p in result["layers"].items() if p.get("provenance")} or None,
        "capabilities": [{"id": c["id"], "layer": c["layer"], "command": c["command"], "origin": c["origin"],
                          "level": s.levels.get(c["id"]) or c["origin"].split(":", 1)[1], "settings": c["settings"],
                          "provenance": c["provenance"],
                          "skills": [os.path.join(s.found[c["id"]][2], x) for x in s.found[c["id"]][0].skills],
                          "hooks": [h.event for h in s.found[c["id"]][0].hooks] if c["trust"]["trusted"] else [],
                          "trusted": c["trust"]["trusted"]}
                         for c in result["capabilities"]],
        "skills": [{"name": n, "source": src} for n, src, _p in s.skills],
        "instructions": [{"source": b["source"], "file": b["file"]} for b in s.blocks],
        "composition": composition(s.soul_dir, s.outcome, s.found, s.skills, s.blocks, s.runtime_packages,
                                   str(s.runtime), s.home, s.levels, s.own, s.provider is not None),
        "capabilityRuntime": kernel_runtime(s.caps),
        "tmux": {"session": TMUX_SESSION, "window": s.instance},
        "command": launch_command(str(s.runtime), s.instance, s.home, s.model, s.repo,
                                  s.hooks["launch"].get(str(s.runtime), "")),
        "composedBy": "agentrc", "createdAt": now(),
    }
    return {k: v for k, v in doc.items() if v is not None}


def _quarantine(s: _Spawning, exc: Exception, undone: plan.Undone) -> None:
    """The kernel's cleanup marker in the kept home: what failed, what is incomplete, and the
    descriptor a retire retries (nothing named outstanding: every retire hook is)."""
    outstanding = undone.outstanding
    if not outstanding and not undone.git:
        outstanding = [c["id"] for c in s.caps if c["hooks"].get("retire")]
    cleanup: Dict[str, Any] = {
        "version": CLEANUP_VERSION, "repo": s.repo, "work": s.work, "branch": s.branch,
        "outstanding": {"hooks": list(dict.fromkeys(outstanding)), "git": undone.git},
        "capabilityRuntime": kernel_runtime(s.caps), "capabilityMeta": s.hooks["meta"]}
    if not s.branch:
        del cleanup["branch"]
    reason = "required spawn hook failed and compensation did not complete" if s.required else \
        f"spawn failed ({str(exc)[:200]}) and compensation did not complete"
    marker: Dict[str, Any] = {
        "instance": s.instance, "agent": s.soul, "reason": reason,
        "failed": [{"capability": f["capability"], "event": f["event"]} for f in s.required],
        "incomplete": undone.incomplete, "retainedFor": "credentials/metadata needed to retry cleanup",
        "cleanup": cleanup, "createdAt": now(),
    }
    try:
        ci.write_file(os.path.join(s.home, MARKER), ci.json_bytes(marker))
    except OSError:
        pass  # the quarantine stands without its marker


def _failed(s: _Spawning, exc: Exception, undone: plan.Undone) -> None:
    """A required hook (or the anchor) failed: AR173, saying whether the spawn was rolled back
    or its home kept as a quarantine. Any other failure is reraised as it is."""
    if not isinstance(exc, _Compensate):
        return
    detail = "; ".join(f"{f['capability']} {f['event']} hook (declared required): {f['message']}" for f in s.required)
    d = Diagnostics()
    if undone.incomplete:
        d.error(s.home, (0, 0), "AR173", f"{detail}; rollback INCOMPLETE: the home is kept at {s.home} (it holds what "
                f"the cleanup needs; not a live instance); retry with `agentrc cap retire {s.instance}`. Outstanding: "
                + "; ".join(undone.incomplete))
    else:
        gone = f"; rollback INCOMPLETE, remove {s.home} by hand" if undone.left else ""
        d.error(s.home, (0, 0), "AR173", f"{detail}; the spawn was rolled back{gone}")
    raise Failure(d.items, "E_SPAWN_FAILED") from None


def spawn(scope: str, soul: str, opts: SpawnOptions = SpawnOptions(),
          notify: Callable[[str], None] = lambda _m: None) -> Outcome:
    """Create an instance home of `soul` as the kernel's `oas spawn --no-launch` does (see the
    module docstring for what differs). Raises Failure; on failure nothing is left, except a
    quarantined home when a required hook's compensation did not finish."""
    s = _locate(os.path.abspath(scope), soul, opts, notify)
    for prepare in (_read_soul, _resolve, _check_resources, _pick_skills, _compose):
        prepare(s)
    plan.run([_StageHome(s), _AttachWork(s), _SpawnHooks(s), _Write("required hooks", _require_hooks, s),
              _Write("TASK.md", _write_task, s), _Write("instance.json", _write_instance, s),
              _Write("anchor", _repoint_anchor, s)],
             quarantine=lambda exc, undone: _quarantine(s, exc, undone),
             failed=lambda exc, undone: _failed(s, exc, undone))
    return capinstall.noted(_spawn_outcome(s), s.held.notes)


def _spawn_outcome(s: _Spawning) -> Outcome:
    doc = s.doc
    result = {"instance": s.instance, "agent": s.soul, "home": s.home, "work": s.work, "branch": s.branch or None,
              "launched": False, "warnings": s.warnings, "tmux": doc["tmux"], "repo": s.repo, "runtime": s.runtime,
              "model": s.model or None,
              "parent": doc.get("parentInstance"), "sibling": doc.get("siblingInstance"),
              "relation": s.lineage["relation"], "spawnOrigin": doc["spawnOrigin"],
              "attach": f"tmux attach -t {TMUX_SESSION}", "skills": doc["skills"], "instructions": doc["instructions"]}
    links = "".join(f", {label} {doc[key]}" for label, key in (("parent", "parentInstance"),
                                                              ("sibling", "siblingInstance")) if doc.get(key))
    lines = [f"Spawned {s.instance} ({s.work}{f', branch {s.branch}' if s.branch else ''}{links}), not launched",
             f"  home: {s.home}"]
    lines += [f"  WARNING: {w}" for w in s.warnings]
    return Outcome(result, lines)
