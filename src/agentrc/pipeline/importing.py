"""The portable side of `agentrc import`: what it writes lints clean.

The importers map client files to a canonical document and the document to portable items;
both are written to keep every item lintable, but a registry's lint is the judge. An item
whose portable form still fails it is left out (AR132) and the rest is written; with
`strict` the lint errors stand and nothing is written.
"""

from __future__ import annotations

import posixpath
from typing import Any, Dict, List, Sequence, Set, Tuple

from agentrc.clients import registry as client_registry
from agentrc.diagnostics import WARNING, Diagnostic, Diagnostics
from agentrc.importers import document as importer
from agentrc.model import SourceTree
from agentrc.pipeline import stages


def portable_that_lints(doc: Dict[str, Any], fields: Dict[str, Dict[str, Any]], out: str, source: str,
                        strict: bool = False) -> Tuple[SourceTree, Tuple[Diagnostic, ...]]:
    """The portable items of `doc` (paths relative to the registry `out`) and the import's
    diagnostics about them: losses (AR130, at `source`), lint of the result, and one AR132
    per item left out. Each round drops every item lint rejects; a round that drops nothing
    ends it, so it runs at most once per item and, in practice, twice."""
    skip: Set[Tuple[str, str]] = set()
    skipped: List[Diagnostic] = []
    while True:
        lossy = Diagnostics()
        tree = importer.portable_from_document(doc, lossy, source, fields, frozenset(skip),
                                               client_registry.passthrough_blocks())
        _, checked = stages.lint(importer.relative(tree, out))
        rejected = _first_errors(checked, out)
        bad = set(rejected) - skip
        if strict or not bad:
            break
        for where in sorted(bad):
            first = rejected[where]
            skipped.append(Diagnostic(first.path, first.line, first.col, WARNING, "AR132",
                                      f"{where[0][:-1]} {where[1]} is not imported: its portable form fails lint "
                                      f"({first.code}: {first.message})"))
        skip |= bad
    return tree, tuple(sorted(set(lossy.sorted() + checked + tuple(skipped))))


def _first_errors(diags: Sequence[Diagnostic], out: str) -> Dict[Tuple[str, str], Diagnostic]:
    """The item directories ("rules", NAME) that lint errors in `diags` point into, each with
    the first of its errors."""
    found: Dict[Tuple[str, str], Diagnostic] = {}
    for d in diags:
        if d.is_error:
            rel = posixpath.relpath(d.path, out) if out else d.path
            where = importer.item_dir(rel)
            if where is not None and not rel.startswith(".."):
                found.setdefault(where, d)
    return found
