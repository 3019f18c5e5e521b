"""`agentrc fmt PATH... [--check]`: rewrite sources in canonical form (spec 001 §3.8)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agentrc.cli.common import print_diags, say
from agentrc.inputs.tree import read_tree
from agentrc.output.writer import write_atomic
from agentrc.pipeline.fmt import format_files


def run(args) -> int:
    read = read_tree(args.paths)
    result = format_files(((f.path, f.content) for f in read.tree.files), args.check)
    result = replace(result, diagnostics=tuple(sorted(read.diagnostics + result.diagnostics)))
    if not args.check and not result.failed:
        for path, text in result.outputs:
            write_atomic(Path(path), text.encode("utf-8"))
    print_diags(result.diagnostics, args.format, {"changed": list(result.changed), "check": args.check})
    if args.format == "text":
        if result.failed and not args.check:
            say("fmt failed: nothing written")
        else:
            verb = "would reformat" if args.check else "reformatted"
            canonical = result.sources - len(result.changed) - result.refused
            tail = f", {result.refused} could not be formatted" if result.refused else ""
            say(f"{verb} {len(result.changed)} file(s), {canonical} already canonical{tail}")
    return 1 if result.failed else 0
