"""What every command shares: the usage error and how diagnostics and lines are printed."""

from __future__ import annotations

import sys

# `agentrc.text.shown.printable`, from the module that defines it: a build with nothing to
# do (or an edit) imports no `agentrc.text` module (tests/test_edit_cost.py).
from agentrc.cli import colour
from agentrc.diagnostics import printable

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import IO, Optional, Sequence

    from agentrc.diagnostics import Diagnostic


class UsageError(Exception):
    """A command line that cannot run (exit code 2), as opposed to content with errors (1)."""


def say(line: str, out: Optional[IO[str]] = None, style: str = "") -> None:
    """Print one line of a summary (on stderr unless `out`), `printable`: the lines name
    items, sources, paths and servers that came from someone else's repository or a lock,
    and a name holding ESC, a carriage return or a newline must not rewrite or forge a line
    of the terminal's output (docs/security.md, "What agentrc prints and reports").
    `style`: its colour on a terminal (agentrc.cli.colour; stderr only)."""
    text = printable(line)
    if style and out is None:
        text = colour.paint(text, style)
    print(text, file=out or sys.stderr)


def summarize(line: str, errors: int, warnings: int = 0) -> None:
    """A command's closing line on stderr, coloured by how it went (on a terminal)."""
    print(colour.summary(printable(line), errors, warnings), file=sys.stderr)


def unknown(what: str, names: Sequence[str], known: Sequence[str]) -> str:
    """`unknown client(s): claud; did you mean 'claude'? (known: ...)`, a usage error's text."""
    from agentrc.suggest import closest

    near = [n for n in (closest(name, known) for name in names) if n]
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    return f"unknown {what}: {', '.join(names) or '(none)'}{hint} (known: {', '.join(known)})"


def print_diags(diags: Sequence[Diagnostic], fmt: str, extra: Optional[dict] = None) -> None:
    """Text: each diagnostic on stderr. JSON: one document on stdout, with `extra` keys."""
    if fmt == "json":
        import json  # only here: the text format is what a no-change build prints
        doc = {"diagnostics": [d.to_json() for d in diags]}
        doc.update(extra or {})
        print(json.dumps(doc, indent=2, sort_keys=True))
        return
    for d in diags:
        print(colour.diagnostic(d.format(), d.severity), file=sys.stderr)
