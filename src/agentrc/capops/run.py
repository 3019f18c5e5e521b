"""`agentrc cap run NAMESPACE COMMAND [ARGS...]` (spec 003, "Commands and hooks"): an
operational command a capability declares (`"command": "team-chat"`, `"commands": {"auth":
"bin/team-chat.mjs auth"}`), run as the OAS kernel's `oas team-chat auth` runs it.

Enters: a context directory (the scope given with --dir, else the working directory), a
soul (optional), NAMESPACE and what follows it. Leaves: an `Invocation` (what to run, where,
with which environment) or a `Failure` with the kernel's error code; nothing is written.

Checked in the kernel's order, before anything runs:

1. the activation: the capabilities active at the context (with `--soul`, that soul's
   bindings too), or, inside an instance (no --dir, and PI_AGENT_HOME or OAS_HOME naming a
   home with an instance.json), the ones its instance.json records, with their settings, and
   its repository as the context. A config or lock that cannot be resolved, an active
   capability whose artifact drifted included, is E_CONFIG_BROKEN;
2. the namespace: exactly one acquired capability declares it with commands (AR263:
   E_UNKNOWN_COMMAND for none, E_DUPLICATE_NAMESPACE for two);
3. it is active (AR264, E_CAPABILITY_INACTIVE), and its executable surface is trusted
   (AR264, E_CAPABILITY_BLOCKED, with the `agentrc cap trust` that approves it): owned
   capabilities with their scope, installed ones at their locked integrity with provenance
   that agrees and an approval (`health.trust`, the kernel's rule);
4. COMMAND is one of its commands (AR263, E_UNKNOWN_COMMAND; none given: the list);
5. the command's value is a script and its arguments; the script, links resolved, is a
   regular file inside the capability's own directory (AR264, E_CAPABILITY_BROKEN).

Then `node SCRIPT [the value's arguments] [ARGS]` runs, without a shell: SCRIPT an absolute
path (never an option of node), in the directory given (--dir, else the working directory),
stdio inherited, and the
environment agentrc has plus OAS_CAPABILITY, OAS_SETTINGS (the capability's effective
settings as JSON) and OAS_TEAM_NAME, OAS_TEAM_ID, OAS_TEAM_SCOPE. One deliberate difference:
the kernel also sets OAS_CLI_BIN, its own executable, for commands that call back into it;
agentrc is not that program, so it removes an OAS_CLI_BIN it inherited rather than pass on
a path it cannot vouch for.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import field

from agentrc.capabilities.model import CAPABILITY_FILE, Capability
from agentrc.capops import doctor as capdoctor
from agentrc.capops import health
from agentrc.capops import instances as ci
from agentrc.capops import safe as capsafe
from agentrc.capops.install import Failure, fail
from agentrc.classcode import dataclass
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

# Manifest refusals while finding the namespace (a manifest that does not match its schema,
# declares a path out of the capability): the capability is broken, not the config.
_MANIFEST_CODES = ("AR150", "AR154", "AR155", "AR156")


@dataclass(frozen=True)
class Invocation:
    """What `cap run` runs: `argv` (empty when no COMMAND was given: only `commands` is
    listed), in `cwd`, with `env`."""

    capability: str
    namespace: str
    commands: Tuple[str, ...]
    argv: Tuple[str, ...] = ()
    cwd: str = ""
    env: Dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Active:
    """The context's activation: ids, settings by id, the team, the config chain."""

    context: str
    ids: Tuple[str, ...]
    settings: Dict[str, Any]
    team: Optional[Dict[str, str]]
    chain: List[Any]


