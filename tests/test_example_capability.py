"""The example capability package (examples/capabilities/team-review) and `cap use` on first
use (issue 32 item 7): `agentrc cap install` accepts the package, and a `cap use` right after
it, in a directory with no `oas-config.yaml`, is AR170 with the exact command that makes it
work; the command, run as printed, does. The kernel finds capabilities only through each
scope's config, and so does agentrc: the twin test checks the kernel agrees on both steps."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentrc.cli.main import main
from helpers import ROOT
from test_cap_judge import OAS

EXAMPLE = ROOT / "examples" / "capabilities" / "team-review"
needs_kernel = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"), reason="the OAS kernel and node")


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _hint_command(err: str) -> str:
    """The shell command the AR170 hint ends with."""
    hints = [line for line in err.splitlines() if line.startswith("  hint: ")]
    assert len(hints) == 1, err
    return hints[0].split("run the command again: ", 1)[1]


def test_the_example_package_installs_and_cap_use_says_what_to_run(tmp_path, capsys, monkeypatch):
    scope = tmp_path / "team"
    scope.mkdir()
    monkeypatch.chdir(scope)
    code, out, err = run(capsys, "cap", "install", str(EXAMPLE))
    assert code == 0, err
    assert "example.review@1.0.0 -> .agents/capabilities/installed/example.review" in out
    installed = scope / ".agents" / "capabilities" / "installed" / "example.review"
    assert (installed / "skills" / "review-diff" / "SKILL.md").is_file()
    lock = json.loads((scope / "oas-lock.json").read_text())
    assert list(lock["capabilities"]) == ["example.review"]
    assert lock["packages"]["example.team-review"]["source"] == f"path:{EXAMPLE}"

    before = sorted(p.relative_to(scope) for p in scope.rglob("*"))
    code, out, err = run(capsys, "cap", "use", "example.review")
    assert code == 1 and "error[AR170]" in err
    assert ("capability 'example.review' is installed in .agents/capabilities/installed/example.review, but the "
            "working directory has no oas-config.yaml") in err
    command = _hint_command(err)
    assert command == "agentrc cap init && agentrc cap use example.review"
    assert sorted(p.relative_to(scope) for p in scope.rglob("*")) == before  # nothing written

    # The printed command, run by a shell as printed (agentrc's own entry point on PATH).
    shell_run(command, scope, tmp_path)
    config = (scope / "oas-config.yaml").read_text()
    assert config.startswith("name: team\n")
    assert "    example.review:\n      from: installed\n      global: true" in config
    code, out, err = run(capsys, "cap", "doctor", "--json")
    assert code == 0, err
    assert [c["id"] for c in json.loads(out)["capabilities"]] == ["example.review"]


def shell_run(command: str, cwd: Path, tmp_path: Path) -> None:
    """`command` through /bin/sh with an `agentrc` on PATH that runs this checkout."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "agentrc"
    script.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT / 'src'} exec {sys.executable} -m agentrc \"$@\"\n")
    script.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(["/bin/sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr + proc.stdout


def test_the_hint_names_the_scope_that_holds_the_capability(tmp_path, capsys, monkeypatch):
    """Installed in a workspace without a config, used from a repository below it that has
    one: the config to create is the workspace's, and the command keeps every flag given."""
    ws = tmp_path / "my ws"
    repo = ws / "repo"
    repo.mkdir(parents=True)
    (repo / "oas-config.yaml").write_text("name: repo\n")
    assert main(["cap", "install", str(EXAMPLE), "--dir", str(ws), "--json"]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "cap", "use", "example.review", "--soul", "dev", "--settings", "depth=full",
                       "--dir", str(repo))
    assert code == 1 and "error[AR170]" in err and "but 'my ws' has no" not in err
    assert "but my ws has no oas-config.yaml" in err
    command = _hint_command(err)
    assert command == ("agentrc cap init --dir 'my ws' && agentrc cap use example.review "
                       "--soul dev --settings depth=full --dir 'my ws/repo'")
    assert (repo / "oas-config.yaml").read_text() == "name: repo\n"
    shell_run(command, tmp_path, tmp_path)
    assert "example.review:\n      from: installed\n      souls:\n        dev:" in \
        (repo / "oas-config.yaml").read_text()


def test_the_readmes_three_commands_run_as_shown(tmp_path):
    """README.md's capability block, run by bash from the checkout (its /tmp/team made a
    temporary directory): every command succeeds and doctor shows the capability active."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Capabilities in three commands", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [c for c in ("cap install", "cap use", "cap doctor") if c not in block] == []
    scope = tmp_path / "team"
    script = "set -e\n" + block.replace("/tmp/team", str(scope)) + "agentrc cap doctor --json > doctor.json\n"
    shell_run(script, ROOT, tmp_path)
    assert [c["id"] for c in json.loads((scope / "doctor.json").read_text())["capabilities"]] == ["example.review"]
    assert not (ROOT / "oas-config.yaml").exists()


def test_a_capability_installed_nowhere_still_says_install_it(tmp_path, capsys):
    (tmp_path / "oas-config.yaml").write_text("name: s\n")
    code, _, err = run(capsys, "cap", "use", "no.such", "--dir", str(tmp_path), "--json")
    envelope = json.loads(_)
    assert code == 1 and envelope["error"]["code"] == "E_UNKNOWN_CAPABILITY"
    assert "is not acquired in this scope's chain; install its package first" in envelope["error"]["message"]


@needs_kernel
def test_the_kernel_accepts_the_example_and_agrees_on_first_use(tmp_path, capsys):
    """`oas install` writes the same lock for the example; `oas use` right after it fails as
    `cap use` does (no config, nothing found), and the line the hint gives makes it work."""
    ours, theirs = tmp_path / "ours" / "team", tmp_path / "theirs" / "team"
    ours.mkdir(parents=True)
    theirs.mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home))

    def oas(*argv):
        return subprocess.run(["node", str(OAS), *argv, "--dir", str(theirs)], capture_output=True, text=True,
                              env=env, timeout=300)

    assert main(["cap", "install", str(EXAMPLE), "--dir", str(ours), "--json"]) == 0
    assert oas("install", str(EXAMPLE)).returncode == 0
    assert (ours / "oas-lock.json").read_bytes() == (theirs / "oas-lock.json").read_bytes()
    capsys.readouterr()
    assert main(["cap", "use", "example.review", "--dir", str(ours)]) == 1
    refused = oas("use", "example.review")
    assert refused.returncode != 0 and re.search(r"unknown capability .example\.review", refused.stderr)
    for scope in (ours, theirs):
        (scope / "oas-config.yaml").write_text("name: team\n")
    assert main(["cap", "use", "example.review", "--dir", str(ours)]) == 0
    assert oas("use", "example.review").returncode == 0
    assert (ours / "oas-config.yaml").read_bytes() == (theirs / "oas-config.yaml").read_bytes()
