"""Generation as a sandboxed process, for the Pants plugin's `[agentrc].execution = "process"`.

Run as `python -S -c '<bootstrap>' request.json` inside a Pants sandbox that holds the
sources, the agentrc core and its pure-Python dependencies. It writes the package tree
under `__out__/` and the diagnostics to `__diagnostics__.json`, and exits 0 either way:
the plugin reports diagnostics itself, exactly as in the in-process mode.
"""

from __future__ import annotations

import json
import os
import sys
from typing import List

from agentrc.model import SourceFile, SourceTree

OUT = "__out__"
DIAGNOSTICS = "__diagnostics__.json"


def main(argv: List[str]) -> int:
    with open(argv[0], encoding="utf-8") as fh:
        req = json.load(fh)
    executable = set(req["executable"])
    files = []
    for path in req["files"]:
        with open(path, "rb") as fh:
            files.append(SourceFile(path, fh.read(), path in executable))
    from agentrc import pipeline

    plan, outputs = pipeline.package(SourceTree(tuple(files)), req["clients"], req["bundles"],
                                     req["entrypoints"], req["strict"], req["explicit"])
    for path, content, is_exec in outputs:
        target = os.path.join(OUT, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(content)
        os.chmod(target, 0o755 if is_exec else 0o644)
    summary = pipeline.build.summary(plan.reports)
    with open(DIAGNOSTICS, "w", encoding="utf-8") as fh:
        json.dump({"diagnostics": [d.to_json() for d in plan.diagnostics], "files": len(plan.files),
                   "summary": summary}, fh)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
