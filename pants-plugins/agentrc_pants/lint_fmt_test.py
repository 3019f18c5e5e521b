"""`lint` runs agentrc's validation; `fmt` (and lint's check of it) the canonical formatter."""

from __future__ import annotations

import pytest
from pants.core.goals.fmt import FmtResult
from pants.core.goals.lint import LintResult
from pants.core.util_rules.partitions import _EmptyMetadata as EmptyMetadata
from pants.engine.addresses import Address
from pants.engine.fs import Digest, DigestContents, PathGlobs, Snapshot
from pants.testutil.rule_runner import QueryRule

from agentrc_pants.fmt import AgentrcFmtRequest
from agentrc_pants.lint import AgentrcLintRequest
from agentrc_pants.target_types import AgentrcFieldSet
from agentrc_pants.testutil import REGISTRY, make_rule_runner


@pytest.fixture
def rule_runner():
    runner = make_rule_runner(QueryRule(LintResult, [AgentrcLintRequest.Batch]),
                              QueryRule(FmtResult, [AgentrcFmtRequest.Batch]),
                              QueryRule(Snapshot, [PathGlobs]),
                              QueryRule(DigestContents, [Digest]))
    runner.write_files(REGISTRY)
    return runner


def lint(runner, *addresses):
    field_sets = tuple(AgentrcFieldSet.create(runner.get_target(a)) for a in addresses)
    return runner.request(LintResult, [AgentrcLintRequest.Batch("agentrc", field_sets, EmptyMetadata())])


def test_lint_clean_and_failing(rule_runner):
    ok = lint(rule_runner, Address("reg/skills/fix", generated_name="skill"))
    assert ok.exit_code == 0, ok.stdout
    rule_runner.write_files({"reg/skills/fix/SKILL.md": "---\nschema: 1\ndescription: Use when fixing\n---\n\n"
                                                         "# Title\n\n```\ncode\n```\n"})
    bad = lint(rule_runner, Address("reg/skills/fix", generated_name="skill"))
    assert bad.exit_code == 1
    assert "reg/skills/fix/SKILL.md:6:1: error[AR020]" in bad.stdout
    assert "error[AR022]" in bad.stdout
    # Diagnostics of other targets' files are not this batch's to report.
    assert "reg/rules/style" not in bad.stdout


def test_fmt_rewrites_only_what_agentrc_formats(rule_runner):
    messy = "---\ndescription: House style\nschema: 1\n---\n## Style\ntext\n"
    rule_runner.write_files({"reg/rules/style/RULE.md": messy})
    snapshot = rule_runner.request(Snapshot, [PathGlobs(["reg/rules/style/RULE.md", "reg/skills/fix/notes.md"])])
    result = rule_runner.request(FmtResult, [AgentrcFmtRequest.Batch("agentrc-fmt", snapshot.files, EmptyMetadata(),
                                                                     snapshot)])
    assert result.did_change
    out = {fc.path: fc.content.decode() for fc in rule_runner.request(DigestContents, [result.output.digest])}
    assert out["reg/rules/style/RULE.md"] == "---\nschema: 1\ndescription: House style\n---\n\n## Style\n\ntext\n"
    assert out["reg/skills/fix/notes.md"] == "# Notes\n"
