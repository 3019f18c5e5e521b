"""What the project file (`agentrc.yaml`) gives the command line: the arguments a command
was not given. Flags always win; a project without the file works as before.

`fill` runs once, after parsing and before the command: `agentrc build`, `build --check`,
`lint` and `fmt` need no PATH in such a project (its `build.paths`), `build` no `--out`
(its `build.out`, else the file's directory) and no `--client` (its `clients`); `add` takes
the project's clients (the project's client set, which a different `--client` may not change
silently: `cli.clientset`), found from its `--dir`. A broken project file is a usage error
naming it, unless the command has everything it needs from its flags.
"""

from __future__ import annotations

import argparse

from agentrc.cli.common import UsageError, print_diags
from agentrc.clients import names as client_names
from agentrc.diagnostics import Diagnostic

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Sequence, Tuple

_BUILDING = ("build", "lint", "fmt")


def fill(args: argparse.Namespace) -> argparse.Namespace:
    """`args` with what the project file gives; `args.project_file` the file (or None) and
    `args.levels` its per-code levels."""
    module = getattr(args, "command_module", "")
    args.project_file, args.levels = None, ()
    if module not in _BUILDING and module != "add":
        return args
    needs = _needs(args, module)
    from agentrc.inputs import projectfile  # a command with all its flags never reads the disk for it

    found = projectfile.find(getattr(args, "dir", None) or ".")  # a consumer command's project is its --dir
    if found is None:
        if needs:
            raise UsageError(f"{needs}; or run it in a project with an agentrc.yaml ('agentrc init' writes one)")
        defaults(args, module)
        return args
    project, problems = projectfile.load(found)
    if project is None:
        print_diags(problems, "text")
        raise UsageError(f"{found} cannot be used (fix it, or give the arguments on the command line)")
    args.project_file, args.levels = project, project.levels
    _from_project(args, module, project)
    defaults(args, module)
    return args


def _needs(args: argparse.Namespace, module: str) -> str:
    """What the command still lacks without a project file ("" when nothing)."""
    if module in _BUILDING and not args.paths:
        return "no PATH given"
    if module == "build" and args.out is None:
        return "--out is required"
    return ""


def _from_project(args: argparse.Namespace, module: str, project) -> None:
    if module in _BUILDING and not args.paths:
        if not project.paths:
            raise UsageError(f"no PATH given, and {project.path} names no build.paths")
        args.paths = [project.at(p) for p in project.paths]
    if getattr(args, "client", None) is None and project.clients:
        args.client = ",".join(project.clients)
    elif module == "build" and project.clients and not getattr(args, "prune", False):
        asked = {c.strip() for c in args.client.split(",")}
        # a narrowed build leaves the project's other clients' files as they are (--prune removes them)
        args.keep_clients = tuple(c for c in project.clients if c not in asked)
    if module != "build":
        return
    if args.out is None:
        args.out = project.at(project.out) if project.out else project.root
    if args.layout is None and project.layout:
        args.layout = project.layout
    if args.report is None and project.report:
        args.report = project.at(project.report)
    if not args.strict and project.strict:
        args.strict = True


def defaults(args: argparse.Namespace, module: str) -> None:
    """The built-in defaults of what neither the flags nor a project file gave."""
    if module == "build":
        if args.client is None:
            args.client = ",".join(client_names.DEFAULT_CLIENTS)
        if args.layout is None:
            args.layout = "project"


def leveled(args: argparse.Namespace, diagnostics: Sequence[Diagnostic]) -> Tuple[Diagnostic, ...]:
    """`diagnostics` at the levels the project file sets (none: as they are)."""
    levels: Optional[Tuple[Tuple[str, str], ...]] = getattr(args, "levels", ())
    if not levels:
        return tuple(diagnostics)
    from agentrc.project.model import apply_levels

    return apply_levels(diagnostics, levels)
