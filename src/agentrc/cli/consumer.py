"""What `agentrc add`, `install`, `remove` and `list` share: the project flag, the clients
flag and how a consumer command's result is printed."""

from __future__ import annotations

import os
import sys
from collections import Counter

from agentrc.cli.common import UsageError, print_diags, say
from agentrc.cli.common import unknown as unknown_names
from agentrc.clients import names as client_names
from agentrc.diagnostics import Diagnostic

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # annotations only: a command with nothing to do imports no workflow (`consumer.unchanged`)
    from agentrc.consumer.result import Result
    from agentrc.sources.lock import Entry, Lock


def project(args) -> str:
    """The project directory; with `--global`, the user's home (the lock is then the user's,
    `agentrc.consumer.consume.lock_path`)."""
    if getattr(args, "user", False):
        if args.dir != ".":
            raise UsageError("--global and --dir: a global installation has no project directory")
        home = os.path.expanduser("~")
        if not os.path.isdir(home):
            raise UsageError(f"--global: the home directory {home} is not a directory")
        return home
    d = args.dir
    if not d.strip():
        raise UsageError("--dir: an empty path")
    if not os.path.isdir(d):
        raise UsageError(f"--dir: {d} is not a directory")
    return d


def fmt(args) -> str:
    return "json" if args.json else args.format


def lock_as_read(project: str) -> Optional[Lock]:
    """The project's lock as read, for what a command answered from its stamp prints with
    `--json` (and the project file's sources follow): None when it cannot be read."""
    from agentrc.inputs.lockread import read_lock

    return read_lock(project)[0]


def clients(text: str) -> Tuple[str, ...]:
    chosen = tuple(dict.fromkeys(c.strip() for c in text.split(",") if c.strip()))
    unknown = [c for c in chosen if c not in client_names.CLIENTS]
    if unknown or not chosen:
        raise UsageError(unknown_names("client(s)", unknown, list(client_names.CLIENTS)))
    return chosen


def entry_json(e: Entry) -> Dict:
    data = e.to_json()
    data["kind"] = e.kind
    return data


def lock_json(lock: Lock) -> Dict:
    return {"clients": list(lock.clients), "bundles": [entry_json(e) for e in lock.bundles],
            "items": [entry_json(e) for e in lock.items], "files": len(lock.files),
            "mcps": [dict(m) for m in lock.mcps], "mcps_removed": list(lock.mcps_removed)}


