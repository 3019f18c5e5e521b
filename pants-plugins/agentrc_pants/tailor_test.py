"""`tailor`: one recursive agentrc_items per registry root (else one per item directory), one
agentrc_bundle per manifest."""

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


def test_tailor_skips_bundle_files_that_discovery_skips():
    """Spec 001 §2.2: a `*.bundle.yaml` without an integer `schema:` is not a bundle; tailor
    proposes no target for it, as discovery builds none (else `pants package ::` fails)."""
    runner = make_rule_runner(QueryRule(PutativeTargets, [PutativeAgentrcTargetsRequest, AllOwnedSources]))
    runner.write_files({
        "cfg/core.bundle.yaml": "schema: 1\nname: core\n",
        "cfg/ci.bundle.yaml": "stages: [build, test]\n",  # some other tool's file
        "cfg/draft.bundle.yaml": "schema: \"1\"\nname: draft\n",
        "cfg/flag.bundle.yaml": "schema: true\n",
        "cfg/list.bundle.yaml": "- schema: 1\n",
        "cfg/broken.bundle.yaml": "schema: [1\n",
        "cfg/latin1.bundle.yaml": b"schema: 1\nname: caf\xe9\n",
    })
    result = runner.request(PutativeTargets, [PutativeAgentrcTargetsRequest(("cfg",)), AllOwnedSources([])])
    assert result == PutativeTargets([
        PutativeTarget.for_target_type(AgentrcBundleTarget, "cfg", "core", ["core.bundle.yaml"],
                                       kwargs={"source": "core.bundle.yaml"}),
    ])


def test_tailor_puts_one_recursive_generator_at_a_registry_root():
    """A registry whose items have no targets yet gets one `agentrc_items(recursive=True)` in
    its root's BUILD file (Pants re-parses every BUILD file in every run); a capability
    package's skills stay payload, and a registry with per-directory targets keeps adding them."""
    runner = make_rule_runner(QueryRule(PutativeTargets, [PutativeAgentrcTargetsRequest, AllOwnedSources]))
    runner.write_files({
        "reg/agentrc-registry.yaml": "schema: 1\n", "reg/a/RULE.md": "x", "reg/b/c/SKILL.md": "x",
        "reg/kit/oas-package.json": "{}", "reg/kit/skills/k/SKILL.md": "x",
        "old/agentrc-registry.yaml": "schema: 1\n", "old/a/RULE.md": "x", "old/b/RULE.md": "x",
    })
    result = runner.request(PutativeTargets, [PutativeAgentrcTargetsRequest(("reg", "reg/a", "reg/b/c", "reg/kit",
                                                                              "old", "old/a", "old/b")),
                                              AllOwnedSources(["old/a/RULE.md"])])
    items = sorted((t for t in result if t.type_alias == "agentrc_items"), key=lambda t: t.path)
    assert items == [
        PutativeTarget.for_target_type(AgentrcItemsGeneratorTarget, "old/b", "b", ["RULE.md"]),
        PutativeTarget.for_target_type(AgentrcItemsGeneratorTarget, "reg", "items", ["a/RULE.md", "b/c/SKILL.md"],
                                       kwargs={"recursive": True}),
    ]
