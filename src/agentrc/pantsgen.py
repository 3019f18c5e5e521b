"""Generation as a sandboxed process, for the Pants plugin's `[agentrc].execution = "process"`.

Run as `python -S -c '<bootstrap>' request.json` inside a Pants sandbox that holds the
sources, the agentrc core and its pure-Python dependencies. With `"mode": "item-dir"` it
parses and renders one item directory and writes the memo entries as JSON to
`__entries__.json` (what the plugin uses); otherwise it packages a whole closure into
`__out__/` with diagnostics in `__diagnostics__.json`. It exits 0 either way: the plugin
reports diagnostics itself, exactly as in the in-process mode.
"""

from __future__ import annotations

import json
import os
import sys
from typing import List

from agentrc.model import SourceFile, SourceTree

OUT = "__out__"
DIAGNOSTICS = "__diagnostics__.json"
ENTRIES = "__entries__.json"


def main(argv: List[str]) -> int:
    with open(argv[0], encoding="utf-8") as fh:
        req = json.load(fh)
    if req.get("mode") == "item-dir":
        return _item_dir(req)
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


def _item_dir(req: dict) -> int:
    """Parse and render one item directory; the memo entries go out as JSON (memocodec)."""
    from agentrc import memocodec, parallel

    files = []
    for path in req["files"]:
        with open(path, "rb") as fh:
            files.append(SourceFile(path, fh.read(), path in set(req["executable"])))
    entries = parallel.entries(SourceTree(tuple(files)), req["clients"])
    with open(ENTRIES, "wb") as fh:
        fh.write(memocodec.dumps(entries))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
