"""What the common commands import: a build with nothing to do and a one-edit build run as
the console script runs them import neither `typing` nor `pathlib` (nor `importlib.util`,
which imports `typing` on Python 3.9): together about 5 ms of each, a tenth of a no-change
build at 1,000 items. agentrc's modules import typing's names under `if TYPE_CHECKING:`
(docs/architecture.md, "Start-up"); these tests keep it so. Nor does either import `pickle`
(the memo's entries are read through `agentrc.pickling`), `contextvars`, or the merging of
config files (a replayed edit of a rule merges none)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import PurePosixPath

import pytest

from agentrc.cli.build import shown
from agentrc.memo.stamp import beside
from agentrc.text import lazy
from helpers import ROOT
from test_edit_cost import _generator

# As the console script pip writes for `agentrc` runs it (not `python -m`, whose runpy
# imports importlib.util and typing itself).
SCRIPT = ("import sys\nfrom agentrc.cli.entry import main\ncode = main()\n"
          "from agentrc.building import incremental\n"
          "print(incremental.LAST.path if 'agentrc.building.incremental' in sys.modules else 'none')\n"
          "print(' '.join(m for m in ('typing', 'pathlib', 'importlib.util', 'yaml.reader', 'pickle', "
          "'contextvars', 'agentrc.output.merge') if m in sys.modules))\n"
          "sys.exit(code)")


def _run(tmp_path, reg, out) -> list:
    cmd = [sys.executable, "-c", SCRIPT, "build", str(reg), "--client", "claude,copilot,opencode", "--out",
           str(out), "--jobs", "1"]
    env = dict(os.environ, AGENTRC_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()[-2:]


def test_a_no_change_build_and_an_edit_import_neither_typing_nor_pathlib(tmp_path):
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 12, seed=3)
    _run(tmp_path, reg, out)
    assert _run(tmp_path, reg, out)[1] == ""  # nothing to do
    rule = sorted((reg / "rules").iterdir())[0] / "RULE.md"
    with open(rule, "a", encoding="utf-8") as fh:
        fh.write("\nOne more line.\n")
    assert _run(tmp_path, reg, out) == ["replay", ""]


@pytest.mark.parametrize("path", ["", ".", "./", "/", "//", "///", "//a", "///a/b", "a//b/", "./a/./b", "a/..",
                                  "..", "../x/", "out", "/tmp/out/", "./.agentrc", "out/.agentrc"])
def test_shown_prints_a_path_as_pathlib_does(path):
    assert shown(path) == str(PurePosixPath(path))


def test_beside_replaces_the_suffix_as_with_suffix_does(tmp_path):
    memo = tmp_path / "build-0123.pickle"
    for suffix in (".stamp", ".stamp.tmp", ".replay", ".memo", ""):
        assert beside(memo, suffix) == str(memo.with_suffix(suffix))
        assert beside(str(memo), suffix) == str(memo.with_suffix(suffix))


def test_a_lazy_module_is_imported_by_its_first_attribute(monkeypatch):
    """The stand-in imports nothing until asked, then hands out the real module's names; a
    module imported already is given as it is."""
    monkeypatch.delitem(sys.modules, "json.tool", raising=False)
    stand_in = lazy.lazy_module("json.tool")
    assert "json.tool" not in sys.modules
    assert callable(stand_in.main) and "json.tool" in sys.modules
    assert stand_in.main is sys.modules["json.tool"].main
    assert lazy.lazy_module("json.tool") is sys.modules["json.tool"]


def test_a_lazy_module_that_does_not_exist_fails_where_it_is_used():
    stand_in = lazy.lazy_module("agentrc_no_such_module")
    with pytest.raises(ImportError):
        stand_in.anything


def test_an_empty_out_is_the_working_directory(tmp_path, monkeypatch):
    """As `pathlib.Path("")` named it before the build's paths were strings (a caller that
    does not check --out, `agentrc cap build`, hands it on)."""
    from agentrc.building.build import BuildOptions, build

    reg, work = tmp_path / "reg", tmp_path / "work"
    _generator().generate(str(reg), 4, seed=2)
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    result = build(BuildOptions((str(reg),), "", ("claude",)))
    assert result.ok, result.diagnostics
    assert (work / ".agentrc" / "manifest.json").is_file() and (work / ".claude").is_dir()


_CONSUMER = ("import sys\nfrom agentrc.cli.entry import main\ncode = main()\n"
             "print(' '.join(m for m in ('typing', 'pathlib', 'importlib.util', 'difflib', 'secrets',"
             " 'agentrc.importers.document', 'agentrc.canonical.document', 'agentrc.inputs.config') "
             "if m in sys.modules))\nsys.exit(code)")


def test_a_consumer_installing_a_portable_source_imports_no_importer_nor_typing(tmp_path, monkeypatch):
    """`add` and `install --frozen` of a source in the portable format: no published
    layout's importers, no canonical reader, no typing or pathlib (about 25 ms of the
    command's start at 1,000 items, issue 36)."""
    import subprocess as sp

    from sourcerepos import Repo, isolated_home, rule, skill, write

    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    write(repo.work, {"skills/a/SKILL.md": skill("a"), "rules/r/RULE.md": rule("r")})
    repo.commit({}, tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    sp.run(["git", "init", "-q"], cwd=project, check=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

    def agentrc(*argv: str) -> str:
        proc = sp.run([sys.executable, "-c", _CONSUMER, *argv], cwd=project, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()[-1] if proc.stdout.strip() else ""

    assert agentrc("add", f"{repo.url}@v1", "--client", "claude,copilot,opencode", "--trust") == ""
    assert agentrc("install", "--frozen", "--trust") == ""
