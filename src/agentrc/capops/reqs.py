"""Requirements of active capabilities (spec 003 `requires`): bare `agentrc cap install`'s
consent gate, and `agentrc cap spawn`'s check of runtime packages, as the OAS kernel does.

Two kinds. A host command is satisfied by an executable on PATH; its manifest can give
documentation (`install`), never a recipe, so agentrc (like the kernel) has no install plan
for one and only reports it. A runtime package (`runtime` + `package`, optionally
`marketplace`) is satisfied by that runtime's own package list, never by PATH: Claude Code's
`claude plugin list --json` (a user-scope row, or a project-scope row whose project holds the
scope; present, with its install directory on disk, and enabled), pi's `pi list
--no-approve`. Its identity is `<runtime>:<package>` with pi's version selector left out, so
`@latest` and a pinned version are one requirement; it is raised only when a soul the
capability is active for runs that runtime (soul.yaml `runtime:`, default pi), or when it is
named with `--accept-requirement`.

The plan of a runtime package is a sequence of argv (no shell): Claude registers the
marketplace first (`claude plugin marketplace add SOURCE`), then `claude plugin install
PLUGIN@MARKETPLACE`; every step is shown before anything runs, since agreeing to a plugin is
agreeing to its source. A step runs only with consent: `--accept-requirement NAME`, or `y`
at the prompt of an interactive run; `--no-requirements` skips the gate (not its safety
checks: a package spec or marketplace that is not a plain token, or two capabilities asking
one package with different plans, fail either way). After the steps, the runtime's list
must show the package. Spawn never installs: a missing, uninstalled or disabled package
fails it with the command that consents to installing it and the steps it would run.

The Claude executable is the one the kernel would launch: the first line of the closest
`oas-claude-config` above the scope (a plain executable name), else `claude`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

from agentrc.capabilities import activation
from agentrc.capabilities.integrity import UnorderableName, collation_key
from agentrc.capabilities.model import Capability, Requirement
from agentrc.capops import doctor as capdoctor
from agentrc.capops.install import Failure
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Sequence, Set, Tuple

SAFE_COMMAND = pattern(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_SPECS = {"pi": pattern(r"[a-z][a-z0-9+.-]*:(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*(@[\w.^~><=-]+)?", re.I | re.A),
          "claude": pattern(r"[a-z0-9][\w.-]*@[a-z0-9][\w.-]*", re.I | re.A)}
_SOURCE_REF = pattern(r"[a-z0-9][\w.-]*(/[a-z0-9][\w.-]*)*", re.I | re.A)
_SCOPES = {"pi": "user-level (pi packages)", "claude": "user-level (Claude Code plugins)"}
_NOT_SAFE = "requirement command is not a safe executable name (no paths, whitespace, dashes-first, or shell syntax)"
CLAUDE_CONFIG = "oas-claude-config"
LIST_TIMEOUT = 60.0
STEP_TIMEOUT = 600.0

if TYPE_CHECKING:
    Say = Callable[[str], None]


# --- runtime packages ------------------------------------------------------------------


def spec_identity(spec: str) -> str:
    """A package spec without its version selector: `npm:@a/b@1` -> `npm:@a/b`."""
    s = spec.strip()
    colon = s.find(":")
    prefix, rest = (s[:colon + 1], s[colon + 1:]) if colon > 0 else ("", s)
    if not rest:
        return s
    scoped = rest.startswith("@")
    body = rest[1:] if scoped else rest
    at = body.find("@")
    return prefix + ("@" if scoped else "") + (body[:at] if at >= 0 else body)


def identity(runtime: str, spec: str) -> str:
    """The package's identity in its runtime's naming (a Claude plugin id keeps its
    `@marketplace`, which names its source, not a version)."""
    return spec.strip() if runtime == "claude" else spec_identity(spec)


def name_of(r: Requirement) -> str:
    """The name `--accept-requirement` takes: the command, or `<runtime>:<identity>`."""
    return f"{r.runtime}:{identity(r.runtime, r.package)}" if r.runtime else r.command


def invalid(r: Requirement) -> str:
    """Why a runtime-package requirement can never be planned ("" when it can)."""
    if not _SPECS[r.runtime].fullmatch(r.package):
        return f"runtime package spec is not a plain source token for {r.runtime}: {json.dumps(r.package)}"
    if r.marketplace and not _SOURCE_REF.fullmatch(r.marketplace):
        return f"marketplace is not a plain source reference: {json.dumps(r.marketplace, ensure_ascii=False)}"
    return ""


def claude_binary(context: str) -> str:
    """The Claude executable for `context`: the closest `oas-claude-config`'s first line, when
    it is a plain executable name, else `claude`."""
    d = os.path.abspath(context)
    while True:
        raw = captree.read_manifest(d, CLAUDE_CONFIG) if os.path.isfile(os.path.join(d, CLAUDE_CONFIG)) else None
        if raw is not None:
            lines = [x.strip() for x in raw.decode("utf-8", "replace").splitlines()]
            name = next((x for x in lines if x and not x.startswith("#")), "")
            if name:
                return name if SAFE_COMMAND.fullmatch(name) else "claude"
        parent = os.path.dirname(d)
        if parent == d:
            return "claude"
        d = parent


def steps(r: Requirement, claude: str = "claude") -> List[List[str]]:
    """The argv of every step that installs `r`, in order."""
    if r.runtime == "claude":
        return ([[claude, "plugin", "marketplace", "add", r.marketplace]] if r.marketplace else []) + \
            [[claude, "plugin", "install", r.package]]
    return [["pi", "install", r.package]]


def plan(r: Requirement, claude: str = "claude") -> Dict[str, Any]:
    """The install plan of a runtime package, in the shape of the kernel's JSON."""
    todo = steps(r, claude)
    version = None
    if r.runtime == "pi":
        m = re.fullmatch(r"@(.+)", r.package[len(spec_identity(r.package)):], re.S)
        version = m.group(1) if m else None
    return {"manager": r.runtime, "argv": todo[-1], "steps": todo, "source": f"{r.runtime} package ({r.package})",
            "version": version, "scope": _SCOPES[r.runtime]}


