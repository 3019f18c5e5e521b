"""End to end through the real `pants` on a copy of this repository's examples: tailor
--check, lint (which also checks fmt), package (portable registry and spec-000 project), and
agentrc-sync (then --check), and package's parity with `agentrc build`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, copy_minimal_repo

from agentrc.cli.main import main as agentrc_main

PANTS_PYTHON = ROOT / ".pants-venv" / "bin" / "python"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    if not PANTS_PYTHON.exists():
        pytest.skip("the Pants venv is missing: run ./pants once (./test does)")
    repo = tmp_path_factory.mktemp("repo")
    return copy_minimal_repo(repo)


def pants(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo), "NO_SCIE_WARNING": "1",
           "LANG": "C.UTF-8"}
    proc = subprocess.run([str(PANTS_PYTHON), "-m", "pants", "--no-pantsd", "--no-watch-filesystem",
                           f"--pants-workdir={repo / '.pants.d'}", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, f"pants {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_pants_goals_on_examples(repo, tmp_path, monkeypatch):
    pants(repo, "tailor", "--check", "::")
    pants(repo, "lint", "::")
    pants(repo, "package", "::")
    dist = repo / "dist" / "examples.registry.bundles" / "api"
    report = json.loads((dist / ".agentrc" / "report.json").read_text())
    assert report["clients"] == ["claude", "copilot", "opencode"]
    # Parity: the CLI writes the same tree for the same sources.
    monkeypatch.chdir(repo)
    assert agentrc_main(["build", "examples/registry", "--bundle", "api", "--out", str(tmp_path / "cli"),
                         "--no-cache"]) == 0
    cli = {p.relative_to(tmp_path / "cli"): p.read_bytes() for p in (tmp_path / "cli").rglob("*")
           if p.is_file() and ".agentrc" not in p.parts}
    built = {p.relative_to(dist): p.read_bytes() for p in dist.rglob("*") if p.is_file() and ".agentrc" not in p.parts}
    assert cli == built
    # The spec-000 project (agentrc_config, built in a sandboxed process with Node for
    # ai.config.js) packages to the tree `agentrc build examples/project` writes.
    project = repo / "dist" / "examples.project" / "project"
    assert agentrc_main(["build", "examples/project", "--out", str(tmp_path / "cli-project"), "--no-cache"]) == 0
    cli = {p.relative_to(tmp_path / "cli-project"): p.read_bytes() for p in (tmp_path / "cli-project").rglob("*")
           if p.is_file() and ".agentrc" not in p.parts}
    built = {p.relative_to(project): p.read_bytes() for p in project.rglob("*")
             if p.is_file() and ".agentrc" not in p.parts}
    assert cli == built and Path(".claude/skills/changelog/SKILL.md") in built
    # Sync into the workspace, then --check is clean; a removed item is reported, then pruned.
    assert pants(repo, "agentrc-sync", "--check", "--root=consumer", "::", check=False).returncode == 1
    pants(repo, "agentrc-sync", "--root=consumer", "::")
    assert (repo / "consumer" / ".claude" / "skills" / "review" / "SKILL.md").exists()
    pants(repo, "agentrc-sync", "--check", "--root=consumer", "::")
    shutil.rmtree(repo / "examples" / "registry" / "agents" / "triage")
    drift = pants(repo, "agentrc-sync", "--check", "--root=consumer", "::", check=False)
    assert drift.returncode == 1 and "stale: consumer/.claude/agents/triage.md" in drift.stdout
    pants(repo, "agentrc-sync", "--root=consumer", "::")
    assert not (repo / "consumer" / ".claude" / "agents" / "triage.md").exists()
    # A spec-000 project syncs into its own directory: its AGENTS.md keeps the user's text
    # around agentrc's block, and a second sync (or --check) finds nothing to do.
    pants(repo, "agentrc-sync", "examples/project:")
    agents = (repo / "examples" / "project" / "AGENTS.md").read_text()
    assert agents.startswith("# Billing API") and "<!-- agentrc:begin" in agents
    assert (repo / "examples" / "project" / ".claude" / "skills" / "changelog" / "SKILL.md").exists()
    pants(repo, "agentrc-sync", "--check", "examples/project:")


def test_pants_lint_and_fmt_catch_problems(repo):
    rule = repo / "examples" / "registry" / "rules" / "commit-style" / "RULE.md"
    original = rule.read_text()
    try:
        rule.write_text(original.replace("## Commit messages", "# Commit messages", 1))
        bad = pants(repo, "lint", "examples/registry/rules/commit-style::", check=False)
        assert bad.returncode == 1 and "error[AR020]" in bad.stdout + bad.stderr
        rule.write_text("---\nname: commit-style\nschema: 1\ndescription: Commits\n---\n## A\ntext\n")
        assert pants(repo, "lint", "examples/registry/rules/commit-style::", check=False).returncode == 1
        pants(repo, "fmt", "examples/registry/rules/commit-style::")
        assert rule.read_text() == "---\nschema: 1\nname: commit-style\ndescription: Commits\n---\n\n## A\n\ntext\n"
    finally:
        rule.write_text(original)
