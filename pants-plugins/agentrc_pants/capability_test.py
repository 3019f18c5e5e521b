"""Capabilities in Pants (RuleRunner): tailor's agentrc_oas_package, agentrc_capability and
agentrc_oas_lock targets, dependencies inferred from oas-package.json and oas.json, and a
scope's oas-lock.json verified from digests against capabilities `agentrc cap install` put
there."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from pants.build_graph.address import Address
from pants.core.goals import package
from pants.core.goals.package import BuiltPackage
from pants.core.goals.tailor import AllOwnedSources, PutativeTarget, PutativeTargets
from pants.engine.fs import Digest, DigestContents
from pants.engine.internals.scheduler import ExecutionError
from pants.engine.target import InferredDependencies
from pants.testutil.rule_runner import QueryRule, RuleRunner

from agentrc.cli.main import main
from agentrc_pants import register
from agentrc_pants.capability import (
    AgentrcCapabilityFieldSet,
    AgentrcCapabilityTarget,
    AgentrcOasPackageDependenciesFieldSet,
    InferCapabilityDependencies,
    InferOasPackageDependencies,
)
from agentrc_pants.oas_lock import AgentrcOasLockFieldSet, AgentrcOasLockTarget
from agentrc_pants.oas_package import AgentrcOasPackageTarget
from agentrc_pants.tailor import PutativeAgentrcTargetsRequest
from agentrc_pants.target_types import AgentrcItemsGeneratorTarget

PACKAGE = {
    "pkg/oas-package.json": json.dumps({"package": "demo.pkg", "version": "1.0.0", "description": "Demo.",
                                        "compatibility": {"oas": ">=0.19.0"},
                                        "capabilities": ["capabilities/c", "capabilities/d"]}),
    "pkg/capabilities/c/oas.json": json.dumps({"capability": "demo.cap", "version": "0.1.0", "description": "C.",
                                               "skills": ["skills"], "agents": ["agents/reviewer"]}),
    "pkg/capabilities/c/skills/hello/SKILL.md": "---\nname: hello\ndescription: Use when greeting.\n---\n\nHi.\n",
    "pkg/capabilities/c/agents/reviewer/soul.yaml": "name: reviewer\n",
    "pkg/capabilities/c/agents/reviewer/AGENTS.md": "# Reviewer\n",
    "pkg/capabilities/d/oas.json": json.dumps({"capability": "demo.other", "version": "0.1.0", "description": "D.",
                                               "skills": ["skills/bye"]}),
    "pkg/capabilities/d/skills/bye/SKILL.md": "---\nname: bye\ndescription: Use when leaving.\n---\n\nBye.\n",
    "pkg/capabilities/d/skills/unused/SKILL.md": "---\nname: unused\ndescription: Use never.\n---\n\nNo.\n",
}
# Pants hides dot-directories; the lock target needs the installed capabilities.
SEE_INSTALLED = ["--pants-ignore=['.*/', '!.agents/', '**/.agents/*', '!**/.agents/capabilities/']"]


@pytest.fixture
def rule_runner() -> RuleRunner:
    runner = RuleRunner(rules=[*register.rules(), *package.rules(),
                               QueryRule(BuiltPackage, [AgentrcOasLockFieldSet]),
                               QueryRule(DigestContents, [Digest]),
                               QueryRule(InferredDependencies, [InferCapabilityDependencies]),
                               QueryRule(InferredDependencies, [InferOasPackageDependencies]),
                               QueryRule(PutativeTargets, [PutativeAgentrcTargetsRequest, AllOwnedSources])],
                        target_types=register.target_types(), bootstrap_args=SEE_INSTALLED)
    runner.set_options(SEE_INSTALLED, env_inherit={"PATH"})
    return runner


def test_tailor_proposes_packages_capabilities_and_locks(rule_runner: RuleRunner):
    store = "scope/.agents/capabilities/installed/demo.cap"
    rule_runner.write_files({**PACKAGE, "reg/a/SKILL.md": "x", "scope/oas-lock.json": "{}",
                             "solo/oas.json": "{}", "solo/skills/s/SKILL.md": "x",
                             f"{store}/oas.json": "{}", f"{store}/skills/hello/SKILL.md": "x"})
    dirs = ("pkg", "pkg/capabilities/c", "pkg/capabilities/c/skills/hello", "pkg/capabilities/d",
            "pkg/capabilities/d/skills/bye", "reg/a", "scope", "solo", "solo/skills/s", store,
            f"{store}/skills/hello")
    result = rule_runner.request(PutativeTargets, [PutativeAgentrcTargetsRequest(dirs), AllOwnedSources([])])
    assert result == PutativeTargets([
        PutativeTarget.for_target_type(AgentrcOasPackageTarget, "pkg", "pkg", ["oas-package.json"]),
        PutativeTarget.for_target_type(AgentrcCapabilityTarget, "pkg/capabilities/c", "c", ["oas.json"]),
        PutativeTarget.for_target_type(AgentrcCapabilityTarget, "pkg/capabilities/d", "d", ["oas.json"]),
        PutativeTarget.for_target_type(AgentrcCapabilityTarget, "solo", "solo", ["oas.json"]),
        PutativeTarget.for_target_type(AgentrcOasLockTarget, "scope", "oas-lock", ["oas-lock.json"]),
        PutativeTarget.for_target_type(AgentrcItemsGeneratorTarget, "reg/a", "a", ["SKILL.md"]),
    ])
    # Nothing inside an installed capability (a BUILD file would change its integrity).
    # A package's target owns its capabilities' files too; what decides is whether the
    # directory has an agentrc_capability yet.
    rule_runner.write_files({"pkg/BUILD": "agentrc_oas_package(name='pkg')",
                             "pkg/capabilities/c/BUILD": "agentrc_capability(name='c')"})
    owned = AllOwnedSources([p for p in PACKAGE if p.startswith("pkg/")])
    result = rule_runner.request(PutativeTargets, [PutativeAgentrcTargetsRequest(dirs[:5]), owned])
    assert [(t.path, t.type_alias) for t in result] == [("pkg/capabilities/d", "agentrc_capability")]


def _infer(rule_runner, request_type, field_set_type, address):
    target = rule_runner.get_target(address)
    return rule_runner.request(InferredDependencies, [request_type(field_set_type.create(target))])


def test_dependencies_come_from_the_manifests(rule_runner: RuleRunner):
    rule_runner.write_files({
        **PACKAGE,
        "pkg/BUILD": "agentrc_oas_package(name='pkg')",
        "pkg/capabilities/c/BUILD": "agentrc_capability(name='c')",
        "pkg/capabilities/d/BUILD": "agentrc_capability(name='d')",
        # The skills a team also builds for clients, and an agent directory with an item.
        "pkg/capabilities/c/skills/hello/BUILD": "agentrc_items()",
        "pkg/capabilities/c/agents/reviewer/BUILD": "agentrc_items()",
        "pkg/capabilities/c/agents/reviewer/RULE.md": "---\ndescription: Review rules\n---\n\nReview.\n",
        "pkg/capabilities/d/skills/bye/BUILD": "agentrc_items()",
        "pkg/capabilities/d/skills/unused/BUILD": "agentrc_items()",
    })
    package_deps = _infer(rule_runner, InferOasPackageDependencies, AgentrcOasPackageDependenciesFieldSet,
                          Address("pkg", target_name="pkg"))
    assert list(package_deps.include) == [Address("pkg/capabilities/c", target_name="c"),
                                          Address("pkg/capabilities/d", target_name="d")]
    c = _infer(rule_runner, InferCapabilityDependencies, AgentrcCapabilityFieldSet,
               Address("pkg/capabilities/c", target_name="c"))
    assert [str(a) for a in c.include] == ["pkg/capabilities/c/agents/reviewer#rule",
                                           "pkg/capabilities/c/skills/hello#skill"]
    # Only the declared skill: `skills/bye`, not its sibling.
    d = _infer(rule_runner, InferCapabilityDependencies, AgentrcCapabilityFieldSet,
               Address("pkg/capabilities/d", target_name="d"))
    assert [str(a) for a in d.include] == ["pkg/capabilities/d/skills/bye#skill"]
    # A manifest that does not parse infers nothing (pants package reports it).
    rule_runner.write_files({"pkg/capabilities/d/oas.json": "{"})
    assert not _infer(rule_runner, InferCapabilityDependencies, AgentrcCapabilityFieldSet,
                      Address("pkg/capabilities/d", target_name="d")).include


def _install(rule_runner: RuleRunner, tmp_path, capsys) -> str:
    """`agentrc cap install` of the package into the scope `scope/` of the build root."""
    pkg = tmp_path / "pkg"
    for rel, text in PACKAGE.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    scope = os.path.join(rule_runner.build_root, "scope")
    os.makedirs(scope, exist_ok=True)
    assert main(["cap", "install", str(pkg / "pkg"), "--dir", scope, "--json"]) == 0, capsys.readouterr()
    capsys.readouterr()
    rule_runner.write_files({"scope/BUILD": "agentrc_oas_lock(name='oas-lock')"})
    return scope


def _verify(rule_runner: RuleRunner):
    target = rule_runner.get_target(Address("scope", target_name="oas-lock"))
    built = rule_runner.request(BuiltPackage, [AgentrcOasLockFieldSet.create(target)])
    return built, {f.path: f.content for f in rule_runner.request(DigestContents, [built.digest])}


def test_the_lock_is_verified_from_digests(rule_runner: RuleRunner, tmp_path, capsys):
    scope = _install(rule_runner, tmp_path, capsys)
    lock = json.loads(open(os.path.join(scope, "oas-lock.json")).read())
    built, files = _verify(rule_runner)
    verified = json.loads(files["scope/oas-lock/verified.json"])
    assert {cid: row["integrity"] for cid, row in verified.items()} == \
        {cid: row["integrity"] for cid, row in lock["capabilities"].items()}
    assert files["scope/oas-lock/demo.cap/skills/hello/SKILL.md"].startswith(b"---\nname: hello")
    assert b"demo.pkg" in files["scope/oas-lock/demo.cap/.oas-installation.json"]
    assert built.artifacts[0].extra_log_lines == tuple(
        f"capability {cid}@0.1.0 {lock['capabilities'][cid]['integrity']}" for cid in ("demo.cap", "demo.other"))


@pytest.mark.parametrize("damage, code", [("edit", "AR233"), ("add", "AR233"), ("remove", "AR234"),
                                          ("lock", "AR159")])
def test_a_changed_or_missing_capability_fails(rule_runner: RuleRunner, tmp_path, capsys, damage, code):
    scope = _install(rule_runner, tmp_path, capsys)
    cap = os.path.join(scope, ".agents", "capabilities", "installed", "demo.cap")
    if damage == "edit":
        with open(os.path.join(cap, "skills", "hello", "SKILL.md"), "a") as fh:
            fh.write("More.\n")
    elif damage == "add":
        with open(os.path.join(cap, "extra.md"), "w") as fh:
            fh.write("x")
    elif damage == "remove":
        shutil.rmtree(cap)
    else:
        with open(os.path.join(scope, "oas-lock.json"), "w") as fh:
            fh.write('{"lockfileVersion": 2}')
    with pytest.raises(ExecutionError) as exc:
        _verify(rule_runner)
    assert f"error[{code}]" in str(exc.value)
    if code != "AR159":
        assert "demo.cap" in str(exc.value) and "demo.other" not in str(exc.value)
