"""What every command shares: the usage error and how diagnostics are printed."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:
    from agentrc.diagnostics import Diagnostic


class UsageError(Exception):
    """A command line that cannot run (exit code 2), as opposed to content with errors (1)."""


def print_diags(diags: Sequence[Diagnostic], fmt: str, extra: Optional[dict] = None) -> None:
    """Text: each diagnostic on stderr. JSON: one document on stdout, with `extra` keys."""
    if fmt == "json":
        import json  # only here: the text format is what a no-change build prints
        doc = {"diagnostics": [d.to_json() for d in diags]}
        doc.update(extra or {})
        print(json.dumps(doc, indent=2, sort_keys=True))
        return
    for d in diags:
        print(d.format(), file=sys.stderr)
