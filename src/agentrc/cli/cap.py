"""`agentrc cap VERB`: capability packages (spec 003), with the OAS kernel's verbs and flags.

`install [SOURCE]` acquires a package (bare: restores the scope's locks), `list` shows what
the scope's locks hold, `update PACKAGE` re-resolves one, `remove PACKAGE` removes one,
`trust CAPABILITY` (or `trust PACKAGE --all-capabilities`) approves commands and hooks at
the installed integrity, `migrate [--dry-run]` converts a version 1 lock, `spawn SOUL`
creates an instance home, `retire INSTANCE [--force]` runs its retire hooks and removes it,
`use CAPABILITY` edits the activation in oas-config.yaml, `doctor [DIR] --soul NAME` shows
what is active for a soul, `run NAMESPACE COMMAND [ARGS...]` runs a capability's operational
command (its own exit code passed through), `status` lists the instance homes (retained and
quarantined ones too) and `init` writes a new scope's oas-config.yaml. With
`--json`, stdout carries exactly one envelope, the OAS kernel's (`{"schemaVersion": 1,
"ok": true, "result": ...}` or `{"schemaVersion": 1, "ok": false, "error": {"code",
"message", "details"}}`), with its stable error codes; the diagnostics ride in
`error.details.diagnostics`. `doctor --json` and `status --json` print the kernel's documents themselves.
"""

from __future__ import annotations

import json
import os
import sys

from agentrc.capops import doctor as capdoctor
from agentrc.capops import install as capinstall
from agentrc.capops import migrate as capmigrate
from agentrc.capops import reqs as capreqs
from agentrc.capops import run as caprun
from agentrc.capops import scope_init as capinit
from agentrc.capops import spawn as capspawn
from agentrc.capops import status as capstatus
from agentrc.capops import use as capuse
from agentrc.cli.common import UsageError, print_diags
from agentrc.diagnostics import Diagnostic, printable
from agentrc.output import atomic
from agentrc.text.shown import json_printable

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Sequence, Union


def run(args) -> int:
    fmt = "json" if args.json else "text"
    scope = args.dir or os.getcwd()
    if not os.path.isdir(scope):
        if args.json:
            return _envelope_error("E_BAD_ARGS", f"--dir {scope}: not a directory")
        raise UsageError(f"--dir {scope}: not a directory")
    try:
        return _run(args, fmt, scope)
    except (atomic.UnsafeWrite, RecursionError) as exc:
        # The net under every verb: a link where a scope's file is written (a hook may leave
        # one in an instance home), or a link chain too long to follow, is a diagnostic.
        code = "AR224" if isinstance(exc, atomic.UnsafeWrite) else "AR054"
        path = getattr(exc, "filename", None) or scope
        message = exc.what if isinstance(exc, atomic.UnsafeWrite) else "a chain of symbolic links too long to follow"
        failure = capinstall.fail(path, code, message)
        if fmt == "json":
            return _envelope_error(failure.kernel_code, failure.diagnostics[0].format().splitlines()[0],
                                   failure.diagnostics)
        print_diags(failure.diagnostics, fmt)
        return 1


def _run(args, fmt: str, scope: str) -> int:
    try:
        done = _VERBS[args.verb](args, scope)
    except capinstall.Failure as exc:
        if fmt == "json":
            first = next((d for d in exc.diagnostics if d.is_error), None)
            return _envelope_error(exc.kernel_code, first.format().splitlines()[0] if first else str(exc),
                                   exc.diagnostics)
        print_diags(exc.diagnostics, fmt)
        if args.verb not in ("list", "doctor", "spawn", "retire", "run", "status"):
            print(f"agentrc cap {args.verb}: failed, nothing changed", file=sys.stderr)
        return 1
    if isinstance(done, int):
        return done
    return _report(args, fmt, done)


