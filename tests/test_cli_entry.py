"""`agentrc.cli.entry`: the program's entry point keeps the cyclic garbage collector off
while the command line's modules are imported, and on for the command itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT

_SCRIPT = """
import gc, json, sys
passes = []
gc.callbacks.append(lambda phase, info: passes.append(info["generation"]) if phase == "start" else None)
import agentrc.cli
from agentrc.cli import entry
import_state = {}
def watch():
    import_state["modules"] = len([m for m in sys.modules if m.startswith("agentrc")])
    import_state["passes"] = len(passes) - before
    import_state["enabled"] = gc.isenabled()
    resume()
    import_state["after"] = gc.isenabled()
resume, entry._resume = entry._resume, watch
before = len(passes)  # those of agentrc's own import (dataclasses, typing) are not the entry's
code = entry.main(sys.argv[1:])
import agentrc.cli.main
print(json.dumps(dict(import_state, code=code, frozen=gc.get_freeze_count(), enabled_at_exit=gc.isenabled(),
                      hook_left=agentrc.cli.main.on_imported is not None)))
"""


def _run(args, tmp_path, env_extra=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), AGENTRC_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    env.update(env_extra or {})
    out = subprocess.run([sys.executable, "-c", _SCRIPT, *args], env=env, capture_output=True, text=True,
                         cwd=tmp_path, check=False)
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize("kind", ["cold", "no change"])
def test_no_collection_while_the_command_line_is_imported(tmp_path, kind):
    """Up to the command's module imported (a build's: about a hundred of agentrc's
    modules), not one pass of the collector; then the imports' objects frozen and the
    collector on again, and on when the program returns."""
    reg = tmp_path / "registry"
    shutil.copytree(ROOT / "examples" / "registry", reg)
    args = ["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(tmp_path / "out")]
    if kind == "no change":
        _run(args, tmp_path)
    state = _run(args, tmp_path)
    assert state["code"] == 0
    assert state["modules"] > 40 and state["passes"] == 0
    assert state["enabled"] is False and state["after"] is True and state["enabled_at_exit"] is True
    assert state["frozen"] > 10_000
    assert state["hook_left"] is False  # a later call of cli.main in the same process is not the entry's


def test_the_program_run_as_a_module_and_as_the_console_script_goes_through_the_entry():
    """`python -m agentrc` and the console script (`pyproject.toml`) both start at `entry.main`."""
    assert "from agentrc.cli.entry import main" in (ROOT / "src" / "agentrc" / "__main__.py").read_text()
    assert 'agentrc = "agentrc.cli.entry:main"' in (ROOT / "pyproject.toml").read_text()
    out = subprocess.run([sys.executable, "-m", "agentrc", "--version"], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
                         capture_output=True, text=True, check=True)
    assert out.stdout.startswith("agentrc ")


def test_a_collector_turned_off_by_the_caller_stays_off(tmp_path):
    """Whoever runs the program with the collector off keeps it off: nothing frozen, nothing
    turned on."""
    script = """
import gc, json, sys
gc.disable()
from agentrc.cli import entry
code = entry.main(["lint", sys.argv[1]])
print(json.dumps([code, gc.isenabled(), gc.get_freeze_count()]))
"""
    reg = tmp_path / "registry"
    shutil.copytree(ROOT / "examples" / "registry", reg)
    out = subprocess.run([sys.executable, "-c", script, str(reg)], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    code, enabled, frozen = json.loads(out.stdout.splitlines()[-1])
    assert code == 0 and enabled is False and frozen == 0
