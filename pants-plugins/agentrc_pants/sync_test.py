"""`agentrc-sync`: writes the trees into the workspace, `--check` reports drift (RuleRunner)."""

from __future__ import annotations

import os

from agentrc_pants.sync import AgentrcSyncGoal
from agentrc_pants.testutil import REGISTRY, make_rule_runner


def test_sync_writes_then_check_is_clean_and_reports_stale_files():
    runner = make_rule_runner()
    runner.write_files(REGISTRY)
    root = runner.build_root
    check = runner.run_goal_rule(AgentrcSyncGoal, args=["--check", "--root=ws", "reg::"])
    assert check.exit_code == 1 and "missing: ws/.claude/agents/helper.md" in check.stdout
    done = runner.run_goal_rule(AgentrcSyncGoal, args=["--root=ws", "reg::"])
    assert done.exit_code == 0, done.stderr
    assert os.path.isfile(os.path.join(root, "ws", ".claude", "skills", "fix", "SKILL.md"))
    assert os.path.isfile(os.path.join(root, "ws", ".agentrc", "manifest.json"))
    assert runner.run_goal_rule(AgentrcSyncGoal, args=["--check", "--root=ws", "reg::"]).exit_code == 0
    # A file the user owns at an output path is never overwritten: the goal fails, nothing written.
    os.remove(os.path.join(root, "ws", ".claude", "agents", "helper.md"))
    with open(os.path.join(root, "ws", ".claude", "agents", "helper.md"), "w") as fh:
        fh.write("mine\n")
    with open(os.path.join(root, "ws", ".agentrc", "manifest.json")) as fh:
        manifest = fh.read()
    with open(os.path.join(root, "ws", ".agentrc", "manifest.json"), "w") as fh:
        fh.write(manifest.replace('".claude/agents/helper.md"', '".claude/agents/helper-old.md"'))
    refused = runner.run_goal_rule(AgentrcSyncGoal, args=["--root=ws", "reg::"])
    assert refused.exit_code == 1 and "AR091" in refused.stderr
    with open(os.path.join(root, "ws", ".claude", "agents", "helper.md")) as fh:
        assert fh.read() == "mine\n"


def test_sync_without_agentrc_targets_says_so():
    runner = make_rule_runner()
    runner.write_files({"other/BUILD": "", "other/x.txt": "x"})
    result = runner.run_goal_rule(AgentrcSyncGoal, args=["other::"])
    assert result.exit_code == 0 and "no agentrc targets" in result.stderr
