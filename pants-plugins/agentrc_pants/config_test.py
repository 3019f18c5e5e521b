"""agentrc_config: a spec-000 project packaged through a sandboxed Process (RuleRunner)."""

from __future__ import annotations

import json

import pytest
from pants.core.goals import package
from pants.core.goals.package import BuiltPackage
from pants.engine.fs import DigestContents
from pants.engine.internals.scheduler import ExecutionError
from pants.testutil.rule_runner import QueryRule, RuleRunner

from agentrc_pants import register
from agentrc_pants.config import AgentrcConfigFieldSet


@pytest.fixture
def rule_runner() -> RuleRunner:
    from pants.engine.fs import Digest

    # .ai/ is a source directory, as pants.toml says for this repository (pants_ignore).
    runner = RuleRunner(rules=[*register.rules(), *package.rules(), QueryRule(BuiltPackage, [AgentrcConfigFieldSet]),
                               QueryRule(DigestContents, [Digest])],
                        target_types=register.target_types(), bootstrap_args=["--pants-ignore=['.*/', '!.ai/']"])
    runner.set_options(["--agentrc-clients=['claude']"], env_inherit={"PATH"})
    return runner


def _package(rule_runner: RuleRunner, address: str):
    from pants.build_graph.address import Address

    target = rule_runner.get_target(Address(address))
    built = rule_runner.request(BuiltPackage, [AgentrcConfigFieldSet.create(target)])
    contents = rule_runner.request(DigestContents, [built.digest])
    return {f.path: f.content.decode() for f in contents}


def test_config_project_packages_like_agentrc_build(rule_runner: RuleRunner):
    rule_runner.write_files({
        "proj/BUILD": "agentrc_config()",
        "proj/ai.config.json": json.dumps({"presets": ["./presets/base"],
                                           "rules": {"style": {"globs": ["src/**/*.ts"]}}}),
        "proj/presets/base/AGENTS.md": "## Base\n\nBe brief.\n",
        "proj/presets/base/rules/style/prompt.md": "---\ndescription: Style\n---\n\nUse tabs.\n",
        "proj/.ai/commands/ship/prompt.md": "---\ndescription: Ship it\n---\n\nShip $ARGUMENTS.\n",
    })
    files = _package(rule_runner, "proj")
    assert "paths:\n  - src/**/*.ts" in files["proj/proj/.claude/rules/style.md"]
    assert "Ship $ARGUMENTS." in files["proj/proj/.claude/skills/ship/SKILL.md"]
    assert "## Base" in files["proj/proj/AGENTS.md"]
    report = json.loads(files["proj/proj/.agentrc/report.json"])
    assert report["clients"] == ["claude"]
    assert "proj/proj/.agentrc/manifest.json" not in files


def test_config_errors_fail_the_package(rule_runner: RuleRunner):
    rule_runner.write_files({"bad/BUILD": "agentrc_config()", "bad/ai.config.json": '{"workflows": {}}'})
    with pytest.raises(ExecutionError) as exc:
        _package(rule_runner, "bad")
    assert "AR118" in str(exc.value)