def _report(args, fmt: str, outcome: capinstall.Outcome) -> int:
    """A verb's outcome printed: the kernel's envelope with --json, else its diagnostics and lines."""
    if fmt == "json":
        if outcome.failed:
            code = "E_RECONCILE_FAILED" if args.verb == "install" else "E_RETIRE_INCOMPLETE" \
                if args.verb == "retire" else "E_MIGRATE_FAILED" if args.verb == "migrate" else capinstall.kernel_code(
                next(d.code for d in outcome.warnings if d.is_error))
            return _envelope_error(code, "; ".join(d.message for d in outcome.warnings if d.is_error)
                                   or f"{len(outcome.result.get('failures', []))} failure(s) during restore",
                                   outcome.warnings, outcome.result)
        _emit({"schemaVersion": 1, "ok": True, "result": outcome.result})
        return 0
    print_diags(outcome.warnings, fmt)
    for line in outcome.lines:
        _out(line)
    return 1 if outcome.failed else 0


def _notify(args) -> Callable[[str], None]:
    """Progress notes: on stderr, none with --json."""
    return (lambda m: None) if args.json else _err


def _err(message: str) -> None:
    print(printable(message), file=sys.stderr)


def _install(args, scope: str) -> capinstall.Outcome:
    if args.source:
        return capinstall.install(scope, args.source, _notify(args))
    outcome = capinstall.restore(scope, _notify(args))
    say = _err if args.json else _out
    reqs, failures, diags = capreqs.gate(scope, args.accept_requirement, args.no_requirements, say,
                                         not args.json and sys.stdin.isatty() and sys.stdout.isatty())
    outcome.result["requirements"] = reqs
    outcome.result["failures"] += failures
    outcome.failed = outcome.failed or bool(failures)
    outcome.warnings = tuple(outcome.warnings) + tuple(diags.items)
    return outcome


def _doctor(args, scope: str) -> Union[int, capinstall.Outcome]:
    outcome = capdoctor.doctor(args.context or scope, args.soul)
    outcome.result["missingHostRequirements"] = capreqs.doctor_entries(args.context or scope)
    outcome.lines += capreqs.doctor_lines(outcome.result["missingHostRequirements"])
    if args.json:  # the document `oas doctor --json` prints, without an envelope
        _emit(outcome.result)
        return 0
    return outcome


def _use(args, scope: str) -> capinstall.Outcome:
    target, name = ("type", args.type) if args.type else ("soul", args.soul) if args.soul else ("global", "")
    return capuse.use(scope, args.capability, target, name, args.disable, args.layer, args.settings)


def _spawn(args, scope: str) -> capinstall.Outcome:
    opts = capspawn.SpawnOptions(task=args.task, task_file=args.task_file, repo=args.repo, runtime=args.runtime,
                                 model=args.model, instructions_file=args.instructions_file,
                                 def_file=args.def_file, work=args.work, work_dir=args.work_dir,
                                 branch=args.branch,
                                 purpose=args.purpose, parent=args.parent, relation=args.relation,
                                 relative_to=args.relative_to, relative_root=args.relative_root)
    return capspawn.spawn(scope, args.soul, opts, _notify(args))


def _trust(args, scope: str) -> capinstall.Outcome:
    shout = _err if args.json else _out
    return capinstall.trust(scope, args.target, args.all_capabilities, shout)


def _run_command(args, scope: str) -> int:
    """`cap run NAMESPACE COMMAND [ARGS...]`: the command's own exit code, or the list of
    commands when none is given (exit 0, as the kernel; with --json E_UNKNOWN_COMMAND)."""
    inv = caprun.prepare(scope, args.namespace, args.rest, args.soul, in_instance=not args.dir)
    if not inv.argv:
        if args.json:
            return _envelope_error("E_UNKNOWN_COMMAND", f"{caprun.listing(inv)} (missing command)")
        _err(caprun.listing(inv))
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    return caprun.execute(inv)