def shown(todo: Sequence[Sequence[str]]) -> str:
    return "  &&  ".join(" ".join(a) for a in todo)


def _run(argv: Sequence[str], cwd: str, timeout: float, out=subprocess.PIPE) -> Tuple[int, bytes]:
    try:
        proc = subprocess.run(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.DEVNULL if out == subprocess.PIPE else out, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return -1, b""
    return proc.returncode, proc.stdout or b""


def _under(path: str, owner: str) -> bool:
    return path == owner or path.startswith(owner.rstrip(os.sep) + os.sep)


def runtime_rows(runtime: str, context: str, claude: str = "claude") -> List[Dict[str, Any]]:
    """The packages `runtime` reports installed for `context`: {source, enabled, dir, present}
    (`present`: the runtime confirms it without naming a directory; `unverified`: only its
    settings say so)."""
    if runtime == "claude":
        code, out = _run([claude, "plugin", "list", "--json"], context, LIST_TIMEOUT)
        try:
            rows = json.loads(out) if code == 0 else []
        except ValueError:
            rows = []
        if not isinstance(rows, list):
            return []
        target = os.path.realpath(context)
        kept = []
        for r in rows:
            if not isinstance(r, dict) or not isinstance(r.get("id"), str):
                continue
            project = r.get("projectPath")
            if r.get("scope") != "user" and not (isinstance(project, str) and project
                                                 and _under(target, os.path.realpath(project))):
                continue  # another project's plugin does not serve this scope
            where = r.get("installPath") if isinstance(r.get("installPath"), str) else ""
            kept.append({"source": r["id"], "enabled": r.get("enabled") is not False, "dir": where,
                         "present": not where})
        return kept
    code, out = _run(["pi", "list", "--no-approve"], context, LIST_TIMEOUT)
    if code == 0:
        lines = re.sub(r"\x1b\[[0-9;]*m", "", out.decode("utf-8", "replace")).split("\n")
        found = []
        for i, line in enumerate(lines):
            m = re.fullmatch(r" {2}(\S+)(\s+\(filtered\))?\s*", line)
            if not m:
                continue
            below = re.fullmatch(r" {4,}(\S.*)", lines[i + 1]) if i + 1 < len(lines) else None
            found.append({"source": m.group(1), "enabled": True, "dir": below.group(1).strip() if below else "",
                          "present": False})
        return found
    home = os.environ.get("PI_CODING_AGENT_DIR") or os.path.join(os.environ.get("HOME", ""), ".pi", "agent")
    raw = captree.read_manifest(home, "settings.json") if os.path.isdir(home) else None
    try:
        doc = json.loads(raw) if raw else {}
    except ValueError:
        doc = {}
    packages = doc.get("packages") if isinstance(doc, dict) else None
    sources = [p if isinstance(p, str) else p.get("source") for p in packages or []
               if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("source"), str))]
    return [{"source": s, "enabled": True, "dir": "", "present": False, "unverified": "could not run `pi list`"}
            for s in sources]


