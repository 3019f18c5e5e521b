"""Issue 31, items 4 and 5: tool lists never collapse on import, and a skill's `license` and
its files' executable bits reach every client.

Real projects written in tmp_path (files with their own modes), imported and built through
the CLI; the one table of Copilot / VS Code tool names is checked name by name."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.text.yamlpos import load as load_yaml
from agentrc.vocabulary import TOOLS, claude_tool, copilot_tool

CLIENTS = "claude,copilot,opencode"


def write(root: Path, files) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def frontmatter(path: Path):
    return load_yaml(path.read_text().split("---\n")[1]).data


def import_and_build(tmp_path: Path, client: str, files, capsys, clients: str = CLIENTS):
    """The registry's item frontmatter by path, the build tree, and what import printed."""
    write(tmp_path / "project", files)
    os.chdir(tmp_path)
    assert main(["import", "--from", client, "project", "--out", "registry"]) == 0
    err = capsys.readouterr().err
    assert main(["lint", "registry"]) == 0
    assert main(["build", "registry", "--client", clients, "--out", "out", "--no-cache",
                 "--report", "report.json"]) == 0
    capsys.readouterr()
    items = {str(p.relative_to(tmp_path / "registry")): frontmatter(p)
             for p in (tmp_path / "registry").rglob("*.md") if p.name.isupper() or p.name[:-3].isupper()}
    return items, tmp_path / "out", err


def report_outcomes(out_dir: Path, client: str, name: str):
    report = json.loads((out_dir.parent / "report.json").read_text())
    rows = report["items"] if isinstance(report, dict) and "items" in report else report
    for row in rows:
        if row.get("client") == client and row.get("name") == name:
            return {f["field"]: f["status"] for f in row["fields"]}
    raise AssertionError(f"no report row for {client} {name}")


# --- item 4: tools ------------------------------------------------------------------------

@pytest.mark.parametrize("tools,written", [("['*']", ["*"]), ("'*'", "*"), ("[\"*\", edit]", ["*", "edit"])])
def test_copilot_star_is_every_tool_for_every_client(tmp_path, monkeypatch, capsys, tools, written):
    monkeypatch.chdir(tmp_path)
    items, out, err = import_and_build(tmp_path, "copilot", {
        ".github/agents/all.agent.md": f"---\ndescription: Everything\ntools: {tools}\n---\nDo all.\n"}, capsys)
    agent = items["agents/all/AGENT.md"]
    assert "tools" not in agent  # portable: no list is every tool (docs/format.md)
    assert agent["copilot"] == {"tools": written}  # Copilot's own all-tools form, as written
    assert "degraded" not in err
    claude = frontmatter(out / ".claude" / "agents" / "all.md")
    assert "disallowedTools" not in claude and claude["tools"] != []
    assert claude["tools"] == "Read, Write, Edit, Bash, Grep, Glob, WebFetch, WebSearch"
    assert frontmatter(out / ".github" / "agents" / "all.agent.md")["tools"] == written
    permission = frontmatter(out / ".opencode" / "agents" / "all.md")["permission"]
    assert set(permission.values()) == {"allow"}


