"""Generation as a sandboxed process, for the Pants plugin's `[agentrc].execution = "process"`.

Run as `python -S -c '<bootstrap>' request.json` inside a Pants sandbox that holds one
item directory's files, the agentrc core and its pure-Python dependencies. It parses and
renders that directory and writes the build-memo entries as JSON to `__entries__.json`;
the plugin assembles targets from them and reports diagnostics itself, exactly as in
the in-process mode.
"""

from __future__ import annotations

import json
import sys
from typing import List

from agentrc.memo import codec as memocodec
from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import warm

ENTRIES = "__entries__.json"


def main(argv: List[str]) -> int:
    """Parse and render one item directory; the memo entries go out as JSON (memocodec)."""
    with open(argv[0], encoding="utf-8") as fh:
        req = json.load(fh)
    executable = set(req["executable"])
    files = []
    for path in req["files"]:
        with open(path, "rb") as fh:
            files.append(SourceFile(path, fh.read(), path in executable))
    entries = warm.entries(SourceTree(tuple(files)), req["clients"])
    with open(ENTRIES, "wb") as fh:
        fh.write(memocodec.dumps(entries))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
