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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Optional, Sequence, Tuple

from agentrc.diagnostics import Diagnostic
from agentrc.fidelity import ItemReport
from agentrc.inputs import tree as treeread
from agentrc.inputs.tree import is_project, read_tree
from agentrc.loaded import Loaded, join
from agentrc.model import Registry, SourceTree

if TYPE_CHECKING:
    from agentrc.canonical import document as canonical
    from agentrc.sources.lock import CapabilityRecord


@dataclass(frozen=True)
class Inputs:
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
    fresh: int = 0  # `stamped`: the files whose bytes were read (the record could not vouch for them)


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
                  signature=found.record, fresh=found.read)


def read_inputs(paths: Sequence[str]) -> Inputs:
    # A canonical project is read through its layers only: its presets hold SKILL.md files
    # that are layer content, not portable items.
    at = time.time_ns()
    seen: Dict[str, os.stat_result] = {}
    portable_only = not any(is_project(p) for p in paths)
    read = read_tree([p for p in paths if not is_project(p)], seen)
    tree, explicit = read.tree, read.explicit
    documents = []
    capabilities = []
    registry: Optional[Registry] = None
    reports: Tuple[ItemReport, ...] = ()
    diags: Tuple[Diagnostic, ...] = read.diagnostics  # what could not be read travels with the canonical side
    shas = treeread.digests(tree)
    h = hashlib.sha256(treeread.tree_digest(shas).encode())  # tree.digest(), each file hashed once
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
    signature = treeread.signature(tree, shas, seen, at) if portable_only else None
    return Inputs(tree, explicit, tuple(documents), loaded, h.hexdigest(), tuple(capabilities), signature)
