"""What every command shares: the usage error and how diagnostics are printed."""

from __future__ import annotations

import json
import sys
from typing import Optional, Sequence

from agentrc.diagnostics import Diagnostic


class UsageError(Exception):
    """A command line that cannot run (exit code 2), as opposed to content with errors (1)."""


def print_diags(diags: Sequence[Diagnostic], fmt: str, extra: Optional[dict] = None) -> None:
    """Text: each diagnostic on stderr. JSON: one document on stdout, with `extra` keys."""
    if fmt == "json":
        doc = {"diagnostics": [d.to_json() for d in diags]}
        doc.update(extra or {})
        print(json.dumps(doc, indent=2, sort_keys=True))
        return
    for d in diags:
        print(d.format(), file=sys.stderr)
