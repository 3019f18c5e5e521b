"""agentrc_oas_package: a capability package (spec 003) validated and hashed in a sandboxed
Process (RuleRunner); tailor and dependency inference are in capability_test.py."""

from __future__ import annotations

import json
import os

import pytest
from pants.build_graph.address import Address
from pants.core.goals import package
from pants.core.goals.package import BuiltPackage
from pants.engine.fs import Digest, DigestContents
from pants.engine.internals.scheduler import ExecutionError
from pants.testutil.rule_runner import QueryRule, RuleRunner

from agentrc.inputs.captree import tree_hash
from agentrc_pants import register
from agentrc_pants.oas_package import AgentrcOasPackageFieldSet

PACKAGE = {
    "pkg/oas-package.json": json.dumps({"package": "demo.pkg", "version": "1.0.0", "description": "Demo.",
                                        "compatibility": {"oas": ">=0.19.0"}, "capabilities": ["capabilities/c"]}),
    "pkg/capabilities/c/oas.json": json.dumps({"capability": "demo.cap", "version": "0.1.0", "description": "C.",
                                               "skills": ["skills"], "inject": "injects/i.md"}),
    "pkg/capabilities/c/skills/hello/SKILL.md": "---\nname: hello\ndescription: Hi.\n---\nHi.\n",
    "pkg/capabilities/c/injects/i.md": "Use it.\n",
}


@pytest.fixture
def rule_runner() -> RuleRunner:
    runner = RuleRunner(rules=[*register.rules(), *package.rules(),
                               QueryRule(BuiltPackage, [AgentrcOasPackageFieldSet]),
                               QueryRule(DigestContents, [Digest])],
                        target_types=register.target_types())
    runner.set_options([], env_inherit={"PATH"})
    return runner


def _package(rule_runner: RuleRunner, address: str):
    target = rule_runner.get_target(Address(address))
    built = rule_runner.request(BuiltPackage, [AgentrcOasPackageFieldSet.create(target)])
    contents = rule_runner.request(DigestContents, [built.digest])
    return built, {f.path: f.content for f in contents}


def test_a_package_is_validated_and_hashed_as_an_install_would(rule_runner: RuleRunner):
    rule_runner.write_files({**PACKAGE, "pkg/BUILD": "agentrc_oas_package()"})
    built, files = _package(rule_runner, "pkg")
    record = json.loads(files["pkg/pkg/integrity.json"])
    # The integrity of the same directory as `agentrc cap install` hashes it (BUILD is not
    # package content in a Pants repository: the target's sources leave it out).
    os.unlink(os.path.join(rule_runner.build_root, "pkg", "BUILD"))
    assert record["integrity"] == tree_hash(os.path.join(rule_runner.build_root, "pkg"), payload=True)
    assert record["capabilities"] == {"demo.cap": {"version": "0.1.0", "path": "capabilities/c"}}
    assert files["pkg/pkg/payload/capabilities/c/injects/i.md"] == b"Use it.\n"
    assert built.artifacts[0].extra_log_lines[0] == f"demo.pkg@1.0.0 {record['integrity']}"


def test_an_invalid_package_fails_with_the_diagnostics(rule_runner: RuleRunner):
    rule_runner.write_files({**PACKAGE, "pkg/BUILD": "agentrc_oas_package()",
                             "pkg/capabilities/c/oas.json": json.dumps({
                                 "capability": "demo.cap", "version": "0.1.0", "description": "C.",
                                 "skills": ["missing"]})})
    with pytest.raises(ExecutionError) as exc:
        _package(rule_runner, "pkg")
    assert "AR157" in str(exc.value) and "missing" in str(exc.value)