def prepare(context: str, namespace: str, rest: Sequence[str], soul: str = "",
            environ: Optional[Mapping[str, str]] = None, in_instance: bool = True) -> Invocation:
    """The invocation of `namespace rest[0]` with the arguments `rest[1:]`, checked as the
    module docstring says. Raises Failure. `in_instance`: whether an instance's record
    (PI_AGENT_HOME, OAS_HOME) may decide the activation (not when --dir was given)."""
    env = dict(os.environ if environ is None else environ)
    where = os.path.abspath(context)
    active = _activation(where, soul, env if in_instance else {})
    cid, cap, origin, cdir = _owner(active, namespace)
    if cid not in active.ids:
        raise fail(cdir, "AR264", f"{cid} command namespace {namespace!r} is not active here"
                   f"{' for soul ' + soul if soul else ''}: activate it with `agentrc cap use {cid}`",
                   "E_CAPABILITY_INACTIVE")
    verdict = health.trust(cid, cap, origin, cdir)
    if not verdict.get("trusted"):
        raise fail(cdir, "AR264", f"{cid} executable command is blocked: {_reason(cid, origin, verdict)}",
                   "E_CAPABILITY_BLOCKED")
    names = tuple(n for n, _v in cap.commands)
    if not rest:
        return Invocation(cid, namespace, names)
    sub, args = rest[0], list(rest[1:])
    value = dict(cap.commands).get(sub)
    if value is None:
        raise fail(cdir, "AR263", f"unknown command {sub!r} of namespace {namespace!r} ({cid}); its commands: "
                   f"{', '.join(names) or '(none)'}", "E_UNKNOWN_COMMAND")
    argv = ["node", _script(cid, cdir, namespace, sub, value), *value.split()[1:], *args]
    team = active.team or {}
    env.pop("OAS_CLI_BIN", None)
    env.update({"OAS_CAPABILITY": cid,
                "OAS_SETTINGS": json.dumps(active.settings.get(cid) or {}, separators=(",", ":"), ensure_ascii=False),
                "OAS_TEAM_NAME": str(team.get("name") or ""), "OAS_TEAM_ID": str(team.get("id") or ""),
                "OAS_TEAM_SCOPE": str(team.get("scope") or "")})
    return Invocation(cid, namespace, names, tuple(argv), where, env)


def _activation(context: str, soul: str, env: Mapping[str, str]) -> _Active:
    """What is active, from an instance's record or by resolving the context (E_CONFIG_BROKEN
    when that fails; E_CAPABILITY_BROKEN when a manifest is refused)."""
    home = env.get("PI_AGENT_HOME") or env.get("OAS_HOME") or ""
    record = os.path.join(home, ci.INSTANCE_FILE) if home else ""
    try:
        if record and os.path.lexists(record):
            return _from_instance(record, context)
        outcome = capdoctor.doctor(context, soul, any_soul=True)
        chain = capdoctor.config_chain(context)
        rows = outcome.result["capabilities"]
        return _Active(context, tuple(r["id"] for r in rows), {r["id"]: r["settings"] for r in rows},
                       ci.team_of(chain), chain)
    except Failure as exc:
        raise _regraded(exc) from None


def _regraded(exc: Failure) -> Failure:
    """A failure to resolve the context, with the kernel's code: E_CAPABILITY_BROKEN for a
    manifest refused (AR156 only where the manifest itself declares the path), else
    E_CONFIG_BROKEN."""
    first = next((d for d in exc.diagnostics if d.is_error), None)
    broken = first is not None and first.code in _MANIFEST_CODES and (
        first.code != "AR156" or first.path.endswith(CAPABILITY_FILE))
    return Failure(exc.diagnostics, "E_CAPABILITY_BROKEN" if broken else "E_CONFIG_BROKEN")


def _from_instance(record: str, context: str) -> _Active:
    """The activation an instance's instance.json records (as the kernel reads it there)."""
    _present, meta = ci.read_json(record)
    if not isinstance(meta, dict):
        raise fail(record, "AR264", "the instance record cannot be read (not a regular JSON file holding an object)",
                   "E_CONFIG_BROKEN")
    rows = [c for c in meta.get("capabilities") or [] if isinstance(c, dict) and isinstance(c.get("id"), str)]
    repo = meta.get("repo")
    ctx = repo if isinstance(repo, str) and os.path.isabs(repo) else context
    chain = capdoctor.config_chain(ctx)
    team = meta.get("team") if isinstance(meta.get("team"), dict) else ci.team_of(chain)
    settings = {c["id"]: c.get("settings") if isinstance(c.get("settings"), dict) else {} for c in rows}
    return _Active(ctx, tuple(c["id"] for c in rows), settings, team, chain)


