"""The Antigravity CLI adapter (`agy`, verified from Google's documentation: no CLI can be
pinned): rules in .agents/rules with `trigger:`, custom agents in .agents/agents/<name>/agent.md,
skills and commands (as skills) in the shared .agents/skills with the bytes Codex and Gemini
CLI write there, MCP servers in .agents/mcp_config.json (remote ones as serverUrl), AGENTS.md,
hooks reported dropped; and the plugin layout (plugin.json with name and description only)."""

import json
from pathlib import Path
from typing import Dict, Sequence

from helpers import ROOT, compare_golden, tree_text as _tree_text

from agentrc.clients.antigravity import Antigravity
from agentrc.clients.registry import CLIENTS, PLUGIN_LAYOUTS
from agentrc.frozen import freeze
from agentrc.inputs.tree import read_tree
from agentrc.model import McpServer
from agentrc.pipeline import stages as pipeline

from . import harness
from .harness import frontmatter as _frontmatter, item as _item

ANTIGRAVITY = Antigravity()
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "plugins"

SOURCE = {
    **_item("rule", "api", "description: Use when editing API handlers\nscope:\n  paths:\n    - \"src/api/**\"\n"
                           "    - \"lib/**/*.ts\"\n", "See [the notes](./notes.md).\n", {"notes.md": "# Notes\n"}),
    **_item("rule", "style", "description: House style\n", "Use four spaces.\n"),
    **_item("skill", "release", "name: release\ndescription: Use when cutting a release\n"
                                "compatibility: Requires git\n"),
    **_item("command", "fix", "description: Fix the issue given as argument\nargument-hint: \"<n>\"\n",
            "Fix issue #$ARGUMENTS.\n"),
    **_item("agent", "tester", "description: Use when tests must run\nmode: subagent\nmodel: sonnet\n"
                               "tools: [read, bash]\n", "Run the tests. See [the guide](./guide.md).\n",
            {"guide.md": "# Guide\n"}),
    **_item("context", "about", "description: About\n", "## About\n\nA repo.\n"),
    **_item("hook", "guard", "description: Guard\nevent: PreToolUse\ntools: [bash]\nscript: guard.sh\n", "",
            {"guard.sh": "#!/bin/sh\nexit 0\n"}),
}


def _build(files: Dict[str, str], clients: Sequence[str] = ("antigravity",), **kwargs):
    return harness.build(files, clients, **kwargs)


def _fields(plan, kind: str, name: str, client: str = "antigravity"):
    return harness.fields(plan, kind, name, client)


def test_antigravity_is_registered_with_a_plugin_layout():
    assert CLIENTS["antigravity"].title == "Antigravity CLI"
    assert PLUGIN_LAYOUTS["antigravity"].layout == "plugin"


def test_rules_are_agents_rules_with_their_trigger():
    plan, out = _build(SOURCE)
    assert out[".agents/rules/style.md"] == (
        "---\ndescription: House style\ntrigger: always_on\n---\n\n# style\n\nUse four spaces.\n")
    api = _frontmatter(out[".agents/rules/api.md"])
    assert api == {"description": "Use when editing API handlers", "trigger": "glob", "globs": "src/api/**,lib/**/*.ts"}
    # Supporting files outside .agents/rules (which Antigravity scans for rules), links rewritten.
    assert out[".agents/agentrc/rules/api/notes.md"] == "# Notes\n"
    assert "(../agentrc/rules/api/notes.md)" in out[".agents/rules/api.md"]
    assert _fields(plan, "rule", "api")["scope"][0] == "mapped"


def test_agents_are_custom_agents_with_files_beside_them():
    plan, out = _build(SOURCE)
    text = out[".agents/agents/tester/agent.md"]
    assert _frontmatter(text) == {"name": "tester", "description": "Use when tests must run"}
    assert "[the guide](./guide.md)" in text and out[".agents/agents/tester/guide.md"] == "# Guide\n"
    fields = _fields(plan, "agent", "tester")
    assert fields["mode"][0] == "degraded" and "/agents" in fields["mode"][1]
    assert fields["model"][0] == "dropped" and fields["tools"][0] == "dropped"


def test_skills_and_commands_share_the_bytes_codex_and_gemini_write():
    """Skills and commands land in the shared .agents/skills as Codex and Gemini CLI write them:
    a build of the three merges them (a difference would be AR090)."""
    _, together = _build(SOURCE, ("antigravity", "codex", "gemini"))
    _, alone = _build(SOURCE)
    for path in (".agents/skills/release/SKILL.md", ".agents/skills/fix/SKILL.md"):
        assert together[path] == alone[path], path
    assert _frontmatter(alone[".agents/skills/release/SKILL.md"]) == {
        "name": "release", "description": "Use when cutting a release", "compatibility": "Requires git"}
    assert "Fix issue #$ARGUMENTS." in alone[".agents/skills/fix/SKILL.md"]


