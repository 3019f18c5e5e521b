"""The formatting run `agentrc fmt`, `pants fmt` and lint's canonical-form check share.

Enters: source files as (path, bytes). Leaves: the new text of every file that changes
and the diagnostics (AR008 for bytes that are not UTF-8, the formatter's refusals, and
AR101 for each file not in canonical form when only checking). Front ends write the
texts (or not) and print; the rules live here once.
"""

from __future__ import annotations

from agentrc.classcode import dataclass
from agentrc.clients import registry as client_registry
from agentrc.codes import CODES
from agentrc.diagnostics import Diagnostic
from agentrc.portable.fmt import Formatted, format_source, formattable

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Iterable, Tuple


@dataclass(frozen=True)
class FormatRun:
    """What `agentrc fmt` found: the files it would change, its diagnostics and how many it looked at."""
    outputs: Tuple[Tuple[str, str], ...]  # (path, canonical text) of each file that changes
    diagnostics: Tuple[Diagnostic, ...]  # sorted
    sources: int  # formattable files looked at

    @property
    def changed(self) -> Tuple[str, ...]:
        return tuple(path for path, _ in self.outputs)

    @property
    def refused(self) -> int:
        """Files that could not be formatted (not UTF-8, or the formatter refused)."""
        return len({d.path for d in self.diagnostics if d.code != "AR101"})

    @property
    def failed(self) -> bool:
        return any(d.is_error for d in self.diagnostics)


def format_text(path: str, text: str, style: bool = True) -> Formatted:
    """`text` in canonical form, with the registered clients' passthrough blocks in order;
    `style`: with the body's stylistic findings fixed (`portable.fmt`)."""
    return format_source(path, text, client_registry.passthrough_blocks(), style)


def not_canonical(path: str, severity: str = "error") -> Diagnostic:
    return Diagnostic(path, 1, 1, severity, "AR101", "not in canonical form", CODES["AR101"].hint)


def format_files(files: Iterable[Tuple[str, bytes]], check: bool = False, style: bool = True) -> FormatRun:
    """Format every formattable file of `files`; with `check`, each change is also an
    AR101 error (nothing is meant to be written). `style`: fix the bodies' stylistic
    findings (AR020, AR021, AR022) too, as `agentrc fmt` and `pants fmt` do; lint's
    canonical-form check passes False, because lint reports those findings itself."""
    outputs = []
    diags = []
    sources = 0
    for path, content in files:
        if not formattable(path):
            continue
        sources += 1
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            diags.append(Diagnostic(path, 1, 1, "error", "AR008", "not UTF-8", CODES["AR008"].hint))
            continue
        result = format_text(path, text, style)
        if result.error:
            diags.append(Diagnostic(path, result.error_line, 1, "error", result.error_code, result.error,
                                    CODES[result.error_code].hint))
        elif result.changed:
            outputs.append((path, result.text))
            if check:
                diags.append(not_canonical(path))
    return FormatRun(tuple(outputs), tuple(sorted(diags)), sources)
