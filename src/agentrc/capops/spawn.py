"""`agentrc cap spawn SOUL` and `agentrc cap retire INSTANCE` (spec 003, "Exact runtime
composition", hooks and rollback), with the OAS kernel's home layout and cleanup contract.

Spawn resolves the soul's composition (`capdoctor.doctor`), checks it, and builds the instance
home under `<agents-root>/<soul>/instances/<instance>/` in a staging directory next to it that
is renamed into place: `soul` (a link to the canonical soul), `AGENTS.md` (the soul's, then
the kernel and work-mode blocks, the capability blocks, then the config blocks), `CLAUDE.md ->
AGENTS.md`, `.agents/skills/` (real copies of the kernel's, the soul's and the active
capabilities' skills), `.claude/skills -> ../.agents/skills`, and `work` by work mode: a link
to the checkout (checkout), to the owner's work tree (attached), to the team scope or
workspace config scope (workspace), or, once the home is in place, `git worktree add` on branch
`agents/<instance>` (worktree). Then the spawn hooks of trusted capabilities run, outer scope
to inner, then by id; a required hook
that fails rolls the spawn back by running the retire hooks (reverse order), removing the
worktree and its branch (verified), and removing the home, or, when that compensation does not
finish, keeps the home with `.oas-rollback-incomplete.json` (cleanup contract version 1, the
kernel's shape, so either tool retries it). Only then are `TASK.md` and `instance.json` written
(with the lineage `instances` works out), and, for relation parent, the anchor re-pointed.
No runtime is launched: agentrc stops where the kernel starts tmux.

The kernel's own part of every home is composed as the kernel composes it, with agentrc's
own texts (`agentrc/data/`): the skills `oas`, `oas-config` and `oas-packages` (source
`kernel`, subject to `skill-overrides` like any other), and, before the capability blocks,
`kernel:oas` (or the file `oas.injection-override` names, or none), `kernel:local-soul` (a
soul of kind local), `kernel:instance-boundary` and `work-mode:MODE`.

Retire finds the home (in the team scope's other roots too), runs the retire hooks, splices the
instance out of the lineage graph, removes a worktree (and with --delete-branch its branch), and
removes the home; a quarantined home is removed only when every outstanding retire hook ran and
reported success and the git steps it owes were redone and verified (`--force` removes it
anyway and returns what the operator now owns). A home with no `instance.json` and no usable
cleanup descriptor fails closed (E_UNIDENTIFIED_INSTANCE_HOME) unless `--force`.

Hooks are `node <script> [args]` with the script inside the capability root (links resolved),
run without a shell, cwd the home, with the `OAS_*` environment; the last stdout line may be
JSON with `meta`, `brief`, `warning`. Retire never runs a command string read from the home:
it runs the retire hooks of the capabilities the home records, as they resolve and are
trusted now.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple

from agentrc.capabilities import activation
from agentrc.capabilities.model import CAPABILITY_FILE
from agentrc.capops import doctor as capdoctor
from agentrc.capops import install as capinstall
from agentrc.capops import instances as ci
from agentrc.capops import reqs as capreqs
from agentrc.capops import safe as capsafe
from agentrc.capops.install import Failure, Outcome, fail
from agentrc.capops.instances import SpawnOptions
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import captree
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

CLEANUP_VERSION = 1
MARKER = ".oas-rollback-incomplete.json"
INSTANCE_FILE = ci.INSTANCE_FILE
WORK_MODES = ("worktree", "checkout", "attached", "workspace")
GIT_DEBT = ("worktree", "branch")
HOOK_TIMEOUT = 120
RUNTIMES = ("pi", "claude")
TMUX_SESSION = os.environ.get("PI_AGENTS_TMUX_SESSION") or "pi-agents"
MAX_TASK_BYTES = 1 << 20
MAX_HOOK_OUTPUT = 1 << 20


# --- where things are -------------------------------------------------------------------


def _inside(parent: str, child: str) -> bool:
    return captree.inside(os.path.realpath(parent), os.path.realpath(child))


def _git(repo: str, *args: str) -> Tuple[bool, str]:
    try:
        proc = subprocess.run(["git", "-C", repo, *args], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False, ""
    return proc.returncode == 0, proc.stdout.decode("utf-8", "replace").strip()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _shq(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


# --- hooks --------------------------------------------------------------------------------


def hook_argv(cdir: str, command: str) -> Optional[List[str]]:
    """`node <script> [args]` for a hook command, or None when the script is not a regular
    file inside the capability root once links are resolved."""
    parts = command.split()
    if not parts:
        return None
    script = os.path.join(cdir, parts[0])
    real = os.path.realpath(script)
    if not _inside(cdir, real) or not os.path.isfile(real):
        return None
    return ["node", real, *parts[1:]]


def run_hooks(event: str, caps: List[Dict[str, Any]], env: Dict[str, str], home: str,
              prior: Dict[str, Any]) -> Dict[str, Any]:
    """Run `event` for each capability in `caps` (each {id, layer, level, settings, dir,
    hooks: {event: command}, requiredHooks}), in the given order. Returns the kernel's
    result shape: meta by id, briefs, warnings, order run, failures, and `launch` (runtime ->
    the extra launch-command arguments successful hooks asked for, in order)."""
    out: Dict[str, Any] = {"meta": {}, "briefs": [], "warnings": [], "order": [], "failures": [], "launch": {}}
    for cap in caps:
        command = (cap.get("hooks") or {}).get(event)
        if not command:
            continue
        out["order"].append(cap["id"])
        argv = hook_argv(cap["dir"], command)
        required = event in (cap.get("requiredHooks") or [])
        if argv is None:
            message = f"hook script of {command!r} is not a file inside {cap['dir']}"
            out["warnings"].append(f"{cap['id']} {event} hook failed (continuing): {message}")
            out["failures"].append({"capability": cap["id"], "event": event, "message": message, "required": required})
            continue
        hook_env = dict(os.environ)
        hook_env.update(env)
        hook_env.update({"OAS_EVENT": event, "OAS_CAPABILITY": cap["id"], "OAS_LAYER": cap.get("layer") or "",
                         "OAS_LEVEL": cap.get("level") or "",
                         "OAS_SETTINGS": json.dumps(cap.get("settings") or {}, separators=(",", ":")),
                         "OAS_META": json.dumps(prior.get(cap["id"]) or {}, separators=(",", ":"))})
        try:
            proc = subprocess.run(argv, cwd=home, env=hook_env, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=HOOK_TIMEOUT)
            stdout = proc.stdout[:MAX_HOOK_OUTPUT].decode("utf-8", "replace")
            ok, detail = proc.returncode == 0, f"exit {proc.returncode}: " + \
                proc.stderr[:2000].decode("utf-8", "replace").strip()[:200]
        except subprocess.TimeoutExpired:
            stdout, ok, detail = "", False, f"timed out after {HOOK_TIMEOUT}s"
        except OSError as exc:
            stdout, ok, detail = "", False, str(exc)[:200]
        lines = [ln for ln in stdout.strip().split("\n") if ln]
        try:
            last = json.loads(lines[-1]) if lines else {}
        except ValueError:
            last = {}
        if not isinstance(last, dict):
            last = {}
        if last.get("meta"):
            out["meta"][cap["id"]] = last["meta"]
        if ok:
            if isinstance(last.get("brief"), str) and last["brief"]:
                out["briefs"].append(f"- {last['brief']}")
            if isinstance(last.get("warning"), str) and last["warning"]:
                out["warnings"].append(last["warning"])
            if isinstance(last.get("launch"), dict):
                for rt, args in last["launch"].items():
                    if isinstance(args, str) and args:
                        out["launch"][rt] = f"{out['launch'][rt]} {args}" if rt in out["launch"] else args
            continue
        if isinstance(last.get("warning"), str) and last["warning"].strip():
            detail = last["warning"].strip()
        out["warnings"].append(f"{cap['id']} {event} hook failed (continuing): {detail}")
        out["failures"].append({"capability": cap["id"], "event": event, "message": detail, "required": required})
    return out


def _binding_levels(context: str, soul: str, chain: List[Any],
                    found: Dict[str, Tuple[Any, str, str]]) -> Dict[str, str]:
    """The scope of the binding that activated each capability (the kernel's `level`)."""
    stype = capdoctor.soul_type(context, soul) or ""
    result = activation.resolve(chain, soul, stype, {c: (cap, o) for c, (cap, o, _d) in found.items()}, Diagnostics())
    return {a.id: a.level for a in result.capabilities}


def _runtime_caps(outcome: Outcome, found: Dict[str, Tuple[Any, str, str]],
                  levels: Dict[str, str]) -> List[Dict[str, Any]]:
    """The active capabilities in hook order (outer scope to inner, then id: the activation's
    order), each with the hooks it may run (only a trusted one has any)."""
    out = []
    for row in outcome.result["capabilities"]:
        cap, _origin, cdir = found[row["id"]]
        trusted = row["trust"]["trusted"]
        hooks = {h.event: h.command for h in cap.hooks} if trusted else {}
        out.append({"id": cap.id, "layer": cap.layer or None,
                    "level": levels.get(cap.id) or row["origin"].split(":", 1)[1],
                    "settings": row["settings"], "dir": cdir, "hooks": hooks,
                    "requiredHooks": [h.event for h in cap.hooks if h.required],
                    "executable": cap.executable, "trusted": trusted, "missing": missing_requires(cap)})
    return out


def missing_requires(cap: Any) -> List[Dict[str, str]]:
    """The host commands `cap` requires that are not on PATH, as the kernel records them
    (instance.json's `capabilityRuntime[].missingRequires`): the manifest's entries."""
    out = []
    for r in cap.requires:
        if r.command and (not capreqs.SAFE_COMMAND.fullmatch(r.command) or shutil.which(r.command) is None):
            entry = {"command": r.command, "why": r.why}
            if r.install:
                entry["install"] = r.install
            out.append(entry)
    return out


def runtime_warnings(caps: List[Dict[str, Any]]) -> List[str]:
    """What the kernel warns about each active capability before its hooks, in hook order: a
    required command not on PATH, an executable surface not trusted."""
    out = []
    for c in caps:
        layer = f" ({c['layer']})" if c["layer"] else ""
        for m in c["missing"]:
            out.append(f"{c['id']}{layer}: required command \"{m['command']}\" not on PATH — "
                       f"{m['why'] or 'needed by this capability'}"
                       + (f" (install: {m['install']})" if m.get("install") else ""))
        if c["executable"] and not c["trusted"]:
            out.append(f"{c['id']}: executable surface disabled — not trusted")
    return out


def _kernel_runtime(caps: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The `capabilityRuntime` rows as the kernel writes them (hook commands as node lines)."""
    rows = []
    for c in caps:
        hooks = {}
        for ev, command in c["hooks"].items():
            argv = hook_argv(c["dir"], command)
            if argv:
                hooks[ev] = " ".join(["node", _shq(argv[1]), *argv[2:]])
        rows.append({"id": c["id"], "layer": c["layer"], "level": c["level"], "settings": c["settings"],
                     "hooks": hooks, "requiredHooks": c["requiredHooks"], "missingRequires": c.get("missing") or [],
                     "trust": {"trusted": c["trusted"]}, "executable": c["executable"]})
    return rows


# --- spawn --------------------------------------------------------------------------------


def spawn_failure(exc: Failure) -> Failure:
    """A resolution failure as the kernel's spawn reports it: an error of the package engine
    (its lower-case codes: `integrity-drift`, `invalid-source`, ...) is E_SPAWN_FAILED,
    the diagnostics (what drifted, what is invalid) kept; the kernel's own E_* codes stay."""
    if exc.kernel_code.startswith("E_"):
        return exc
    return Failure(exc.diagnostics, "E_SPAWN_FAILED")


def _resolve(repo: str, soul: str, any_soul: bool) -> Tuple[Outcome, List[Any], Dict[str, Tuple[Any, str, str]]]:
    """The soul's composition at `repo`: (doctor's outcome, config chain, acquired)."""
    try:
        outcome = capdoctor.doctor(repo, soul, any_soul=any_soul)
        chain = capdoctor.config_chain(repo)
        return outcome, chain, capdoctor.acquired(chain)
    except Failure as exc:
        raise spawn_failure(exc) from None


def _inject_disabled(chain: List[Any], cid: str) -> bool:
    for cfg in chain:
        for entry in cfg.entries:
            if entry.id == cid and entry.injection_override is not None:
                return bool(entry.injection_override == "none")
    return False


def _copy_skill(src: str, dst: str, top: str = "") -> None:
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
            _copy_skill(s, t, top)
            os.chmod(t, stat.S_IMODE(st.st_mode) & 0o755)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(s, t)
            os.chmod(t, stat.S_IMODE(st.st_mode) & 0o755)
        else:
            raise fail(s, "AR174", f"{s} is not a regular file, directory or link", "E_SPAWN_FAILED")


def _instance_name(instances: str, soul: str, purpose: str = "") -> str:
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


def _task_md(instance: str, soul: str, home: str, work: str, repo: str, branch: str, work_dir: str,
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


def capability_agent(scope: str, name: str) -> Optional[Tuple[str, Any, str]]:
    """(capability id, manifest, soul directory) of the capability-defined agent `name`: a
    soul directory listed in the `agents:` of a capability that the config chain at `scope`
    declares (in any binding) and that is acquired, named by its soul.yaml's `name:` (else its
    directory). The provider must be trusted as the kernel requires (owned or path:, or
    installed matching its lock's integrity; no executable approval needed) and the soul must
    stay inside it: else AR258. None when no declared capability provides `name`."""
    try:
        chain = capdoctor.config_chain(scope)
        found = capdoctor.acquired(chain)
    except Failure:
        return None
    declared: List[str] = []
    for cfg in chain:
        for entry in cfg.entries:
            if entry.id not in declared:
                declared.append(entry.id)
    problems: List[str] = []
    for cid in declared:
        if cid not in found:
            continue
        cap, origin, cdir = found[cid]
        for rel in cap.agents:
            sdir = os.path.join(cdir, rel)
            raw = captree.read_manifest(sdir, "soul.yaml") if _inside(cdir, sdir) else None
            if raw is None:
                continue
            try:
                doc = load_yaml(raw.decode("utf-8", "replace")).data
            except YamlError:
                continue
            declared_name = doc.get("name") if isinstance(doc, dict) and isinstance(doc.get("name"), str) else ""
            if (declared_name or os.path.basename(os.path.normpath(sdir))) != name:
                continue
            if not _provider_trusted(cid, origin, cdir):
                problems.append(f"capability agent provider {cid!r} is not trusted: its artifact does not match "
                                "its lock's integrity (restore it with `agentrc cap install`)")
                continue
            d = Diagnostics()
            captree.check_contained(cdir, cap, os.path.join(cdir, CAPABILITY_FILE), d)
            if d.has_errors or not os.path.isfile(os.path.join(sdir, "AGENTS.md")):
                problems.append(f"{cid}: the agent {rel!r} is not a self-contained soul inside the capability "
                                "(soul.yaml and AGENTS.md, no link leading out)")
                continue
            return cid, cap, os.path.realpath(sdir)
    if problems:
        raise fail(scope, "AR258", problems[0], "E_SPAWN_FAILED")
    return None


def _provider_trusted(cid: str, origin: str, cdir: str) -> bool:
    if origin.startswith(("owned:", "path:")):
        return True
    if not origin.startswith("installed:"):
        return False
    try:
        lock = capinstall.read_lock(origin.split(":", 1)[1])
    except Failure:
        return False
    row = lock.capability(cid) if lock is not None and lock.version == 2 else None
    return row is not None and capinstall.hash_or_empty(cdir) == row.integrity


def _front_matter(text: str) -> Tuple[Dict[str, str], str]:
    """The kernel's flat front matter: `key: value` lines between `---` fences (quotes and
    `# comments` dropped), and the body trimmed with one final newline."""
    m = re.match(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$", text)
    if not m:
        return {}, text
    meta: Dict[str, str] = {}
    for line in m.group(1).split("\n"):
        f = re.match(r"^([A-Za-z_][A-Za-z0-9_-]*):\s*(.*?)\s*(#.*)?$", line)
        if f:
            meta[f.group(1)] = re.sub(r"^[\"']|[\"']$", "", f.group(2))
    return meta, m.group(2).strip() + "\n"


def upsert_local_soul(scope: str, name: str, opts: SpawnOptions, notify: Callable[[str], None]) -> None:
    """Create or update the local soul `local-agents/<name>/soul/` (soul.yaml, AGENTS.md,
    CLAUDE.md -> AGENTS.md) from --instructions-file or --def-file, as the kernel's spawn
    does before it spawns: flags win over the definition's front matter, which wins over
    the existing soul.yaml. A persistent soul of that name, an unreadable file, or a value
    with a line break (it would add keys to soul.yaml) is AR179 (E_BAD_ARGS). The
    soul-scaffold hooks run later in the spawn (`scaffold_soul`), once the active
    capabilities are known."""
    root = ci.agents_root(scope) or os.path.join(scope, "agents")
    slugged = ci.slug(name)
    if os.path.isfile(os.path.join(root, slugged, "soul", "soul.yaml")):
        raise fail(scope, "AR179", f"{slugged!r} is a persistent agent: spawn it without --instructions-file/"
                   "--def-file", "E_BAD_ARGS")

    def read(path: str) -> str:
        return _read_bounded(scope, path, "AR179", f"file not found: {os.path.abspath(path)}", path)

    instructions: Optional[str] = read(opts.instructions_file) if opts.instructions_file else None
    fields: Dict[str, str] = {}
    if opts.def_file:
        meta, instructions = _front_matter(read(opts.def_file))
        fields = {k: meta[k] for k in ("description", "model", "repo", "work", "runtime") if meta.get(k)}
    for key, flag in (("repo", opts.repo), ("work", opts.work), ("runtime", opts.runtime), ("model", opts.model)):
        if flag:
            fields[key] = flag
    agent_dir = os.path.join(os.path.dirname(root), "local-agents", slugged)
    soul_dir = os.path.join(agent_dir, "soul")
    existing: Dict[str, Any] = {}
    raw = captree.read_manifest(soul_dir, "soul.yaml") if os.path.isdir(soul_dir) else None
    if raw is not None:
        try:
            doc = load_yaml(raw.decode("utf-8", "replace")).data
        except YamlError:
            doc = None
        existing = doc if isinstance(doc, dict) else {}
    record: Dict[str, str] = {"name": slugged, "kind": "local"}
    for key in ("description", "type", "repo", "work", "runtime", "model"):
        value = fields.get(key) or existing.get(key)
        if key == "work":
            value = value or "checkout"
        if key == "runtime":
            value = value or "pi"
        if isinstance(value, str) and value:
            record[key] = value
    bad = [k for k, v in record.items() if "\n" in v or "\r" in v]
    if bad:
        raise fail(scope, "AR179", f"the local soul's {', '.join(bad)} would hold a line break", "E_BAD_ARGS")
    for p in (os.path.dirname(agent_dir), agent_dir, soul_dir):
        if os.path.islink(p):
            raise fail(p, "AR179", f"{p} is a link; a local soul is written only in the scope's own local-agents/",
                       "E_BAD_ARGS")
    os.makedirs(soul_dir, exist_ok=True)
    os.makedirs(os.path.join(agent_dir, "instances"), exist_ok=True)
    order = ("name", "kind", "description", "type", "repo", "work", "runtime", "model")
    ci.write_file(os.path.join(soul_dir, "soul.yaml"),
                  ("\n".join(f"{k}: {record[k]}" for k in order if k in record) + "\n").encode("utf-8"),
                  root=agent_dir)
    if instructions is not None:
        ci.write_file(os.path.join(soul_dir, "AGENTS.md"), instructions.encode("utf-8"), root=agent_dir)
    if not os.path.lexists(os.path.join(soul_dir, "CLAUDE.md")):
        os.symlink("AGENTS.md", os.path.join(soul_dir, "CLAUDE.md"))
    notify(f"(local soul {slugged!r} written at {soul_dir})")


SCAFFOLD_OWNERS = ".oas-scaffold-owners.json"


def _soul_snapshot(soul_dir: str) -> Dict[str, Tuple[str, bytes]]:
    """Every file and link below the soul (links not followed), as the kernel snapshots it
    around a soul-scaffold hook; the owners file is not part of it."""
    out: Dict[str, Tuple[str, bytes]] = {}
    for top, dirs, files in os.walk(soul_dir):
        for name in sorted(dirs + files):
            path = os.path.join(top, name)
            rel = os.path.relpath(path, soul_dir).replace(os.sep, "/")
            if rel == SCAFFOLD_OWNERS:
                continue
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path).encode("utf-8", "surrogateescape"))
                if name in dirs:
                    dirs.remove(name)  # a linked directory is one entry, never walked into
            elif os.path.isfile(path):
                with open(path, "rb") as fh:
                    out[rel] = ("file", fh.read())
    return out


def _restore_snapshot(soul_dir: str, before: Dict[str, Tuple[str, bytes]], after: Dict[str, Tuple[str, bytes]]) -> None:
    for rel in after:
        if rel not in before:
            path = os.path.join(soul_dir, rel)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                os.unlink(path)
    for rel, (kind, value) in before.items():
        if after.get(rel) == (kind, value):
            continue
        path = os.path.join(soul_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.unlink(path)
        if kind == "link":
            os.symlink(value.decode("utf-8", "surrogateescape"), path)
        else:
            ci.write_file(path, value, root=soul_dir)


def scaffold_soul(soul_dir: str, name: str, caps: List[Dict[str, Any]], env: Dict[str, str]) -> List[str]:
    """The soul-scaffold hooks of the active, trusted capabilities, run in the soul (cwd) one
    capability at a time, as the kernel runs them when it writes a soul: each may create
    files and change the ones it created before (`.oas-scaffold-owners.json` records which
    capability created what); changing or deleting a file it does not own, or creating one
    another capability owns, restores the soul as it was before that hook and fails the
    spawn (AR260). A failing hook only warns (soul-scaffold cannot be required). Returns
    the warnings."""
    owners_path = os.path.join(soul_dir, SCAFFOLD_OWNERS)
    owners: Dict[str, str] = {}
    raw = captree.read_manifest(soul_dir, SCAFFOLD_OWNERS)
    if raw is not None:
        try:
            loaded = json.loads(raw.decode("utf-8", "replace"))
            owners = {k: v for k, v in loaded.items() if isinstance(k, str) and isinstance(v, str)} \
                if isinstance(loaded, dict) else {}
        except ValueError:
            owners = {}
    warnings: List[str] = []
    ran = False
    for cap in caps:
        if not (cap.get("hooks") or {}).get("soul-scaffold"):
            continue
        ran = True
        before = _soul_snapshot(soul_dir)
        result = run_hooks("soul-scaffold", [cap], env, soul_dir, {})
        warnings += result["warnings"]
        after = _soul_snapshot(soul_dir)
        conflicts = [rel for rel, entry in after.items()
                     if (rel in before and before[rel] != entry and owners.get(rel) != cap["id"])
                     or (rel not in before and owners.get(rel) not in (None, cap["id"]))]
        conflicts += [rel for rel in before if rel not in after and owners.get(rel) != cap["id"]]
        if conflicts:
            _restore_snapshot(soul_dir, before, after)
            raise fail(soul_dir, "AR260", f"soul-scaffold ownership conflict: {cap['id']} attempted "
                       + ", ".join(sorted(set(conflicts))), "E_SPAWN_FAILED")
        for rel in after:
            if rel not in before:
                owners[rel] = cap["id"]
    if ran and owners:
        ci.write_file(owners_path, (json.dumps(owners, indent=2) + "\n").encode("utf-8"))
    return warnings


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

    ok, top = _git(probe, "rev-parse", "--show-toplevel")
    if not ok:
        if _has_git_marker(probe):
            raise no_root("its repository cannot be read (git rev-parse failed)")
        return scope
    if not top:
        return scope
    ok, out = _git(probe, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
    dirs = out.split("\n") if ok else []
    if len(dirs) != 2:
        raise no_root("git cannot tell a linked worktree from the primary checkout")
    if os.path.realpath(dirs[0].strip()) == os.path.realpath(dirs[1].strip()):
        return scope
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
    real_top = os.path.realpath(top)
    rel = os.path.relpath(os.path.realpath(scope), real_top)
    if not captree.inside(real_top, os.path.realpath(root)) or rel.startswith(".."):
        return scope  # an agents root beside the work tree is not a worktree artefact
    return os.path.normpath(os.path.join(os.path.realpath(main), rel))


def _read_task(scope: str, path: str) -> str:
    """The text of --task-file (a regular file, at most MAX_TASK_BYTES), else AR254."""
    return _read_bounded(scope, path, "AR254", f"--task-file not found: {path}", f"--task-file {path}")


def _read_bounded(scope: str, path: str, code: str, missing: str, shown: str) -> str:
    """The text of a file a flag names (it may be anywhere: the user named it), read with the
    bounded reader (`capsafe.read_bounded`): a missing file is `code` (E_BAD_ARGS) with
    `missing`; a FIFO, `/dev/stdin`, a device or a directory is AR054 and never opened, so
    the spawn cannot block on it; larger than MAX_TASK_BYTES is `code` again."""
    if not os.path.lexists(path):
        raise fail(scope, code, f"{missing} (No such file or directory)", "E_BAD_ARGS")
    try:
        st = os.stat(path)
    except (OSError, RecursionError):
        st = None
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_size > MAX_TASK_BYTES:
        raise fail(scope, code, f"{shown} is larger than {MAX_TASK_BYTES} bytes", "E_BAD_ARGS")
    try:
        data = capsafe.read_bounded(path, path, shown)
    except capsafe.Escape as exc:
        raise fail(scope, "AR054", exc.message, "E_BAD_ARGS") from None
    if len(data) > MAX_TASK_BYTES:
        raise fail(scope, code, f"{shown} is larger than {MAX_TASK_BYTES} bytes", "E_BAD_ARGS")
    return data.decode("utf-8", "replace")


def model_preference(model: str, runtime: str) -> str:
    """The model recorded for a runtime from a comma list of preferences, as the kernel picks
    it: for claude the first alias or bare id (an `anthropic/` entry without its provider and
    `:thinking`; other providers' entries dropped), else the first entry. (The kernel asks
    `pi --list-models` to pick among several pi entries; agentrc takes the first.)"""
    prefs = [p.strip() for p in model.split(",") if p.strip()]
    if runtime == "claude":
        for pref in prefs:
            bare = re.sub(r":[a-zA-Z]+$", "", pref)
            if "/" not in bare:
                return bare
            provider, _sep, rest = bare.partition("/")
            if provider == "anthropic" and rest:
                return rest
        return ""
    return prefs[0] if prefs else ""


def launch_command(runtime: str, instance: str, home: str, model: str, context: str, hook_args: str = "") -> str:
    """The command line the kernel records in instance.json (`command`) and would run in the
    instance's tmux window, with the arguments the spawn hooks' `launch` asked for this
    runtime (`hook_args`, as the hooks wrote them: they are flags for the runtime). agentrc
    records it and runs nothing; a runtime executable that is not on PATH is recorded by its
    name."""
    name = capreqs.claude_binary(context) if runtime == "claude" else "pi"
    exe = shutil.which(name) or name
    with_model = (f" --model {_shq(model)}" if model else "") + (f" {hook_args}" if hook_args else "")
    if runtime == "claude":
        line = f'{_shq(exe)}{with_model} -- "$(cat TASK.md)"'
    else:
        line = (f"{_shq(exe)} --no-skills --skill {_shq(os.path.join(home, '.agents', 'skills'))} --no-context-files "
                f"--no-prompt-templates --append-system-prompt {_shq(os.path.join(home, 'AGENTS.md'))} --approve "
                f"--name {_shq(instance)}{with_model} {_shq('@TASK.md')}")
    return (f"OAS_INSTANCE={_shq(instance)} OAS_INSTANCE_HOME={_shq(home)} PI_AGENT_INSTANCE={_shq(instance)} "
            f"PI_AGENT_HOME={_shq(home)} {line}")


POSTURE = {
    "claude": {"oasComposed": "skills via .claude/skills -> ../.agents/skills; instructions via CLAUDE.md -> AGENTS.md",
               "ambient": ["user skills", "project and ancestor skills to the repository root",
                           "user and project plugins", "user and project settings", "user and ancestor CLAUDE.md"]},
    "pi": {"oasComposed": "skills via --skill <instance-home>/.agents/skills; instructions via --append-system-prompt",
           "curtailed": ["user skills", "project and ancestor skills", "package skills",
                         "ambient AGENTS.md/CLAUDE.md discovery", "ambient prompt templates"],
           "ambient": ["globally configured pi extensions, and any resources they contribute"]},
}


def _composition(soul_dir: str, outcome: Outcome, found: Dict[str, Tuple[Any, str, str]],
                 skills: List[Tuple[str, str, str]], blocks: List[Dict[str, str]],
                 runtime_packages: List[Dict[str, Any]], runtime: str, home: str,
                 levels: Dict[str, str], own: List[Tuple[str, str]], service: bool) -> Dict[str, Any]:
    """instance.json's `composition`, the kernel's record of what the resolved composition
    promised (`expected`) and what landed (`materialized`). `runtimePosture` keeps the
    kernel's lists of what stays ambient per runtime (its `why`, the kernel's prose, is left
    out)."""
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


def spawn(scope: str, soul: str, opts: SpawnOptions = SpawnOptions(),
          notify: Callable[[str], None] = lambda _m: None) -> Outcome:
    """Create an instance home of `soul` as the kernel's `oas spawn --no-launch` does (see the
    module docstring for what differs). Raises Failure; on failure nothing is left, except a
    quarantined home when a required hook's compensation did not finish."""
    scope = os.path.abspath(scope)
    if opts.instructions_file or opts.def_file:
        soul = ci.slug(soul)  # a local soul is named by the slug, as the kernel names it
    if not ci.NAME.match(soul or ""):
        raise fail(scope, "AR166", f"{soul!r} is not a soul name", "E_UNKNOWN_SOUL")
    primary = primary_checkout_path(scope)
    if primary != scope:
        notify(f"(linked git worktree: the instance homes in the primary checkout, {primary})")
        scope = primary
    if opts.instructions_file or opts.def_file:
        upsert_local_soul(scope, soul, opts, notify)
    local_root = ci.agents_root(scope)
    provider: Optional[Tuple[str, Any, str]] = None
    if local_root is None or ci.soul_dir(local_root, soul) is None:
        provider = capability_agent(scope, soul)
    if provider is not None:
        # A capability-defined agent: the soul stays read-only in the package; the
        # instances home under the scope's local-agents/<name>/.
        root = local_root or os.path.join(scope, "agents")
        agent_dir = os.path.join(os.path.dirname(root), "local-agents", soul)
        soul_dir = provider[2]
        notify(f"(capability agent: {soul!r} from {provider[0]}; fresh soul, instances home locally)")
    else:
        root, agent_dir = ci.find_soul(scope, soul, notify)
        soul_dir = os.path.join(agent_dir, "soul")
    raw = captree.read_manifest(soul_dir, "soul.yaml") or b""
    try:
        meta_doc = load_yaml(raw.decode("utf-8", "replace")).data
    except YamlError:
        meta_doc = None
    soul_meta: Dict[str, Any] = meta_doc if isinstance(meta_doc, dict) else {}
    work = opts.work or soul_meta.get("work") or "checkout"
    if work not in WORK_MODES:
        raise ci.work_fail(scope if opts.work else os.path.join(soul_dir, "soul.yaml"),
                           f"unknown work mode {work!r} ({'|'.join(WORK_MODES)})")
    if work == "attached" and not opts.work_dir:
        raise ci.work_fail(scope, "attached mode needs --work-dir, the owning instance's <home>/work")
    task = opts.task
    if opts.task_file and not opts.task:
        task = _read_task(scope, opts.task_file)
    elif opts.task_file and not os.path.isfile(opts.task_file):
        raise fail(scope, "AR254", f"--task-file not found: {opts.task_file}", "E_BAD_ARGS")
    if opts.runtime and opts.runtime not in RUNTIMES:
        raise fail(scope, "AR254", f"unknown --runtime {opts.runtime!r} (pi|claude)", "E_BAD_ARGS")
    repo_value = opts.repo or soul_meta.get("repo")
    workspace = os.path.dirname(root)
    repo = scope
    if isinstance(repo_value, str) and repo_value:
        repo = repo_value if os.path.isabs(repo_value) else os.path.normpath(os.path.join(workspace, repo_value))
    if not os.path.isdir(repo):
        raise fail(scope if opts.repo else os.path.join(soul_dir, "soul.yaml"), "AR174", f"repo not found: {repo}",
                   "E_SPAWN_FAILED")
    agents_md = captree.read_manifest(soul_dir, "AGENTS.md")
    if agents_md is None:
        raise fail(soul_dir, "AR174", f"canonical soul instructions missing: {soul_dir}/AGENTS.md", "E_SPAWN_FAILED")
    runtime = opts.runtime or (soul_meta.get("runtime") if soul_meta.get("runtime") in RUNTIMES else "pi")
    soul_model = soul_meta.get("model")
    model = model_preference(opts.model or (soul_model if isinstance(soul_model, str) else ""), str(runtime))

    outcome, chain, found = _resolve(repo, soul, provider is not None)
    if provider is not None:
        # Ephemeral service agents carry no memory protocol: no knowledge-layer injection.
        knowledge = {f"capability:{c['id']}" for c in outcome.result["capabilities"] if c.get("layer") == "knowledge"}
        outcome.result["instructionBlocks"] = [b for b in outcome.result["instructionBlocks"]
                                               if b["source"] not in knowledge]
    team = ci.team_of(chain)
    roots = ci.roots_of(root, team)
    instances = os.path.join(agent_dir, "instances")
    lineage = ci.lineage_of(opts, work, root, roots, scope, _instance_name(instances, soul, opts.purpose))
    work_target = ""
    if work == "attached":
        if not os.path.isdir(opts.work_dir):
            raise ci.work_fail(scope, f"attached mode needs an existing work dir (got: {opts.work_dir})")
        work_target = os.path.abspath(opts.work_dir)
    elif work == "workspace":
        work_target = ci.workspace_root(chain, team) or ""
        if not work_target:
            raise ci.work_fail(scope, "workspace mode needs a declared boundary: a team: block (or a workspace-scope "
                             "oas-config.yaml) so ./work has a root")
    elif work == "checkout":
        work_target = repo
    elif ci.git_run(repo, "rev-parse", "--git-dir")[0] != 0:
        raise ci.work_fail(repo, f"worktree mode needs a git repository: {repo} is not one")
    missing = Diagnostics()
    for name in capdoctor.KERNEL_SKILLS:  # promised to every instance, as the kernel checks its own
        if not os.path.isfile(os.path.join(capdoctor.KERNEL_SKILLS_DIR, name, "SKILL.md")):
            missing.error(os.path.join(capdoctor.KERNEL_SKILLS_DIR, name), (0, 0), "AR174", f"agentrc's own skill "
                          f"{name!r} is missing from its installation; reinstall agentrc")
    for row in outcome.result["capabilities"]:
        cap, _origin, cdir = found[row["id"]]
        for declared in cap.skills:
            if not capdoctor.skill_entries(os.path.join(cdir, declared)):
                missing.error(os.path.join(cdir, declared), (0, 0), "AR174", f"{cap.id!r} declares the skill tree "
                              f"{declared!r}, which holds no skill (no SKILL.md, and no child directory with one)")
        if cap.inject and not row["inject"] and not _inject_disabled(chain, cap.id):
            missing.error(cdir, (0, 0), "AR174", f"{cap.id!r} declares the injection {cap.inject!r}, which does not "
                          "exist")
    if missing.has_errors:
        raise Failure(missing.items, "E_SPAWN_FAILED")
    sources = [("kernel", os.path.join(capdoctor.KERNEL_SKILLS_DIR, n)) for n in capdoctor.KERNEL_SKILLS]
    sources += [("soul", os.path.join(soul_dir, "skills"))]
    sources += [(c["id"], tree) for c in outcome.result["capabilities"] for tree in c["skills"]]
    own: List[Tuple[str, str]] = []
    if provider is not None and provider[0] not in {c["id"] for c in outcome.result["capabilities"]}:
        # A capability agent always carries its own capability's skills, active or not.
        own = [(provider[0], os.path.join(found[provider[0]][2], tree)) for tree in provider[1].skills]
        sources += own
    skills = capdoctor.pick_skills(sources, capdoctor.skill_overrides(chain), chain[0].path if chain else scope,
                                   "<source>", "E_SPAWN_FAILED")
    levels = _binding_levels(repo, soul, chain, found)
    caps = _runtime_caps(outcome, found, levels)
    scaffold_warnings: List[str] = []
    if provider is None and (opts.instructions_file or opts.def_file):
        # The local soul was just written: its soul-scaffold hooks, as the kernel's writeSoul.
        scaffold_warnings = scaffold_soul(soul_dir, soul, caps, {
            "OAS_INSTANCE": soul, "OAS_INSTANCE_HOME": soul_dir, "OAS_HOME": soul_dir, "OAS_AGENT": soul,
            "OAS_SOUL": soul_dir, "OAS_CONTEXT": repo, "OAS_WORKSPACE": os.path.dirname(root), "OAS_ROOT": root,
            "OAS_TEAM_NAME": (team or {}).get("name", ""), "OAS_TEAM_ID": (team or {}).get("id", ""),
            "OAS_TEAM_SCOPE": (team or {}).get("scope", "")})
    untrusted = [c["id"] for c in caps if c["requiredHooks"] and not c["trusted"]]
    if untrusted:
        d = Diagnostics()
        for cid in untrusted:
            d.error(found[cid][2], (0, 0), "AR172", f"{cid!r} declares a required hook, but its executable surface is "
                    f"not trusted: run `agentrc cap trust {cid} --dir {found[cid][1].split(':', 1)[1]}`")
        raise Failure(d.items, "E_SPAWN_FAILED")
    # A runtime package is verified in the runtime's own list, never installed here.
    runtime_packages = capreqs.verify_for_spawn(str(runtime), [(row["id"], found[row["id"]][0], found[row["id"]][2])
                                                          for row in outcome.result["capabilities"]], repo)
    # The soul's kind as the kernel reads it: soul.yaml's `kind:` (tmp is local), else persistent.
    kind = "capability" if provider is not None else str(soul_meta.get("kind") or "persistent")
    kind = "local" if kind == "tmp" else kind
    blocks = capdoctor.kernel_blocks(chain, str(work), kind)
    blocks += [b for b in outcome.result["instructionBlocks"] if not b["source"].startswith(("kernel:", "work-mode:"))]
    text = capdoctor.compose(agents_md.decode("utf-8", "replace"), blocks)

    for p in (agent_dir, instances):
        if os.path.islink(p) or (os.path.exists(p) and not os.path.isdir(p)):
            raise fail(p, "AR174", f"{p} is a link or not a directory; an instance home is created only in the "
                       "agent's own directory", "E_NO_CANONICAL_ROOT")
    os.makedirs(instances, exist_ok=True)
    held = capinstall.ScopeLock(agent_dir, instances, lambda: recover_instances(instances))
    try:
        instance, home = _stage_home(instances, soul, opts.purpose, soul_dir, text, skills, work_target)
    finally:
        held.release()
    for key in ("parentInstance", "siblingInstance"):
        if lineage[key] == instance:
            lineage[key] = None
    warnings: List[str] = []
    branch = ""
    canonical = ""
    if work == "worktree":
        branch = opts.branch or f"agents/{instance}"
        rc, _out, err = ci.git_run(repo, "worktree", "add", os.path.join(home, "work"), "-b", branch)
        if rc != 0:
            shutil.rmtree(home, ignore_errors=True)
            raise ci.work_fail(repo, f"git worktree add failed: {err or f'exit {rc}'}; nothing was kept")
        canonical = os.path.realpath(os.path.join(home, "work"))
        setup = ci.work_setup(chain, "worktree")
        if setup:
            try:
                proc = subprocess.run([setup], cwd=os.path.join(home, "work"), capture_output=True, timeout=300,
                                      stdin=subprocess.DEVNULL)
                if proc.returncode != 0:
                    raise OSError(f"exit {proc.returncode}: " + proc.stderr.decode("utf-8", "replace").strip())
            except (OSError, subprocess.SubprocessError) as exc:
                warnings.append(f"worktree setup command failed (continuing): {str(exc)[:200]}")
    elif work != "workspace":
        _ok, branch = _git(work_target, "rev-parse", "--abbrev-ref", "HEAD")
    # As the kernel: spawn hooks get the spawn's facts and no OAS_ROOT; the compensating
    # retire hooks get OAS_ROOT and not the spawn's facts.
    base = {"OAS_INSTANCE": instance, "OAS_INSTANCE_HOME": home, "OAS_HOME": home, "OAS_AGENT": soul,
            "OAS_SOUL": soul_dir, "OAS_CONTEXT": repo, "OAS_WORKSPACE": workspace,
            "OAS_TEAM_NAME": (team or {}).get("name", ""), "OAS_TEAM_ID": (team or {}).get("id", ""),
            "OAS_TEAM_SCOPE": (team or {}).get("scope", "")}
    env: Dict[str, str] = dict(base, OAS_ROOT="", OAS_TASK=task, OAS_REPO=repo, OAS_BRANCH=branch,
                               OAS_WORK=str(work), OAS_RUNTIME=str(runtime),
                               OAS_KIND=kind)
    hooks = run_hooks("spawn", caps, env, home, {})
    warnings += scaffold_warnings + hooks["warnings"]
    warnings[:0] = runtime_warnings(caps)
    required = [f for f in hooks["failures"] if f["required"]]
    if required:
        _roll_back(home, instance, soul, repo, branch, work, canonical, caps, dict(base, OAS_ROOT=root), hooks,
                   required)
    briefs = "".join("\n" + b for b in hooks["briefs"])
    ci.write_file(os.path.join(home, "TASK.md"), _task_md(instance, soul, home, work, repo, branch, opts.work_dir, team,
                                                   briefs, task))
    relation = lineage["relation"]
    doc: Dict[str, Any] = {
        "agent": soul, "kind": env["OAS_KIND"], "instance": instance, "home": home, "repo": repo, "work": work,
        "branch": branch or None, "runtime": runtime, "model": model or None, "team": team,
        "parentInstance": lineage["parentInstance"], "siblingInstance": lineage["siblingInstance"],
        "relation": relation, "relativeTo": lineage["relativeTo"] if relation else None,
        "spawnOrigin": "instance" if relation or lineage["parentInstance"] else "operator",
        "capabilityMeta": hooks["meta"] or None,
        "layers": {layer: p["provenance"] for layer, p in outcome.result["layers"].items() if p.get("provenance")}
        or None,
        "capabilities": [{"id": c["id"], "layer": c["layer"], "command": c["command"], "origin": c["origin"],
                          "level": levels.get(c["id"]) or c["origin"].split(":", 1)[1], "settings": c["settings"],
                          "provenance": c["provenance"],
                          "skills": [os.path.join(found[c["id"]][2], s) for s in found[c["id"]][0].skills],
                          "hooks": [h.event for h in found[c["id"]][0].hooks] if c["trust"]["trusted"] else [],
                          "trusted": c["trust"]["trusted"]}
                         for c in outcome.result["capabilities"]],
        "skills": [{"name": n, "source": s} for n, s, _p in skills],
        "instructions": [{"source": b["source"], "file": b["file"]} for b in blocks],
        "composition": _composition(soul_dir, outcome, found, skills, blocks, runtime_packages, str(runtime), home,
                                    levels, own, provider is not None),
        "capabilityRuntime": _kernel_runtime(caps),
        "tmux": {"session": TMUX_SESSION, "window": instance},
        "command": launch_command(str(runtime), instance, home, model, repo, hooks["launch"].get(str(runtime), "")),
        "composedBy": "agentrc", "createdAt": _now(),
    }
    doc = {k: v for k, v in doc.items() if v is not None}
    ci.write_file(os.path.join(home, INSTANCE_FILE), ci.json_bytes(doc))
    if relation == "parent" and lineage["anchorDoc"] is not None:
        # Last, as the kernel: the anchor now sits below the new instance.
        anchor = dict(lineage["anchorDoc"], parentInstance=instance)
        anchor.pop("siblingInstance", None)
        try:
            ci.write_file(lineage["anchorPath"], ci.json_bytes(anchor))
        except OSError as exc:
            failed = [{"capability": "oas.kernel", "event": "spawn", "required": True,
                       "message": f"relation parent: failed to re-point anchor {lineage['relativeTo']!r} ({exc})"}]
            _roll_back(home, instance, soul, repo, branch, work, canonical, caps, dict(base, OAS_ROOT=root), hooks,
                       failed)
    result = {"instance": instance, "agent": soul, "home": home, "work": work, "branch": branch or None,
              "launched": False, "warnings": warnings, "tmux": doc["tmux"], "repo": repo, "runtime": runtime,
              "model": model or None,
              "parent": doc.get("parentInstance"), "sibling": doc.get("siblingInstance"), "relation": relation,
              "spawnOrigin": doc["spawnOrigin"], "attach": f"tmux attach -t {TMUX_SESSION}", "skills": doc["skills"],
              "instructions": doc["instructions"]}
    links = "".join(f", {label} {doc[key]}" for label, key in (("parent", "parentInstance"),
                                                              ("sibling", "siblingInstance")) if doc.get(key))
    lines = [f"Spawned {instance} ({work}{f', branch {branch}' if branch else ''}{links}), not launched",
             f"  home: {home}"]
    lines += [f"  WARNING: {w}" for w in warnings]
    return capinstall.noted(Outcome(result, lines), held.notes)


STAGE = re.compile(r"\..+\.agentrc-[a-z0-9_]{8}", re.DOTALL)  # `tempfile.mkdtemp(prefix=".<name>.agentrc-")`


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


def _stage_home(instances: str, soul: str, purpose: str, soul_dir: str, text: str,
                skills: List[Tuple[str, str, str]], work_target: str) -> Tuple[str, str]:
    """The instance home made in a staging directory beside it and renamed into place,
    under the instances directory's lock: (instance name, home)."""
    instance = _instance_name(instances, soul, purpose)
    home = os.path.join(instances, instance)
    stage = tempfile.mkdtemp(prefix=f".{instance}.agentrc-", dir=instances)
    try:
        os.symlink(soul_dir, os.path.join(stage, "soul"))
        ci.write_file(os.path.join(stage, "AGENTS.md"), text.encode("utf-8"))
        os.symlink("AGENTS.md", os.path.join(stage, "CLAUDE.md"))
        os.makedirs(os.path.join(stage, ".agents", "skills"))
        os.makedirs(os.path.join(stage, ".claude"))
        for name, _source, src in skills:
            _copy_skill(os.path.realpath(src), os.path.join(stage, ".agents", "skills", name))
        os.symlink(os.path.join("..", ".agents", "skills"), os.path.join(stage, ".claude", "skills"))
        if work_target:
            os.symlink(work_target, os.path.join(stage, "work"))
        os.chmod(stage, 0o755)
        for _attempt in range(100):
            try:
                os.rename(stage, home)  # fails when another spawn took the name meanwhile
                break
            except OSError:
                if not os.path.lexists(home):
                    raise
                instance = _instance_name(instances, soul, purpose)
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


def _roll_back(home: str, instance: str, soul: str, repo: str, branch: str, work: str, canonical: str,
               caps: List[Dict[str, Any]], env: Dict[str, str], hooks: Dict[str, Any],
               required: List[Dict[str, Any]]) -> None:
    """A required spawn hook failed: compensate (retire hooks, reverse order; then, for a
    worktree, the worktree and its branch removed and verified), then remove the home, or
    keep it with the cleanup descriptor when compensation did not finish. Raises."""
    incomplete: List[str] = []
    outstanding: List[str] = []
    comp = run_hooks("retire", list(reversed(caps)), env, home, hooks["meta"])
    for f in comp["failures"]:
        incomplete.append(f"retire hook {f['capability']}: {f['message']}")
        outstanding.append(f["capability"])
    for cid, m in comp["meta"].items():
        if isinstance(m, dict) and m.get("retired") is False and m.get("reason") != "nothing-to-delete":
            incomplete.append(f"retire hook {cid}: reported incomplete cleanup"
                              f"{' (' + str(m['reason']) + ')' if m.get('reason') else ''} — external state may remain")
            outstanding.append(cid)
    git_debt: List[str] = []
    if work == "worktree":
        more, git_debt = ci.git_cleanup(repo, os.path.join(home, "work"), canonical, branch)
        incomplete += more
    for f in required:
        cap = next((c for c in caps if c["id"] == f["capability"]), None)
        if cap is None or cap["hooks"].get("retire") or not hooks["meta"].get(f["capability"]):
            continue
        incomplete.append(f"{f['capability']}: its {f['event']} hook is declared required and reported state it "
                          "created, but the capability declares no retire hook, so nothing can undo it")
        outstanding.append(f["capability"])
    if incomplete and not outstanding and not git_debt:
        outstanding = [c["id"] for c in caps if c["hooks"].get("retire")]
    detail = "; ".join(f"{f['capability']} {f['event']} hook (declared required): {f['message']}" for f in required)
    d = Diagnostics()
    if incomplete:
        cleanup: Dict[str, Any] = {
            "version": CLEANUP_VERSION, "repo": repo, "work": work, "branch": branch,
            "outstanding": {"hooks": list(dict.fromkeys(outstanding)), "git": git_debt},
            "capabilityRuntime": _kernel_runtime(caps), "capabilityMeta": hooks["meta"]}
        if not branch:
            del cleanup["branch"]
        marker: Dict[str, Any] = {
            "instance": instance, "agent": soul,
            "reason": "required spawn hook failed and compensation did not complete",
            "failed": [{"capability": f["capability"], "event": f["event"]} for f in required],
            "incomplete": incomplete, "retainedFor": "credentials/metadata needed to retry cleanup",
            "cleanup": cleanup, "createdAt": _now(),
        }
        try:
            ci.write_file(os.path.join(home, MARKER), ci.json_bytes(marker))
        except OSError:
            pass  # the quarantine stands without its marker
        d.error(home, (0, 0), "AR173", f"{detail}; rollback INCOMPLETE: the home is kept at {home} (it holds what the "
                f"cleanup needs; not a live instance); retry with `agentrc cap retire {instance}`. Outstanding: "
                + "; ".join(incomplete))
    else:
        shutil.rmtree(home, ignore_errors=True)
        gone = "" if not os.path.lexists(home) else f"; rollback INCOMPLETE, remove {home} by hand"
        d.error(home, (0, 0), "AR173", f"{detail}; the spawn was rolled back{gone}")
    raise Failure(d.items, "E_SPAWN_FAILED")


# --- retire -------------------------------------------------------------------------------


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


def usable_descriptor(marker: Any) -> bool:
    """The cleanup contract (version 1), checked to the depth a retry consumes it."""
    def text(v: Any) -> bool:
        return isinstance(v, str) and bool(v.strip())

    c = marker.get("cleanup") if isinstance(marker, dict) else None
    if not isinstance(c, dict) or c.get("version") != CLEANUP_VERSION or type(c.get("version")) is not int:
        return False
    if not text(c.get("repo")) or c.get("work") not in WORK_MODES:
        return False
    if c.get("work") == "worktree" and not text(c.get("branch")):
        return False
    if "branch" in c and c["branch"] is not None and not text(c["branch"]):
        return False
    if "capabilityMeta" in c and not isinstance(c["capabilityMeta"], dict):
        return False
    runtime = c.get("capabilityRuntime")
    if not isinstance(runtime, list) or not runtime or not all(isinstance(r, dict) and text(r.get("id"))
                                                               for r in runtime):
        return False
    out = c.get("outstanding")
    if not isinstance(out, dict) or not isinstance(out.get("hooks"), list) or not isinstance(out.get("git"), list):
        return False
    if not all(text(h) for h in out["hooks"]) or not all(g in GIT_DEBT for g in out["git"]):
        return False
    if out["git"] and c["work"] != "worktree":
        return False
    if not out["hooks"] and not out["git"]:
        return False
    return all(h in {r["id"] for r in runtime} for h in out["hooks"])


def retire(scope: str, name: str, force: bool = False, delete_branch: bool = False) -> Outcome:
    """Retire instance `name`: retire hooks, lineage spliced, the worktree removed (and with
    `delete_branch` its branch), then the home removed. Raises Failure (AR177: no such
    instance; AR175: E_UNIDENTIFIED_INSTANCE_HOME). A quarantine retry that cannot prove its
    cleanup keeps the home and returns a failed Outcome (AR176); with `force` the home goes
    and `forcedIncomplete` lists what the operator now owns."""
    scope = os.path.abspath(scope)
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
    recorded = [r["id"] for r in meta.get("capabilityRuntime") or [] if isinstance(r, dict) and isinstance(r.get("id"),
                                                                                                          str)]
    hook_results: Optional[Dict[str, Any]] = None
    warnings: List[str] = []
    repo = meta.get("repo") if isinstance(meta.get("repo"), str) else ""
    if repo and os.path.isdir(repo):
        # The hooks of the recorded capabilities as they resolve (and are trusted) now;
        # never a command string read from the home.
        team: Optional[Dict[str, str]] = None
        try:
            outcome = capdoctor.doctor(repo, agent, any_soul=True)
            chain = capdoctor.config_chain(repo)
            found = capdoctor.acquired(chain)
            team = ci.team_of(chain)
            current = {c["id"]: c for c in _runtime_caps(outcome, found, _binding_levels(repo, agent, chain, found))}
        except Failure as exc:
            current = {}
            warnings.append("the capabilities could not be resolved: " + "; ".join(d.message for d in exc.diagnostics))
        caps = [current[cid] for cid in recorded if cid in current]
        prior: Dict[str, Any] = meta["capabilityMeta"] if isinstance(meta.get("capabilityMeta"), dict) else {}
        env = {"OAS_INSTANCE": name, "OAS_INSTANCE_HOME": home, "OAS_HOME": home, "OAS_AGENT": agent,
               "OAS_ROOT": root, "OAS_SOUL": os.path.join(os.path.dirname(os.path.dirname(home)), "soul"),
               "OAS_CONTEXT": repo, "OAS_WORKSPACE": os.path.dirname(root),
               "OAS_TEAM_NAME": (team or {}).get("name", ""), "OAS_TEAM_ID": (team or {}).get("id", ""),
               "OAS_TEAM_SCOPE": (team or {}).get("scope", "")}
        hook_results = run_hooks("retire", list(reversed(caps)), env, home, prior)
        warnings += hook_results["warnings"]
    work_path = os.path.join(home, "work")
    worktree = meta.get("work") == "worktree" or (os.path.isdir(work_path) and not os.path.islink(work_path))
    where = repo if repo and os.path.isdir(repo) else os.path.dirname(root)
    relinked = ci.relink(ci.roots_of(root, ci.team_of_dir(where)), name, home, meta)
    branch = str(meta["branch"]) if isinstance(meta.get("branch"), str) else ""
    canonical = os.path.realpath(work_path)
    worktree_removed = worktree
    branch_deleted = False
    if worktree and repo:
        # As the kernel, then verified: a worktree git still lists (a locked one) or a branch
        # still there is reported, not claimed removed.
        ci.git_run(repo, "worktree", "remove", "--force", work_path)
        ci.git_run(repo, "worktree", "prune")
        listed, why = ci.worktree_registered(repo, canonical)
        if listed is not False:
            worktree_removed = False
            warnings.append(f"git worktree {canonical}: still registered after `git worktree remove --force` "
                            f"({why or 'locked?'}); the home is removed anyway: run `git worktree unlock` and `git "
                            f"worktree prune` in {repo}")
        if delete_branch and branch:
            ci.git_run(repo, "branch", "-D", branch)
            exists, why = ci.branch_exists(repo, branch)
            branch_deleted = exists is False
            if not branch_deleted:
                warnings.append(f"git branch {branch}: not deleted ({why or 'still exists'})")
    still: Optional[List[str]] = None
    if quarantine is not None:
        failures = [f"retire hook {f['capability']}: {f['message']}" for f in (hook_results or {}).get("failures", [])]
        if meta.get("work") == "worktree" and repo:
            # The quarantine may exist because the git steps failed: redo and verify them.
            more, debt = ci.git_cleanup(repo, work_path, canonical, branch)
            failures += more
            branch_deleted = branch_deleted or bool(branch and "branch" not in debt)
        for cid, m in (hook_results or {}).get("meta", {}).items():
            if isinstance(m, dict) and m.get("retired") is False and m.get("reason") != "nothing-to-delete":
                failures.append(f"retire hook {cid}: reported incomplete cleanup"
                                f"{' (' + str(m['reason']) + ')' if m.get('reason') else ''}")
        git_debt = quarantine["cleanup"]["outstanding"]["git"]
        if git_debt and not (meta.get("work") == "worktree" and repo):
            failures.append(f"git {', '.join(git_debt)}: not re-verified on this retry, so the cleanup they owed "
                            "is unverified")
        ran = set((hook_results or {}).get("order", []))
        for cid in quarantine["cleanup"]["outstanding"]["hooks"]:
            if cid not in ran:
                failures.append(f"retire hook {cid}: did not run on this retry (not active, not trusted, or it "
                                "declares no retire hook), so the cleanup it owed is unverified")
        if hook_results is None:
            failures.append("retire hooks could not be rerun (the cleanup descriptor's repository is gone)")
        if failures:
            still = failures
            try:
                ci.write_file(os.path.join(home, MARKER), ci.json_bytes({**quarantine, "incomplete": failures,
                                                                "lastRetryAt": _now()}))
            except OSError:
                pass
    forced = bool(still and force)
    removed = False
    if not still or forced:
        shutil.rmtree(home)
        removed = True
    result: Dict[str, Any] = {"retired": name, "agent": agent, "worktreeRemoved": worktree_removed,
                              "branchDeleted": branch_deleted, "removedDir": removed, "harvested": []}
    if still and not forced:
        result["rollbackIncomplete"] = still
        result["retainedHome"] = home
    if forced:
        result["forcedIncomplete"] = still
    if relinked:
        result["relinked"] = relinked
    if hook_results is not None:
        result["capabilityMeta"] = hook_results["meta"]
    if warnings:
        result["warnings"] = warnings
    lines: List[str] = []
    diags: Tuple[Any, ...] = ()
    if forced:
        lines.append(f"Removed {name} under --force with cleanup INCOMPLETE; this external state was NOT cleaned up "
                     "and is now yours to remove by hand:")
        lines += [f"  {f}" for f in still or []]
    elif still:
        d = Diagnostics()
        d.error(home, (0, 0), "AR176", f"cleanup for {name} is INCOMPLETE; the home is kept at {home}: "
                + "; ".join(still))
        diags = tuple(d.items)
    else:
        lines.append(f"Retired {name} (agent {agent})")
        lines += [f"  relinked {r['instance']}: parent {r.get('parentInstance', '-')}, sibling "
                  f"{r.get('siblingInstance', '-')}" for r in relinked]
    return Outcome(result, lines, diags, failed=bool(still and not forced))
