"""The portable side of `agentrc import`: what it writes lints clean.

The importers map client files to a canonical document and the document to portable items;
both are written to keep every item lintable, but a registry's lint is the judge. An item
whose portable form still fails it is left out (AR132) and the rest is written; with
`strict` the lint errors stand and nothing is written.
"""

from __future__ import annotations

import posixpath

from agentrc.clients import registry as client_registry
from agentrc.diagnostics import WARNING, Diagnostic, Diagnostics
from agentrc.importers import document as importer
from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import stages
from agentrc.text import yamlpos
from agentrc.text.frontmatter import split
from agentrc.text.yamlemit import dump_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import AbstractSet, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

CONTEXT = "context/project/CONTEXT.md"


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


def added_to(tree: SourceTree, previous: Callable[[str], Optional[bytes]], kept: AbstractSet[str] = frozenset(),
             join_context: bool = True) -> SourceTree:
    """`tree` (an import's portable files) joined with what an earlier import of other clients
    wrote into the same registry (`previous(path)`: its bytes, None when agentrc did not write
    it there; `kept`: the paths of it that stay): the bundle lists both imports' items (those
    still there) and servers; with `join_context`, the global context holds both texts, each
    paragraph once. An import of other clients adds to the first; it never takes away."""
    files = {f.path: f for f in tree.files}
    bundle, context = files.get(importer.BUNDLE), files.get(CONTEXT)
    old = previous(importer.BUNDLE) if bundle is not None else None
    if bundle is not None and old is not None:
        there = {"/".join(p.split("/")[:2]) for p in list(files) + list(kept) if p.count("/") >= 2}
        files[importer.BUNDLE] = SourceFile(importer.BUNDLE, _bundles_joined(old, bundle.content, there))
    old = previous(CONTEXT) if context is not None and join_context else None
    if context is not None and old is not None:
        files[CONTEXT] = SourceFile(CONTEXT, _contexts_joined(old, context.content))
    return SourceTree(tuple(files[p] for p in sorted(files)))


def _bundles_joined(old: bytes, new: bytes, there: AbstractSet[str]) -> bytes:
    try:
        before = yamlpos.load(old.decode("utf-8")).data
        after = yamlpos.load(new.decode("utf-8")).data
    except Exception:  # noqa: BLE001 - an earlier bundle agentrc cannot read is replaced, as before
        return new
    if not isinstance(before, dict) or not isinstance(after, dict):
        return new
    items: Dict[str, List[str]] = {}
    for source in (before.get("items") or {}, after.get("items") or {}):
        for kind, names in (source.items() if isinstance(source, dict) else ()):
            if isinstance(names, list):  # an earlier item listed only while its directory is there
                items[kind] = sorted(set(items.get(kind, [])) | {n for n in names if isinstance(n, str)
                                                                 and f"{_dir(kind)}/{n}" in there})
    joined = dict(after)
    order = ("rules", "skills", "agents", "commands", "hooks", "contexts")
    if items:
        joined["items"] = {k: items[k] for k in sorted(items, key=lambda k: order.index(k) if k in order else 9)}
    mcps = {**(before.get("mcps") or {}), **(after.get("mcps") or {})} if isinstance(before.get("mcps"), dict) \
        else after.get("mcps")
    if mcps:
        joined["mcps"] = mcps
    return dump_yaml(joined).encode("utf-8")


def _contexts_joined(old: bytes, new: bytes) -> bytes:
    try:
        body_old, body_new = split(old.decode("utf-8")).body, split(new.decode("utf-8")).body
    except UnicodeDecodeError:
        return new
    kept = [p for p in body_old.strip("\n").split("\n\n") if p.strip()]
    seen = {" ".join(p.split()) for p in kept}
    kept += [p for p in body_new.strip("\n").split("\n\n") if p.strip() and " ".join(p.split()) not in seen]
    head = new.decode("utf-8").split("\n---\n", 1)[0] + "\n---\n"
    return (head + "\n" + "\n\n".join(kept) + "\n").encode("utf-8")


def _dir(kind: str) -> str:
    """The directory a bundle's item kind is written in (`context/`, as examples/ names it)."""
    return "context" if kind == "contexts" else kind
