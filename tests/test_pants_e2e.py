"""End to end through the real `pants` on a copy of this repository's examples: tailor
--check, lint (which also checks fmt), package (portable registry and spec-000 project), and
agentrc-sync (then --check), and package's parity with `agentrc build`. Runs go through
pantsd, as a developer's do: each edit between runs reaches the daemon by its file watcher."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator, Set

import pytest

from helpers import PANTS_PYTHON, copy_minimal_repo, stop_pantsd

from agentrc.cli.main import main as agentrc_main


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    if not PANTS_PYTHON.exists():
        pytest.skip("the Pants venv is missing: run ./pants once (./test does)")
    repo = tmp_path_factory.mktemp("repo")
    return copy_minimal_repo(repo)


# Each repository's pantsd serves every run in it (as on a developer's machine: a run after
# the first starts in about a second, not six), watching the files the tests edit between
# runs; the module stops them all when it ends.
_DAEMONS: Set[Path] = set()


@pytest.fixture(scope="module", autouse=True)
def _stop_daemons() -> Iterator[None]:
    yield
    stop_pantsd(*sorted(_DAEMONS))
    _DAEMONS.clear()


def pants(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo), "NO_SCIE_WARNING": "1",
           "LANG": "C.UTF-8"}
    _DAEMONS.add(repo)
    proc = subprocess.run([str(PANTS_PYTHON), "-m", "pants", "--pantsd", f"--pants-workdir={repo / '.pants.d'}",
                           *args], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, f"pants {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_pants_goals_on_examples(repo, tmp_path, monkeypatch):
    pants(repo, "tailor", "--check", "::")
    pants(repo, "lint", "::")
    packaged = pants(repo, "package", "::")
    # The `api` bundle asks for its own tree (package=True); `platform-baseline` is in the
    # registry's tree only, and the goal says so.
    assert not (repo / "dist" / "examples.registry.bundles" / "platform-baseline").exists()
    assert ("examples/registry/bundles:platform-baseline: in the registry's tree, dist/examples.registry/registry"
            in packaged.stderr)
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
    # `package ::` writes one tree per registry, as `agentrc build examples/registry` writes it,
    # and a tree per item only for the items that ask (`package=True`; none do here).
    registry = repo / "dist" / "examples.registry" / "registry"
    assert agentrc_main(["build", "examples/registry", "--out", str(tmp_path / "cli-registry"), "--no-cache"]) == 0
    cli = {p.relative_to(tmp_path / "cli-registry"): p.read_bytes() for p in (tmp_path / "cli-registry").rglob("*")
           if p.is_file() and ".agentrc" not in p.parts}
    built = {p.relative_to(registry): p.read_bytes() for p in registry.rglob("*")
             if p.is_file() and ".agentrc" not in p.parts}
    assert cli == built and Path(".claude/skills/review/SKILL.md") in built
    assert not (repo / "dist" / "examples.registry.skills.review").exists()
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


MOBILE = {
    # A second team's registry beside examples/registry, reusing its names (the skill `review`,
    # the rule `commit-style`, the bundle `api`), and reaching into it once, explicitly.
    "agentrc-registry.yaml": "schema: 1\ndescription: The mobile team's registry\n",
    "api.bundle.yaml": "schema: 1\nname: api\ndescription: Mobile API work\nitems:\n  rules:\n    - commit-style\n"
                       "  skills:\n    - review\n",
    "skills/review/SKILL.md": "---\nschema: 1\ndescription: Use when reviewing a mobile change\nrequires:\n"
                              "  skills:\n    - name: pr-summary\n      source: ../../examples/registry\n---\n\n"
                              "## Review\n\nCheck the mobile release notes.\n",
    "rules/commit-style/RULE.md": "---\nschema: 1\ndescription: Mobile commit style\n---\n\n## Commits\n\n"
                                  "Prefix mobile commits with the platform.\n",
}


def test_pants_packages_two_registries_that_reuse_names(tmp_path_factory, tmp_path, monkeypatch):
    """Issue 10 point 14: `pants tailor` and `pants package ::` on a repository holding two
    registries that reuse names, as `agentrc build` builds them."""
    if not PANTS_PYTHON.exists():
        pytest.skip("the Pants venv is missing: run ./pants once (./test does)")
    repo = copy_minimal_repo(tmp_path_factory.mktemp("two-registries"))
    for path, text in MOBILE.items():
        (repo / "teams" / "mobile" / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / "teams" / "mobile" / path).write_text(text)
    pants(repo, "tailor", "::")
    build = repo / "teams" / "mobile" / "BUILD"
    assert "agentrc_registry(" in build.read_text()
    # The bundle's own tree, beside its registry's (a bundle in a packaged registry is in
    # that tree only, unless it asks).
    build.write_text(build.read_text().replace('source="api.bundle.yaml",', 'source="api.bundle.yaml",\n    package=True,'))
    pants(repo, "package", "::")
    mobile = repo / "dist" / "teams.mobile" / "api"
    review = (mobile / ".claude" / "skills" / "review" / "SKILL.md").read_text()
    assert "Check the mobile release notes." in review
    assert (mobile / ".claude" / "skills" / "pr-summary" / "SKILL.md").exists()  # the explicit cross-registry edge
    assert "Prefix mobile commits" in (mobile / ".claude" / "rules" / "commit-style.md").read_text()
    # The mobile registry's own tree holds its items and the one it names in the other registry.
    tree = repo / "dist" / "teams.mobile" / "registry"
    assert "Check the mobile release notes." in (tree / ".claude" / "skills" / "review" / "SKILL.md").read_text()
    assert (tree / ".claude" / "skills" / "pr-summary" / "SKILL.md").exists()
    examples = repo / "dist" / "examples.registry" / "registry"
    assert "Check the mobile release notes." not in (examples / ".claude/skills/review/SKILL.md").read_text()
    # The CLI builds the same tree from both registries, the bundle named by its file.
    monkeypatch.chdir(repo)
    assert agentrc_main(["build", "examples/registry", "teams/mobile", "--bundle", "teams/mobile/api.bundle.yaml",
                         "--out", str(tmp_path / "cli"), "--no-cache"]) == 0
    cli = {p.relative_to(tmp_path / "cli"): p.read_bytes() for p in (tmp_path / "cli").rglob("*")
           if p.is_file() and ".agentrc" not in p.parts}
    built = {p.relative_to(mobile): p.read_bytes() for p in mobile.rglob("*") if p.is_file() and ".agentrc" not in p.parts}
    assert cli == built
    # An implicit reference into the other registry fails, with agentrc's code and hint.
    skill = repo / "teams" / "mobile" / "skills" / "review" / "SKILL.md"
    skill.write_text(skill.read_text().replace("    - name: pr-summary\n      source: ../../examples/registry\n",
                                               "    - pr-summary\n"))
    bad = pants(repo, "package", "teams/mobile::", check=False)
    assert bad.returncode != 0 and "error[AR069] skill review requires skill 'pr-summary'" in bad.stderr
    assert "source: ../../examples/registry" in bad.stderr


def test_pants_tailors_and_packages_capabilities_and_verifies_the_lock(tmp_path_factory, tmp_path, monkeypatch):
    """Issue 12: `pants tailor` adds agentrc_oas_package, agentrc_capability and agentrc_oas_lock
    targets; `pants package` writes the payload with the integrity `agentrc cap install` locked,
    and verifies the scope's installed capabilities against the lock from digests."""
    if not PANTS_PYTHON.exists():
        pytest.skip("the Pants venv is missing: run ./pants once (./test does)")
    from test_cap_install import write_package

    repo = copy_minimal_repo(tmp_path_factory.mktemp("capabilities"))
    write_package(repo / "caps" / "kit", pid="team.kit", caps={"capabilities/review": ("team.review", ""),
                                                                "capabilities/notes": ("team.notes", "knowledge")})
    scope = repo / "service"
    scope.mkdir()
    monkeypatch.chdir(repo)
    assert agentrc_main(["cap", "install", "./caps/kit", "--dir", str(scope), "--json"]) == 0
    lock = json.loads((scope / "oas-lock.json").read_text())
    toml = (repo / "pants.toml").read_text()
    assert '"!.ai/"]' in toml
    (repo / "pants.toml").write_text(toml.replace('"!.ai/"]', '"!.ai/", "!.agents/", "**/.agents/*", '
                                                                '"!**/.agents/capabilities/"]'))
    pants(repo, "tailor", "::")
    assert "agentrc_oas_package(" in (repo / "caps" / "kit" / "BUILD").read_text()
    for name in ("review", "notes"):
        assert "agentrc_capability(" in (repo / "caps" / "kit" / "capabilities" / name / "BUILD").read_text()
    assert "agentrc_oas_lock(" in (scope / "BUILD").read_text()
    assert not list((scope / ".agents").rglob("BUILD"))  # nothing written into installed artifacts
    deps = pants(repo, "dependencies", "caps/kit:kit").stdout.split()
    assert deps == ["caps/kit/capabilities/notes:notes", "caps/kit/capabilities/review:review"]
    pants(repo, "package", "caps/kit:kit", "service:oas-lock")
    record = json.loads((repo / "dist" / "caps.kit" / "kit" / "integrity.json").read_text())
    assert record["integrity"] == lock["packages"]["team.kit"]["integrity"]
    verified = json.loads((repo / "dist" / "service" / "oas-lock" / "verified.json").read_text())
    assert {c: r["integrity"] for c, r in verified.items()} == \
        {c: r["integrity"] for c, r in lock["capabilities"].items()}
    # A changed installed capability fails the lock's package with agentrc's code.
    with open(scope / ".agents" / "capabilities" / "installed" / "team.review" / "injects" / "i.md", "a") as fh:
        fh.write("Changed.\n")
    bad = pants(repo, "package", "service:oas-lock", check=False)
    assert bad.returncode != 0 and "error[AR233] capability 'team.review' hashes to" in bad.stderr
