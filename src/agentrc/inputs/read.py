"""What the CLI reads for `lint`, `build` and `inspect`: portable sources and canonical projects.

A path that holds `ai.config.*` or `.ai/` is a canonical project (spec 000): its layers are
read (agentrc.inputs.config), merged and normalized (agentrc.canonical.document) and join the portable
items of every path (agentrc.inputs.tree) in one registry.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import tree as treeread
from agentrc.inputs.listings import Listings
from agentrc.inputs.tree import Root, SourcesChanged, is_project, read_tree
from agentrc.model import SourceFile, SourceTree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # imported where used: a no-change build needs neither reports nor registries
    from agentrc.canonical import document as canonical
    from agentrc.fidelity import ItemReport
    from agentrc.loaded import Loaded
    from agentrc.model import Registry
    from agentrc.sources.lock import CapabilityRecord


@dataclass(frozen=True)
class Inputs:
    """Everything a build read: the source tree, the canonical documents and the digest the no-change stamp keys."""
    tree: SourceTree
    explicit: Tuple[str, ...]
    documents: Tuple[Tuple[str, canonical.Document], ...]  # (project root, document)
    canonical: Optional[Loaded]
    digest: str  # of everything read, for the no-change stamp
    # (project root, what its capability references resolved to), for the project's lock
    capabilities: Tuple[Tuple[str, Tuple[CapabilityRecord, ...]], ...] = ()
    # The record of the sources' statuses for the next build's `stamped` (None: not kept, as
    # for canonical projects and symlinked sources).
    signature: Optional[dict] = None
    # `stamped`: the files whose bytes were read and the directories listed and recorded anew
    # (the record could not vouch for them): a record that would vouch for them next time.
    fresh: int = 0


def stamped(paths: Sequence[str], record: object) -> Optional[Inputs]:
    """`read_inputs(paths)`, with the sources' statuses standing for their bytes where
    `record` (the last build's `signature`) vouches for them
    (`agentrc.inputs.tree.stamped_digest`): those files are read only if something asks
    for their content. None when it cannot tell (a canonical project among `paths`, a file
    that is not plain): then `read_inputs`."""
    if any(is_project(p) for p in paths):
        return None
    found = treeread.stamped_digest(paths, record)
    if found is None:
        return None
    return Inputs(found.tree, found.explicit, (), None, hashlib.sha256(found.digest.encode()).hexdigest(),
                  signature=found.record, fresh=found.read + found.listed)


def read_inputs(paths: Sequence[str]) -> Inputs:
    # A canonical project is read through its layers only: its presets hold SKILL.md files
    # that are layer content, not portable items.
    from agentrc.loaded import Loaded, join
    from agentrc.model import Registry
    at = time.time_ns()
    seen: Dict[str, os.stat_result] = {}
    portable_only = not any(is_project(p) for p in paths)
    listings = Listings()
    read = read_tree([p for p in paths if not is_project(p)], seen, listings=listings)
    tree, explicit = read.tree, read.explicit
    documents = []
    capabilities = []
    registry: Optional[Registry] = None
    reports: Tuple[ItemReport, ...] = ()
    diags: Tuple[Diagnostic, ...] = read.diagnostics  # what could not be read travels with the canonical side
    shas = treeread.digests(tree)
    tree_digest = treeread.tree_digest(shas)  # tree.digest(), each file hashed once
    h = hashlib.sha256(tree_digest.encode())
    for path in paths:
        if not is_project(path):
            continue
        # The canonical front door, imported when a project is read (docs/architecture.md).
        from agentrc.canonical import document as canonical
        from agentrc.clients import registry as client_registry
        from agentrc.inputs import config as configload
        project, load_diags = configload.load_project(path)
        document, doc_diags = canonical.build_document(project.layers)
        capabilities.append((path, project.capabilities))
        diags += load_diags + doc_diags
        if any(d.is_error for d in load_diags + doc_diags):
            continue
        documents.append((project.root, document))
        h.update(json.dumps(document.to_json(), sort_keys=True).encode())
        conversion = canonical.convert(document, client_registry.client_names())
        reg, reg_diags = conversion.registry, conversion.diagnostics
        diags += reg_diags
        reports += conversion.reports
        if registry is None:
            registry = reg
        else:
            registry, joined = join(registry, reg)
            diags += joined
    loaded = None
    if registry is not None or diags:
        loaded = Loaded(registry or Registry(()), tuple(sorted(set(diags))), reports)
    signature = treeread.signature(tree, shas, seen, at, listings.record(), tree_digest) if portable_only else None
    tree = _releasable(tree, [p for p in paths if not is_project(p)], shas, seen)
    return Inputs(tree, explicit, tuple(documents), loaded, h.hexdigest(), tuple(capabilities), signature)


class Releasable(SourceFile):
    """A source read from disk whose bytes the parser may let go of (`release`) once its
    item directory is parsed: asked for again (by something that reads sources after
    parsing them), they are read again, inside the same root, and must match the sha256
    taken when they were first read, or the build starts over (`SourcesChanged`), as for
    a file the source stamp vouched for (`agentrc.inputs.tree.DeferredFile`). The digest
    is the one computed while reading, so the memo's keys hash nothing again."""

    _digest: bytes
    _root: Root  # the root it was read below, at the path its display path was made from

    def __init__(self, f: SourceFile, digest: bytes, root: Root):
        # One update of the instance's dict (the class is a frozen dataclass).
        self.__dict__.update(path=f.path, executable=f.executable, link=f.link, _bytes=f.content,
                             _digest=digest, _root=root)

    @property  # type: ignore[misc]  # a field of SourceFile, read-only here
    def content(self) -> bytes:  # type: ignore[override]
        data = self.__dict__.get("_bytes")
        if data is None:
            data = self._read_again()
        return data

    def _read_again(self) -> bytes:
        root = self._root
        rel = self.path[len(root.display) + 1:]
        at = os.path.join(root.path, *rel.split("/")) if rel else root.path
        f = treeread.read_file(at, self.path, root, Diagnostics())
        if f is None or f.link is not None or hashlib.sha256(f.content).digest() != self._digest:
            raise SourcesChanged(self.path)
        return f.content

    def sha256(self) -> bytes:
        return self._digest

    def release(self) -> None:
        self.__dict__.pop("_bytes", None)

    def __reduce__(self):
        return (SourceFile, (self.path, self.content, self.executable, self.link))


def _releasable(tree: SourceTree, paths: Sequence[str], shas: Dict[str, str],
                seen: Dict[str, os.stat_result]) -> SourceTree:
    """`tree` with each plain file (read as a regular file, not through a link) made
    `Releasable`, read again from the path its display path was made from."""
    roots: Dict[str, Root] = {}
    for p in paths:
        made = Root(p)
        roots.setdefault(made.display, made)
    out: List[SourceFile] = []
    for f in tree.files:
        root = _root_of(f.path, roots) if f.link is None and f.path in seen else None
        if root is None:
            out.append(f)
            continue
        out.append(Releasable(f, bytes.fromhex(shas[f.path]), root))
    return SourceTree(tuple(out))


def _root_of(display: str, roots: Dict[str, Root]) -> Optional[Root]:
    """The root a display path was read below (the nearest: `read_tree` keeps one file per
    display path, and any root it lies below reads it at the same place)."""
    d = display
    while True:
        root = roots.get(d)
        if root is not None:
            return root
        parent = d.rpartition("/")[0]
        if not parent or parent == d:
            return None
        d = parent
