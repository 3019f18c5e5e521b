"""The `agentrc` command line: the parser, the dispatch and what every command prints.

A thin shell: each command's module parses nothing but its own flags' meaning, calls the
pipeline and prints. Exit codes: 0 ok, 1 content errors (or --check found work to do),
2 usage errors, 130 interrupted (Ctrl-C), 141 the reader of the output went away (a closed
pipe: `agentrc lint --format json | head -1`), as a program SIGINT or SIGPIPE ended would.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from agentrc import __version__
from agentrc.cli import colour, helptext, projectargs
from agentrc.cli.common import UsageError, say
from agentrc.clients import names as client_names

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# Called once the command's module is imported, before it runs (agentrc.cli.entry: the
# garbage collector turned on again).
on_imported: Optional[Callable[[], None]] = None


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if not argv:  # `agentrc` alone: what it can do, not a usage error
            _parser().print_help()
            return _flushed(0)
        return _flushed(_run(argv))
    except KeyboardInterrupt:
        # Ctrl-C (a --watch loop's usual end): no traceback. A write it interrupted is
        # completed or undone by the next run (agentrc.output.writer).
        return 130
    except BrokenPipeError:
        return _closed_pipe()


def _run(argv: List[str]) -> int:
    named = argv[0] if isinstance(argv[0], str) and argv[0] in _COMMANDS else None
    parser = _parser(named)
    args = parser.parse_args(argv)
    if hasattr(args, "format"):
        args.json = args.format == "json"  # `--json` is `--format json`; both names read
    colour.setup(getattr(args, "color", "auto"))
    try:
        _check_strings(args)
        args = projectargs.fill(args)
        for p in getattr(args, "paths", []):
            if not os.path.exists(p):
                raise UsageError(f"no such file or directory: {p}")
        # Each command's module is imported when it runs, on purpose: `agentrc lint` and
        # `--version` do not pay for the build's and the importers' imports.
        command = importlib.import_module(f"agentrc.cli.{args.command_module}")
        if on_imported is not None:
            on_imported()
        return command.run(args)
    except UsageError as exc:
        say(f"agentrc: error: {exc}")
        return 2


def _flushed(code: int) -> int:
    """`code`, once what was printed has reached stdout: a closed pipe shows here, where it
    is handled, rather than in the interpreter's flush at exit (a traceback there)."""
    sys.stdout.flush()
    return code


def _closed_pipe() -> int:
    """The reader went away (EPIPE): stop quietly, as Python's documentation advises (the
    streams pointed at /dev/null, so the interpreter's last flush cannot fail again), with
    the status of a program SIGPIPE ended. SIGPIPE itself stays ignored: a broken pipe to
    git or Node must not kill a build in the middle of its write."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
                os.close(devnull)
            except (OSError, ValueError):
                pass
    return 141


def _check_strings(args: argparse.Namespace) -> None:
    """No argument may hold a NUL byte: every one ends up in a path, and the OS would raise
    ValueError deep in a command instead of a usage error here. (A shell cannot pass one;
    a program calling main() can.)"""
    for key, value in sorted(vars(args).items()):
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and "\x00" in text:
                raise UsageError(f"{key}: an argument holds a NUL byte")


def _parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only`, the subcommand `only` alone. A command line
    naming its command parses (and fails, and prints its help) as with the whole parser,
    without making the other commands' 150 arguments: that was a tenth of a build with
    nothing to do (issue 13). `agentrc --help` and an unknown command get the whole parser."""
    p = _Parser(prog="agentrc", description="Compile portable AI-assistant content for every client.",
                epilog=helptext.epilog(None))
    p.add_argument("--version", action="version", version=f"agentrc {__version__}")
    # `prog` given: argparse would lay out the usage line to find it ("agentrc", as given).
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", prog=p.prog)
    for name, (help_text, fill) in _COMMANDS.items():
        if only is None or name == only:
            fill(sub.add_parser(name, help=help_text, description=help_text[:1].upper() + help_text[1:] + ".",
                                epilog=helptext.epilog(name)))
    return p


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help formatter (descriptions and epilogs as written: the examples keep
    their lines), set up when it first lays text out. argparse makes one for
    every argument it adds, only to check the argument's metavar, and setting one up asks
    the terminal's width through `shutil`, whose import (with bz2, lzma and threading) cost
    a build with nothing to do 3 ms. Help, usage and errors are laid out as before: the same
    set-up runs, with the same arguments, when they are printed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.__dict__["_deferred"] = (args, kwargs)

    def __getattr__(self, name: str) -> Any:  # an attribute the set-up makes, asked for first
        deferred = self.__dict__.pop("_deferred", None)
        if deferred is None:
            raise AttributeError(name)
        argparse.RawDescriptionHelpFormatter.__init__(self, *deferred[0], **deferred[1])
        return getattr(self, name)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose help formatter is `_Formatter`, and its subcommands' too
    (argparse makes subparsers of the parser's own class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def _common(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("paths", nargs="*", metavar="PATH",
                    help="source registry directories or files (default: the project file's build.paths)")
    _output(sp)


