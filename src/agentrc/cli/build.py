"""`agentrc build PATH... --out DIR`: the flags become `BuildOptions`; the pipeline builds;
this prints the diagnostics and the per-client and per-directory summaries."""

from __future__ import annotations

import os
from dataclasses import replace

from agentrc.building.build import BuildOptions, BuildResult, build
from agentrc.cli import progress, projectargs
from agentrc.cli.common import UsageError, print_diags, say
from agentrc.cli.common import unknown as unknown_names
from agentrc.clients import names as client_names
from agentrc.files import STATE_DIR as STATE
from agentrc.model import IgnoreList
from agentrc.output.directory import PARTIAL
from agentrc.output.totals import summary_lines

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Tuple


def run(args) -> int:
    opts = options(args)
    if getattr(args, "watch", False):
        # The same build again on every change: the memo and the stamp make it incremental.
        from agentrc.cli import watch

        own = [shown(f"{opts.out}/{STATE}")] + ([opts.report] if opts.report else [])
        return watch.loop(list(opts.paths), lambda: _once(args, opts), own)
    return _once(args, opts)[0]


def _once(args, opts: BuildOptions) -> Tuple[int, List[str]]:
    """One build: its exit status and the paths it wrote or deleted."""
    with progress.activity("building") as activity:
        result = build(opts, activity.say)
    result = replace(result, diagnostics=projectargs.leveled(args, result.diagnostics))
    print_diags(result.diagnostics, args.format, _json_extra(result))
    if args.format == "text":
        _print_summary(result, args.check, args.out)
        if result.ok and result.changes is not None and result.changes.kept:
            say(f"{args.out}: {len(result.changes.kept)} file(s) of {', '.join(opts.keep_clients)} left as they are "
                "(the project's other clients; --prune deletes them)")
    changes = result.changes
    written = [os.path.join(opts.out, p) for p in changes.create + changes.update + changes.delete] \
        if changes is not None and not opts.check else []
    if not result.ok:
        return 1, written
    return (1 if args.check and not result.up_to_date else 0), written


def options(args) -> BuildOptions:
    """The build the flags ask for, or a UsageError saying why there is none."""
    projectargs.defaults(args, "build")  # when called without `main` (the Pants backend, tests)
    clients = [c.strip() for c in args.client.split(",") if c.strip()]
    if args.layout == "plugin" and args.client == ",".join(client_names.DEFAULT_CLIENTS):
        clients = ["claude"]  # one plugin per build; --client picks another client's layout
    if args.plugin_name and args.layout != "plugin":
        raise UsageError("--plugin-name needs --layout plugin")
    if args.plugin_name:
        _check_plugin_name(args.plugin_name)
    table = client_names.PLUGIN_LAYOUTS if args.layout == "plugin" else client_names.CLIENTS
    unknown = [c for c in clients if c not in table]
    if unknown or not clients:
        what = "client(s) with a plugin layout" if args.layout == "plugin" else "client(s)"
        raise UsageError(unknown_names(what, unknown, list(table)))
    if args.layout == "plugin" and len(clients) > 1:
        raise UsageError("--layout plugin builds one client's plugin at a time (one --client)")
    if args.jobs < 0:
        raise UsageError(f"--jobs: {args.jobs} is not a number of processes "
                         "(0 = one per CPU, at most 4; 1 = no workers)")
    for flag, value in (("--out", args.out), ("--report", args.report)):
        if value is not None and not value.strip():
            raise UsageError(f"{flag}: an empty path")
    if args.report is not None and (shown(args.report).rpartition("/")[2] in ("", ".", "..")
                                    or os.path.isdir(args.report)):
        raise UsageError(f"--report: {args.report!r} is a directory, not a file name")
    return BuildOptions(tuple(args.paths), args.out, tuple(clients), tuple(args.bundle), args.strict, args.layout,
                        args.plugin_name, args.check, args.report, args.jobs, not args.no_cache,
                        tuple(getattr(args, "keep_clients", ()) if args.layout == "project" else ()),
                        bool(getattr(args, "adopt", False)), _shares(args), _ignore(args))


def _shares(args) -> bool:
    """The project file's `shared-copies` (on without a project file)."""
    project = getattr(args, "project_file", None)
    return project.shares if project is not None else True


def _ignore(args) -> IgnoreList:
    """The project file's `ignore:` list (none without a project file)."""
    project = getattr(args, "project_file", None)
    return project.ignore if project is not None else IgnoreList()


def _check_plugin_name(name: str) -> None:
    """It names the plugin's manifest and marketplace entry, which clients read as a name.
    (agentrc.names is imported here: a build without --plugin-name never needs it.)"""
    from agentrc.names import MAX_NAME_LENGTH, valid_name
    if len(name) > MAX_NAME_LENGTH or not valid_name(name, single_hyphens=True):
        raise UsageError(f"--plugin-name {name!r}: a plugin name is lowercase letters, digits and "
                         f"single hyphens, at most {MAX_NAME_LENGTH} characters")


def _json_extra(result: BuildResult) -> dict:
    extra: dict = {"summary": result.summary or {}}
    changes = result.changes
    if changes is not None:
        extra["changes"] = {"create": list(changes.create), "update": list(changes.update),
                            "delete": list(changes.delete), "unchanged": changes.unchanged}
    return extra


def shown(path: str) -> str:
    """`path` as `pathlib.PurePosixPath` prints it (slashes repeated or trailing and `.` parts
    dropped, two leading slashes kept), without importing `pathlib`: 2 ms of every build."""
    lead = "//" if path.startswith("//") and path[2:3] != "/" else "/" if path.startswith("/") else ""
    return lead + "/".join(p for p in path.split("/") if p not in ("", ".")) or "."


def _print_summary(result: BuildResult, check: bool, out: str) -> None:
    if not result.ok:
        if any(PARTIAL in d.message for d in result.diagnostics):
            say("build failed: the next build completes the interrupted write", style="error")
        else:
            say("build failed: nothing written", style="error")
        return
    for line in summary_lines(result.summary or {}):
        say(line)
    changes = result.changes
    if changes is None:
        return
    if check:
        for label, paths in (("missing", changes.create), ("outdated", changes.update), ("stale", changes.delete)):
            for p in paths:
                say(f"{label}: {shown(f'{out}/{p}')}")
        state = "up to date" if changes.empty else "out of date"
        say(f"{shown(out)}: {state}", style="ok" if changes.empty else "warning")
    else:
        say(f"{shown(out)}: {len(changes.create)} created, {len(changes.update)} updated, "
            f"{len(changes.delete)} deleted, {changes.unchanged} unchanged", style="ok")
