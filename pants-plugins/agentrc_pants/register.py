"""The agentrc Pants backend: `backend_packages = ["agentrc_pants"]`."""

from __future__ import annotations

from agentrc_pants import (
    capability,
    cli_process,
    collection_hash,  # noqa: F401  (fixes Pants 2.17's constant Collection hash on import)
    config,
    dependency_inference,
    fmt,
    generate_targets,
    generation,
    lint,
    lockfile,
    merging,
    oas_lock,
    oas_package,
    package,
    project,
    sources,
    sync,
    tailor,
    update_lock,
)
from agentrc_pants.capability import AgentrcCapabilityTarget
from agentrc_pants.config import AgentrcConfigTarget
from agentrc_pants.oas_lock import AgentrcOasLockTarget
from agentrc_pants.oas_package import AgentrcOasPackageTarget
from agentrc_pants.target_types import (
    AgentrcAgentTarget,
    AgentrcBundleTarget,
    AgentrcCommandTarget,
    AgentrcContextTarget,
    AgentrcHookTarget,
    AgentrcItemsGeneratorTarget,
    AgentrcLockTarget,
    AgentrcRegistryTarget,
    AgentrcRuleTarget,
    AgentrcSkillTarget,
)


def target_types():
    return [AgentrcRuleTarget, AgentrcSkillTarget, AgentrcAgentTarget, AgentrcCommandTarget, AgentrcHookTarget,
            AgentrcContextTarget, AgentrcItemsGeneratorTarget, AgentrcBundleTarget, AgentrcConfigTarget,
            AgentrcRegistryTarget, AgentrcLockTarget, AgentrcOasPackageTarget, AgentrcCapabilityTarget,
            AgentrcOasLockTarget]


def rules():
    return [
        *generate_targets.rules(),
        *sources.rules(),
        *generation.rules(),
        *merging.rules(),
        *package.rules(),
        *project.rules(),
        *lockfile.rules(),
        *dependency_inference.rules(),
        *tailor.rules(),
        *lint.rules(),
        *fmt.rules(),
        *sync.rules(),
        *config.rules(),
        *oas_package.rules(),
        *capability.rules(),
        *oas_lock.rules(),
        *cli_process.rules(),
        *update_lock.rules(),
    ]
