"""An instance home (spec 003, "Exact runtime composition"), with the OAS kernel's layout:
where it lives (`primary_checkout_path`), its name, how it is staged beside the other homes
and renamed into place under the instances directory's lock (`stage_home`), what a killed
spawn left there (`recover_instances`), and the records written into it: TASK.md and
instance.json's `composition`.

A home holds `soul` (a link to the canonical soul), `AGENTS.md` (composed), `CLAUDE.md ->
AGENTS.md`, `.agents/skills/` (real copies of the composed skills), `.claude/skills ->
../.agents/skills` and, for every work mode but worktree, `work` (a link).
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import stat
import subprocess
import tempfile

from agentrc.capops import doctor as capdoctor
from agentrc.capops import instances as ci
from agentrc.capops import safe as capsafe
from agentrc.capops.install import Failure, Outcome, fail
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import captree
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

STAGE = pattern(r"\..+\.agentrc-[a-z0-9_]{8}", re.DOTALL)  # `tempfile.mkdtemp(prefix=".<name>.agentrc-")`
POSTURE = {
    "claude": {"oasComposed": "skills via .claude/skills -> ../.agents/skills; instructions via CLAUDE.md -> AGENTS.md",
               "ambient": ["user skills", "project and ancestor skills to the repository root",
                           "user and project plugins", "user and project settings", "user and ancestor CLAUDE.md"]},
    "pi": {"oasComposed": "skills via --skill <instance-home>/.agents/skills; instructions via --append-system-prompt",
           "curtailed": ["user skills", "project and ancestor skills", "package skills",
                         "ambient AGENTS.md/CLAUDE.md discovery", "ambient prompt templates"],
           "ambient": ["globally configured pi extensions, and any resources they contribute"]},
}


def git(repo: str, *args: str) -> Tuple[bool, str]:
    try:
        proc = subprocess.run(["git", "-C", repo, *args], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False, ""
    return proc.returncode == 0, proc.stdout.decode("utf-8", "replace").strip()


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# --- where homes live ---------------------------------------------------------------------


def _has_git_marker(d: str) -> bool:
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return True
        parent = os.path.dirname(d)
        if parent == d:
            return False
        d = parent


def primary_checkout_path(scope: str) -> str:
    """`scope`, or, when its agents root is inside a linked git worktree, the same place in
    the primary checkout (the first `git worktree list` record), as the kernel moves instance
    homes there: a home made in a linked worktree is gitignored there and dies with it. When
    git owns the place but the primary checkout cannot be established (git fails, or the
    primary checkout is gone): AR259, the kernel's E_NO_CANONICAL_ROOT (which its CLI reports
    as E_NO_DEPLOYMENT)."""
    root = ci.agents_root(scope)
    if root is None:
        return scope
    probe = root if os.path.isdir(root) else os.path.dirname(root)

    def no_root(why: str) -> Failure:
        return fail(scope, "AR259", f"{root} is inside a git-owned location, but {why}; instance homes must live in "
                    "the soul-owning repository's primary checkout: fix that, or pass --dir <primary checkout>",
                    "E_NO_DEPLOYMENT")

    ok, top = git(probe, "rev-parse", "--show-toplevel")
    if not ok:
        if _has_git_marker(probe):
            raise no_root("its repository cannot be read (git rev-parse failed)")
        return scope
    if not top:
        return scope
    ok, out = git(probe, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
    dirs = out.split("\n") if ok else []
    if len(dirs) != 2:
        raise no_root("git cannot tell a linked worktree from the primary checkout")
    if os.path.realpath(dirs[0].strip()) == os.path.realpath(dirs[1].strip()):
        return scope
    main = _primary(probe, top, no_root)
    real_top = os.path.realpath(top)
    rel = os.path.relpath(os.path.realpath(scope), real_top)
    if not captree.inside(real_top, os.path.realpath(root)) or rel.startswith(".."):
        return scope  # an agents root beside the work tree is not a worktree artefact
    return os.path.normpath(os.path.join(os.path.realpath(main), rel))


def _primary(probe: str, top: str, no_root: Callable[[str], Failure]) -> str:
    """The primary checkout of the linked worktree `top` (the first `git worktree list`
    record), which must exist."""
    try:
        proc = subprocess.run(["git", "-C", probe, "worktree", "list", "--porcelain", "-z"], capture_output=True,
                              timeout=60)
        listed = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        listed = None
    if listed is None:
        raise no_root(f"it is in the linked worktree {top} and `git worktree list` failed")
    main = next((f[len("worktree "):] for f in listed.split("\0") if f.startswith("worktree ")), "")
    if not main or not os.path.isdir(main):
        raise no_root(f"it is in the linked worktree {top}, whose primary checkout {main or '(none listed)'} "
                      "does not exist")
    return main


# --- the home staged and renamed into place -----------------------------------------------


def copy_skill(src: str, dst: str, top: str = "") -> None:
    """An exact copy of one skill tree, as the kernel copies it: directories, regular files
    (modes kept, less group/other write and special bits) and links recreated as links. A link
    is copied only when it is relative and resolves inside the skill; any other link, and any
    other kind of file, is AR174 (the kernel recreates any link verbatim)."""
    top = top or os.path.realpath(src)
    os.mkdir(dst)
    for name in sorted(os.listdir(src)):
        s, t = os.path.join(src, name), os.path.join(dst, name)
        st = os.lstat(s)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(s)
            if os.path.isabs(target) or not captree.inside(top, os.path.realpath(s)):
                raise fail(s, "AR174", f"{s} links to {target}, outside its skill; a composed skill is copied only "
                           "from inside itself", "E_SPAWN_FAILED")
            os.symlink(target, t)
        elif stat.S_ISDIR(st.st_mode):
            copy_skill(s, t, top)
            os.chmod(t, stat.S_IMODE(st.st_mode) & 0o755)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(s, t)
            os.chmod(t, stat.S_IMODE(st.st_mode) & 0o755)
        else:
            raise fail(s, "AR174", f"{s} is not a regular file, directory or link", "E_SPAWN_FAILED")


def instance_name(instances: str, soul: str, purpose: str = "") -> str:
    """`<soul>-<purpose>` (then -2, -3, ...), or `<soul>-N` with N one more than the homes
    there, as the kernel names instances."""
    existing = {n for n in os.listdir(instances) if ".agentrc-" not in n} if os.path.isdir(instances) else set()
    if purpose:
        base = ci.slug(f"{soul}-{ci.slug(purpose)}")
        name, i = base, 2
        while name in existing:
            name, i = f"{base}-{i}", i + 1
        return name
    i = len(existing) + 1
    while f"{soul}-{i}" in existing:
        i += 1
    return f"{soul}-{i}"


def recover_instances(instances: str) -> Tuple[Diagnostic, ...]:
    """Under the instances directory's lock (no spawn is staging there): the staging
    directories killed spawns left (`.<instance>.agentrc-XXXXXXXX`, never renamed into
    place, so never an instance) deleted, with a warning (AR142)."""
    d = Diagnostics()
    try:
        names = sorted(n for n in os.listdir(instances) if STAGE.fullmatch(n))
    except OSError:
        return ()
    for name in names:
        capsafe.remove_tree(os.path.join(instances, name))
        d.warning(os.path.join(instances, name), (0, 0), "AR142", "removed the staging of an instance home an earlier "
                  "`cap spawn` was interrupted in (it never became an instance)",
                  hint="Nothing to do: spawn again if that instance is still wanted.")
    return tuple(d.items)


def stage_home(instances: str, soul: str, purpose: str, soul_dir: str, text: str,
               skills: List[Tuple[str, str, str]], work_target: str,
               copy: Callable[[str, str], None] = copy_skill) -> Tuple[str, str]:
    """The instance home made in a staging directory beside it and renamed into place,
    under the instances directory's lock: (instance name, home). `copy` copies one skill
    tree (`copy_skill`; the spawn passes the one its module holds)."""
    instance = instance_name(instances, soul, purpose)
    home = os.path.join(instances, instance)
    stage = tempfile.mkdtemp(prefix=f".{instance}.agentrc-", dir=instances)
    try:
        _fill(stage, soul_dir, text, skills, work_target, copy)
        for _attempt in range(100):
            try:
                os.rename(stage, home)  # fails when another spawn took the name meanwhile
                break
            except OSError:
                if not os.path.lexists(home):
                    raise
                instance = instance_name(instances, soul, purpose)
                home = os.path.join(instances, instance)
        else:
            raise fail(instances, "AR174", "no free instance name", "E_SPAWN_FAILED")
    except OSError as exc:
        shutil.rmtree(stage, ignore_errors=True)
        raise fail(home, "AR174", f"cannot create the instance home: {exc}", "E_SPAWN_FAILED") from exc
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return instance, home


def _fill(stage: str, soul_dir: str, text: str, skills: List[Tuple[str, str, str]], work_target: str,
          copy: Callable[[str, str], None]) -> None:
    """The home's entries, in the staging directory."""
    os.symlink(soul_dir, os.path.join(stage, "soul"))
    ci.write_file(os.path.join(stage, "AGENTS.md"), text.encode("utf-8"))
    os.symlink("AGENTS.md", os.path.join(stage, "CLAUDE.md"))
    os.makedirs(os.path.join(stage, ".agents", "skills"))
    os.makedirs(os.path.join(stage, ".claude"))
    for name, _source, src in skills:
        copy(os.path.realpath(src), os.path.join(stage, ".agents", "skills", name))
    os.symlink(os.path.join("..", ".agents", "skills"), os.path.join(stage, ".claude", "skills"))
    if work_target:
        os.symlink(work_target, os.path.join(stage, "work"))
    os.chmod(stage, 0o755)


