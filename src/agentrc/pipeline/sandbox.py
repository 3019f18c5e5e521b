"""Generation as a sandboxed process, for the Pants plugin's `[agentrc].execution = "process"`.

Run as `python -S -c '<bootstrap>' request.json` inside a Pants sandbox that holds one
item directory's files, the agentrc core and its pure-Python dependencies. It parses and
renders that directory and writes the build-memo entries as JSON to `__entries__.json`;
the plugin assembles targets from them and reports diagnostics itself, exactly as in
the in-process mode.
"""

from __future__ import annotations

import json
import os
import sys

from agentrc.diagnostics import Diagnostic
from agentrc.inputs.fetch import Fetcher
from agentrc.memo import codec as memocodec
from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import warm
from agentrc.sources import dsl

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List

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


FETCHED = "__fetched__.json"
FETCH_OUT = "src"


def fetch_main(argv: List[str]) -> int:
    """Fetch one locked source at its commit (`{"source": ..., "commit": ...}` in the request
    file) with `agentrc.inputs.fetch`, into `src/`; the files read and the diagnostics go to
    `__fetched__.json`. For the Pants backend's lock target: a Process keyed by the source
    and the commit, so the fetch is cached locally and remotely like any other."""
    with open(argv[0], encoding="utf-8") as fh:
        req = json.load(fh)
    out: dict = {"diagnostics": [], "files": [], "executable": []}
    try:
        source = dsl.parse(req["source"])
    except dsl.SourceError as exc:
        out["diagnostics"].append(Diagnostic("<lock>", 0, 0, "error", exc.code, str(exc)).to_json())
    else:
        fetched = Fetcher(base=".", cache=os.path.abspath("__cache__")).fetch(source, req["commit"])
        out["diagnostics"] = [d.to_json() for d in fetched.diagnostics]
        for f in fetched.tree.files if fetched.ok else ():
            rel = os.path.relpath(f.path, fetched.root).replace(os.sep, "/")
            target = os.path.join(FETCH_OUT, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as fh:
                fh.write(f.content)
            out["files"].append(rel)
            if f.executable:
                out["executable"].append(rel)
    with open(FETCHED, "w", encoding="utf-8") as fh:
        json.dump(out, fh, sort_keys=True)
    # Non-zero on an error, so that Pants does not cache a failed fetch (an unreachable remote
    # may answer next time); the diagnostics are in the file either way.
    return 1 if any(d["severity"] == "error" for d in out["diagnostics"]) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
