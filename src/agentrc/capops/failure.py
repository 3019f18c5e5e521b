"""How a capability verb says it stopped: `Failure` (its diagnostics, and the code of the OAS
kernel's `--json` envelope for them, so scripts written against `oas --json` read agentrc's
refusals alike) and `Outcome` (what a verb did: the envelope's result and the text report).
One table here maps agentrc's codes to the kernel's; a verb that knows better names its own.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import field

from agentrc.capops import safe as capsafe
from agentrc.classcode import dataclass
from agentrc.codes import CODES
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import captree
from agentrc.output import atomic

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence, Tuple

KERNEL_CODES = {
    # An invalid oas.json is the kernel's invalid-source (the source's capability is wrong), an
    # invalid oas-package.json its invalid-package-manifest. Every row is compared with the
    # kernel on twin scopes in tests/test_cap_codes_kernel.py; where agentrc refuses what the
    # kernel accepts (AR008, AR004, AR167, AR242 for an .npmrc...), the row is its nearest word.
    "AR004": "invalid-package-manifest", "AR008": "invalid-package-manifest", "AR150": "invalid-source",
    "AR151": "invalid-package-manifest", "AR152": "duplicate-capability-id", "AR154": "invalid-source",
    "AR155": "invalid-source", "AR156": "path-escape", "AR157": "capability-not-self-contained",
    "AR158": "invalid-package-manifest", "AR159": "invalid-lock", "AR160": "invalid-source",
    "AR161": "integrity-drift", "AR162": "remove-blocked", "AR163": "incompatible-oas",
    "AR164": "duplicate-package-identity", "AR165": "legacy-lock", "AR166": "unknown-capability",
    "AR167": "path-escape", "AR255": "invalid-package-manifest", "AR256": "invalid-package-manifest",
    "AR257": "path-escape", "AR224": "path-escape", "AR225": "invalid-source", "AR242": "invalid-package-manifest",
    "AR054": "invalid-source", "AR241": "invalid-source",
}


class Failure(Exception):
    """The operation stopped; nothing was changed. `kernel_code` overrides the envelope code."""

    def __init__(self, diagnostics: Sequence[Diagnostic], kernel_code: str = ""):
        self.diagnostics = tuple(sorted(set(shown(d) for d in diagnostics)))
        super().__init__("\n".join(d.format() for d in self.diagnostics))
        first = next((d for d in self.diagnostics if d.is_error), None)
        self.kernel_code = kernel_code or (KERNEL_CODES.get(first.code, "invalid-source") if first else "")


def shown(d: Diagnostic) -> Diagnostic:
    """`d` with its path relative to the working directory when it lies below it."""
    if os.path.isabs(d.path):
        rel = os.path.relpath(d.path)
        if not rel.startswith(".."):
            return dataclasses.replace(d, path=rel)
    return d


def fail(path: str, code: str, message: str, kernel_code: str = "") -> Failure:
    d = Diagnostics()
    d.error(path, (0, 0), code, message)
    return Failure(d.items, kernel_code)


@dataclass
class Outcome:
    """What a command did: `result` is the --json envelope's result, `lines` the text report,
    `failed` whether anything failed (bare install reports failures per artifact)."""

    result: Dict[str, Any]
    lines: List[str] = field(default_factory=list)
    warnings: Tuple[Diagnostic, ...] = ()
    failed: bool = False


def noted(what: Any, notes: Tuple[Diagnostic, ...]) -> Any:
    """An Outcome or a Failure with the warnings of the recovery its run began with."""
    if not notes:
        return what
    if isinstance(what, Outcome):
        what.warnings = tuple(notes) + tuple(what.warnings)
        return what
    if isinstance(what, Failure):
        return Failure(what.diagnostics + tuple(notes), what.kernel_code)
    return what


def failure_of(exc: BaseException, label: str, scope: str) -> BaseException:
    """The Failure to report for what stopped a transaction (anything else than a refusal
    or an I/O error goes on as it is)."""
    if isinstance(exc, Failure):
        return exc
    if isinstance(exc, captree.TreeError):
        # A tree that cannot be walked (a FIFO or device in it, say) is the kernel's
        # invalid-source: the source's content, not a declared path, is wrong.
        return fail(exc.rel or label, exc.code, exc.message, "invalid-source")
    if isinstance(exc, capsafe.Escape):
        return fail(exc.path, exc.code, exc.message)
    if isinstance(exc, RecursionError):
        return fail(label, "AR156", "a chain of symbolic links too long to follow")
    if isinstance(exc, atomic.UnsafeWrite):
        return fail(exc.filename or scope, "AR224", f"{exc.what}: agentrc never writes through a symbolic link")
    if isinstance(exc, OSError):
        return fail(exc.filename or scope, "AR142", f"cannot read or write: {exc.strerror}")
    return exc


def kernel_code(code: str) -> str:
    """The OAS kernel's envelope code for one of agentrc's codes."""
    return KERNEL_CODES.get(code, CODES[code].name if code in CODES else "invalid-source")

