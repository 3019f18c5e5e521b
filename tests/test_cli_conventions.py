"""The conventions people expect of a command line (issue 32, item 4): `agentrc` alone prints
help, `--format json` and its alias `--json` on every command, a closed pipe ends the run
quietly, examples under each --help, and mistakes answered with what was probably meant
("did you mean"): unknown fields and keys of every kind, tools, clients, entrypoint names.
The terminal's side (watch, colour, progress, completion) is in test_cli_terminal.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

from agentrc.cli import main as cli
from agentrc.cli.main import main


def agentrc(*args: str, cwd: Path = ROOT, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1")
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "agentrc", *args], cwd=str(cwd), env=env, capture_output=True,
                          text=True, **kw)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_agentrc_alone_prints_the_help_and_succeeds():
    done = agentrc()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: agentrc") and "completion" in done.stdout and "examples:" in done.stdout
    assert done.stderr == ""


# init (the project's start) prints no document yet; completion prints a script.
@pytest.mark.parametrize("command", sorted(set(cli._COMMANDS) - {"completion", "init"}))
def test_every_command_takes_format_json_and_its_alias_json(command):
    """One option, two spellings: `--json` is `--format json` (the same dest), on every
    command and every cap verb; `--color` beside them."""
    parser = cli._parser(command)
    sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    parsers = [sub]
    if command == "cap":
        parsers = list(sub._subparsers._group_actions[0].choices.values())  # type: ignore[union-attr]
    for p in parsers:
        flags = {o: a for a in p._actions for o in a.option_strings}
        assert flags["--json"].dest == flags["--format"].dest == "format", p.prog
        assert flags["--json"].const == "json" and flags["--format"].choices == ("text", "json")
        assert flags["--color"].choices == ("auto", "always", "never")


def test_the_examples_and_the_docs_page_are_under_each_help():
    for command in cli._COMMANDS:
        done = agentrc(command, "--help")
        assert done.returncode == 0, done.stderr
        assert f"docs: docs/cli/{command}.md" in done.stdout, command
        assert "examples:\n  agentrc " in done.stdout, command


def _registry(root: Path, n: int = 3) -> Path:
    for i in range(n):
        write(root / "rules" / f"r{i}" / "RULE.md",
              f"---\ndescription: Rule {i}.\npriority: {i}\n---\n\nKeep it short.\n")
    return root


def test_import_has_format_json(tmp_path):
    project = tmp_path / "project"
    write(project / ".claude" / "skills" / "demo" / "SKILL.md", "---\nname: demo\ndescription: A demo.\n---\n\nDo.\n")
    done = agentrc("import", str(project), "--from", "claude", "--out", str(tmp_path / "reg"), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["ok"] and doc["client"] == "claude" and doc["imported"] == ["1 skills"]
    assert "skills/demo/SKILL.md" in doc["changes"]["create"] and doc["diagnostics"] == []


def test_a_closed_pipe_ends_the_run_quietly(tmp_path):
    """The reader is gone before anything is written (`... | head -1` that already exited):
    no BrokenPipeError traceback, exit 141 (128 + SIGPIPE), as `yes | head -1` ends."""
    reg = _registry(tmp_path / "reg")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "agentrc", "lint", str(reg), "--format", "json"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # long before Python has started
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_head_1_of_a_long_json_document_in_a_shell_pipeline(tmp_path):
    """The issue's own command line: more output than a pipe holds, cut by head."""
    reg = _registry(tmp_path / "reg", 400)
    cmd = (f"PYTHONPATH={ROOT / 'src'} {sys.executable} -m agentrc lint {reg} --format json | head -1; "
           "echo \"status ${PIPESTATUS[0]}\"")
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["{", "status 141"], done.stdout
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


def test_lint_fails_on_a_path_with_no_items_and_names_the_misnamed_entrypoint(tmp_path):
    write(tmp_path / "reg" / "skills" / "demo" / "skill.md", "---\ndescription: A demo.\n---\n\nDo.\n")
    done = agentrc("lint", str(tmp_path / "reg"))
    assert done.returncode == 1
    assert f"{tmp_path / 'reg'}: error[AR017] no items or bundles here; {tmp_path}/reg/skills/demo/skill.md: " \
           "did you mean SKILL.md?" in done.stderr, done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = agentrc("lint", str(empty))
    assert done.returncode == 1 and "error[AR017] no items or bundles here\n" in done.stderr


