"""A small registry and a RuleRunner with the whole backend, shared by the plugin's tests."""

from __future__ import annotations

from pants.core.goals import package
from pants.testutil.rule_runner import RuleRunner

from agentrc.building import replan
from agentrc_pants import generation, register

REGISTRY = {
    "reg/rules/style/RULE.md": (
        "---\nschema: 1\ndescription: House style\nscope:\n  paths:\n    - \"src/**/*.py\"\n---\n\n"
        "## Style\n\nKeep functions short.\n"
    ),
    "reg/rules/style/BUILD": "agentrc_items()\n",
    "reg/skills/fix/SKILL.md": (
        "---\nschema: 1\ndescription: Use when fixing a bug\nrequires:\n  rules:\n    - style\n---\n\n"
        "## Fix a bug\n\nSee [notes](./notes.md).\n"
    ),
    "reg/skills/fix/notes.md": "# Notes\n",
    "reg/skills/fix/BUILD": "agentrc_items()\n",
    "reg/agents/helper/AGENT.md": (
        "---\nschema: 1\ndescription: Use when helping\nmodel: sonnet\ntools:\n  - read\n"
        "preload-skills:\n  - fix\n  - not-here\n---\n\n## Helper\n\nHelp.\n"
    ),
    "reg/agents/helper/BUILD": "agentrc_items()\n",
    "reg/pair/SKILL.md": "---\nschema: 1\ndescription: Use when pairing\n---\n\n## Pair\n\nPair up.\n",
    "reg/pair/RULE.md": "---\nschema: 1\nname: pair-rule\ndescription: Always pair\n---\n\n## Pair\n\nAlways.\n",
    "reg/pair/BUILD": "agentrc_items()\n",
    "reg/bundles/base.bundle.yaml": "schema: 1\nname: base\ndescription: Base\nitems:\n  agents:\n    - helper\n",
    "reg/bundles/BUILD": "agentrc_bundle(name='base', source='base.bundle.yaml')\n",
}


def make_rule_runner(*extra_rules) -> RuleRunner:
    # A runner is a new daemon: no package of an earlier test to replay onto (tests count plans).
    generation.LAST = replan.LastPackages()
    runner = RuleRunner(
        rules=[*register.rules(), *package.rules(), *extra_rules],
        target_types=register.target_types(),
    )
    runner.set_options([], env_inherit={"PATH"})
    return runner
