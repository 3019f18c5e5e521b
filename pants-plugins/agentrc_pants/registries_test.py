"""Registries (issue 10 point 14): two registries in one repository reuse names, each is its
own namespace, and a reference into another registry is explicit (`{ name, source }`)."""

from __future__ import annotations

import pytest
from pants.core.goals.package import BuiltPackage
from pants.core.goals.tailor import AllOwnedSources, PutativeTarget, PutativeTargets
from pants.engine.addresses import Address
from pants.engine.fs import Digest, DigestContents
from pants.engine.internals.scheduler import ExecutionError
from pants.engine.target import InferredDependencies
from pants.testutil.rule_runner import QueryRule

from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import stages as pipeline
from agentrc_pants.dependency_inference import InferAgentrcDependencies
from agentrc_pants.tailor import PutativeAgentrcTargetsRequest
from agentrc_pants.target_types import (
    AgentrcBundleFieldSet,
    AgentrcFieldSet,
    AgentrcItemFieldSet,
    AgentrcRegistryFieldSet,
    AgentrcRegistryTarget,
)
from agentrc_pants.testutil import make_rule_runner


def _skill(team: str, name: str, requires: str = "") -> str:
    return (f"---\nschema: 1\ndescription: Use when {name} for team {team}\n{requires}---\n\n"
            f"## {name}\n\nTeam {team}'s {name}.\n")


def _rule(team: str) -> str:
    return f"---\nschema: 1\ndescription: House style of team {team}\n---\n\n## Style\n\nTeam {team}'s style.\n"


TWO_REGISTRIES = {
    # Two teams' registries reuse the names `review`, `style` and `core`.
    **{f"teams/{t}/{path}": text for t in ("a", "b") for path, text in {
        "agentrc-registry.yaml": f"schema: 1\ndescription: Team {t}\n",
        "BUILD": "agentrc_registry(name='registry')\nagentrc_bundle(name='core', source='core.bundle.yaml')\n",
        "core.bundle.yaml": "schema: 1\nname: core\ndescription: Core\nitems:\n  rules:\n    - style\n"
                            "  skills:\n    - review\n",
        "skills/review/SKILL.md": _skill(t, "review"),
        "skills/review/BUILD": "agentrc_items()\n",
        "rules/style/RULE.md": _rule(t),
        "rules/style/BUILD": "agentrc_items()\n",
    }.items()},
    # Team b reaches into team a only by saying so: an item requires, a bundle requires.
    "teams/b/skills/deploy/SKILL.md": _skill("b", "deploy", "requires:\n  skills:\n    - name: review\n"
                                                             "      source: ../a\n"),
    "teams/b/skills/deploy/BUILD": "agentrc_items()\n",
    "teams/b/full.bundle.yaml": "schema: 1\nname: full\ndescription: Full\nitems:\n  skills:\n    - deploy\n"
                                "requires:\n  - name: core\n    source: ../a\n",
}
TWO_REGISTRIES["teams/b/BUILD"] += "agentrc_bundle(name='full', source='full.bundle.yaml')\n"


@pytest.fixture(scope="module")
def rule_runner():
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcItemFieldSet]),
                              QueryRule(BuiltPackage, [AgentrcBundleFieldSet]),
                              QueryRule(BuiltPackage, [AgentrcRegistryFieldSet]),
                              QueryRule(DigestContents, [Digest]),
                              QueryRule(InferredDependencies, [InferAgentrcDependencies]),
                              QueryRule(PutativeTargets, [PutativeAgentrcTargetsRequest, AllOwnedSources]))
    runner.write_files(TWO_REGISTRIES)
    return runner


def _infer(runner, address):
    tgt = runner.get_target(address)
    return set(runner.request(InferredDependencies, [InferAgentrcDependencies(AgentrcFieldSet.create(tgt))]).include)


def _package(runner, address, field_set_type):
    built = runner.request(BuiltPackage, [field_set_type.create(runner.get_target(address))])
    prefix = built.artifacts[0].relpath + "/"
    contents = runner.request(DigestContents, [built.digest])
    return {fc.path[len(prefix):]: fc.content for fc in contents if fc.path != prefix + ".agentrc/report.json"}


def _skill_addr(team, name):
    return Address(f"teams/{team}/skills/{name}", generated_name="skill")


def test_names_resolve_in_their_own_registry(rule_runner):
    a_core = _infer(rule_runner, Address("teams/a", target_name="core"))
    assert a_core == {_skill_addr("a", "review"), Address("teams/a/rules/style", generated_name="rule"),
                      Address("teams/a", target_name="registry")}
    b_core = _infer(rule_runner, Address("teams/b", target_name="core"))
    assert _skill_addr("b", "review") in b_core and _skill_addr("a", "review") not in b_core


def test_explicit_cross_registry_references_are_dependencies(rule_runner):
    assert _infer(rule_runner, _skill_addr("b", "deploy")) == {
        _skill_addr("a", "review"), Address("teams/b", target_name="registry")}
    assert _infer(rule_runner, Address("teams/b", target_name="full")) == {
        _skill_addr("b", "deploy"), Address("teams/a", target_name="core"), Address("teams/b", target_name="registry")}