def test_own_block_is_dropped_from_the_shared_skill_but_merged_into_a_rule():
    files = {**_item("skill", "s", "name: s\ndescription: S\nantigravity:\n  x: 1\n"),
             **_item("rule", "r", "description: R\nantigravity:\n  trigger: manual\n")}
    plan, out = _build(files)
    assert "x:" not in out[".agents/skills/s/SKILL.md"]
    assert _fields(plan, "skill", "s")["antigravity"][0] == "dropped"
    assert _frontmatter(out[".agents/rules/r.md"])["trigger"] == "manual"


def test_mcp_servers_go_to_mcp_config_json_with_server_url():
    remote = McpServer("docs", "b", "b.bundle.yaml", (1, 1), "http", url="https://x/mcp",
                       headers=freeze({"Authorization": "Bearer ${TOKEN}"}),
                       fields=freeze({"remote": {}, "requires-env": ["TOKEN"]}))
    local = McpServer("fs", "b", "b.bundle.yaml", (1, 1), "stdio", command="npx", args=("-y", "fs"),
                      fields=freeze({"local": {}}))
    entries = {}
    for server in (remote, local):
        r = ANTIGRAVITY.render_server(server)
        assert r.report.generated and r.report.outputs == (".agents/mcp_config.json",)
        (frag,) = r.fragments
        assert frag.path == ".agents/mcp_config.json" and frag.key[0] == "mcpServers"
        entries[frag.key[1]] = json.loads(frag.value)
    assert entries == {"docs": {"serverUrl": "https://x/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
                       "fs": {"command": "npx", "args": ["-y", "fs"]}}
    plugin = PLUGIN_LAYOUTS["antigravity"].render_server(local)
    assert plugin.fragments[0].path == "mcp_config.json"


def test_context_is_agents_md_and_hooks_are_dropped():
    plan, out = _build(SOURCE)
    assert "## About\n\nA repo.\n" in out["AGENTS.md"]
    fields = _fields(plan, "hook", "guard")
    assert {status for field, (status, _) in fields.items() if field != "schema"} == {"dropped"}
    assert "plugin's hooks.json" in fields["event"][1]
    assert not any("guard" in p for p in out), sorted(out)


def test_antigravity_reads_the_shared_skills_of_other_clients():
    """Codex writes its rules there as skills: Antigravity CLI loads them too (AR095)."""
    plan = harness.plan(_item("rule", "r", "description: R\n"), ["antigravity", "codex"])
    assert any(d.code == "AR095" and "antigravity" in d.message for d in plan.diagnostics), \
        [d.format() for d in plan.diagnostics]


def test_hostile_names_stay_inside_their_directories():
    files = {**_item("skill", "a--b", "name: a--b\ndescription: D\n"),
             **_item("agent", "x.y", "description: D\n")}
    plan = harness.plan(files, ["antigravity"])
    for f in plan.files:
        assert not f.path.startswith(("/", "..")) and "/../" not in f.path, f.path
    if plan.ok:
        assert {f.path for f in plan.files} >= {".agents/agents/x.y/agent.md"}


def test_plugin_layout(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    plan = pipeline.generate(tree, ["antigravity"], ["platform-baseline"], layout="plugin")
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    compare_golden(GOLDEN / "antigravity.txt", _tree_text(plan.files))
    paths = {f.path for f in plan.files}
    assert not any(p.startswith(".agents/") or p == "AGENTS.md" for p in paths), sorted(paths)
    manifest = json.loads(next(f for f in plan.files if f.path == "plugin.json").content)
    assert manifest == {"name": "platform-baseline",
                        "description": "Baseline rules, skills, and agents for all repositories"}


def test_plugin_every_kind_has_its_directory():
    plan, out = _build(SOURCE, layout="plugin", plugin_name="p")
    assert {"rules/style.md", "rules/api.md", "skills/release/SKILL.md", "skills/fix/SKILL.md",
            "agents/tester/agent.md", "agents/tester/guide.md", "plugin.json"} <= set(out)
    assert json.loads(out["plugin.json"]) == {"name": "p", "description": "p, built by agentrc"}
    assert _fields(plan, "context", "about")["body"][0] == "dropped"
    assert not any(p.startswith(".agents/") or p == "AGENTS.md" for p in out), sorted(out)
