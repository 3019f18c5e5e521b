"""Registries (issue 10 point 14): two registries in one repository reuse names, each is its
own namespace, and a reference into another registry is explicit (`{ name, source }`)."""

from __future__ import annotations

import pytest
from pants.core.goals.package import BuiltPackage
from pants.core.goals.tailor import AllOwnedSources, PutativeTarget, PutativeTargets
from pants.engine.addresses import Address
from pants.engine.fs import EMPTY_DIGEST, Digest, DigestContents
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
        # package=True: each bundle's own tree, which these tests compare (unset, a bundle in a
        # packaged registry is in the registry's tree only; see the tests at the end).
        "BUILD": "agentrc_registry(name='registry')\n"
                 "agentrc_bundle(name='core', source='core.bundle.yaml', package=True)\n",
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
TWO_REGISTRIES["teams/b/BUILD"] += "agentrc_bundle(name='full', source='full.bundle.yaml', package=True)\n"


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


HELD = {
    # Registry r is packaged: a bundle in it is in its tree, unless it asks for its own or builds
    # for other clients. Registry q is not packaged: its bundle's own tree is the only one.
    "r/agentrc-registry.yaml": "schema: 1\ndescription: R\n",
    "r/rules/style/RULE.md": _rule("r"),
    "r/rules/style/BUILD": "agentrc_items()\n",
    "r/BUILD": "agentrc_registry(name='registry', output_path='out/r')\n"
               "agentrc_bundle(name='held', source='held.bundle.yaml')\n"
               "agentrc_bundle(name='own', source='own.bundle.yaml', package=True)\n"
               "agentrc_bundle(name='other', source='other.bundle.yaml', clients=['claude'])\n"
               "agentrc_bundle(name='off', source='off.bundle.yaml', package=False)\n",
    "q/agentrc-registry.yaml": "schema: 1\ndescription: Q\n",
    "q/rules/style/RULE.md": _rule("q"),
    "q/rules/style/BUILD": "agentrc_items()\n",
    "q/BUILD": "agentrc_registry(name='registry', package=False)\n"
               "agentrc_bundle(name='free', source='free.bundle.yaml')\n",
    **{f"{reg}/{name}.bundle.yaml": f"schema: 1\nname: {name}\ndescription: {name}\nitems:\n  rules:\n    - style\n"
       for reg, name in (("r", "held"), ("r", "own"), ("r", "other"), ("r", "off"), ("q", "free"))},
}


@pytest.fixture(scope="module")
def held_runner():
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcBundleFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.write_files(HELD)
    return runner


def _bundle(runner, where, name):
    tgt = runner.get_target(Address(where, target_name=name))
    return runner.request(BuiltPackage, [AgentrcBundleFieldSet.create(tgt)])


def test_a_bundle_in_a_packaged_registry_is_in_its_tree_only(held_runner):
    # Issue 13: the registry's tree holds the bundle's items; a tree of its own would be
    # cleared and rewritten by every `package ::` for nothing. Nothing is written or cleared
    # (no relpath), and the line says where its files are and how to get its own tree.
    built = _bundle(held_runner, "r", "held")
    assert built.digest == EMPTY_DIGEST
    [artifact] = built.artifacts
    assert artifact.relpath is None
    assert artifact.extra_log_lines == (
        "r:held: in the registry's tree, dist/out/r (package=True on the bundle writes its own)",)


@pytest.mark.parametrize("where, name", [("r", "own"), ("r", "other"), ("q", "free")])
def test_a_bundle_no_registry_tree_holds_gets_its_own(held_runner, where, name):
    # Asked for (package=True); built for other clients than its registry's; in a registry
    # that is not packaged. (A bundle under no registry: package_test.py.)
    built = _bundle(held_runner, where, name)
    paths = {fc.path for fc in held_runner.request(DigestContents, [built.digest])}
    prefix = built.artifacts[0].relpath
    assert prefix == f"{where}/{name}" and f"{prefix}/.claude/rules/style.md" in paths
    assert any(p.startswith(f"{prefix}/.github/") for p in paths) == (name != "other")


def test_a_bundle_that_says_package_false_is_not_a_package_target(held_runner):
    targets = {name: held_runner.get_target(Address("r", target_name=name)) for name in ("held", "own", "off")}
    assert {name: AgentrcBundleFieldSet.opt_out(tgt) for name, tgt in targets.items()} == {
        "held": False, "own": False, "off": True}