# --- what the home records ----------------------------------------------------------------


def task_md(instance: str, soul: str, home: str, work: str, repo: str, branch: str, work_dir: str,
            team: Optional[Dict[str, str]], briefs: str, task: str) -> bytes:
    where = {
        "worktree": f"a git worktree of {repo} on its own branch {branch}; commit there",
        "attached": f"attached to another instance's work tree ({work_dir}, branch {branch}); you share it, keep "
                    "commits focused and never switch branches",
        "workspace": f"the whole workspace ({os.path.realpath(os.path.join(home, 'work'))}); read across member "
                     "repositories, do not edit them",
    }.get(work, f"a link to the checkout {repo}{f' (branch {branch})' if branch else ''}; stay on that branch")
    team_line = f"\n- Team: {team['name']}" if team else ""
    body = f"\n## Task\n\n{task.strip()}\n" if task.strip() else "\nNo task was given at spawn time.\n"
    return (f"# Instance {instance} of {soul}\n\n- Home: {home}{team_line}\n- Work tree: ./work, {where}\n"
            f"- Repository work happens in ./work.{briefs}\n{body}").encode("utf-8")


def composition(soul_dir: str, outcome: Outcome, found: Dict[str, Tuple[Any, str, str]],
                skills: List[Tuple[str, str, str]], blocks: List[Dict[str, str]],
                runtime_packages: List[Dict[str, Any]], runtime: str, home: str,
                levels: Dict[str, str], own: List[Tuple[str, str]], service: bool) -> Dict[str, Any]:
    """instance.json's `composition`, the kernel's record of what the resolved composition
    promised (`expected`) and what landed (`materialized`). `runtimePosture` keeps the
    kernel's lists of what stays ambient per runtime (its `why`, the kernel's prose, is left
    out)."""
    expected = _expected(soul_dir, outcome, found, levels, own, service)
    expected += [{"type": "instruction-block", "source": b["source"], "declared": b["file"], "resolved": b["file"]}
                 for b in blocks]
    return {
        "expected": expected,
        "materialized": {
            "skills": [{"name": n, "source": s, "from": p} for n, s, p in skills],
            "instructions": [{"source": b["source"], "file": b["file"]} for b in blocks],
            "runtimePackages": runtime_packages,
            "runtimePosture": POSTURE.get(runtime, POSTURE["pi"]),
            "canonicalSkillTree": os.path.join(home, ".agents", "skills"),
            "skillAlias": {"path": os.path.join(home, ".claude", "skills"), "target": os.path.join("..", ".agents",
                                                                                                  "skills")},
        },
    }


