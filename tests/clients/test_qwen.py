"""The Qwen Code adapter: .qwen/rules (paths:), .qwen/skills, .qwen/agents (Qwen tool ids,
authType:modelId models), Markdown commands with {{args}}, hooks and MCP servers in
.qwen/settings.json, the shared AGENTS.md. tests/conformance/test_qwen_discovery.py checks
the same output with the real `qwen`."""

import json
from pathlib import Path
from typing import Dict, Sequence

import pytest

from helpers import ROOT, compare_golden, tree_text as _tree_text

from agentrc.clients.qwen import Qwen
from agentrc.clients.registry import CLIENTS, PLUGIN_LAYOUTS
from agentrc.inputs.tree import read_tree
from agentrc.pipeline import stages as pipeline
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import frontmatter
from .harness import item as _item

QWEN = Qwen()


def _build(files: Dict[str, str], clients: Sequence[str] = ("qwen",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "qwen")


def test_every_kind_has_its_qwen_directory():
    files = {**_item("rule", "style", "description: House style\nscope:\n  paths: ['src/**']\n",
                     "See [notes](./notes.md).\n", extra={"notes.md": "Notes.\n"}),
             **_item("rule", "always", "description: Always on\n"),
             **_item("skill", "notes", "name: notes\ndescription: Notes\nuser-invocable: false\ncolor: red\n"),
             **_item("command", "ship", "description: Ship it\nargument-hint: <v>\n", "Ship $ARGUMENTS now.\n"),
             **_item("agent", "tester", "description: Runs tests\nmodel: openai/qwen3-coder-plus\n"
                                        "tools: [read, bash]\npreload-skills: [notes]\n"),
             **_item("context", "about", "description: About\n", "## About\n\nA repo.\n")}
    plan, out = _build(files)
    assert frontmatter(out[".qwen/rules/style.md"]) == {"description": "House style", "paths": ["src/**"]}
    assert ".qwen/agentrc/rules/style/notes.md" in out and "](../agentrc/rules/style/notes.md)" in out[".qwen/rules/style.md"]
    assert "paths" not in frontmatter(out[".qwen/rules/always.md"])
    assert frontmatter(out[".qwen/skills/notes/SKILL.md"])["user-invocable"] is False
    assert _fields(plan, "skill", "notes")["color"][0] == "dropped"
    assert out[".qwen/commands/ship.md"].endswith("# ship\n\nShip {{args}} now.\n")
    assert _fields(plan, "command", "ship")["body"][0] == "mapped"
    assert _fields(plan, "command", "ship")["argument-hint"][0] == "dropped"
    agent = frontmatter(out[".qwen/agents/tester.md"])
    assert agent["model"] == "openai:qwen3-coder-plus" and agent["tools"] == ["read_file", "run_shell_command"]
    assert "## Skills" in out[".qwen/agents/tester.md"] and "AGENTS.md" in out


@pytest.mark.parametrize("model, value, status", [
    ("inherit", "inherit", "emitted"), ("sonnet", None, "dropped"), ("anthropic/claude-x", "anthropic:claude-x", "mapped"),
    ("mistral/large", None, "dropped"),
])
def test_agent_models(model, value, status):
    plan, out = _build(_item("agent", "a", f"description: A\nmodel: {model}\n"))
    assert frontmatter(out[".qwen/agents/a.md"]).get("model") == value
    assert _fields(plan, "agent", "a")["model"][0] == status


def test_no_tools_is_never_every_tool():
    _, out = _build(_item("agent", "a", "description: A\ntools: []\n"))
    fm = frontmatter(out[".qwen/agents/a.md"])
    assert fm["tools"] == [] and "run_shell_command" in fm["disallowedTools"]


def test_hooks_go_to_settings_with_qwen_tool_ids_and_timeouts_in_the_unit_qwen_reads():
    files = {**_item("hook", "guard", "description: G\nevent: PreToolUse\ntools: [bash, edit]\nscript: ./g.sh\n"
                                      "timeout: 1200\nasync: true\n", extra={"g.sh": "#!/bin/sh\n"}),
             **_item("hook", "raw", "description: R\nevent: PostToolUse\nmatcher: Write|Edit\nscript: make fmt\n"),
             **_item("hook", "cond", "description: C\nevent: PreToolUse\nmatcher: Bash\nif: Bash(git *)\n"
                                     "script: make x\n")}
    plan, out = _build(files)
    hooks = json.loads(out[".qwen/settings.json"])["hooks"]
    assert hooks["PreToolUse"] == [{"matcher": "run_shell_command|edit", "hooks": [
        {"type": "command", "command": '"${QWEN_PROJECT_DIR:-.}/.qwen/agentrc/hooks/guard/g.sh"', "timeout": 1200000,
         "async": True}]}]
    assert hooks["PostToolUse"][0]["matcher"] == "Write|Edit"
    assert {s for s, _ in _fields(plan, "hook", "cond").values()} <= {"dropped", "omitted"}


def test_mcp_servers_in_settings():
    http = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "http", url="https://x/mcp",
                     headers=freeze({"Authorization": "Bearer ${TOKEN}"}), fields=freeze({"remote": {}}))
    sse = McpServer("ev", "b", "b.bundle.yaml", (1, 1), "sse", url="https://x/sse", fields=freeze({"remote": {}}))
    local = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "${ROOT:-.}"),
                      fields=freeze({"local": {}}))
    assert json.loads(QWEN.render_server(http).fragments[0].value) == {"httpUrl": "https://x/mcp",
                                                           "headers": {"Authorization": "Bearer ${TOKEN}"}}
    assert json.loads(QWEN.render_server(sse).fragments[0].value) == {"url": "https://x/sse"}
    r = QWEN.render_server(local)
    assert json.loads(r.fragments[0].value) == {"command": "npx", "args": ["-y", "."]}
    assert {f.field: f.status for f in r.report.fields}["env-defaults"] == "degraded"


