"""The Gemini CLI extension layout (`agentrc build --layout plugin --client gemini`):
gemini-extension.json (name, version, description, contextFileName, mcpServers), commands/*.toml,
skills/ (rules as skills), agents/*.md, hooks/hooks.json with scripts called via ${extensionPath},
the context items as the extension's GEMINI.md, and no marketplace file.
tests/conformance/test_plugin_install.py links the same output with the real `gemini`."""


import json
from pathlib import Path
from typing import Dict

from helpers import ROOT, compare_golden, tree_text as _tree_text

from agentrc.pipeline import stages as pipeline
from agentrc.clients.registry import PLUGIN_LAYOUTS
from agentrc.inputs.tree import read_tree

from . import harness
from .harness import item as _item

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "plugins"


def _extension(files: Dict[str, str], bundles=None, name: str = ""):
    return harness.build(files, ["gemini"], bundles=bundles, layout="plugin", plugin_name=name)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "gemini")


def test_gemini_extension_golden_platform_baseline(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    plan = pipeline.generate(tree, ["gemini"], ["platform-baseline"], layout="plugin")
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    compare_golden(GOLDEN / "gemini.txt", _tree_text(plan.files))
    paths = {f.path for f in plan.files}
    assert not any(p.startswith((".gemini/", ".agents/")) or p == "AGENTS.md" for p in paths), sorted(paths)
    manifest = json.loads(next(f for f in plan.files if f.path == "gemini-extension.json").content)
    assert manifest == {"name": "platform-baseline", "version": "1.2.0",
                        "description": "Baseline rules, skills, and agents for all repositories",
                        "contextFileName": "GEMINI.md"}


def test_gemini_extension_is_registered():
    assert PLUGIN_LAYOUTS["gemini"].layout == "plugin" and PLUGIN_LAYOUTS["gemini"].title == "Gemini CLI extension"


def test_every_kind_has_its_extension_directory():
    files = _item("rule", "style", "description: Use when writing code\n")
    files.update(_item("skill", "s", "name: s\ndescription: S\n"))
    files.update(_item("command", "ship", "description: Ship it\n", "Ship $ARGUMENTS.\n"))
    files.update(_item("agent", "helper", "description: Helps\ntools: [read]\n", "You help.\n"))
    files.update(_item("context", "about", "description: About\n", "## About\n\nA repo.\n"))
    plan, out = _extension(files, name="ext")
    assert {"skills/style/SKILL.md", "skills/s/SKILL.md", "commands/ship.toml", "agents/helper.md",
            "GEMINI.md", "gemini-extension.json"} <= set(out)
    assert out["commands/ship.toml"] == "description = \"Ship it\"\nprompt = '''\nShip {{args}}.\n'''\n"
    assert out["agents/helper.md"].startswith("---\nname: helper\ndescription: Helps\nkind: local\ntools:\n"
                                              "  - read_file\n---\n")
    assert "## About\n\nA repo.\n" in out["GEMINI.md"]
    assert not any(p.startswith((".gemini/", ".agents/")) or p == "AGENTS.md" for p in out), sorted(out)
    assert json.loads(out["gemini-extension.json"]) == {
        "name": "ext", "version": "0.0.0", "description": "ext, built by agentrc", "contextFileName": "GEMINI.md"}
    assert all(r.generated for r in plan.reports), [r.name for r in plan.reports if not r.generated]
    assert "contextFileName" in _fields(plan, "context", "about")["body"][1]


def test_no_context_means_no_context_file_name():
    _, out = _extension(_item("skill", "s", "name: s\ndescription: S\n"), name="ext")
    assert "contextFileName" not in json.loads(out["gemini-extension.json"]) and "GEMINI.md" not in out


def test_no_marketplace_file():
    _, out = _extension(_item("skill", "s", "name: s\ndescription: S\n"), name="ext")
    assert not any("marketplace" in p for p in out), sorted(out)


def test_hooks_call_their_script_via_extension_path():
    files = _item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash]\n"
                                   "script: ./check.sh --strict\ntimeout: 10\n", "Docs.\n",
                  {"check.sh": "#!/bin/sh\nexit 0\n"})
    plan, out = _extension(files, name="ext")
    handler = {"type": "command", "command": '"${extensionPath}/agentrc/hooks/guard/check.sh" --strict',
               "name": "guard", "description": "Guard", "timeout": 10000}
    assert json.loads(out["hooks/hooks.json"]) == {
        "hooks": {"BeforeTool": [{"matcher": "^run_shell_command$", "hooks": [handler]}]}}
    assert next(f for f in plan.files if f.path == "agentrc/hooks/guard/check.sh").executable
    assert "extensionPath" in _fields(plan, "hook", "guard")["script"][1]
    assert "hooks" not in json.loads(out["gemini-extension.json"])  # hooks are never in the manifest