def _expected(soul_dir: str, outcome: Outcome, found: Dict[str, Tuple[Any, str, str]], levels: Dict[str, str],
              own: List[Tuple[str, str]], service: bool) -> List[Dict[str, Any]]:
    """The skill trees and injections the composition promised, in the kernel's order."""
    expected: List[Dict[str, Any]] = [{"type": "skill-tree", "source": "kernel", "declared": n,
                                       "resolved": os.path.join(capdoctor.KERNEL_SKILLS_DIR, n)}
                                      for n in capdoctor.KERNEL_SKILLS]
    soul_skills = os.path.join(soul_dir, "skills")
    if os.path.exists(soul_skills):
        expected.append({"type": "skill-tree", "source": "soul", "declared": soul_skills, "resolved": soul_skills})
    for row in outcome.result["capabilities"]:
        cap, _origin, cdir = found[row["id"]]
        where = {"origin": row["origin"], "level": levels.get(cap.id) or row["origin"].split(":", 1)[1]}
        for declared in cap.skills:
            expected.append({"type": "skill-tree", "source": cap.id, "declared": declared,
                             "resolved": os.path.join(cdir, declared), **where})
        if row["inject"] and not (service and row.get("layer") == "knowledge"):
            expected.append({"type": "injection", "source": cap.id, "declared": cap.inject or
                             os.path.basename(row["inject"]), "resolved": row["inject"], **where})
    for cid, tree in own:
        expected.append({"type": "skill-tree", "source": cid, "declared": os.path.relpath(tree, found[cid][2]),
                         "resolved": tree})
    return expected