def _output(sp: argparse.ArgumentParser, json_help: str = "one JSON document on stdout") -> None:
    """The output flags every command has: `--format {text,json}` with `--json` its alias
    (one dest: the last given wins), and `--color` (agentrc.cli.colour)."""
    sp.add_argument("--format", choices=("text", "json"), default="text",
                    help=f"output format: text on stderr (default), or json: {json_help}")
    sp.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    sp.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                    help="colour the diagnostics and the summary: auto (default) on a terminal, unless NO_COLOR is "
                         "set (FORCE_COLOR forces it)")


def _watch(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--watch", action="store_true",
                    help="run again whenever a source changes (debounced; incremental), until Ctrl-C")


def _consumer(sp: argparse.ArgumentParser, verbose: bool = False) -> None:
    sp.add_argument("--dir", default=".", metavar="PROJECT", help="the consumer project (default: .)")
    if verbose:
        sp.add_argument("--verbose", action="store_true",
                        help="list every warning (default: one line per code with its count)")
    sp.add_argument("--global", dest="user", action="store_true",
                    help="the user's global locations (~/.claude, ~/.copilot, ~/.config/opencode, ...) and "
                         "lock (~/.config/agentrc/agentrc.lock.json) instead of a project")
    _output(sp)


def _allow_local(sp: argparse.ArgumentParser) -> None:
    """Commands that fetch the lock's sources: a local source outside the project is read only
    when the consumer names it here (agentrc.consumer.consume.ProjectFetcher)."""
    sp.add_argument("--allow-local", action="append", default=[], metavar="DIR",
                    help="read a local source of the lock that lies outside the project, at DIR or below it "
                         "(relative to the project; repeatable)")


def _trust(sp: argparse.ArgumentParser) -> None:
    """Commands that may install a source's executable surface (agentrc.consumer.consent)."""
    sp.add_argument("--trust", action="store_true",
                    help="install the hooks, MCP servers, executable scripts and plugins the sources bring without "
                         "asking (recorded in the lock; asked again when they change)")


