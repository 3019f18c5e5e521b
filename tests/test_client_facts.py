"""The clients' facts kept in agentrc.clients.names (so that a build imports its clients'
adapters alone) are the adapters' own, and a replayed edit imports no other adapter."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

from agentrc.clients import names
from agentrc.clients.base import SHARED_SKILL_DIR

ROOT = Path(__file__).resolve().parent.parent


def _adapters():
    registry = importlib.import_module("agentrc.clients.registry")
    return registry.ADAPTERS


def test_the_facts_the_registry_reads_without_the_adapters_are_the_adapters():
    adapters = _adapters()
    assert names.FAMILIES == tuple(a.family for a in adapters)
    assert names.PASSTHROUGH_BLOCKS == tuple(a.passthrough_block for a in adapters if a.passthrough_block)
    assert set(names.ALIASES) == {n for a in adapters for n in a.aliases}
    assert len(names.ALIASES) == len(set(names.ALIASES))
    assert names.SHARED_BLOCKS == tuple((a.passthrough_block, a.title) for a in adapters if a.shared_block)
    assert names.AGENT_SKILLS_WRITERS == tuple(a.name for a in adapters if a.skill_dir == SHARED_SKILL_DIR)


def test_get_returns_the_same_adapters_as_the_whole_table():
    from agentrc.clients import registry

    assert registry.get(list(registry.CLIENTS)) == tuple(registry.CLIENTS.values()) == registry.ADAPTERS
    assert registry.get(list(registry.PLUGIN_LAYOUTS), "plugin") == tuple(registry.PLUGIN_LAYOUTS.values())
    assert all(x is y for x, y in zip(registry.get(["claude", "hermes"]), (registry.CLIENTS["claude"],
                                                                          registry.CLIENTS["hermes"])))


def test_a_replayed_edit_imports_the_adapters_of_its_clients_alone(tmp_path):
    """A build of claude, copilot and opencode imports those adapters (copilot's reads
    claude's matcher) and no other: importing all nine was a tenth of a replayed edit."""
    from test_edit_cost import _generator

    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 12, seed=3)
    script = ("import sys; from agentrc.cli.main import main\n"
              "from agentrc.building import incremental\n"
              "code = main(sys.argv[1:])\n"
              "loaded = sorted(m for m in sys.modules if m.startswith('agentrc'))\n"
              "print(incremental.LAST.path or '-', ' '.join(loaded))\n"
              "sys.exit(code)")
    cmd = [sys.executable, "-c", script, "build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out),
           "--jobs", "1"]
    env = dict(os.environ, AGENTRC_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT / "src"))
    for run in ("-", "replay"):
        if run == "replay":
            rule = sorted((reg / "rules").iterdir())[0] / "RULE.md"
            with open(rule, "a", encoding="utf-8") as fh:
                fh.write("\nOne more line.\n")
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        path, *modules = done.stdout.split()
        assert path == run, done.stdout
        adapters = {m for m in modules if m.startswith("agentrc.clients.")} - {
            "agentrc.clients.base", "agentrc.clients.names", "agentrc.clients.registry", "agentrc.clients.skillmeta",
            "agentrc.clients.servers", "agentrc.clients.hookkit", "agentrc.clients.pluginlayout",
                "agentrc.clients.ignorefile"}
        assert adapters == {"agentrc.clients.claude", "agentrc.clients.copilot", "agentrc.clients.opencode"}, adapters