def test_vscode_tool_names_map_through_one_table(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    items, out, err = import_and_build(tmp_path, "copilot", {
        ".github/agents/dev.agent.md": "---\ndescription: Dev\ntools: [editFiles, runCommands, codebase, search, "
                                      "fetch, githubRepo, problems, changes, terminalLastCommand]\n---\nDev.\n",
        ".github/agents/new.agent.md": "---\ndescription: New names\ntools: ['edit/editFiles', "
                                      "'execute/runInTerminal', 'search/textSearch', 'read/readFile', 'web/fetch']\n"
                                      "---\nNew.\n"}, capsys)
    # Not just grep, glob; and not read, which none of them grants.
    assert items["agents/dev/AGENT.md"]["tools"] == [t for t in TOOLS if t != "read"]
    assert items["agents/new/AGENT.md"]["tools"] == ["read", "write", "edit", "bash", "grep", "web-fetch"]
    # What has no equivalent, or only a nearest one, is named as degraded; never silently dropped.
    line = next(x for x in err.splitlines() if "agent dev: tools degraded" in x and "no portable" in x)
    for name in ("problems", "changes", "terminalLastCommand"):
        assert name in line
    assert any("codebase" in x and "nearest" in x for x in err.splitlines())
    assert "agent new" not in err  # every new name maps exactly
    assert frontmatter(out / ".claude" / "agents" / "dev.md")["tools"] == "Write, Edit, Bash, Grep, Glob, WebFetch, WebSearch"


def test_only_unknown_tools_are_reported_as_no_tools_never_as_mapped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    items, _, err = import_and_build(tmp_path, "copilot", {
        ".github/agents/gh.agent.md": "---\ndescription: GitHub only\ntools: ['github/*', vscodeAPI]\n---\nGh.\n"},
        capsys)
    assert items["agents/gh/AGENT.md"]["tools"] == []  # never widened to every tool
    assert items["agents/gh/AGENT.md"]["copilot"] == {"tools": ["github/*", "vscodeAPI"]}
    assert "tools degraded: github/*, vscodeAPI have no portable capability" in err
    assert "the other clients get no tools" in err


def test_claude_permission_rules_degrade_to_the_nearest_tool(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    items, out, err = import_and_build(tmp_path, "claude", {
        ".claude/agents/gh.md": "---\nname: gh\ndescription: Gh\ntools: Bash(./scripts/gh.sh:*), Read(./docs/**)\n"
                                "---\nUse gh.\n"}, capsys)
    agent = items["agents/gh/AGENT.md"]
    assert agent["tools"] == ["read", "bash"]
    assert agent["claude"] == {"tools": "Bash(./scripts/gh.sh:*), Read(./docs/**)"}
    assert "tools degraded: Bash(./scripts/gh.sh:*) allows Bash for './scripts/gh.sh:*' only" in err
    assert "Read(./docs/**) allows Read" in err
    assert frontmatter(out / ".github" / "agents" / "gh.agent.md")["tools"] == ["read", "execute"]
    # Claude Code gets its own rules back, as written.
    assert frontmatter(out / ".claude" / "agents" / "gh.md")["tools"] == "Bash(./scripts/gh.sh:*), Read(./docs/**)"


def test_the_tables_never_widen_silently():
    for name in ("terminalLastCommand", "read/terminalLastCommand", "getTerminalOutput", "runTests", "runTasks",
                 "github/*", "playwright/browser_click", "todos", "agent", "*", "vscode/extensions"):
        assert copilot_tool(name) == ((), ""), name
    assert copilot_tool("EDIT") == (("write", "edit"), "")  # Copilot's aliases are case-insensitive
    assert copilot_tool("search/*") == (("grep", "glob"), "")
    assert claude_tool("Task") == ((), "")
    caps, note = claude_tool("Bash(git commit:*)")
    assert caps == ("bash",) and "git commit:*" in note
    assert claude_tool("Frobnicate(x)") == ((), "")


# --- item 5: license and executable bits ----------------------------------------------------

def test_license_reaches_every_skill_md(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    clients = "claude,copilot,opencode,codex,gemini,cursor"
    _, out, _ = import_and_build(tmp_path, "claude", {
        ".claude/skills/pdf/SKILL.md": "---\nname: pdf\ndescription: PDFs\nlicense: Apache-2.0\n---\nRead PDFs.\n"},
        capsys, clients)
    found = sorted(str(p.relative_to(out)) for p in out.rglob("SKILL.md"))
    assert found
    for rel in found:
        fm = frontmatter(out / rel)
        assert fm.get("license") == "Apache-2.0", rel
        assert list(fm).index("license") == list(fm).index("description") + 1, rel
    for client in clients.split(","):
        assert report_outcomes(out, client, "pdf")["license"] == "emitted"


def test_executable_bits_come_from_the_source(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    skill = tmp_path / "project" / ".claude" / "skills" / "debug"
    write(skill, {"SKILL.md": "---\nname: debug\ndescription: Debug\n---\nRun the scripts.\n",
                  "scripts/find-polluter.sh": "#!/bin/sh\necho x\n", "scripts/notes.html": "<p>x</p>\n",
                  "tools/run.sh": "#!/bin/sh\necho y\n", "references/a.md": "A.\n"})
    (skill / "scripts" / "find-polluter.sh").chmod(0o755)
    (skill / "scripts" / "notes.html").chmod(0o644)
    (skill / "tools" / "run.sh").chmod(0o755)
    _, out, _ = import_and_build(tmp_path, "claude", {}, capsys, "claude")

    def executable(path: Path) -> bool:
        return bool(path.stat().st_mode & stat.S_IXUSR)

    registry = tmp_path / "registry" / "skills" / "debug"
    built = out / ".claude" / "skills" / "debug"
    for root in (registry, built):
        assert executable(root / "scripts" / "find-polluter.sh"), root
        assert not executable(root / "scripts" / "notes.html"), root  # under scripts/, still not executable
        assert executable(root / "tools" / "run.sh"), root  # elsewhere, still executable
        assert not executable(root / "references" / "a.md"), root
    # The bits are not frontmatter.
    assert "executable" not in (registry / "SKILL.md").read_text()
