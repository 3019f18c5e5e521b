"""`agentrc fmt PATH... [--check]`: rewrite sources in canonical form (spec 001 §3.8)."""

from __future__ import annotations

import os
from dataclasses import replace

from agentrc.cli.common import print_diags, say
from agentrc.diagnostics import Diagnostics
from agentrc.inputs.tree import read_tree
from agentrc.output import atomic
from agentrc.pipeline.fmt import format_files


def _write(paths, result):
    """Each formatted file written by the safe writer, rooted at the PATH it was found under;
    a file (or a directory on its way) that is a symbolic link is AR224, and then nothing is
    written at all."""
    roots = sorted((os.path.normpath(p) for p in paths), key=len, reverse=True)

    def root_of(path: str) -> str:
        norm = os.path.normpath(path)
        return next((r for r in roots if norm.startswith(r.rstrip(os.sep) + os.sep)), os.path.dirname(norm) or ".")

    diags = Diagnostics()
    for path, _ in result.outputs:
        try:
            atomic.check(path, root_of(path))
        except OSError as exc:
            diags.error(path, (0, 0), atomic.code_of(exc, "AR142"), f"cannot be written: {exc.strerror or exc}")
    if not diags.has_errors:
        for path, text in result.outputs:
            try:
                atomic.write_atomic(path, text.encode("utf-8"), root_of(path))
            except OSError as exc:
                diags.error(path, (0, 0), atomic.code_of(exc, "AR142"), f"cannot be written: {exc.strerror or exc}")
    if not diags.items:
        return result
    return replace(result, diagnostics=tuple(sorted(result.diagnostics + tuple(diags.items))))


def run(args) -> int:
    read = read_tree(args.paths)
    result = format_files(((f.path, f.content) for f in read.tree.files), args.check)
    result = replace(result, diagnostics=tuple(sorted(read.diagnostics + result.diagnostics)))
    if not args.check and not result.failed:
        result = _write(args.paths, result)
    print_diags(result.diagnostics, args.format, {"changed": list(result.changed), "check": args.check})
    if args.format == "text":
        if result.failed and not args.check:
            say("fmt failed: nothing written", style="error")
        else:
            verb = "would reformat" if args.check else "reformatted"
            canonical = result.sources - len(result.changed) - result.refused
            tail = f", {result.refused} could not be formatted" if result.refused else ""
            say(f"{verb} {len(result.changed)} file(s), {canonical} already canonical{tail}",
                style="warning" if args.check and result.changed else "ok")
    return 1 if result.failed else 0