class Lists:
    """The runtimes' package lists, asked once per (runtime, executable, scope)."""

    def __init__(self) -> None:
        self._rows: Dict[Tuple[str, str, str], List[Dict[str, Any]]] = {}

    def status(self, r: Requirement, context: str, claude: str) -> Dict[str, Any]:
        key = (r.runtime, claude, os.path.abspath(context))
        if key not in self._rows:
            self._rows[key] = runtime_rows(r.runtime, context, claude)
        want = identity(r.runtime, r.package)
        row = next((x for x in self._rows[key] if identity(r.runtime, x["source"]) == want), None)
        if row is None:
            return {"installed": False}
        return {"installed": True, "dir": row["dir"], "unverified": row.get("unverified", ""),
                "missing": not row["present"] and (not row["dir"] or not os.path.exists(row["dir"])),
                "disabled": not row["enabled"]}

    def usable(self, r: Requirement, context: str, claude: str) -> bool:
        s = self.status(r, context, claude)
        return s["installed"] and not s["unverified"] and not s["missing"] and not s["disabled"]

    def forget(self) -> None:
        self._rows.clear()


# --- the install gate ------------------------------------------------------------------


def _active(scope: str) -> Tuple[Dict[str, Capability], Dict[str, List[Tuple[str, str]]]]:
    """Capabilities active at `scope` for no soul or any soul below it, and for each the
    souls it is active for with their runtimes."""
    active: Dict[str, Capability] = {}
    souls: Dict[str, List[Tuple[str, str]]] = {}
    for soul in [""] + capdoctor.souls(scope):
        try:
            chain = capdoctor.config_chain(scope)
            found = capdoctor.acquired(chain)
            stype = (capdoctor.soul_type(scope, soul) or "") if soul else ""
            result = activation.resolve(chain, soul, stype, {c: (cap, o) for c, (cap, o, _d) in found.items()},
                                        Diagnostics())
        except Failure:
            continue
        runtime = (capdoctor.soul_field(scope, soul, "runtime") or "pi") if soul else ""
        for a in result.capabilities:
            active.setdefault(a.id, found[a.id][0])
            if soul:
                souls.setdefault(a.id, []).append((soul, runtime))
    return active, souls


def _order(command: str):
    try:
        return (0, collation_key(command), command)
    except UnorderableName:
        return (1, ((), ()), command)


