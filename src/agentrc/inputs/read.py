"""What the CLI reads for `lint`, `build` and `inspect`: portable sources and canonical projects.

A path that holds `ai.config.*` or `.ai/` is a canonical project (spec 000): its layers are
read (agentrc.inputs.config), merged and normalized (agentrc.canonical.document) and join the portable
items of every path (agentrc.inputs.tree) in one registry.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

from agentrc.canonical import document as canonical
from agentrc.clients import registry as client_registry
from agentrc.diagnostics import Diagnostic
from agentrc.fidelity import ItemReport
from agentrc.inputs import config as configload
from agentrc.inputs.tree import read_tree
from agentrc.loaded import Loaded, join
from agentrc.model import Registry, SourceTree
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


def read_inputs(paths: Sequence[str]) -> Inputs:
    # A canonical project is read through its layers only: its presets hold SKILL.md files
    # that are layer content, not portable items.
    read = read_tree([p for p in paths if not configload.is_project(p)])
    tree, explicit = read.tree, read.explicit
    documents = []
    capabilities = []
    registry: Optional[Registry] = None
    reports: Tuple[ItemReport, ...] = ()
    diags: Tuple[Diagnostic, ...] = read.diagnostics  # what could not be read travels with the canonical side
    h = hashlib.sha256(tree.digest().encode())
    for path in paths:
        if not configload.is_project(path):
            continue
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
    return Inputs(tree, explicit, tuple(documents), loaded, h.hexdigest(), tuple(capabilities))
