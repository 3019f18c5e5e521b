"""The lifecycle hooks of a spawn and a retire (spec 003, hooks), as the OAS kernel runs them,
and the record of each active capability's runtime that instance.json keeps.

Hooks are `node <script> [args]` with the script inside the capability root (links resolved),
run without a shell, cwd the home, with the `OAS_*` environment; the last stdout line may be
JSON with `meta`, `brief`, `warning` and `launch`. Only a trusted capability has hooks to run
(`runtime_caps`); retire runs the hooks of the capabilities a home records as they resolve and
are trusted now, never a command string read from the home.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from agentrc.capabilities import activation
from agentrc.capops import doctor as capdoctor
from agentrc.capops import reqs as capreqs
from agentrc.capops.install import Outcome
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

HOOK_TIMEOUT = 120
MAX_HOOK_OUTPUT = 1 << 20


def inside(parent: str, child: str) -> bool:
    return captree.inside(os.path.realpath(parent), os.path.realpath(child))


def shq(s: str) -> str:
    """`s` quoted for a POSIX shell, as the kernel quotes what it records."""
    return "'" + s.replace("'", "'\\''") + "'"


def hook_argv(cdir: str, command: str) -> Optional[List[str]]:
    """`node <script> [args]` for a hook command, or None when the script is not a regular
    file inside the capability root once links are resolved."""
    parts = command.split()
    if not parts:
        return None
    script = os.path.join(cdir, parts[0])
    real = os.path.realpath(script)
    if not inside(cdir, real) or not os.path.isfile(real):
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
        stdout, ok, detail = _run_hook(argv, home, _hook_env(event, cap, env, prior))
        _collect(out, cap["id"], event, required, _last_json(stdout), ok, detail)
    return out


def _hook_env(event: str, cap: Dict[str, Any], env: Dict[str, str], prior: Dict[str, Any]) -> Dict[str, str]:
    hook_env = dict(os.environ)
    hook_env.update(env)
    hook_env.update({"OAS_EVENT": event, "OAS_CAPABILITY": cap["id"], "OAS_LAYER": cap.get("layer") or "",
                     "OAS_LEVEL": cap.get("level") or "",
                     "OAS_SETTINGS": json.dumps(cap.get("settings") or {}, separators=(",", ":")),
                     "OAS_META": json.dumps(prior.get(cap["id"]) or {}, separators=(",", ":"))})
    return hook_env


def _run_hook(argv: List[str], home: str, env: Dict[str, str]) -> Tuple[str, bool, str]:
    """(stdout, succeeded, what went wrong) of one hook run, bounded in time and output."""
    try:
        proc = subprocess.run(argv, cwd=home, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=HOOK_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "", False, f"timed out after {HOOK_TIMEOUT}s"
    except OSError as exc:
        return "", False, str(exc)[:200]
    stdout = proc.stdout[:MAX_HOOK_OUTPUT].decode("utf-8", "replace")
    return stdout, proc.returncode == 0, f"exit {proc.returncode}: " + \
        proc.stderr[:2000].decode("utf-8", "replace").strip()[:200]


def _last_json(stdout: str) -> Dict[str, Any]:
    """The hook's last stdout line read as a JSON object, else {}."""
    lines = [ln for ln in stdout.strip().split("\n") if ln]
    try:
        last = json.loads(lines[-1]) if lines else {}
    except ValueError:
        last = {}
    return last if isinstance(last, dict) else {}


def _collect(out: Dict[str, Any], cid: str, event: str, required: bool, last: Dict[str, Any], ok: bool,
             detail: str) -> None:
    """One hook's result added to `out`: its meta always; its brief, warning and launch
    arguments when it succeeded, else a failure (its own warning as the detail)."""
    if last.get("meta"):
        out["meta"][cid] = last["meta"]
    if ok:
        if isinstance(last.get("brief"), str) and last["brief"]:
            out["briefs"].append(f"- {last['brief']}")
        if isinstance(last.get("warning"), str) and last["warning"]:
            out["warnings"].append(last["warning"])
        if isinstance(last.get("launch"), dict):
            for rt, args in last["launch"].items():
                if isinstance(args, str) and args:
                    out["launch"][rt] = f"{out['launch'][rt]} {args}" if rt in out["launch"] else args
        return
    if isinstance(last.get("warning"), str) and last["warning"].strip():
        detail = last["warning"].strip()
    out["warnings"].append(f"{cid} {event} hook failed (continuing): {detail}")
    out["failures"].append({"capability": cid, "event": event, "message": detail, "required": required})


def unfinished(meta: Dict[str, Any], suffix: str = "") -> List[Tuple[str, str]]:
    """(capability, message) for each retire hook that exited 0 but reported it did not
    finish (`retired: false`, unless there was nothing to delete)."""
    return [(cid, f"retire hook {cid}: reported incomplete cleanup"
                  f"{' (' + str(m['reason']) + ')' if m.get('reason') else ''}{suffix}")
            for cid, m in meta.items()
            if isinstance(m, dict) and m.get("retired") is False and m.get("reason") != "nothing-to-delete"]


def binding_levels(context: str, soul: str, chain: List[Any],
                   found: Dict[str, Tuple[Any, str, str]]) -> Dict[str, str]:
    """The scope of the binding that activated each capability (the kernel's `level`)."""
    stype = capdoctor.soul_type(context, soul) or ""
    result = activation.resolve(chain, soul, stype, {c: (cap, o) for c, (cap, o, _d) in found.items()}, Diagnostics())
    return {a.id: a.level for a in result.capabilities}


def runtime_caps(outcome: Outcome, found: Dict[str, Tuple[Any, str, str]],
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


def kernel_runtime(caps: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The `capabilityRuntime` rows as the kernel writes them (hook commands as node lines)."""
    rows = []
    for c in caps:
        hooks = {}
        for ev, command in c["hooks"].items():
            argv = hook_argv(c["dir"], command)
            if argv:
                hooks[ev] = " ".join(["node", shq(argv[1]), *argv[2:]])
        rows.append({"id": c["id"], "layer": c["layer"], "level": c["level"], "settings": c["settings"],
                     "hooks": hooks, "requiredHooks": c["requiredHooks"], "missingRequires": c.get("missing") or [],
                     "trust": {"trusted": c["trusted"]}, "executable": c["executable"]})
    return rows
