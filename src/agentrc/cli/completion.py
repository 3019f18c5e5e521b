"""`agentrc completion {bash,zsh,fish}`: print the shell's completion script.

The script is shtab's, generated from the same argparse parser the commands run with, so
every command, cap verb, flag and choice completes as it parses; arguments that name
directories or files complete as such (by their metavar). It is static: a TAB starts no
Python. shtab is imported here only.
"""

from __future__ import annotations

import argparse
import sys

from agentrc.cli.common import UsageError

# Metavars of arguments that name a directory, and of those that name a file (or either).
DIRECTORIES = ("DIR", "PROJECT", "REGISTRY", "SCOPE", "OUT", "AGENTS-ROOT")
FILES = ("PATH", "FILE", "FILE.json")


def run(args) -> int:
    sys.stdout.write(script(args.shell))
    return 0


def script(shell: str) -> str:
    try:
        import shtab
    except ImportError:  # pragma: no cover - a dependency of the package
        raise UsageError("completion needs the shtab package (pip install shtab)") from None
    from agentrc.cli import main

    parser = main._parser()
    _hint_paths(parser, shtab)
    return shtab.complete(parser, shell=shell)


def _hint_paths(parser: argparse.ArgumentParser, shtab) -> None:
    """Set shtab's `complete` on every argument whose metavar names a path, in every
    subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _hint_paths(sub, shtab)
            continue
        if action.choices is not None:
            continue
        if action.metavar in DIRECTORIES:
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
        elif action.metavar in FILES:
            action.complete = shtab.FILE  # type: ignore[attr-defined]
