"""Dependency inference: requires, bundle items/requires and soft preloads; unknown names fail."""

from __future__ import annotations

import pytest
from pants.engine.addresses import Address
from pants.engine.internals.scheduler import ExecutionError
from pants.engine.target import InferredDependencies
from pants.testutil.rule_runner import QueryRule

from agentrc_pants.dependency_inference import InferAgentrcDependencies
from agentrc_pants.target_types import AgentrcFieldSet
from agentrc_pants.testutil import REGISTRY, make_rule_runner


@pytest.fixture
def rule_runner():
    runner = make_rule_runner(QueryRule(InferredDependencies, [InferAgentrcDependencies]))
    runner.write_files(REGISTRY)
    return runner


def infer(runner, address):
    tgt = runner.get_target(address)
    result = runner.request(InferredDependencies, [InferAgentrcDependencies(AgentrcFieldSet.create(tgt))])
    return set(result.include)


def test_item_requires_and_soft_preloads(rule_runner):
    assert infer(rule_runner, Address("reg/skills/fix", generated_name="skill")) == {
        Address("reg/rules/style", generated_name="rule")}
    # `not-here` is a preloaded skill absent from the registry: a runtime hint, no edge, no error.
    assert infer(rule_runner, Address("reg/agents/helper", generated_name="agent")) == {
        Address("reg/skills/fix", generated_name="skill")}


def test_bundle_items(rule_runner):
    assert infer(rule_runner, Address("reg/bundles", target_name="base")) == {
        Address("reg/agents/helper", generated_name="agent")}


def test_unknown_names_fail_naming_target_and_item(rule_runner):
    rule_runner.write_files({"reg/bundles/bad.bundle.yaml": "schema: 1\nname: bad\ndescription: d\n"
                                                           "items:\n  rules:\n    - ghost\n",
                             "reg/bundles/BUILD": "agentrc_bundle(name='base', source='base.bundle.yaml')\n"
                                                  "agentrc_bundle(name='bad', source='bad.bundle.yaml')\n"})
    with pytest.raises(ExecutionError) as exc:
        infer(rule_runner, Address("reg/bundles", target_name="bad"))
    assert "reg/bundles:bad (bundle bad) references rule 'ghost'" in str(exc.value)


def test_requires_cycles_fail_in_agentrc_words(rule_runner):
    rule_runner.write_files({
        "reg/a/RULE.md": "---\ndescription: a\nrequires:\n  rules: [b]\n---\n\n## A\n",
        "reg/a/BUILD": "agentrc_items()\n",
        "reg/b/RULE.md": "---\ndescription: b\nrequires:\n  rules: [a]\n---\n\n## B\n",
        "reg/b/BUILD": "agentrc_items()\n",
    })
    with pytest.raises(ExecutionError) as exc:
        infer(rule_runner, Address("reg/a", generated_name="rule"))
    assert "is on a requires cycle: rule a -> rule b -> rule a" in str(exc.value)


def test_bad_field_values_are_rejected(rule_runner):
    rule_runner.write_files({"reg/bad/RULE.md": "---\ndescription: x\n---\n\n## X\n",
                             "reg/bad/BUILD": "agentrc_items(clients=['emacs'])\n"})
    with pytest.raises(ExecutionError) as exc:
        rule_runner.get_target(Address("reg/bad", generated_name="rule"))
    assert "emacs" in str(exc.value) and "claude" in str(exc.value)


def test_an_edit_rereads_one_entrypoint(rule_runner, monkeypatch):
    from agentrc_pants import dependency_inference

    calls = []
    real = dependency_inference.peek

    def counting(path, content):
        calls.append(path)
        return real(path, content)

    monkeypatch.setattr(dependency_inference, "peek", counting)
    fix = Address("reg/skills/fix", generated_name="skill")
    assert infer(rule_runner, fix) == {Address("reg/rules/style", generated_name="rule")}
    assert "reg/rules/style/RULE.md" in calls and "reg/bundles/base.bundle.yaml" in calls
    calls.clear()
    rule_runner.write_files({"reg/rules/style/RULE.md": REGISTRY["reg/rules/style/RULE.md"] + "\nOne more line.\n"})
    assert infer(rule_runner, fix) == {Address("reg/rules/style", generated_name="rule")}
    assert calls == ["reg/rules/style/RULE.md"]