def _owner(active: _Active, namespace: str) -> Tuple[str, Capability, str, str]:
    """(id, capability, origin, directory) of the one acquired capability whose commands
    live under `namespace`."""
    try:
        found = capdoctor.acquired(active.chain)
    except Failure as exc:
        raise _regraded(exc) from None
    owners = sorted(cid for cid, (cap, _o, _d) in found.items() if cap.command == namespace and cap.commands)
    if not owners:
        raise fail(namespace, "AR263", f"unknown command namespace {namespace!r}: no capability acquired in "
                   "this scope's chain declares commands under it", "E_UNKNOWN_COMMAND")
    if len(owners) > 1:
        raise fail(namespace, "AR263", f"duplicate operational command namespace {namespace!r}: "
                   + ", ".join(owners), "E_DUPLICATE_NAMESPACE")
    cap, origin, cdir = found[owners[0]]
    return owners[0], cap, origin, cdir


def _reason(cid: str, origin: str, verdict: Dict[str, Any]) -> str:
    """The trust verdict's reason, with the scope a `cap trust` must name when it is the remedy."""
    reason = str(verdict.get("reason") or "not trusted")
    lock = verdict.get("lock") or {}
    if origin.startswith("installed:") and verdict.get("integrity") == lock.get("integrity") \
            and "cap trust" in reason:
        level = origin.split(":", 1)[1]
        return f"executable commands/hooks need `agentrc cap trust {cid} --dir {level}` (review it first)"
    return reason


def _script(cid: str, cdir: str, namespace: str, sub: str, value: str) -> str:
    """The absolute, resolved path of the command's script: a regular file inside the
    capability's directory (AR264, E_CAPABILITY_BROKEN otherwise)."""
    parts = value.split()
    where = f"{namespace} {sub}"
    if not parts:
        raise fail(cdir, "AR264", f"{where}: the manifest's command must be a non-empty string (got {value!r})",
                   "E_CAPABILITY_BROKEN")
    declared = os.path.join(cdir, parts[0])
    try:
        real = capsafe.real(declared)
        root = capsafe.real(cdir)
    except capsafe.Escape as exc:
        raise fail(cdir, "AR264", f"{where}: {exc.message}", "E_CAPABILITY_BROKEN") from None
    if not os.path.lexists(declared):
        raise fail(cdir, "AR264", f"{where}: script not found ({declared})", "E_CAPABILITY_BROKEN")
    if not captree.inside(root, real):
        raise fail(cdir, "AR264", f"capability {cid} path escapes its integrity boundary: {parts[0]}",
                   "E_CAPABILITY_BROKEN")
    if not os.path.isfile(real):
        raise fail(cdir, "AR264", f"{where}: the script {parts[0]!r} is not a regular file", "E_CAPABILITY_BROKEN")
    return real


def listing(inv: Invocation) -> str:
    """The line the kernel prints for a namespace given without a command."""
    return f"agentrc cap run {inv.namespace}: commands: {', '.join(inv.commands) or '(none)'}"


def execute(inv: Invocation) -> int:
    """Run the invocation with the caller's stdio: the command's exit code (1 when a signal
    ended it, as the kernel reports it); E_CAPABILITY_BROKEN when node cannot be started.
    Ctrl-C reaches the command too (one process group): agentrc waits for it to finish its
    own way instead of killing it."""
    try:
        proc = subprocess.Popen(list(inv.argv), cwd=inv.cwd, env=inv.env)
    except OSError as exc:
        raise fail(inv.argv[1], "AR264", f"{inv.namespace}: {inv.argv[0]} could not run: {exc.strerror or exc}",
                   "E_CAPABILITY_BROKEN") from None
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:
            continue
    return code if code >= 0 else 1
