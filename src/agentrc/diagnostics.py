"""Diagnostics: every problem agentrc finds, with a 1-based position, a code and a hint.

Validation never stops at the first problem: each stage appends to a `Diagnostics`
collector and the caller decides, once everything ran, whether to fail. This is what lets
the CLI print all problems at once and write nothing when any of them is an error.
"""

from __future__ import annotations

import re
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.codes import CODES
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Iterable, List, Tuple

# Escaped by `printable`: C0 controls (tab and newline included: a name holds neither),
# DEL, C1 controls; the soft hyphen; the Arabic letter mark and the Mongolian vowel
# separator; zero-width spaces and joiners, directional marks; line and paragraph
# separators; directional embeddings, overrides and isolates; word joiner and the
# invisible operators; the deprecated format controls; the byte order mark; interlinear
# annotation controls; tag characters. Every one of these is `not str.isprintable()`,
# which is what makes `printable` one C call for a string that holds none of them.
_ESCAPED = pattern("[\x00-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                   "\ufff9-\ufffb\U000e0000-\U000e007f\ud800-\udfff]")  # lone surrogates: no terminal can hold one
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match) -> str:
    c = m.group()
    short = _SHORT.get(c)
    if short is not None:
        return short
    n = ord(c)
    if n <= 0xff:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n <= 0xffff else f"\\U{n:08x}"


def printable(s: str) -> str:
    """`s` with every control, bidirectional and invisible format character written as an
    escape (`\\x1b`, `\\n`, `\\u202e`, `\\U000e0041`); everything else, non-ASCII letters
    and emoji included, unchanged. The one printer of text agentrc did not write (names and
    paths from a registry, a fetched source, a lock): printed raw, ESC rewrites the terminal
    and a newline or a carriage return forges a line (`agentrc.text.shown` says more; it is
    here because `Diagnostic.format` uses it and this module imports no stage). A backslash
    stays a backslash: the point is that nothing reaches the terminal as a control, not that
    the escape can be undone."""
    if s.isprintable():  # every escaped character is non-printable: the common case, one C call
        return s
    return _ESCAPED.sub(_escape, s)


# Credentials in URLs (`hide_credentials`): the user information of any URL (a token is
# often the whole of it: https://TOKEN@host), up to its last '@' (https://a@b:SECRET@host),
# and any `user:password@` before a host and ':' or '/', as a `scp`-like git location writes
# it (`claude:plugin@market`, a requirement's name, is none).
_URL_USERINFO = pattern(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/\s'\"]*)@")
_PASSWORD = pattern(r"([^\s/@:'\"]*):([^\s/@'\"]+)@(?=[A-Za-z0-9][A-Za-z0-9.-]*[:/])")  # user:pw@host: or /


def hide_credentials(s: str) -> str:
    """`s` with credentials in URLs written `***`: every user information of a URL except an
    ssh user name alone (`ssh://git@host` names no secret), and every `user:password@`.
    What agentrc shows (diagnostics, messages) never holds a password or a token, whatever
    a source, a lock or a package spelled (`agentrc.sources.dsl.credentials` uses it to
    refuse them in the first place)."""
    if "@" not in s:  # the common case: nothing to look at
        return s

    def userinfo(m: re.Match) -> str:
        if m.group(1).lower().endswith("ssh://") and ":" not in m.group(2):
            return m.group(0)
        return m.group(1) + "***@"

    return _PASSWORD.sub(lambda m: m.group(1) + ":***@", _URL_USERINFO.sub(userinfo, s))


ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding. `line`/`col` are 1-based; 0 means "the file as a whole"."""

    path: str
    line: int
    col: int
    severity: str
    code: str
    message: str
    hint: str = ""

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered diagnostic code {self.code!r}")

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def format(self) -> str:
        """`path:line:col: severity[CODE] message`, yamllint-style, then the hint indented;
        the path, message and hint `printable` (they hold names from the input: a newline or
        ESC in one must not forge or erase a line of the output)."""
        where = printable(hide_credentials(self.path))
        if self.line:
            where += f":{self.line}:{max(self.col, 1)}"
        text = f"{where}: {self.severity}[{self.code}] {printable(hide_credentials(self.message))}"
        if self.hint:
            text += f"\n  hint: {printable(self.hint)}"
        return text

    def to_json(self) -> dict:
        return {
            "path": hide_credentials(self.path),
            "line": self.line,
            "col": self.col,
            "severity": self.severity,
            "code": self.code,
            "message": hide_credentials(self.message),
            "hint": self.hint,
        }


@dataclass
class Diagnostics:
    """A mutable collector used while a stage runs; frozen into a tuple when it is done."""

    items: List[Diagnostic] = field(default_factory=list)

    def error(self, path: str, pos: Tuple[int, int], code: str, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic(path, pos[0], pos[1], ERROR, code, message, hint or CODES[code].hint))

    def warning(self, path: str, pos: Tuple[int, int], code: str, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic(path, pos[0], pos[1], WARNING, code, message, hint or CODES[code].hint))

    def extend(self, other: Iterable[Diagnostic]) -> None:
        self.items.extend(other)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.items)

    def sorted(self) -> Tuple[Diagnostic, ...]:
        return tuple(sorted(set(self.items)))


class AgentrcError(Exception):
    """Raised by the high-level entry points when diagnostics contain errors."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics: Tuple[Diagnostic, ...] = tuple(sorted(set(diagnostics)))
        super().__init__("\n".join(d.format() for d in self.diagnostics))


def said_again(d: Diagnostic) -> bool:
    """Whether the same command over the tree this one leaves would report `d` again: what a
    stamp of a command with nothing to do keeps to print (a build's no-change stamp and
    replayed edit, a consumer command's). Not the warnings about this command's write itself:
    a recovery (AR142), a file that appeared while writing (AR091), an entry of a merged file
    added again (AR094), which the write settled."""
    return d.code != "AR142" and not (d.code in ("AR091", "AR094") and not d.is_error)


def count_summary(diags: Iterable[Diagnostic]) -> str:
    diags = list(diags)
    errors = sum(1 for d in diags if d.is_error)
    warnings = len(diags) - errors
    return f"{errors} error(s), {warnings} warning(s)"