def missing(scope: str, accepted: Set[str], lists: Lists) -> List[Dict[str, Any]]:
    """The requirements of active capabilities the host lacks, one entry per name (the
    kernel's aggregate): `plan` (None when there is none), `requestedBy`, and `invalid` or
    `conflict` for what can never be consented to."""
    scope = os.path.abspath(scope)
    active, souls = _active(scope)
    claude = claude_binary(scope)
    by: Dict[str, Dict[str, Any]] = {}

    def requester(entry: Dict[str, Any], row: Dict[str, Any]) -> None:
        if not any(x["capability"] == row["capability"] and x["scope"] == row["scope"] for x in entry["requestedBy"]):
            entry["requestedBy"].append(row)

    for cid, cap in active.items():
        for r in cap.requires:
            if r.runtime:
                name = name_of(r)
                bad = invalid(r)
                if bad:
                    e = by.setdefault("\0invalid:" + name, {"kind": "runtime-package", "command": name, "why": r.why,
                                                           "docs": r.install or None, "plan": None, "invalid": bad,
                                                           "requestedBy": []})
                    requester(e, {"capability": cid, "scope": scope})
                    continue
                runtimes = {rt for _s, rt in souls.get(cid, [])}
                if r.runtime not in runtimes and name not in accepted:
                    continue  # no soul it serves runs that runtime: never asked of this host
                if lists.usable(r, scope, claude):
                    continue
                e = by.setdefault(name, {"kind": "runtime-package", "command": name, "runtime": r.runtime,
                                         "package": r.package, "why": r.why, "docs": r.install or None,
                                         "plan": plan(r, claude), "requestedBy": [], "_plans": []})
                e["_plans"].append((plan(r, claude), cid))
                requester(e, {"capability": cid, "scope": scope,
                              "souls": [s for s, rt in souls.get(cid, []) if rt == r.runtime]})
                continue
            if not r.command:
                continue
            if not SAFE_COMMAND.fullmatch(r.command):
                e = by.setdefault("\0invalid:" + r.command, {"command": r.command, "why": r.why,
                                                             "docs": r.install or None, "plan": None,
                                                             "invalid": _NOT_SAFE, "requestedBy": []})
                requester(e, {"capability": cid, "scope": scope})
                continue
            if shutil.which(r.command) is not None:
                continue
            e = by.setdefault(r.command, {"command": r.command, "why": r.why, "docs": r.install or None,
                                          "plan": None, "unavailable": "no install method matches this platform",
                                          "requestedBy": []})
            requester(e, {"capability": cid, "scope": scope})
    for e in by.values():
        plans = e.pop("_plans", [])
        if len({json.dumps(p["steps"]) for p, _c in plans}) > 1:
            e["conflict"] = {"plans": [{"capability": c, "scope": scope, "argv": p["argv"], "steps": p["steps"],
                                        "unavailable": None} for p, c in plans]}
            e["plan"] = None
    return sorted(by.values(), key=lambda e: _order(e["command"]))


def doctor_entries(scope: str) -> List[Dict[str, Any]]:
    """What `cap doctor` reports as `missingHostRequirements` (the kernel's doctor shape):
    each missing requirement with its plan and the command that consents to it."""
    scope = os.path.abspath(scope)
    out = []
    for e in missing(scope, set(), Lists()):
        consentable = e["plan"] is not None and not e.get("invalid") and not e.get("conflict")
        out.append({"command": e["command"], "why": e["why"] or None, "docs": e["docs"],
                    "requestedBy": e["requestedBy"], "plan": e["plan"], "invalid": e.get("invalid"),
                    "conflict": e.get("conflict"), "unavailable": e.get("unavailable"),
                    "consentCommand": f"agentrc cap install --accept-requirement {e['command']} --dir {scope}"
                    if consentable else None})
    return out


def doctor_lines(entries: Sequence[Dict[str, Any]]) -> List[str]:
    """The text `cap doctor` prints for them."""
    if not entries:
        return []
    lines = ["", "Missing requirements (active capabilities):"]
    for e in entries:
        lines.append(f"  {e['command']} — {e['why'] or 'required'} (requested by: "
                     f"{', '.join(x['capability'] for x in e['requestedBy'])})")
        if e["consentCommand"]:
            lines.append(f"    install with consent: {e['consentCommand']}  (runs: {shown(e['plan']['steps'])})")
        elif e["invalid"] or e["conflict"]:
            lines.append(f"    refused: {e['invalid'] or 'capabilities ask for different install plans'}")
        elif e["docs"]:
            lines.append(f"    install docs: {e['docs']}")
    return lines


