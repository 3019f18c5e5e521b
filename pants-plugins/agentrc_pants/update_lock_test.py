"""`agentrc-update-lock`: the goal moves a lock whose branch moved, `--dry-run` writes nothing
(RuleRunner, a real git with a bare repository served over file://)."""

from __future__ import annotations

import json
import os
import subprocess

from agentrc.consumer import consume
from agentrc_pants.testutil import make_rule_runner
from agentrc_pants.update_lock import AgentrcUpdateLockGoal

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
SKILL = "---\nschema: 1\nname: fix\ndescription: Use when fixing.\n---\n\n## Steps\n\n{0}\n"


def _git(cwd, *args):
    subprocess.run(("git",) + args, cwd=str(cwd), env=dict(os.environ, **GIT_ENV), check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _commit(work, bare, text):
    (work / "reg" / "skills" / "fix").mkdir(parents=True, exist_ok=True)
    (work / "reg" / "skills" / "fix" / "SKILL.md").write_text(SKILL.format(text))
    (work / "reg" / "core.bundle.yaml").write_text("schema: 1\nname: core\ndescription: Core\nitems:\n"
                                                   "  skills:\n    - fix\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", text)
    _git(work, "push", "-q", str(bare), "main")


def test_update_lock_goal_follows_the_branch_and_dry_run_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AGENTRC_CACHE_DIR", raising=False)
    work, bare = tmp_path / "work", tmp_path / "reg.git"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    _commit(work, bare, "Do one.")
    runner = make_rule_runner()
    project = os.path.join(runner.build_root, "consumer")
    os.makedirs(project)
    assert consume.add(project, f"file://{bare}@main#reg", bundles=("core",), clients=("claude",)).ok
    runner.write_files({"consumer/BUILD": "agentrc_lock(name='lock')\n"})
    lock_file = os.path.join(project, "agentrc.lock.json")
    skill = os.path.join(project, ".claude", "skills", "fix", "SKILL.md")
    before = open(lock_file).read()
    old = json.loads(before)["bundles"][0]["commit"]
    _commit(work, bare, "Do two.")
    dry = runner.run_goal_rule(AgentrcUpdateLockGoal, args=["--dry-run", "consumer:lock"])
    assert dry.exit_code == 0, dry.stderr
    assert f"consumer: ~ bundle core from file://{bare}@main#reg: {old[:12]} ->" in dry.stdout
    assert "consumer: would update: .claude/skills/fix/SKILL.md" in dry.stdout
    assert open(lock_file).read() == before and "Do one." in open(skill).read()
    done = runner.run_goal_rule(AgentrcUpdateLockGoal, args=["consumer:lock"])
    assert done.exit_code == 0, done.stderr
    new = json.loads(open(lock_file).read())["bundles"][0]["commit"]
    assert new != old and "Do two." in open(skill).read()
    assert consume.install(project, check=True).ok  # the lock and the files agree
    lock_bytes = open(lock_file, "rb").read()
    assert consume.install(project, frozen=True).ok and open(lock_file, "rb").read() == lock_bytes
    again = runner.run_goal_rule(AgentrcUpdateLockGoal, args=["consumer:lock"])
    assert again.exit_code == 0 and "~ bundle" not in again.stdout
    bad = runner.run_goal_rule(AgentrcUpdateLockGoal, args=["--names=nope", "consumer:lock"])
    assert bad.exit_code == 1 and "AR207" in bad.stderr
