"""`tailor`: one agentrc_items per item directory, one agentrc_bundle per manifest."""

from __future__ import annotations

from pants.core.goals.tailor import AllOwnedSources, PutativeTarget, PutativeTargets
from pants.testutil.rule_runner import QueryRule

from agentrc_pants.tailor import PutativeAgentrcTargetsRequest
from agentrc_pants.target_types import AgentrcBundleTarget, AgentrcItemsGeneratorTarget
from agentrc_pants.testutil import make_rule_runner


def test_tailor_finds_item_dirs_and_bundles():
    runner = make_rule_runner(QueryRule(PutativeTargets, [PutativeAgentrcTargetsRequest, AllOwnedSources]))
    runner.write_files({
        "reg/a/RULE.md": "x", "reg/a/SKILL.md": "x", "reg/a/notes.md": "x",
        "reg/owned/AGENT.md": "x",
        "reg/core.bundle.yaml": "schema: 1\n",
    })
    result = runner.request(PutativeTargets, [PutativeAgentrcTargetsRequest(("reg", "reg/a", "reg/owned")),
                                              AllOwnedSources(["reg/owned/AGENT.md"])])
    assert result == PutativeTargets([
        PutativeTarget.for_target_type(AgentrcItemsGeneratorTarget, "reg/a", "a", ["RULE.md", "SKILL.md"]),
        PutativeTarget.for_target_type(AgentrcBundleTarget, "reg", "core", ["core.bundle.yaml"],
                                       kwargs={"source": "core.bundle.yaml"}),
    ])
