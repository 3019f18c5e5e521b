"""Colour on a terminal: diagnostics' severities and the summary lines, on stderr.

`--color auto` (the default) colours when stderr is a terminal that is not `dumb`, unless
NO_COLOR is set to anything non-empty (no-color.org); FORCE_COLOR set to anything but ""
or "0" colours even when piped (CI logs that render ANSI). `--color always` and `never`
override both. Plain ANSI SGR sequences: no library is needed to write four colours, and a
build with nothing to do imports nothing for them.

The sequences are added around text that was already made `printable` (a name from a
source cannot carry an escape of its own through here: docs/security.md).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import IO, Optional

_STYLES = {
    "error": "1;31",    # bold red
    "warning": "1;33",  # bold yellow
    "note": "1;36",     # bold cyan
    "ok": "32",         # green
    "bold": "1",
    "dim": "2",
}
_on = False


def wanted(choice: str, stream: Optional[IO[str]] = None, environ: Optional[dict] = None) -> bool:
    """Whether to colour: the flag, then NO_COLOR, then FORCE_COLOR, then a terminal."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty() and env.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def setup(choice: str) -> None:
    """Decide once per run (agentrc.cli.main), for every line this process prints."""
    global _on
    _on = wanted(choice)


def enabled() -> bool:
    return _on


def paint(text: str, style: str) -> str:
    """`text` in `style` when colour is on, else `text` itself."""
    if not _on or not text or style not in _STYLES:
        return text
    return f"\x1b[{_STYLES[style]}m{text}\x1b[0m"


def diagnostic(text: str, severity: str) -> str:
    """A formatted diagnostic (`path:line:col: severity[CODE] message`, then `  hint: ...`)
    with its location bold, its severity in its colour and its hint dim."""
    if not _on:
        return text
    first, sep, rest = text.partition("\n")
    marker = f": {severity}["
    at = first.find(marker)
    if at >= 0:
        where, tail = first[:at], first[at + 2:]
        code_end = tail.find("]") + 1
        first = f"{paint(where, 'bold')}: {paint(tail[:code_end], severity)}{tail[code_end:]}"
    return first + (sep + paint(rest, "dim") if rest else "")


def summary(text: str, errors: int, warnings: int = 0) -> str:
    """A command's last line: red when it failed, yellow with warnings, else green."""
    return paint(text, "error" if errors else "warning" if warnings else "ok")