def test_a_hook_keeps_its_runner_and_its_own_file_arguments():
    """`python3 ./check.py ./rules.json --strict`: the runner stays in front of the script and
    a `./file` argument naming one of the hook's own files is called via ${extensionPath} too,
    as the project layout calls both via $GEMINI_PROJECT_DIR (the extension dropped the runner
    and left `./rules.json` relative to wherever Gemini CLI runs the hook)."""
    files = _item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash]\n"
                                   "script: python3 ./check.py ./rules.json --strict\n", "Docs.\n",
                  {"check.py": "print('ok')\n", "rules.json": "{}\n"})
    plan, out = _extension(files, name="ext")
    hook = json.loads(out["hooks/hooks.json"])["hooks"]["BeforeTool"][0]["hooks"][0]
    root = '"${extensionPath}/agentrc/hooks/guard'
    assert hook["command"] == f'python3 {root}/check.py" {root}/rules.json" --strict'
    assert _fields(plan, "hook", "guard")["script"] == (
        "mapped", "check.py copied to agentrc/hooks/guard/check.py, called via ${extensionPath} (Gemini CLI "
                  "replaces it with the extension's directory)")


def test_mcp_servers_are_in_the_manifest():
    files = _item("skill", "s", "name: s\ndescription: S\n")
    files.update(_item("context", "about", "description: About\n", "About.\n"))
    files["reg/b.bundle.yaml"] = (
        "schema: 1\nname: b\ndescription: B\nitems:\n  skills:\n    - s\n  contexts:\n    - about\n"
        "mcps:\n  db:\n    local:\n      command: npx\n      args: [\"-y\", \"db-mcp\"]\n"
        "      env:\n        DB_TOKEN: \"${DB_TOKEN}\"\n"
        "  docs:\n    remote:\n      type: http\n      url: https://docs.example.com/mcp\n"
        "      headers:\n        Authorization: \"Bearer ${DOCS_TOKEN}\"\n"
        "metadata:\n  version: \"2.0.0\"\n")
    plan, out = _extension(files, ["b"])
    text = out["gemini-extension.json"]
    manifest = json.loads(text)
    assert list(manifest) == ["name", "version", "description", "contextFileName", "mcpServers"]
    assert manifest["mcpServers"] == {
        "db": {"command": "npx", "args": ["-y", "db-mcp"], "env": {"DB_TOKEN": "${DB_TOKEN}"}},
        "docs": {"url": "https://docs.example.com/mcp", "type": "http",
                 "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}
    report = next(r for r in plan.reports if (r.kind, r.name) == ("mcp", "db"))
    assert report.generated and report.outputs == ("gemini-extension.json",)


def test_command_resources_are_reported_degraded():
    files = _item("command", "ship", "description: Ship it\n", "Follow [the list](./list.md).\n",
                  {"list.md": "- one\n"})
    plan, out = _extension(files, name="ext")
    assert out["agentrc/commands/ship/list.md"] == "- one\n"
    assert _fields(plan, "command", "ship")["resources"][0] == "degraded"