def with_consent(args, call: Callable[[bool], Result]) -> Result:
    """`call(trust)` with the consumer's consent to the executable surface the sources bring
    (agentrc.consumer.consent): `--trust` gives it; on a terminal, the surface is listed and
    a `y` gives it; otherwise the result's AR229 errors stand (nothing was written). A
    status line shows on a terminal while the sources are fetched and installed
    (agentrc.cli.progress), closed before the question is asked."""
    result = _shown(args, call, bool(args.trust))
    if not result.consent or args.trust or fmt(args) != "text" or getattr(args, "dry_run", False) \
            or not _interactive():
        return result
    say("The sources bring what runs on this machine when a client starts:")
    for x in result.consent:
        say(f"  {x.shown()}  ({x.path})")
    try:
        answer = input("Install it? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        return result
    return _shown(args, call, True)


def _shown(args, call: Callable[[bool], Result], trust: bool) -> Result:
    from agentrc.cli import progress

    with progress.activity(f"{getattr(args, 'command', 'install')}: fetching and installing"):
        return call(trust)


def _interactive() -> bool:
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def report(result: Result, args, verb: str, command: str) -> int:
    """Print the diagnostics and, when it worked, what changed (with --dry-run: what would);
    the exit code."""
    changes = result.changes
    dry = bool(getattr(args, "dry_run", False))
    extra: Dict = {"entries": [entry_json(e) for e in result.entries]}
    if result.lock is not None:
        extra["lock"] = lock_json(result.lock)
    if changes is not None:
        extra["changes"] = changes_json(changes)
    if dry:
        extra.update(plan_json(result))
    diagnostics(result.diagnostics, args, extra)
    if fmt(args) == "text":
        if not result.ok:
            say(f"{command} failed: nothing written")
            return 1
        for line in entry_lines(result.entries):
            say(f"{'would be ' + verb if dry else verb} {line}")
        for line in plan_lines(result, dry, args.dir):
            say(line)
    return 0 if result.ok else 1


def diagnostics(diags: Sequence[Diagnostic], args, extra: Optional[Dict] = None) -> None:
    """Print `diags` as the command's format asks: JSON lists every one; text lists every
    error, and the warnings one line per code with a count (`summarized`) unless `--verbose`.
    A consumer cannot fix someone else's repository: 101 lines of its style warnings on
    `install --frozen` (issue 31) hid the one line that mattered."""
    if fmt(args) == "json" or getattr(args, "verbose", False):
        print_diags(diags, fmt(args), extra)
        return
    counts = Counter(d.code for d in diags if _summed(d))
    print_diags([d for d in diags if not _summed(d) or counts[d.code] < 2], "text")
    for line in summarized(diags):
        say(line, style="warning")


def _summed(d: Diagnostic) -> bool:
    """Whether a warning may be counted instead of listed: findings about the content of a
    source (AR0xx-AR1xx: style, lint, fidelity, import), which the consumer cannot fix.
    What concerns this install (AR2xx: a variable not set, a server not registered, hidden
    Unicode in fetched text) is always listed, at its place."""
    return not d.is_error and d.code < "AR200"


def summarized(diags: Sequence[Diagnostic]) -> List[str]:
    """One line per content-finding code (`_summed`) met more than once: `warning[AR020] 12 warnings in 5 files:
    A body contains an H1 heading (--verbose lists them)`; a code met once is printed whole."""
    from agentrc.codes import CODES

    by_code: Dict[str, List[Diagnostic]] = {}
    for d in diags:
        if _summed(d):
            by_code.setdefault(d.code, []).append(d)
    lines = []
    for code, found in sorted(by_code.items()):
        if len(found) < 2:
            continue
        where = len({d.path for d in found})
        what = CODES[code].summary.rstrip(".") if code in CODES else found[0].message
        lines.append(f"warning[{code}] {len(found)} warnings in {where} file{'s' if where != 1 else ''}: {what} "
                     "(--verbose lists them)")
    return lines


def changes_json(changes) -> Dict:
    return {"create": list(changes.create), "update": list(changes.update), "delete": list(changes.delete),
            "unchanged": changes.unchanged}


def plan_json(result: Result) -> Dict:
    """A dry run's plan beside the changes: MCP servers, plugins and hooks, and what would
    need the consumer's consent (--trust)."""
    data: Dict = {"dry_run": True}
    if result.planned is not None:
        data.update(result.planned.to_json())
    data["needs_consent"] = [x.shown() for x in result.consent]
    return data


def plan_lines(result: Result, dry: bool, where: str) -> List[str]:
    """The files a command changed, or with `dry` would change (each, then the totals), and
    a dry run's MCP servers, plugins, hooks and missing consent."""
    changes = result.changes
    lines: List[str] = []
    if changes is not None and dry:
        for label, paths in (("create", changes.create), ("update", changes.update), ("delete", changes.delete)):
            lines.extend(f"would {label}: {p}" for p in paths)
    if dry and result.planned is not None:
        lines.extend(result.planned.lines())
    if dry:
        lines.extend(f"would need consent (--trust): {x.shown()}" for x in result.consent)
    if changes is not None:
        verb = " would be" if dry else ""
        lines.append(f"{where}: {len(changes.create)}{verb} created, {len(changes.update)}{verb} "
                     f"updated, {len(changes.delete)}{verb} deleted, {changes.unchanged} unchanged")
    return lines


def entry_lines(entries) -> List[str]:
    if not entries:
        return []
    from agentrc.sources import closure  # only when there are entries to name

    lines = []
    for e in sorted(entries, key=lambda e: (not e.direct, e.kind != "bundle", e.kind, e.name)):
        where = closure.locator(e) + (f" ({e.commit[:12]})" if e.commit else "")
        why = "" if e.direct else f", required by {', '.join(e.required_by)}"
        lines.append(f"{e.kind} {e.name} from {where}{why}")
    return lines
