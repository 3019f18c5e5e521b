"""The project file `agentrc.yaml` (issue 32, item 1): `agentrc build`, `build --check`, `lint`
and `fmt` need no arguments in a project that has one, from any directory below it; flags
override it; its per-code levels apply; a broken one is every problem at once, exit 2,
nothing written; a project without it works as before."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.schemas import load

SKILL = "---\nschema: 1\nname: review\ndescription: Use when reviewing a pull request.\n---\n\n## Steps\n\nRead it.\n"
RULE = "---\nschema: 1\nname: style\ndescription: The style rule.\n---\n\n## Rule\n\nBe brief.\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "ai" / "skills" / "review").mkdir(parents=True)
    (root / "ai" / "rules" / "style").mkdir(parents=True)
    (root / "ai" / "skills" / "review" / "SKILL.md").write_text(SKILL)
    (root / "ai" / "rules" / "style" / "RULE.md").write_text(RULE)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "agentrc.yaml").write_text("schema: 1\nclients: [claude, copilot]\nbuild:\n  paths: [ai]\n")
    monkeypatch.chdir(root)
    return root


def _files(root: Path):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                  and ".git" not in p.parts and ".agentrc" not in p.parts)


def test_build_with_no_arguments_builds_the_project_for_its_clients(project, capsys, monkeypatch):
    assert main(["build"]) == 0, capsys.readouterr().err
    built = _files(project)
    assert ".claude/skills/review/SKILL.md" in built and ".github/instructions/style.instructions.md" in built
    assert ".github/skills/review/SKILL.md" not in built  # Copilot reads Claude's copy (shared-copies)
    assert not any(p.startswith(".opencode") for p in built)  # not among the project's clients
    monkeypatch.chdir(project / "ai" / "skills")  # found by walking up
    assert main(["build", "--check"]) == 0
    assert main(["lint"]) == 0 and "1 rules, 1 skills" in capsys.readouterr().err
    (project / "ai" / "rules" / "style" / "RULE.md").write_text(RULE.replace("Be brief.", "Be briefer."))
    assert main(["build", "--check"]) == 1


def test_flags_override_the_project_file(project, capsys, tmp_path):
    out = tmp_path / "elsewhere"
    assert main(["build", "--out", str(out), "--client", "opencode"]) == 0, capsys.readouterr().err
    assert (out / ".opencode" / "skills" / "review" / "SKILL.md").exists() and not (out / ".claude").exists()
    lone = tmp_path / "lone" / "rules" / "x"
    lone.mkdir(parents=True)
    (lone / "RULE.md").write_text(RULE.replace("name: style", "name: x"))
    assert main(["lint", str(tmp_path / "lone")]) == 0
    assert "1 rules, 0 skills" in capsys.readouterr().err


def test_the_project_files_output_layout_report_and_strictness(project, capsys):
    (project / "agentrc.yaml").write_text("schema: 1\nclients: [claude]\nbuild:\n  paths: [ai]\n  out: gen\n"
                                          "  report: gen-report.json\n")
    assert main(["build"]) == 0, capsys.readouterr().err
    assert (project / "gen" / ".claude" / "rules" / "style.md").exists()
    report = json.loads((project / "gen-report.json").read_text())
    assert report and not (project / ".claude").exists()


def test_levels_turn_a_warning_off_or_into_an_error(project, capsys):
    (project / "ai" / "rules" / "style" / "RULE.md").write_text(RULE.replace("schema: 1", "schema: 1\ncolour: red"))
    assert main(["lint"]) == 0 and "warning[AR007]" in capsys.readouterr().err
    (project / "agentrc.yaml").write_text("schema: 1\nbuild:\n  paths: [ai]\ncodes:\n  AR007: off\n")
    assert main(["lint"]) == 0
    assert "AR007" not in capsys.readouterr().err
    (project / "agentrc.yaml").write_text("schema: 1\nbuild:\n  paths: [ai]\ncodes:\n  AR007: error\n")
    assert main(["lint"]) == 1
    assert "error[AR007]" in capsys.readouterr().err


def test_a_broken_project_file_is_every_problem_at_once_and_nothing_is_written(project, capsys):
    (project / "agentrc.yaml").write_text(
        "schema: 1\nclients: [claud]\nbuild:\n  paths: [ai]\ncodes: {AR050: off, AR999: error}\n"
        "sources:\n  - source: https://user:hunter2@git.example.com/r.git\n")
    assert main(["build"]) == 2
    err = capsys.readouterr().err
    for needle in ("agentrc.yaml:2:11: error[AR243] clients: unknown client 'claud'",
                   "AR050 is an error; errors cannot be turned off", "AR999 is not a code of this agentrc",
                   "error[AR225]", "agentrc.yaml cannot be used"):
        assert needle in err, needle
    assert "hunter2" not in err and not (project / ".claude").exists()
    (project / "agentrc.yaml").write_text("schema: 1\nbuild: {paths: [ai], colour: red}\n")
    assert main(["lint"]) == 2 and "error[AR243] build: Additional properties" in capsys.readouterr().err
    (project / "agentrc.yaml").write_text("schema: 1\nbuild: [unclosed\n")
    assert main(["lint"]) == 2 and "error[AR243]" in capsys.readouterr().err


def test_a_project_file_linked_out_of_its_directory_is_not_read(project, capsys, tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("schema: 1\nbuild:\n  paths: [/etc]\n")
    (project / "agentrc.yaml").unlink()
    (project / "agentrc.yaml").symlink_to(secret)
    assert main(["lint"]) == 2 and "error[AR050]" in capsys.readouterr().err


def test_without_a_project_file_commands_need_their_arguments(tmp_path, monkeypatch, capsys):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # the walk stops at a repository's top
    monkeypatch.chdir(tmp_path)
    assert main(["build"]) == 2
    assert "no PATH given; or run it in a project with an agentrc.yaml ('agentrc init' writes one)" in \
        capsys.readouterr().err
    assert main(["lint"]) == 2


def test_the_schema_is_shipped_and_is_a_json_schema():
    from jsonschema import Draft7Validator

    schema = load("project")
    Draft7Validator.check_schema(schema)
    Draft7Validator(schema).validate({"schema": 1, "clients": ["claude"], "build": {"paths": ["ai"], "out": "."},
                                      "codes": {"AR095": "off"}, "sources": [{"source": "owner/repo", "ref": "v1"}]})
    assert os.path.basename(schema["$id"]) == "project.schema.json"