def test_a_misnamed_entrypoint_beside_real_items_is_a_warning(tmp_path):
    reg = _registry(tmp_path / "reg", 1)
    write(reg / "commands" / "deploy" / "PROMPT.md", "---\ndescription: Deploy.\n---\n\nDeploy.\n")
    write(reg / "skills" / "ok" / "SKILL.md", "---\nname: ok\ndescription: Fine.\n---\n\nDo.\n")
    write(reg / "skills" / "ok" / "references" / "skill.md", "A supporting file, not an entrypoint.\n")
    done = agentrc("lint", str(reg))
    assert "commands/deploy/PROMPT.md: warning[AR017] PROMPT.md is not an entrypoint (their names are exact, in " \
           "capitals); did you mean COMMAND.md?" in done.stderr, done.stderr
    assert "references/skill.md" not in done.stderr


def test_did_you_mean_for_fields_keys_and_tools(tmp_path):
    reg = tmp_path / "reg"
    write(reg / "skills" / "demo" / "SKILL.md",
          "---\nname: demo\ndescription: A demo.\nalowed-tools: Read\nuser-invocable: true\nmy-own: 1\n---\n\nDo.\n")
    write(reg / "skills" / "typo" / "SKILL.md", "---\nname: typo\ndescripton: A typo.\n---\n\nDo.\n")
    write(reg / "rules" / "py" / "RULE.md", "---\ndescription: Python.\nglobs: \"**/*.py\"\n---\n\nType hints.\n")
    write(reg / "rules" / "sc" / "RULE.md", "---\ndescription: Scoped.\nscope:\n  path: [\"src/**\"]\n---\n\nX.\n")
    write(reg / "agents" / "a" / "AGENT.md",
          "---\ndescription: An agent.\ntools: [Read, grpe]\npreload-skill: [x]\n---\n\nA.\n")
    write(reg / "web.bundle.yaml", "schema: 1\nname: web\ndescription: Web.\nitems:\n  skill: [demo]\nrequirs: []\n")
    err = agentrc("lint", str(reg)).stderr
    expected = [
        "skills/demo/SKILL.md:4:1: warning[AR007] unknown skill field 'alowed-tools' is passed to clients as written; "
        "did you mean 'allowed-tools'?",
        "skills/typo/SKILL.md:2:1: error[AR006] description: required field is missing; is 'descripton' a "
        "misspelling of it?",
        "skills/typo/SKILL.md:3:1: warning[AR007] unknown skill field 'descripton' is passed to clients as written; "
        "did you mean 'description'?",
        "rules/py/RULE.md:3:1: warning[AR007] unknown rule field 'globs' is ignored; did you mean scope.paths? A "
        "rule's file patterns are written 'scope: {paths: [...]}'",
        "rules/sc/RULE.md:4:3: error[AR006] scope: unknown key 'path'; did you mean 'paths'? (known: paths)",
        "agents/a/AGENT.md:3:9: error[AR080] unknown tool 'Read'; did you mean 'read'?",
        "agents/a/AGENT.md:3:15: error[AR080] unknown tool 'grpe'; did you mean 'grep'?",
        "agents/a/AGENT.md:4:1: warning[AR007] unknown agent field 'preload-skill' is ignored; did you mean "
        "'preload-skills'?",
        "web.bundle.yaml:5:3: error[AR006] items: unknown key 'skill'; did you mean 'skills'?",
        "web.bundle.yaml:6:1: warning[AR007] unknown bundle field 'requirs' is ignored; did you mean 'requires'?",
    ]
    for line in expected:
        assert f"{reg}/{line}" in err, (line, err)
    assert "Additional properties" not in err and "was unexpected" not in err
    assert "user-invocable" not in err and "my-own" not in err  # a skill's other fields are the clients'


def test_unknown_clients_get_the_nearest_name(tmp_path, capsys):
    reg = _registry(tmp_path / "reg", 1)
    assert main(["build", str(reg), "--out", str(tmp_path / "out"), "--client", "claud,cursr"]) == 2
    assert "unknown client(s): claud, cursr; did you mean 'claude', 'cursor'? (known: " in capsys.readouterr().err
    assert main(["import", str(tmp_path), "--from", "copliot", "--out", str(tmp_path / "o")]) == 2
    assert "unknown client to import from: copliot; did you mean 'copilot'?" in capsys.readouterr().err
    assert main(["add", str(reg), "--client", "opencod", "--dir", str(tmp_path)]) == 2
    assert "unknown client(s): opencod; did you mean 'opencode'? (known: " in capsys.readouterr().err
