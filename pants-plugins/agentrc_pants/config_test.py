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


def _git(cwd, *args):
    import os
    import subprocess

    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(("git",) + args, cwd=str(cwd), env=env, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE).stdout.decode().strip()


def test_capability_references_build_from_the_locked_commits_only(rule_runner: RuleRunner, tmp_path, monkeypatch):
    """A preset's ai.capabilities reference a bare repository: `agentrc build` outside Pants
    locks it; the package reads that commit (fetched by the lock target's rule) even after
    the branch moved on, and a reference the lock does not pin is AR223, not a fetch."""
    from agentrc.cli.main import main

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    work, bare = tmp_path / "work", tmp_path / "caps.git"
    (work / "skills/review/references").mkdir(parents=True)
    skill = "---\nname: review\ndescription: Use when reviewing.\n---\n\nRead the diff {}.\n"
    (work / "skills/review/SKILL.md").write_text(skill.format("once"))
    (work / "skills/review/references/list.md").write_text("- tests\n")
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "one")
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    _git(work, "push", "-q", str(bare), "main")
    refs = {"review": {"source": f"file://{bare}", "ref": "main", "path": "skills/review", "type": "skill"}}
    project = tmp_path / "proj"
    files = {"ai.config.json": json.dumps({"presets": ["./presets/team"]}),
             "presets/team/package.json": json.dumps({"name": "team", "ai": {"capabilities": refs}})}
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    assert main(["build", str(project), "--client", "claude", "--out", str(tmp_path / "out")]) == 0
    lock = (project / "agentrc.lock.json").read_text()
    assert json.loads(lock)["capabilities"][0]["commit"] == _git(work, "rev-parse", "HEAD")
    (work / "skills/review/SKILL.md").write_text(skill.format("twice"))
    _git(work, "commit", "-q", "-am", "two")
    _git(work, "push", "-q", str(bare), "main")

    rule_runner.write_files({"proj/BUILD": "agentrc_config()", "proj/agentrc.lock.json": lock,
                             **{f"proj/{rel}": text for rel, text in files.items()}})
    built = _package(rule_runner, "proj")
    assert "Read the diff once." in built["proj/proj/.claude/skills/review/SKILL.md"]
    assert built["proj/proj/.claude/skills/review/references/list.md"] == "- tests\n"

    rule_runner.write_files({"other/BUILD": "agentrc_config()",
                             **{f"other/{rel}": text for rel, text in files.items()}})
    with pytest.raises(ExecutionError) as exc:
        _package(rule_runner, "other")
    assert "error[AR223]" in str(exc.value) and "review" in str(exc.value)