def _entry(e: Dict[str, Any], outcome: str, **extra: Any) -> Dict[str, Any]:
    """One entry of the `requirements` list of bare install's JSON, as the kernel writes it."""
    return {"command": e["command"], "kind": e.get("kind", "host-command"), "runtime": e.get("runtime"),
            "package": e.get("package"), "why": e["why"] or None, "plan": e["plan"], "requestedBy": e["requestedBy"],
            "docs": e["docs"], "outcome": outcome, **extra}


def _ask() -> bool:
    sys.stdout.write("    Run this install now? [y/N] ")
    sys.stdout.flush()
    try:
        answer = sys.stdin.readline().strip().lower()
    except (OSError, ValueError):
        answer = ""
    return answer in ("y", "yes")


def gate(scope: str, accepted: Sequence[str], skip: bool, say: Say, interactive: bool = False
         ) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], Diagnostics]:
    """Bare install's requirements gate: the entries of its JSON `requirements`, the
    failures among them, and their diagnostics (AR231 refused by policy, AR232 a consented
    install that failed). Runs a plan's steps only with consent."""
    scope = os.path.abspath(scope)
    names = set(accepted)
    lists = Lists()
    found = missing(scope, names, lists)
    d = Diagnostics()
    out: List[Dict[str, Any]] = []
    where = os.path.join(scope, "oas-config.yaml")
    for e in found:
        if e.get("invalid") or e.get("conflict"):
            out.append(_refused(e, where, say, d))
    consentable = [e for e in found if not e.get("invalid") and not e.get("conflict")]
    if skip:
        out += [_entry(e, "skipped", reason="--no-requirements") for e in consentable]
        return out, _failures(scope, out), d
    if consentable:
        say(f"Missing requirements for active capabilities ({len(consentable)}):")
    for e in consentable:
        out.append(_offer(e, scope, names, interactive, lists, where, say, d))
    if consentable:
        say("Consent to install a requirement is separate from trust: it neither activates nor approves a capability.")
    return out, _failures(scope, out), d


def _by(e: Dict[str, Any]) -> str:
    return ", ".join(f"{x['capability']} [{x['scope']}]" for x in e["requestedBy"])


def _refused(e: Dict[str, Any], where: str, say: Say, d: Diagnostics) -> Dict[str, Any]:
    """A requirement refused by policy (AR231): an invalid one, or capabilities asking for
    different install plans of the same command (none is offered)."""
    if e.get("invalid"):
        say(f"  INVALID requirement {json.dumps(e['command'])}: {e['invalid']} (requested by: {_by(e)})")
        d.error(where, (0, 0), "AR231", f"requirement {e['command']} ({_by(e)}): {e['invalid']}")
        return _entry(e, "failed", reason=e["invalid"], code="E_REQUIREMENT_POLICY")
    say(f"  CONFLICT for requirement {e['command']!r}: capabilities ask for different install plans; none "
        "is offered")
    for p in e["conflict"]["plans"]:
        say(f"      {p['capability']}: {shown(p['steps'])}")
    d.error(where, (0, 0), "AR231", f"requirement {e['command']}: {_by(e)} ask for different install plans: "
            + "; ".join(f"{p['capability']}: {shown(p['steps'])}" for p in e["conflict"]["plans"]))
    return _entry(e, "failed", reason="conflicting install plans for the same command",
                  code="E_REQUIREMENT_POLICY", conflict=e["conflict"])