@pytest.mark.parametrize("name", ["a--b", "x" * 64])
def test_hostile_names_stay_in_the_qwen_directories(name):
    files = {**_item("command", name, "description: C\n"), **_item("rule", name, "description: R\n"),
             **_item("agent", name, "description: A\n", "You are the agent for this name.\n")}
    _, out = _build(files)
    assert {f".qwen/commands/{name}.md", f".qwen/rules/{name}.md", f".qwen/agents/{name}.md"} <= set(out)
    assert all(p.startswith(".qwen/") for p in out)


def test_registered_and_reads_the_shared_skills():
    qwen = CLIENTS["qwen"]
    assert qwen.title == "Qwen Code" and qwen.skill_dir == ".qwen/skills"
    assert set(qwen.also_reads) == {k for k in qwen.also_reads} and all(v == (".agents/skills",)
                                                                        for v in qwen.also_reads.values())


GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "plugins"


def test_qwen_extension_golden_platform_baseline(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    plan = pipeline.generate(tree, ["qwen"], ["platform-baseline"], layout="plugin")
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    compare_golden(GOLDEN / "qwen.txt", _tree_text(plan.files))
    paths = {f.path for f in plan.files}
    assert not any(p.startswith((".qwen/", ".agents/")) or p == "AGENTS.md" for p in paths), sorted(paths)
    manifest = json.loads(next(f for f in plan.files if f.path == "qwen-extension.json").content)
    assert manifest["name"] == "platform-baseline" and manifest["version"] == "1.2.0"


def test_qwen_extension_puts_every_kind_in_its_directory():
    files = {**_item("rule", "scoped", "description: Scoped\nscope:\n  paths: ['src/**']\n"),
             **_item("rule", "always", "description: Always on\n", "Always.\n", extra={"a.md": "A.\n"}),
             **_item("skill", "s", "name: s\ndescription: S\n"),
             **_item("command", "ship", "description: Ship it\n", "Ship $ARGUMENTS.\n"),
             **_item("agent", "helper", "description: Helps\n", "You help with everything here.\n"),
             **_item("hook", "guard", "description: G\nevent: PreToolUse\ntools: [bash]\nscript: ./g.sh --x\n",
                     extra={"g.sh": "#!/bin/sh\n"}),
             **_item("context", "about", "description: About\n", "## About\n\nA repo.\n")}
    plan, out = harness.build(files, ["qwen"], layout="plugin", plugin_name="ext")
    assert {"rules/scoped.md", "skills/always/SKILL.md", "skills/always/a.md", "skills/s/SKILL.md",
            "commands/ship.md", "agents/helper.md", "hooks/hooks.json", "QWEN.md", "qwen-extension.json",
            "agentrc/hooks/guard/g.sh"} <= set(out)
    assert "rules/always.md" not in out  # an extension's rule without paths: is skipped by Qwen Code
    assert harness.fields(plan, "rule", "always", "qwen")["body"][0] == "degraded"
    hook = json.loads(out["hooks/hooks.json"])["hooks"]["PreToolUse"][0]["hooks"][0]
    assert hook["command"] == '"${CLAUDE_PLUGIN_ROOT}/agentrc/hooks/guard/g.sh" --x'
    manifest = json.loads(out["qwen-extension.json"])
    assert manifest["name"] == "ext" and manifest["contextFileName"] == "QWEN.md"
    assert PLUGIN_LAYOUTS["qwen"].title == "Qwen Code extension"


def test_an_extension_hook_calls_its_own_file_arguments_via_the_extension_root():
    """A `./file` argument naming one of the hook's own files is called via
    ${CLAUDE_PLUGIN_ROOT}, as the script is (the extension left it relative), and the runner
    stays in front."""
    files = _item("hook", "guard", "description: G\nevent: PreToolUse\ntools: [bash]\n"
                                   "script: bash ./g.sh ./allow.txt --x\n",
                  extra={"g.sh": "#!/bin/sh\n", "allow.txt": "ls\n"})
    _, out = harness.build(files, ["qwen"], layout="plugin", plugin_name="ext")
    hook = json.loads(out["hooks/hooks.json"])["hooks"]["PreToolUse"][0]["hooks"][0]
    root = '"${CLAUDE_PLUGIN_ROOT}/agentrc/hooks/guard'
    assert hook["command"] == f'bash {root}/g.sh" {root}/allow.txt" --x'
