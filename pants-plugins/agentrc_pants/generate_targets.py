"""`agentrc_items` generates one item target per entrypoint in its directory, or, with
`recursive=True`, in its directory and every item directory below it.

The recursive form exists for large registries: Pants 2.17 re-parses every BUILD file in
every run (its parse depends on the session), and at 5,000 items the 5,000 one-line BUILD
files of one-directory generators were most of a no-op `pants package ::` (issue 13).
"""

from __future__ import annotations

import os
import posixpath
from typing import AbstractSet, Tuple

from pants.engine.fs import PathGlobs, Paths
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import GeneratedTargets, GenerateTargetsRequest
from pants.engine.unions import UnionMembership, UnionRule

from agentrc.capabilities.model import CAPABILITIES_DIR, CAPABILITY_FILE, PACKAGE_FILE
from agentrc.inputs.config import CONFIG_NAMES
from agentrc.model import ENTRYPOINTS
from agentrc.names import REGISTRY_MARKER
from agentrc_pants.target_types import (
    ITEM_TARGETS,
    AgentrcItemsGeneratorTarget,
    AgentrcRecursiveField,
    AgentrcSupportingFilesField,
)

# Files that make a directory something other than part of the registry above it: its own
# registry, a spec-000 project, a capability package or capability (whose skills are payload).
# The same directories `pants tailor` leaves out of item targets.
BOUNDARIES = (REGISTRY_MARKER, *CONFIG_NAMES, PACKAGE_FILE, CAPABILITY_FILE)


class GenerateAgentrcItems(GenerateTargetsRequest):
    generate_from = AgentrcItemsGeneratorTarget


def below_boundary(path: str, top: str, cut: AbstractSet[str]) -> bool:
    """Whether `path` (an entrypoint under `top`) lies in a directory below `top` that `cut`
    (the directories holding a boundary file) or a capability store takes out."""
    if f"/{CAPABILITIES_DIR}/" in f"/{path}":
        return True
    directory = posixpath.dirname(path)
    while directory and directory != top:
        if directory in cut:
            return True
        directory = posixpath.dirname(directory)
    return False


@rule
async def generate_agentrc_items(request: GenerateAgentrcItems, union_membership: UnionMembership) -> GeneratedTargets:
    address = request.template_address
    top = address.spec_path
    if not request.generator[AgentrcRecursiveField].value:
        found = await Get(Paths, PathGlobs([os.path.join(top, e) for e in sorted(ENTRYPOINTS)]))
        targets = []
        for path in sorted(found.files):
            entry = os.path.basename(path)
            kind = ENTRYPOINTS[entry]
            fields = {**request.template, "source": entry}
            targets.append(ITEM_TARGETS[kind](fields, address.create_generated(kind.value), union_membership,
                                              residence_dir=top))
        return GeneratedTargets(request.generator, targets)
    found = await Get(Paths, PathGlobs([os.path.join(top, "**", e) for e in sorted(ENTRYPOINTS)]
                                       + [os.path.join(top, "**", b) for b in BOUNDARIES]))
    cut = {posixpath.dirname(p) for p in found.files if posixpath.basename(p) in BOUNDARIES} - {top}
    supporting = request.template.get(AgentrcSupportingFilesField.alias)
    targets = []
    for path in sorted(found.files):
        entry = posixpath.basename(path)
        if entry not in ENTRYPOINTS or below_boundary(path, top, cut):
            continue
        rel = _relative(path, top)
        item_dir = posixpath.dirname(rel)
        fields = {**request.template, "source": rel,
                  AgentrcSupportingFilesField.alias: _under(item_dir, supporting)}
        targets.append(ITEM_TARGETS[ENTRYPOINTS[entry]](fields, address.create_file(rel), union_membership,
                                                        residence_dir=posixpath.dirname(path)))
    return GeneratedTargets(request.generator, targets)


def _relative(path: str, top: str) -> str:
    return path[len(top) + 1:] if top else path


def _under(item_dir: str, globs) -> Tuple[str, ...]:
    """The generator's `supporting_files` globs (relative to an item directory, as for a
    one-directory generator), made relative to the generator's directory for one item."""
    globs = tuple(globs) if globs is not None else AgentrcSupportingFilesField.default
    out = []
    for g in globs:
        negated = g.startswith("!")
        body = g[1:] if negated else g
        joined = posixpath.join(item_dir, body) if item_dir else body
        out.append(("!" if negated else "") + joined)
    return tuple(out)


def rules():
    return [*collect_rules(), UnionRule(GenerateTargetsRequest, GenerateAgentrcItems)]