def _offer(e: Dict[str, Any], scope: str, names: Set[str], interactive: bool, lists: "Lists", where: str,
           say: Say, d: Diagnostics) -> Dict[str, Any]:
    """One consentable requirement: skipped without a safe installer or consent, else its
    plan run and the runtime's package list asked again (AR232 when still missing)."""
    say(f"  {e['command']} — {e['why'] or 'required'} (requested by: {_by(e)})")
    if e["plan"] is None:
        reason = e.get("unavailable") or "no safe installer"
        say(f"    no safe installer: {reason}" + (f"; install docs: {e['docs']}" if e["docs"] else ""))
        return _entry(e, "skipped", reason=reason)
    p = e["plan"]
    say(f"    installer: {shown(p['steps'])}  (source: {p['source']}"
        + (f", version {p['version']}" if p["version"] else "") + f"; {p['scope']})")
    if not (e["command"] in names or (interactive and _ask())):
        say(f"    skipped: consent needed; run `agentrc cap install --accept-requirement {e['command']} --dir "
            f"{scope}` to install it")
        return _entry(e, "consent-required")
    reason = ""
    for step in p["steps"]:
        code, _ = _run(step, scope, STEP_TIMEOUT, out=sys.stderr.fileno() if _has_fd() else subprocess.DEVNULL)
        if code != 0:
            reason = f"Command failed: {' '.join(step)}" + (f" (exit {code})" if code > 0 else " (did not run)")
            break
    lists.forget()
    r = Requirement(why=e["why"] or "", runtime=e["runtime"], package=e["package"])
    if not reason and lists.usable(r, scope, claude_binary(scope)):
        say(f"    installed: {e['command']} verified installed for {e['runtime']}")
        return _entry(e, "installed", onPath=True)
    reason = reason or f"install ran but the requirement is still not installed for {e['runtime']}"
    say(f"    FAILED: {reason}")
    d.error(where, (0, 0), "AR232", f"requirement {e['command']}: {reason}")
    return _entry(e, "failed", onPath=False, reason=reason)


def _has_fd() -> bool:
    try:
        sys.stderr.fileno()
        return True
    except (OSError, ValueError, AttributeError):
        return False


def _failures(scope: str, entries: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{"scope": scope, "id": f"requirement {e['command']}", "reason": e.get("reason") or "consented install "
             "failed"} for e in entries if e["outcome"] == "failed"]


# --- spawn -----------------------------------------------------------------------------


def verify_for_spawn(runtime: str, caps: Sequence[Tuple[str, Capability, str]],
                     context: str) -> List[Dict[str, Any]]:
    """Raise Failure (AR230; the kernel's E_RUNTIME_RESOURCE_MISSING, which its spawn
    reports as E_SPAWN_FAILED) when a capability active for an
    instance running on `runtime` requires a package of it that is missing, configured but
    not installed, or disabled; `caps` are (id, manifest, directory). Installs nothing. Returns
    the verified packages as the kernel records them (`composition.materialized.runtimePackages`:
    one row per identity, sorted by it)."""
    context = os.path.abspath(context)
    found: Dict[str, Dict[str, Any]] = {}
    claude = claude_binary(context) if runtime == "claude" else "claude"
    lists = Lists()
    d = Diagnostics()
    for cid, cap, cdir in caps:
        for r in cap.requires:
            if r.runtime != runtime:
                continue
            bad = invalid(r)
            if bad:
                d.error(cdir, (0, 0), "AR230", f"{cid}: {bad}")
                continue
            s = lists.status(r, context, claude)
            remedy = (f"run `agentrc cap install --accept-requirement {name_of(r)} --dir {context}` (or "
                      f"`{' && '.join(' '.join(a) for a in steps(r, claude))}` directly)")
            if not s["installed"]:
                why = "which is not installed"
            elif s["unverified"]:
                why = f"which is configured, but could not be verified installed ({s['unverified']})"
            elif s["missing"]:
                why = f"which {runtime} lists" + (f" at {s['dir']}, where nothing is installed" if s["dir"] else
                                                  " with no installed location")
            elif s["disabled"]:
                d.error(cdir, (0, 0), "AR230", f"{cid} requires the {runtime} package {r.package}, which is installed "
                        f"but disabled, so it will not load: run `{claude} plugin enable {r.package}`, or deactivate "
                        "the capability for this soul")
                continue
            else:
                ident = identity(runtime, r.package)
                found.setdefault(ident, {"capability": cid, "runtime": runtime, "package": r.package,
                                         "dir": s["dir"], "loadedBy": "runtime-discovery"})
                continue
            d.error(cdir, (0, 0), "AR230", f"{cid} requires the {runtime} package {r.package}, {why}: {remedy}")
    if d.has_errors:
        raise Failure(d.items, "E_SPAWN_FAILED")
    return [found[k] for k in sorted(found)]
