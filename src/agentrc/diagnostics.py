"""Diagnostics: every problem agentrc finds, with a 1-based position, a code and a hint.

Validation never stops at the first problem: each stage appends to a `Diagnostics`
collector and the caller decides, once everything ran, whether to fail. This is what lets
the CLI print all problems at once and write nothing when any of them is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, List, Tuple

from agentrc.codes import CODES

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
        """`path:line:col: severity[CODE] message`, yamllint-style, then the hint indented."""
        where = self.path
        if self.line:
            where += f":{self.line}:{max(self.col, 1)}"
        text = f"{where}: {self.severity}[{self.code}] {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
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


def count_summary(diags: Iterable[Diagnostic]) -> str:
    diags = list(diags)
    errors = sum(1 for d in diags if d.is_error)
    warnings = len(diags) - errors
    return f"{errors} error(s), {warnings} warning(s)"
