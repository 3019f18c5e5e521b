"""The Pants backend reads the project file's client set (issue 32, item 1): a target without
`clients=` builds for the nearest agentrc.yaml's clients, else `[agentrc].clients`; a target's
own `clients=` wins; a broken project file fails the package with its diagnostics."""

from __future__ import annotations

import pytest
from pants.core.goals.package import BuiltPackage
from pants.engine.addresses import Address
from pants.engine.fs import DigestContents
from pants.engine.internals.scheduler import ExecutionError
from pants.testutil.rule_runner import QueryRule

from agentrc_pants.project import ProjectClients, ProjectClientsRequest
from agentrc_pants.target_types import AgentrcRegistryFieldSet
from agentrc_pants.testutil import make_rule_runner

SKILL = "---\nschema: 1\ndescription: Use when reviewing\n---\n\n## Review\n\nRead the diff.\n"


def _runner(files):
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcRegistryFieldSet]),
                              QueryRule(ProjectClients, [ProjectClientsRequest]))
    runner.write_files({"team/reg/agentrc-registry.yaml": "schema: 1\ndescription: Team\n",
                        "team/reg/BUILD": "agentrc_registry(name='registry')\n",
                        "team/reg/skills/review/SKILL.md": SKILL,
                        "team/reg/skills/review/BUILD": "agentrc_items()\n", **files})
    return runner


def _tops(runner, address):
    built = runner.request(BuiltPackage, [AgentrcRegistryFieldSet.create(runner.get_target(address))])
    prefix = built.artifacts[0].relpath + "/"
    paths = [fc.path[len(prefix):] for fc in runner.request(DigestContents, [built.digest])]
    return sorted({p.split("/")[0] for p in paths if not p.startswith(".agentrc")})


def test_a_target_builds_for_the_nearest_project_files_clients():
    runner = _runner({"agentrc.yaml": "schema: 1\nclients: [opencode]\n",
                      "team/agentrc.yaml": "schema: 1\nclients: [claude]\n"})
    assert runner.request(ProjectClients, [ProjectClientsRequest("team/reg")]).clients == ("claude",)
    assert runner.request(ProjectClients, [ProjectClientsRequest("")]).clients == ("opencode",)
    assert _tops(runner, Address("team/reg", target_name="registry")) == [".claude"]


def test_without_a_project_file_the_subsystem_decides_and_a_targets_clients_win():
    runner = _runner({})
    assert runner.request(ProjectClients, [ProjectClientsRequest("team/reg")]).clients == ()
    # the default clients; the skill is one shared copy, which Copilot and opencode read from .claude
    assert _tops(runner, Address("team/reg", target_name="registry")) == [".claude"]
    runner = _runner({"agentrc.yaml": "schema: 1\nclients: [opencode]\n",
                      "team/reg/BUILD": "agentrc_registry(name='registry', clients=['claude'])\n"})
    assert _tops(runner, Address("team/reg", target_name="registry")) == [".claude"]


def test_a_broken_project_file_fails_the_package_with_its_diagnostics():
    runner = _runner({"agentrc.yaml": "schema: 1\nclients: [claud]\n"})
    with pytest.raises(ExecutionError, match=r"agentrc.yaml:2:11: error\[AR243\] clients: unknown client 'claud'"):
        _tops(runner, Address("team/reg", target_name="registry"))


def test_the_project_files_shared_copies_reaches_the_package():
    runner = _runner({"agentrc.yaml": "schema: 1\nclients: [claude, copilot, opencode]\nshared-copies: false\n"})
    assert runner.request(ProjectClients, [ProjectClientsRequest("team/reg")]).shares is False
    assert _tops(runner, Address("team/reg", target_name="registry")) == [".claude", ".github", ".opencode"]
    runner = _runner({"agentrc.yaml": "schema: 1\nclients: [claude, copilot, opencode]\n"})
    assert _tops(runner, Address("team/reg", target_name="registry")) == [".claude"]


def test_the_project_files_ignore_list_reaches_the_registry_package():
    runner = _runner({"agentrc.yaml": "schema: 1\nclients: [claude, gemini]\nignore: [.env, 'secrets/']\n"})
    project = runner.request(ProjectClients, [ProjectClientsRequest("team/reg")])
    assert project.ignore.patterns == (".env", "secrets/") and project.ignore.source == "agentrc.yaml"
    built = runner.request(BuiltPackage, [AgentrcRegistryFieldSet.create(
        runner.get_target(Address("team/reg", target_name="registry")))])
    prefix = built.artifacts[0].relpath + "/"
    files = {fc.path[len(prefix):]: fc.content for fc in runner.request(DigestContents, [built.digest])}
    assert files[".geminiignore"].decode().endswith("# from agentrc.yaml: ignore\n.env\nsecrets/\n")
    assert not [p for p in files if p.startswith(".claude") and "ignore" in p]  # Claude Code has none
