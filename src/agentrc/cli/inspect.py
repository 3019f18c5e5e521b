"""`agentrc inspect PROJECT...`: a project's canonical document with the provenance of every part."""

from __future__ import annotations

import json
import os

from agentrc.canonical import show
from agentrc.cli.common import UsageError, print_diags
from agentrc.inputs.read import read_inputs
from agentrc.text.shown import json_printable, printable_lines


def run(args) -> int:
    inputs = read_inputs(args.paths)
    diags = inputs.canonical.diagnostics if inputs.canonical else ()
    roots = {r for r, _ in inputs.documents}
    missing = [p for p in args.paths if os.path.normpath(p).replace(os.sep, "/") not in roots
               and not any(d.is_error for d in diags)]
    for p in missing:
        raise UsageError(f"{p}: not a project (no ai.config.* and no .ai/ directory)")
    print_diags(diags, "text")
    if any(d.is_error for d in diags):
        return 1
    for root, document in inputs.documents:
        if args.json:
            print(json_printable(json.dumps({"project": root, **document.to_json()}, indent=2, ensure_ascii=False)))
        else:
            print(printable_lines(show.render_text(root, document)), end="")
    return 0