def _status(args, scope: str) -> Union[int, capinstall.Outcome]:
    outcome = capstatus.status(scope, args.team)
    if args.json:  # the document `oas status --json` prints, without an envelope
        _emit(outcome.result)
        return 0
    return outcome


def _init(args, scope: str) -> capinstall.Outcome:
    chosen = {layer: getattr(args, layer) for layer in ("knowledge", "messaging", "tasks") if getattr(args, layer)}
    outcome = capinit.init(scope, args.raw, chosen)
    for r in outcome.result["requirements"] if args.json else ():
        _err(f"warning: required command {r['command']!r} is not on PATH; consent with {r['consentCommand']}")
    return outcome


# Each verb: what it runs (an Outcome to print, or the exit code of a verb that printed).
_VERBS: Dict[str, Callable[[Any, str], Union[int, capinstall.Outcome]]] = {
    "install": _install,
    "list": lambda args, scope: capinstall.list_scope(scope),
    "doctor": _doctor,
    "pack": lambda args, scope: capinstall.pack(args.package_dir, args.out),
    "build": lambda args, scope: _build(args, scope),
    "use": _use,
    "update": lambda args, scope: capinstall.update(scope, args.package, _notify(args)),
    "migrate": lambda args, scope: capmigrate.migrate(scope, args.dry_run, _notify(args), args.official,
                                                      args.recursive),
    "spawn": _spawn,
    "retire": lambda args, scope: capspawn.retire(scope, args.instance, args.force, args.delete_branch),
    "trust": _trust,
    "remove": lambda args, scope: capinstall.remove(scope, args.package),
    "run": _run_command,
    "status": _status,
    "init": _init,
}


def _envelope_error(code: str, message: str, diagnostics: Sequence[Diagnostic] = (),
                    result: Optional[Dict[str, Any]] = None) -> int:
    details: Dict[str, Any] = dict(result or {})
    if diagnostics:
        details["diagnostics"] = [d.to_json() for d in diagnostics]
    error: Dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    _emit({"schemaVersion": 1, "ok": False, "error": error})
    return 1


def _emit(doc: Dict[str, Any]) -> None:
    print(json_printable(json.dumps(doc, ensure_ascii=False, separators=(",", ":"))))


def _out(line: str) -> None:
    """A line of a capability verb's report: names from packages and locks, escaped
    (`printable`), so none can move the cursor or forge a line."""
    print(printable(line))


def _build(args, scope: str) -> int:
    """`cap build`: the active capabilities' skills through agentrc's own build, for every
    client agentrc knows (not only the runtimes OAS knows)."""
    # Imported here on purpose: the build and the client adapters cost about 350 ms of
    # start-up, which no other `cap` verb needs.
    from agentrc.building.build import BuildOptions, build
    from agentrc.cli import build as build_cli
    from agentrc.clients import registry as client_registry

    skills, _outcome = capdoctor.skill_dirs(args.context or scope, args.soul)
    clients = tuple(c.strip() for c in args.client.split(",") if c.strip())
    unknown = [c for c in clients if c not in client_registry.CLIENTS]
    if unknown or not clients:
        known = ", ".join(client_registry.CLIENTS)
        raise UsageError(f"unknown client(s): {', '.join(unknown) or '(none)'} (known: {known})")
    if not skills:
        print("no skills: no active capability contributes one", file=sys.stderr)
        return 0
    for name, cid, path in skills:
        print(printable(f"skill {name} from {cid}"), file=sys.stderr)
    result = build(BuildOptions(tuple(path for _n, _c, path in skills), args.out, clients, check=args.check),
                   lambda message: print(printable(message), file=sys.stderr))
    fmt = "json" if args.json else "text"
    print_diags(result.diagnostics, fmt, build_cli._json_extra(result))
    if fmt == "text":
        build_cli._print_summary(result, args.check, args.out)
    if not result.ok:
        return 1
    return 1 if args.check and not result.up_to_date else 0
