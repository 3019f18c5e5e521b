"""The Cline adapter: `.clinerules/` rules (paths: kept, degraded in the CLI), `.cline/skills`,
workflows with the $ARGUMENTS note, `.cline/agents/*.yaml` subagents with Cline tool names,
provider and model ids and skills, hooks and MCP servers reported dropped with the reason."""

from typing import Dict, Sequence

import pytest

from agentrc.clients.cline import Cline
from agentrc.frozen import freeze
from agentrc.model import McpServer

from . import harness
from .harness import frontmatter as _frontmatter, item as _item


def _build(files: Dict[str, str], clients: Sequence[str] = ("cline",)):
    return harness.build(files, clients)


def _fields(plan, kind: str, name: str):
    return harness.fields(plan, kind, name, "cline")


def test_rule_in_clinerules_with_paths_and_no_description():
    files = {**_item("rule", "style", "description: House style\n"),
             **_item("rule", "api", "description: API rules\nscope:\n  paths:\n    - \"src/api/**\"\n")}
    plan, out = _build(files)
    assert out[".clinerules/style.md"] == "# style\n\nBody text.\n"
    assert _frontmatter(out[".clinerules/api.md"]) == {"paths": ["src/api/**"]}
    fields = _fields(plan, "rule", "api")
    assert fields["scope"][0] == "degraded" and "loads it always" in fields["scope"][1]
    assert fields["description"][0] == "dropped"


def test_rule_resources_go_outside_clinerules_with_links_rewritten():
    files = _item("rule", "lic", "description: Licenses\n", "See [the list](allowed.txt).\n",
                  {"allowed.txt": "MIT\n"})
    _, out = _build(files)
    assert ".cline/agentrc/rules/lic/allowed.txt" in out
    assert "(../.cline/agentrc/rules/lic/allowed.txt)" in out[".clinerules/lic.md"]
    assert not [p for p in out if p.startswith(".clinerules/") and not p.endswith(".md")]


def test_skill_in_cline_skills_standard_keys_only():
    files = _item("skill", "notes", "name: notes\ndescription: Use when drafting notes\ncompatibility: any\n"
                                    "argument-hint: \"[tag]\"\n")
    plan, out = _build(files)
    assert _frontmatter(out[".cline/skills/notes/SKILL.md"]) == {
        "name": "notes", "description": "Use when drafting notes", "compatibility": "any"}
    assert _fields(plan, "skill", "notes")["argument-hint"][0] == "dropped"


def test_command_is_a_workflow_with_an_arguments_note():
    files = _item("command", "ship", "description: Ship it\nargument-hint: \"<v>\"\nagent: tester\nmodel: opus\n",
                  "Ship $ARGUMENTS.\n")
    plan, out = _build(files)
    assert out[".clinerules/workflows/ship.md"] == (
        "---\ndescription: Ship it\n---\n\n# ship\n\nIn these instructions, `$ARGUMENTS` stands for the text the user "
        "typed after the command.\n\nShip $ARGUMENTS.\n")
    fields = _fields(plan, "command", "ship")
    assert {k: fields[k][0] for k in ("argument-hint", "agent", "model", "body")} == {
        "argument-hint": "dropped", "agent": "dropped", "model": "dropped", "body": "degraded"}


def test_agent_is_a_yaml_subagent_with_cline_tools_model_and_skills():
    files = {**_item("skill", "lint", "name: lint\ndescription: Use when linting\n"),
             **_item("agent", "runner", "description: Runs tests\nmodel: anthropic/claude-sonnet-4-5\n"
                                        "tools: [bash, read, grep, glob, web-search]\npreload-skills: [lint]\n",
                     "Run the tests.\n")}
    plan, out = _build(files)
    text = out[".cline/agents/runner.yaml"]
    assert _frontmatter(text) == {"name": "runner", "description": "Runs tests", "providerId": "anthropic",
                                  "modelId": "claude-sonnet-4-5",
                                  "tools": ["run_commands", "read_files", "search_codebase"], "skills": ["lint"]}
    assert text.endswith("# runner\n\nRun the tests.\n")  # the system prompt, no ## Skills prose
    fields = _fields(plan, "agent", "runner")
    assert fields["tools"][0] == "degraded" and "web-search" in fields["tools"][1]
    assert fields["preload-skills"][0] == "mapped" and fields["model"][0] == "mapped"


@pytest.mark.parametrize("model,status", [("sonnet", "dropped"), ("inherit", "mapped")])
def test_agent_model_alias_is_not_written(model, status):
    plan, out = _build(_item("agent", "a", f"description: A\nmodel: {model}\n"))
    assert "modelId" not in _frontmatter(out[".cline/agents/a.yaml"])
    assert _fields(plan, "agent", "a")["model"][0] == status


def test_hooks_are_dropped_with_the_reason():
    files = _item("hook", "fmt", "description: Format\nevent: PostToolUse\ntools: [edit]\nscript: ./f.sh\n",
                  extra={"f.sh": "#!/bin/sh\n"})
    plan, out = _build(files)
    assert not [p for p in out if "hooks" in p]
    fields = _fields(plan, "hook", "fmt")
    assert {f: s for f, (s, _) in fields.items() if f != "schema"} == {f: "dropped" for f in fields if f != "schema"}
    assert "no tool matcher" in fields["script"][1]


def test_mcp_servers_are_dropped():
    server = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "http", url="https://x.example/mcp",
                       fields=freeze({"url": "https://x.example/mcp"}))
    rendered = Cline().render_server(server)
    assert not rendered.files and not rendered.fragments
    assert {f.status for f in rendered.report.fields} == {"dropped"}


@pytest.mark.parametrize("name", ["../../evil", "/etc/x", "a/b", "..", "con\u0000"])
def test_hostile_names_never_leave_the_clients_directories(name):
    files = {**_item("rule", "r", f"name: {name!r}\ndescription: x\n"),
             **_item("agent", "g", f"name: {name!r}\ndescription: x\n"),
             **_item("command", "c", f"name: {name!r}\ndescription: x\n")}
    result = harness.plan(files, ["cline"])
    for f in result.files:
        assert not f.path.startswith("/") and ".." not in f.path.split("/"), f.path
        assert f.path.split("/")[0] in (".clinerules", ".cline", ".agentrc", "AGENTS.md"), f.path