def _scope(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--dir", metavar="SCOPE", help="the scope (default: the working directory)")
    _output(sp, "one envelope on stdout (the OAS kernel's)")
    sp.set_defaults(command_module="cap")


def _init(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("dir", nargs="?", default=".", metavar="DIR", help="the project's directory (default: .)")
    sp.add_argument("--client", default=None, metavar="LIST",
                    help=f"comma-separated clients for the project file (default: "
                         f"{','.join(client_names.DEFAULT_CLIENTS)})")
    choice = sp.add_mutually_exclusive_group()
    choice.add_argument("--import", dest="do_import", action="store_true", default=None,
                        help="import the client files found (every client's, into one registry) without asking")
    choice.add_argument("--no-import", dest="do_import", action="store_false",
                        help="write the project file alone when client files are found")
    _output(sp, "what init wrote, found and imported, and the next commands")
    sp.set_defaults(command_module="init")


def _lint(sp: argparse.ArgumentParser) -> None:
    _common(sp)
    _watch(sp)
    sp.set_defaults(command_module="lint")


def _fmt(sp: argparse.ArgumentParser) -> None:
    _common(sp)
    sp.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file would change")
    sp.set_defaults(command_module="fmt")


def _build(b: argparse.ArgumentParser) -> None:
    _common(b)
    b.add_argument("--client", default=None,
                   help=f"comma-separated clients (default: the project file's, else "
                        f"{','.join(client_names.DEFAULT_CLIENTS)}; known: {', '.join(client_names.CLIENTS)})")
    b.add_argument("--out", default=None, metavar="DIR",
                   help="the project tree to write into (default: the project file's build.out, else its directory)")
    b.add_argument("--bundle", action="append", default=[], metavar="NAME",
                   help="build only this bundle's closure: its name, or its file's path when several registries "
                        "define the name (repeatable)")
    b.add_argument("--layout", choices=("project", "plugin"), default=None,
                   help="project: the files a repository holds (default); plugin: the client's plugin package")
    b.add_argument("--plugin-name", default="", metavar="NAME",
                   help="the plugin's name with --layout plugin (default: the one --bundle built)")
    b.add_argument("--check", action="store_true", help="write nothing; exit 1 listing out-of-date files")
    b.add_argument("--adopt", action="store_true",
                   help="take over the hand-written files this build replaces (the first build after 'agentrc "
                        "import' of the same files): they are overwritten, and CLAUDE.md or AGENTS.md holds "
                        "agentrc's block alone")
    b.add_argument("--prune", action="store_true",
                   help="with --client narrowing the project file's clients: also delete the other clients' files "
                        "(by default they are left as they are)")
    b.add_argument("--report", metavar="FILE", help="write the fidelity report as JSON")
    b.add_argument("--strict", action="store_true", help="fail when any field is dropped for a client")
    b.add_argument("--jobs", type=int, default=0, metavar="N",
                   help="processes for a cold build of a large registry and a large write (default 0: one "
                        "per CPU, at most 4; 1: none)")
    b.add_argument("--no-cache", action="store_true",
                   help="parse and render everything (the cache lives in $AGENTRC_CACHE_DIR or ~/.cache/agentrc)")
    _watch(b)
    b.set_defaults(command_module="build")


def _inspect(i: argparse.ArgumentParser) -> None:
    i.add_argument("paths", nargs="+", metavar="PATH", help="project directories (holding ai.config.* or .ai/)")
    _output(i, "the canonical document with its provenance")
    i.set_defaults(command_module="inspect")


def _add(a: argparse.ArgumentParser) -> None:
    a.add_argument("source", metavar="SOURCE",
                   help="owner/repo[@ref], a git URL (https://, ssh://, file://, user@host:path) with @ref, or a "
                        "local directory; #subpath selects a registry inside it")
    a.add_argument("--bundle", action="append", default=[], metavar="NAME", help="a bundle to install (repeatable)")
    a.add_argument("--item", action="append", default=[], metavar="KIND:NAME",
                   help="an item to install, e.g. skill:pr-summary (repeatable); none of both: everything")
    a.add_argument("--client", default=None, metavar="LIST",
                   help=f"comma-separated clients for the whole project (default: the lock's, else "
                        f"{','.join(client_names.DEFAULT_CLIENTS)})")
    a.add_argument("--set-clients", action="store_true",
                   help="with --client: make LIST the project's client set (the lock and agentrc.yaml's clients:), "
                        "deleting the files of clients left out")
    a.add_argument("--force", action="store_true", help="overwrite installed files edited since")
    _dry_run(a)
    _consumer(a, verbose=True)
    _allow_local(a)
    _trust(a)
    a.set_defaults(command_module="add")


def _install(ins: argparse.ArgumentParser) -> None:
    ins.add_argument("--frozen", action="store_true",
                     help="install exactly what the lock records; fail, writing nothing, if the lock would have to "
                          "change (CI, a fresh clone: as npm ci)")
    ins.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 listing every drift between the lock, the sources and the files")
    ins.add_argument("--force", action="store_true", help="overwrite installed files edited since")
    _consumer(ins, verbose=True)
    _allow_local(ins)
    _trust(ins)
    ins.set_defaults(command_module="install")


def _remove(rm: argparse.ArgumentParser) -> None:
    rm.add_argument("names", nargs="+", metavar="NAME", help="an installed bundle or item (NAME or KIND:NAME)")
    rm.add_argument("--force", action="store_true", help="delete installed files even when edited since")
    _dry_run(rm)
    _consumer(rm, verbose=True)
    _allow_local(rm)
    rm.set_defaults(command_module="remove")


def _update(up: argparse.ArgumentParser) -> None:
    up.add_argument("names", nargs="*", metavar="NAME",
                    help="update only the sources of these installed bundles or items (default: every source)")
    up.add_argument("--ref", metavar="REF",
                    help="re-pin the source of the NAMEs to REF (a tag, branch or commit) and resolve it there")
    _dry_run(up)
    up.add_argument("--force", action="store_true", help="overwrite installed files edited since")
    _consumer(up, verbose=True)
    _allow_local(up)
    _trust(up)
    up.set_defaults(command_module="update")


def _dry_run(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--dry-run", action="store_true",
                    help="write nothing and run no client CLI; print the plan: files, MCP servers, plugins, hooks")


def _outdated(od: argparse.ArgumentParser) -> None:
    _consumer(od)
    od.set_defaults(command_module="outdated")


def _remove_mcp(rmm: argparse.ArgumentParser) -> None:
    rmm.add_argument("names", nargs="+", metavar="NAME", help="an MCP server's name (agentrc list --json: lock mcps)")
    rmm.add_argument("--force", action="store_true", help="rewrite config files even when edited since")
    _consumer(rmm)
    _allow_local(rmm)
    rmm.set_defaults(command_module="remove_mcp")


def _doctor(dr: argparse.ArgumentParser) -> None:
    _consumer(dr)
    dr.set_defaults(command_module="doctor")


def _list_command(ls: argparse.ArgumentParser) -> None:
    _consumer(ls)
    ls.set_defaults(command_module="list_")


def _cap(c: argparse.ArgumentParser) -> None:
    verbs = c.add_subparsers(dest="verb", required=True, metavar="VERB", prog=c.prog)
    for add in (_cap_packages, _cap_activation, _cap_approve, _cap_instances, _cap_scope):
        add(verbs)


def _cap_packages(verbs) -> None:
    """`cap install`, `list`, `update`, `remove`: the scope's packages."""
    ci = verbs.add_parser("install", help="acquire a package into the scope; bare: restore the scope's locks")
    ci.add_argument("source", nargs="?", metavar="SOURCE",
                    help="a directory holding oas-package.json, a git URL[@ref][#path], or an official catalog "
                    "id[@selector]")
    ci.add_argument("--accept-requirement", action="append", default=[], metavar="NAME",
                    help="consent to install this requirement of an active capability (bare install): a runtime "
                    "package as RUNTIME:PACKAGE (claude:plugin@marketplace, pi:npm:name), whose steps then run")
    ci.add_argument("--no-requirements", action="store_true", help="skip the requirements gate of bare install "
                    "(its safety checks still fail)")
    _scope(ci)
    cl = verbs.add_parser("list", help="packages and capabilities the scope's locks hold")
    _scope(cl)
    cu = verbs.add_parser("update", help="re-resolve a package from its source; approvals reset where bytes changed")
    cu.add_argument("package", metavar="PACKAGE")
    _scope(cu)
    cr = verbs.add_parser("remove", help="remove a package (refused while config or another package uses it)")
    cr.add_argument("package", metavar="PACKAGE")
    _scope(cr)


def _cap_activation(verbs) -> None:
    """`cap doctor`, `use`, `build`: what is active for a soul, and what it gives."""
    cd = verbs.add_parser("doctor", help="which capabilities are active for a soul, with settings and provenance")
    cd.add_argument("context", nargs="?", metavar="DIR", help="where to resolve from (default: --dir)")
    cd.add_argument("--soul", default="", metavar="NAME", help="the soul (default: global bindings only)")
    _scope(cd)
    cus = verbs.add_parser("use", help="activate a capability for the scope, an agent type or a soul")
    cus.add_argument("capability", metavar="CAPABILITY", help="a capability id, or none with --layer")
    target = cus.add_mutually_exclusive_group()
    target.add_argument("--global", dest="glob", action="store_true", help="every soul the scope governs (default)")
    target.add_argument("--type", metavar="TYPE", help="souls of this agent type")
    target.add_argument("--soul", metavar="NAME", help="one soul")
    cus.add_argument("--disable", action="store_true", help="exclude instead of activate")
    cus.add_argument("--layer", default="", metavar="LAYER", help="with none: the layer to switch off")
    cus.add_argument("--settings", nargs="+", default=[], metavar="KEY=VALUE", help="settings of the entry")
    _scope(cus)
    cb = verbs.add_parser("build", help="build the skills of the capabilities active for a soul, for every client")
    cb.add_argument("context", nargs="?", metavar="DIR", help="where to resolve from (default: --dir)")
    cb.add_argument("--soul", default="", metavar="NAME", help="the soul (default: global bindings only)")
    cb.add_argument("--out", required=True, metavar="DIR", help="the project tree to write into")
    cb.add_argument("--client", default=",".join(client_names.DEFAULT_CLIENTS),
                    help=f"comma-separated clients (known: {', '.join(client_names.CLIENTS)})")
    cb.add_argument("--check", action="store_true", help="write nothing; exit 1 listing out-of-date files")
    _scope(cb)


def _cap_approve(verbs) -> None:
    """`cap pack`, `trust`, `migrate`: a package checked, a capability approved, a lock converted."""
    cp = verbs.add_parser("pack", help="validate a package as an install would; write its payload and integrity")
    cp.add_argument("package_dir", metavar="DIR", help="the directory holding oas-package.json")
    cp.add_argument("--out", required=True, metavar="OUT", help="a new (or empty) directory")
    _scope(cp)
    ct = verbs.add_parser("trust", help="approve a capability's commands and hooks at its installed integrity")
    ct.add_argument("target", metavar="CAPABILITY", help="a capability id, or a package id with --all-capabilities")
    ct.add_argument("--all-capabilities", action="store_true",
                    help="approve every capability the package supplies (its whole surface is printed first)")
    _scope(ct)
    cm = verbs.add_parser("migrate", help="convert the scope's lockfileVersion 1 lock to version 2, all or nothing")
    cm.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
    cm.add_argument("--official", action="store_true",
                    help="the guided upgrade: map only official (marketplace:) capabilities, through the catalog")
    cm.add_argument("--recursive", action="store_true",
                    help="every lock-owning scope: the scope's ancestors, its team boundary and the scopes below it")
    _scope(cm)


def _cap_instances(verbs) -> None:
    """`cap spawn`, `retire`, `status`: a soul's instance homes."""
    csp = verbs.add_parser("spawn", help="create an instance home of a soul (no runtime is launched)")
    csp.add_argument("soul", metavar="SOUL")
    csp.add_argument("--task", default="", metavar="TEXT", help="the task written into TASK.md")
    csp.add_argument("--task-file", default="", metavar="FILE", help="read the task from FILE (--task wins)")
    csp.add_argument("--repo", default="", metavar="REPO",
                     help="the context repository (default: the soul's repo:, relative to the workspace)")
    csp.add_argument("--runtime", default="", metavar="RUNTIME", help="pi or claude (default: the soul's runtime:, "
                     "else pi); recorded, not launched")
    csp.add_argument("--model", default="", metavar="MODEL", help="the model (default: the soul's model:)")
    csp.add_argument("--instructions-file", default="", metavar="FILE",
                     help="create or update the local soul local-agents/SOUL with FILE as its AGENTS.md")
    csp.add_argument("--def-file", default="", metavar="FILE", help="create or update the local soul from a "
                     "definition file (front matter description/model/repo/work/runtime, body the instructions)")
    csp.add_argument("--work", default="", metavar="MODE",
                     help="worktree, checkout, attached or workspace (default: the soul's work:, else checkout)")
    csp.add_argument("--work-dir", default="", metavar="DIR", help="attached: the owning instance's <home>/work")
    csp.add_argument("--branch", default="", metavar="BRANCH", help="worktree: the branch (default agents/INSTANCE)")
    csp.add_argument("--purpose", default="", metavar="SLUG", help="name the instance SOUL-SLUG")
    csp.add_argument("--parent", default="", metavar="INSTANCE", help="the same as --relative-to INSTANCE "
                     "--relation child")
    csp.add_argument("--relation", default="", metavar="RELATION",
                     help="child, sibling, parent or unrelated: what the new instance is to --relative-to")
    csp.add_argument("--relative-to", default="", metavar="INSTANCE", help="the instance a relation is anchored to")
    csp.add_argument("--relative-root", default="", metavar="AGENTS-ROOT",
                     help="the agents root of the anchor when several roots hold its name")
    _scope(csp)
    crt = verbs.add_parser("retire", help="run an instance's retire hooks and remove its home")
    crt.add_argument("instance", metavar="INSTANCE")
    crt.add_argument("--delete-branch", action="store_true", help="also delete a worktree instance's branch")
    crt.add_argument("--force", action="store_true",
                     help="remove the home even when it cannot be identified or its cleanup is incomplete")
    _scope(crt)
    cst = verbs.add_parser("status", help="the souls of the agents root and their instance homes (live, retained "
                           "or quarantined)")
    cst.add_argument("--team", action="store_true", help="every agents root of the team scope")
    _scope(cst)


def _cap_scope(verbs) -> None:
    """`cap init` (a new scope's config) and `cap run` (a capability's operational command)."""
    cin = verbs.add_parser("init", help="write a new scope's oas-config.yaml (acquires nothing)")
    cin.add_argument("--raw", action="store_true", help="every fundamental layer none")
    for layer in ("knowledge", "messaging", "tasks"):
        cin.add_argument(f"--{layer}", default="", metavar="ID",
                         help=f"the {layer} layer: an acquired capability's id, or none (default: unset)")
    _scope(cin)
    crun = verbs.add_parser("run", help="run an operational command of an active, trusted capability",
                            description="Options go before NAMESPACE; everything after it is COMMAND and its "
                            "arguments, passed to the command untouched (a -- right after NAMESPACE is dropped).")
    crun.add_argument("--soul", default="", metavar="NAME", help="resolve the activation for this soul")
    crun.add_argument("namespace", metavar="NAMESPACE", help="the capability's command namespace (its `command`)")
    crun.add_argument("rest", nargs=argparse.REMAINDER, metavar="COMMAND [ARGS...]",
                      help="one of its commands, and the arguments it gets")
    _scope(crun)


def _import_command(im: argparse.ArgumentParser) -> None:
    im.add_argument("project", metavar="DIR", help="the project holding the client's files")
    im.add_argument("--from", dest="client", default=None, metavar="CLIENTS",
                    help="the clients whose files to read, comma-separated (claude, copilot, opencode, cursor, "
                         "codex; default: every client whose files the directory holds)")
    im.add_argument("--out", required=True, metavar="REGISTRY", help="the directory to write portable items into")
    im.add_argument("--canonical", metavar="FILE.json", help="also write the canonical document (an ai.config.json)")
    im.add_argument("--strict", action="store_true",
                    help="stop at a file that cannot be imported (by default it is reported and skipped)")
    _output(im)
    im.set_defaults(command_module="import_")


def _completion(cp: argparse.ArgumentParser) -> None:
    cp.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete in")
    cp.set_defaults(command_module="completion")


# Each command: its help line and what adds its arguments, in the order `agentrc --help` lists them.
_COMMANDS: Dict[str, Tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "init": ("start a project: its agentrc.yaml, and samples or the client files it has, imported", _init),
    "lint": ("validate items and bundles; report every problem", _lint),
    "fmt": ("rewrite sources in canonical form (spec 001 §3.8)", _fmt),
    "build": ("generate client files into an output directory", _build),
    "inspect": ("print a project's canonical document with the provenance of every part", _inspect),
    "add": ("install bundles and items from a source into the project, and lock them", _add),
    "install": ("make the project hold exactly what agentrc.lock.json records", _install),
    "remove": ("uninstall bundles or items and what only they required", _remove),
    "update": ("resolve the installed sources' refs again and install what they give now", _update),
    "outdated": ("list the installed sources with newer commits on their ref, or newer tags", _outdated),
    "remove-mcp": ("unregister MCP servers from every target the lock configured", _remove_mcp),
    "doctor": ("check the installed files, MCP servers and plugins against agentrc.lock.json", _doctor),
    "list": ("the bundles and items agentrc.lock.json installed, and from where", _list_command),
    "cap": ("capability packages (spec 003): init, install, update, remove, trust, use, doctor, build, run,"
            " status", _cap),
    "import": ("read a project's client files into portable items (and a canonical document)", _import_command),
    "completion": ("print the shell completion script for bash, zsh or fish", _completion),
}



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
