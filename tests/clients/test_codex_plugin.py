"""The Codex plugin layout (`agentrc build --layout plugin --client codex`): .codex-plugin/plugin.json
naming only the components the build wrote, skills/ (rules and commands as standard-form
skills, as in the project layout), hooks/hooks.json holding only `hooks` with scripts called
via ${PLUGIN_ROOT}, .mcp.json in Codex's server fields, the .agents/plugins/marketplace.json
Codex installs from, and no agents or AGENTS.md. tests/conformance/test_plugin_install.py
installs the same output with the real `codex`."""


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


def _plugin(files: Dict[str, str], bundles=None, name: str = ""):
    return harness.build(files, ["codex"], bundles=bundles, layout="plugin", plugin_name=name)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "codex")


def test_codex_plugin_golden_platform_baseline(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    plan = pipeline.generate(tree, ["codex"], ["platform-baseline"], layout="plugin")
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    compare_golden(GOLDEN / "codex.txt", _tree_text(plan.files))
    paths = {f.path for f in plan.files}
    assert not any(p.startswith((".codex/", ".agents/skills/")) or p == "AGENTS.md" for p in paths), sorted(paths)
    dropped = {(r.kind, r.name) for r in plan.reports if not r.generated}
    assert ("context", "project") in dropped and ("context", "security") in dropped


def test_codex_plugin_is_registered():
    assert PLUGIN_LAYOUTS["codex"].layout == "plugin" and PLUGIN_LAYOUTS["codex"].title == "Codex plugin"


def test_manifest_names_only_the_components_written():
    plan, out = _plugin(_item("skill", "s", "name: s\ndescription: S\n"), name="only-skills")
    assert json.loads(out[".codex-plugin/plugin.json"]) == {
        "name": "only-skills", "description": "only-skills, built by agentrc", "skills": "./skills/"}
    assert "hooks/hooks.json" not in out and ".mcp.json" not in out
    assert list(json.loads(out[".codex-plugin/plugin.json"])) == ["name", "description", "skills"]


def test_rules_and_commands_are_skills_and_agents_and_context_are_dropped():
    files = _item("rule", "style", "description: Use when writing code\n")
    files.update(_item("command", "ship", "description: Ship it\nargument-hint: VERSION\n", "Ship $ARGUMENTS.\n"))
    files.update(_item("agent", "helper", "description: Helps\n"))
    files.update(_item("context", "about", "description: About\n", "## About\n\nA repo.\n"))
    plan, out = _plugin(files, name="p")
    assert out["skills/style/SKILL.md"].startswith("---\nname: style\ndescription: Use when writing code\n---\n")
    assert out["skills/ship/SKILL.md"].startswith("---\nname: ship\ndescription: Ship it\n---\n")
    assert out["skills/ship/agents/openai.yaml"] == "policy:\n  allow_implicit_invocation: false\n"
    assert "AGENTS.md" not in out and not any(p.startswith((".codex/", "agents/")) for p in out)
    assert _fields(plan, "agent", "helper")["description"] == ("dropped", "Codex plugin has no agents")
    assert _fields(plan, "context", "about")["body"] == ("dropped", "Codex plugin has no contexts")
    assert _fields(plan, "rule", "style")["body"][0] == "degraded"
    assert any(d.code == "AR092" and "agent helper dropped" in d.message for d in plan.diagnostics)


def test_shared_skill_blocks_are_not_merged_into_the_plugin_skill():
    plan, out = _plugin(_item("skill", "s", "name: s\ndescription: S\nopenclaw:\n  metadata:\n    openclaw:\n"
                                            "      emoji: x\n"), name="p")
    assert out["skills/s/SKILL.md"].startswith("---\nname: s\ndescription: S\n---\n")
    assert _fields(plan, "skill", "s")["openclaw"][0] == "omitted"


def test_hooks_call_their_script_via_plugin_root():
    files = _item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash]\n"
                                   "script: ./check.sh --strict\ntimeout: 10\n", "Docs.\n",
                  {"check.sh": "#!/bin/sh\nexit 0\n"})
    plan, out = _plugin(files, name="p")
    hooks = json.loads(out["hooks/hooks.json"])
    assert hooks == {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command", "command": '"${PLUGIN_ROOT}/agentrc/hooks/guard/check.sh" --strict', "timeout": 10}]}]}}
    assert next(f for f in plan.files if f.path == "agentrc/hooks/guard/check.sh").executable
    assert json.loads(out[".codex-plugin/plugin.json"])["hooks"] == "./hooks/hooks.json"
    assert "PLUGIN_ROOT" in _fields(plan, "hook", "guard")["script"][1]


def test_a_plugin_hook_calls_its_own_file_arguments_via_plugin_root():
    """A `./file` argument naming one of the hook's own files is called via ${PLUGIN_ROOT},
    as the script is (it was left relative to wherever Codex runs the hook)."""
    files = _item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash]\n"
                                   "script: bash ./g.sh ./allow.txt --x\n", "Docs.\n",
                  {"g.sh": "#!/bin/sh\n", "allow.txt": "ls\n"})
    _, out = _plugin(files, name="p")
    hook = json.loads(out["hooks/hooks.json"])["hooks"]["PreToolUse"][0]["hooks"][0]
    root = '"${PLUGIN_ROOT}/agentrc/hooks/guard'
    assert hook["command"] == f'bash {root}/g.sh" {root}/allow.txt" --x'


def test_mcp_servers_are_a_mcp_json_in_codex_fields():
    files = _item("skill", "s", "name: s\ndescription: S\n")
    files["reg/b.bundle.yaml"] = (
        "schema: 1\nname: b\ndescription: B\nitems:\n  skills:\n    - s\n"
        "mcps:\n  db:\n    local:\n      command: npx\n      args: [\"-y\", \"db-mcp\"]\n"
        "      env:\n        LOG: info\n        DB_TOKEN: \"${DB_TOKEN}\"\n"
        "  docs:\n    remote:\n      type: http\n      url: https://docs.example.com/mcp\n"
        "      headers:\n        Authorization: \"Bearer ${DOCS_TOKEN}\"\n"
        "  old:\n    remote:\n      type: sse\n      url: https://x/sse\n"
        "metadata:\n  version: \"2.0.0\"\n")
    plan, out = _plugin(files, ["b"])
    manifest = json.loads(out[".codex-plugin/plugin.json"])
    assert manifest == {"name": "b", "version": "2.0.0", "description": "B", "skills": "./skills/",
                        "mcpServers": "./.mcp.json"}
    assert json.loads(out[".mcp.json"]) == {"mcpServers": {
        "db": {"command": "npx", "args": ["-y", "db-mcp"], "env": {"LOG": "info"}, "env_vars": ["DB_TOKEN"]},
        "docs": {"url": "https://docs.example.com/mcp", "bearer_token_env_var": "DOCS_TOKEN"}}}
    report = next(r for r in plan.reports if (r.kind, r.name) == ("mcp", "old"))
    assert not report.generated  # Codex has no SSE transport


def test_marketplace_lists_the_plugin_at_its_root():
    _, out = _plugin(_item("skill", "s", "name: s\ndescription: S\n"), name="p")
    assert json.loads(out[".agents/plugins/marketplace.json"]) == {
        "name": "p-marketplace", "interface": {"displayName": "p-marketplace"},
        "plugins": [{"name": "p", "source": {"source": "local", "path": "./"},
                     "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"}, "category": "Coding"}]}
