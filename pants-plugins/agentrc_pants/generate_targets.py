"""`agentrc_items` generates one item target per entrypoint in its directory."""

from __future__ import annotations

import os

from pants.engine.fs import PathGlobs, Paths
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import GeneratedTargets, GenerateTargetsRequest
from pants.engine.unions import UnionMembership, UnionRule

from agentrc.model import ENTRYPOINTS
from agentrc_pants.target_types import ITEM_TARGETS, AgentrcItemsGeneratorTarget


class GenerateAgentrcItems(GenerateTargetsRequest):
    generate_from = AgentrcItemsGeneratorTarget


@rule
async def generate_agentrc_items(request: GenerateAgentrcItems, union_membership: UnionMembership) -> GeneratedTargets:
    address = request.template_address
    found = await Get(Paths, PathGlobs([os.path.join(address.spec_path, e) for e in sorted(ENTRYPOINTS)]))
    targets = []
    for path in sorted(found.files):
        entry = os.path.basename(path)
        kind = ENTRYPOINTS[entry]
        cls = ITEM_TARGETS[kind]
        targets.append(cls({**request.template, "source": entry}, address.create_generated(kind.value),
                           union_membership, residence_dir=address.spec_path))
    return GeneratedTargets(request.generator, targets)


def rules():
    return [*collect_rules(), UnionRule(GenerateTargetsRequest, GenerateAgentrcItems)]
