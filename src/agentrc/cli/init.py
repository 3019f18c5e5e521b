"""`agentrc init [DIR]`: start a project — its project file, and either one sample of each
kind of item (in an empty project) or the client files it already has, imported.

In a directory that holds client files (CLAUDE.md, .claude/, .github/copilot-instructions.md,
.cursor/rules, AGENTS.md, ...), init lists what it found and imports the first client's
files into the registry when `--import` says so or a `y` at a terminal does; without a
terminal it writes the project file alone and prints the import command. It never
overwrites a file, and it says which files to commit and which to ignore.
"""

from __future__ import annotations

import json
import os
import sys

from agentrc.cli import consumer
from agentrc.cli.common import say
from agentrc.clients import names as client_names
from agentrc.project import FILE_NAME

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional

SKIP_DIRS = {".git", "node_modules", ".agentrc", ".venv", "venv", "__pycache__"}
MAX_DEPTH = 4


def run(args) -> int:
    root = os.path.normpath(args.dir)
    clients = consumer.clients(args.client or ",".join(client_names.DEFAULT_CLIENTS))
    if os.path.lexists(os.path.join(root, FILE_NAME)):
        say(f"{os.path.join(root, FILE_NAME)}: this project has a project file already; nothing written")
        return 1
    from agentrc.pipeline import scaffold

    found = detect(root) if os.path.isdir(root) else {}
    take = _import_choice(args, found)
    files = scaffold.plan(root, clients, samples=not found)
    files[0] = _with_lock(root, files[0], args.client is None)
    if take:
        files[0] = _with_ignore(root, files[0])
    clash = scaffold.existing(files)
    if clash:
        say("agentrc init writes no file that exists: " + ", ".join(clash) + "; nothing written")
        return 1
    os.makedirs(root, exist_ok=True)
    scaffold.write(root, files)
    say(f"wrote {_at(root, FILE_NAME)}" + ("" if found else f" and samples in {_at(root, 'ai')}/"
                                             " (a context, a rule, a skill, an agent, a command and a hook)"))
    code = 0
    if take:
        from agentrc.cli.main import main as agentrc

        # every client found, into one registry (what several clients share, once)
        code = agentrc(["import", "--from", ",".join(take), root, "--out", os.path.join(root, scaffold.REGISTRY)])
    _next_steps(root, found, take)
    if getattr(args, "format", "text") == "json":
        print(json.dumps({"ok": code == 0, "wrote": sorted(os.path.relpath(f[0], root) for f in files), "found": found,
                          "imported": list(take or ()), "next": _next_commands(take)}, indent=2))
    return code


def _next_commands(take) -> List[str]:
    return ["agentrc build --adopt" if take else "agentrc build", "agentrc lint"]


def _with_lock(root: str, project_file, take_clients: bool):
    """A project that already has agentrc.lock.json gets its sources (and, unless --client
    says otherwise, its clients) in the new project file, so the two agree from the start."""
    from agentrc.consumer import consume
    from agentrc.pipeline import scaffold
    from agentrc.project.sources import block, declared_from

    if not os.path.isfile(os.path.join(root, consume.LOCK)):
        return project_file
    lock, problems = consume.read_lock(root)
    if lock is None:
        return project_file
    text = scaffold.project_file(lock.clients) if take_clients else project_file[1].decode()
    return (project_file[0], (text + block(declared_from(lock.entries))).encode(), False)


def _with_ignore(root: str, project_file):
    """An imported project's ignore files (`.cursorignore`, `.geminiignore`, ...: every
    client's that agentrc writes) become the project file's `ignore:` list, their patterns
    once each in the order found, so the first `agentrc build --adopt` writes each client
    the same lines, and every other built client gets them too."""
    from agentrc.clients import ignorefile
    from agentrc.clients import registry as client_registry
    from agentrc.inputs.fileread import _open_and_read

    names = sorted({a.ignore_file.path for a in client_registry.get(list(client_names.CLIENTS)) if a.ignore_file.path})
    patterns: List[str] = []
    taken = []
    for name in names:
        path = os.path.join(root, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue  # a link is not followed (it may lead out of the project)
        data, _, problem = _open_and_read(path, 1 << 20)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            problem = "not UTF-8"
        if problem:
            say(f"{_at(root, name)}: not read ({problem}); its patterns are not in {FILE_NAME}")
            continue
        taken.append(name)
        patterns += [p for p in ignorefile.patterns_of(text) if p not in patterns]
    if not patterns:
        return project_file
    say(f"took {len(patterns)} ignore pattern(s) from {', '.join(taken)} into {FILE_NAME} (ignore:)")
    block = "ignore:\n" + "".join(f"  - {json.dumps(p, ensure_ascii=False)}\n" for p in patterns[:10_000])
    return (project_file[0], project_file[1] + block.encode("utf-8"), project_file[2])


def _at(root: str, rel: str) -> str:
    return os.path.normpath(os.path.join(root, rel))


def detect(root: str) -> Dict[str, List[str]]:
    """The clients whose files `root` holds (what `agentrc import --from CLIENT` would read),
    each with the files found, in the importers' order; bounded to MAX_DEPTH levels."""
    from agentrc.importers.document import IMPORTERS

    found: Dict[str, List[str]] = {}
    base = len(root.rstrip(os.sep).split(os.sep))
    for here, dirs, names in os.walk(root):
        depth = len(here.rstrip(os.sep).split(os.sep)) - base
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and depth < MAX_DEPTH)
        for name in sorted(names):
            rel = os.path.relpath(os.path.join(here, name), root).replace(os.sep, "/")
            for client, importer in IMPORTERS.items():
                if rel.startswith(importer.own) and importer.wants(rel):
                    found.setdefault(client, []).append(rel)
    return {c: found[c] for c in IMPORTERS if c in found}


def _import_choice(args, found: Dict[str, List[str]]) -> Optional[List[str]]:
    """The clients to import (None: none), from the flags or a prompt on a terminal."""
    if not found:
        return None
    say("found client files:")
    for client, files in found.items():
        say(f"  {client}: " + ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else ""))
    every = list(found)
    if args.do_import is not None:
        return every if args.do_import else None
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        say(f"not imported (no terminal to ask): run 'agentrc init --import' or 'agentrc import {args.dir} --out ai'")
        return None
    try:
        answer = input(f"Import the {', '.join(every)} files into ai/? [Y/n] ")
    except EOFError:
        answer = "n"
    return every if answer.strip().lower() in ("", "y", "yes") else None


def _next_steps(root: str, found: Dict[str, List[str]], take) -> None:
    say("next: " + ("'agentrc build --adopt' writes the client files, once taking over the hand-written ones the "
                    "import read (then 'agentrc build')" if take else "'agentrc build' writes the client files")
        + "; 'agentrc lint' checks the sources")
    say("commit: agentrc.yaml, ai/, the client files 'agentrc build' writes, and agentrc.lock.json when you "
        "'agentrc add' sources; ignore: .agentrc/ (agentrc's own record of what it wrote)")