def test_each_registry_packages_its_own_items_and_matches_the_cli(rule_runner):
    for team in ("a", "b"):
        tree = _package(rule_runner, Address(f"teams/{team}", target_name="core"), AgentrcBundleFieldSet)
        assert f"Team {team}'s review.".encode() in tree[".claude/skills/review/SKILL.md"]
        assert f"Team {team}'s style.".encode() in tree[".claude/rules/style.md"]
        # The CLI's pipeline on the same sources, the bundle named by its file: the same tree.
        sources = SourceTree(tuple(SourceFile(p, c.encode()) for p, c in sorted(TWO_REGISTRIES.items())
                                   if not p.endswith("BUILD")))
        plan = pipeline.generate(sources, ["claude", "copilot", "opencode"], [f"teams/{team}/core.bundle.yaml"])
        assert plan.ok, [d.format() for d in plan.diagnostics]
        assert tree == {f.path: f.content for f in plan.files}


def test_a_registry_packages_as_the_cli_builds_its_directory(rule_runner):
    # `agentrc build teams/a`: every item of the registry, every bundle's servers, one tree.
    tree = _package(rule_runner, Address("teams/a", target_name="registry"), AgentrcRegistryFieldSet)
    sources = SourceTree(tuple(SourceFile(p, c.encode()) for p, c in sorted(TWO_REGISTRIES.items())
                               if p.startswith("teams/a/") and not p.endswith("BUILD")))
    plan = pipeline.generate(sources, ["claude", "copilot", "opencode"])
    assert plan.ok, [d.format() for d in plan.diagnostics]
    assert tree == {f.path: f.content for f in plan.files}
    assert b"Team a's review." in tree[".claude/skills/review/SKILL.md"]


def test_a_registry_whose_closure_reuses_its_own_names_fails_as_the_cli_does(rule_runner):
    # Team b's `full` requires team a's `core`, whose `review` and `style` are also team b's
    # names: one tree cannot hold both (AR018), as `agentrc build teams/a teams/b` says.
    with pytest.raises(ExecutionError, match="AR018"):
        _package(rule_runner, Address("teams/b", target_name="registry"), AgentrcRegistryFieldSet)


def test_a_cross_registry_closure_takes_the_named_registrys_items(rule_runner):
    tree = _package(rule_runner, Address("teams/b", target_name="full"), AgentrcBundleFieldSet)
    assert b"Team a's review." in tree[".claude/skills/review/SKILL.md"]
    assert b"Team a's style." in tree[".claude/rules/style.md"]
    assert b"Team b's deploy." in tree[".claude/skills/deploy/SKILL.md"]
    item = _package(rule_runner, _skill_addr("b", "deploy"), AgentrcItemFieldSet)
    assert b"Team a's review." in item[".claude/skills/review/SKILL.md"]


def test_an_implicit_cross_registry_reference_fails_with_code_and_hint():
    runner = make_rule_runner(QueryRule(InferredDependencies, [InferAgentrcDependencies]))
    runner.write_files({**TWO_REGISTRIES,
                        "teams/a/skills/only-a/SKILL.md": _skill("a", "only-a"),
                        "teams/a/skills/only-a/BUILD": "agentrc_items()\n",
                        "teams/b/skills/bad/SKILL.md": _skill("b", "bad", "requires:\n  skills:\n    - only-a\n"),
                        "teams/b/skills/bad/BUILD": "agentrc_items()\n",
                        "teams/b/skills/lost/SKILL.md": _skill("b", "lost", "requires:\n  skills:\n"
                                                                          "    - name: review\n"
                                                                          "      source: ../nowhere\n"),
                        "teams/b/skills/lost/BUILD": "agentrc_items()\n"})
    with pytest.raises(ExecutionError) as exc:
        _infer(runner, _skill_addr("b", "bad"))
    text = str(exc.value)
    assert ("teams/b/skills/bad/SKILL.md: error[AR069] skill bad requires skill 'only-a', which is not in its own "
            "registry teams/b but in registry teams/a") in text
    assert "write { name: only-a, source: ../a }" in text and "hint: A bare name resolves in its own registry" in text
    with pytest.raises(ExecutionError) as exc:
        _infer(runner, _skill_addr("b", "lost"))
    assert "error[AR068] skill lost requires skill 'review' from source '../nowhere'" in str(exc.value)


def test_tailor_adds_a_registry_target_per_marker():
    runner = make_rule_runner(QueryRule(PutativeTargets, [PutativeAgentrcTargetsRequest, AllOwnedSources]))
    runner.write_files({"teams/c/agentrc-registry.yaml": "schema: 1\n", "teams/d/agentrc-registry.yaml": "schema: 1\n"})
    result = runner.request(PutativeTargets, [PutativeAgentrcTargetsRequest(("teams/c", "teams/d")),
                                              AllOwnedSources(["teams/d/agentrc-registry.yaml"])])
    assert result == PutativeTargets([
        PutativeTarget.for_target_type(AgentrcRegistryTarget, "teams/c", "registry", ["agentrc-registry.yaml"]),
    ])
