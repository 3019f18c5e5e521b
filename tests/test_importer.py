"""agentrc import: authored equivalents of typical public repositories' client files
(tests/cases/import/<client>/project), the cleaning of bodies and client syntax, each
client's own forms, and the CLI (atomic writes, re-import, foreign files, --canonical)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agentrc.canonical import document as canonical
from agentrc.cli.main import main
from agentrc.clients import registry as client_registry
from agentrc.diagnostics import Diagnostics
from agentrc.frozen import freeze
from agentrc.importers import document as importer
from agentrc.importers.cleanup import clean_body, project_command, split_skills_section, strip_jsonc, unmanage
from agentrc.importers.shapes import glob_list
from agentrc.inputs.projectread import read_project
from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import stages as pipeline
from agentrc.text.yamlpos import load as load_yaml
from helpers import compare_golden

CASES = Path(__file__).parent / "cases" / "import"


def tree(files):
    return SourceTree(tuple(SourceFile(p, c.encode() if isinstance(c, str) else c) for p, c in sorted(files.items())))


def imported(client, files):
    return importer.import_tree(client, tree(files))


def messages(diags):
    return [d.message for d in diags]


# --- real-world projects ---------------------------------------------------------------------

@pytest.mark.parametrize("client", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_real_world_project(client, monkeypatch):
    """The document and every diagnostic are goldens; the portable items lint without errors
    and the document builds for the client it came from."""
    monkeypatch.chdir(CASES / client)
    files, unread = read_project("project", lambda rel: importer.wants(client, rel))
    assert not unread
    doc, fields, diags = importer.import_project(client, files, "project")
    assert not any(d.is_error for d in diags), messages(diags)
    lossy = Diagnostics()
    portable = importer.portable_from_document(doc, lossy, "registry/imported.bundle.yaml", fields,
                                               blocks=client_registry.passthrough_blocks())
    _, lint = pipeline.lint(importer.relative(portable, "registry"))
    assert not any(d.is_error for d in lint), [d.format() for d in lint]
    report = "".join(d.format().split("\n")[0] + "\n" for d in sorted(set(diags + lossy.sorted() + lint)))
    compare_golden(CASES / client / "document.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    compare_golden(CASES / client / "diagnostics.txt", report)
    document, doc_diags = canonical.build_document([canonical.Layer("ai.config.json", "ai.config.json", freeze(doc))])
    registry, reg_diags = canonical.to_registry(document, client_registry.client_names())
    assert not any(d.is_error for d in doc_diags + reg_diags), [d.format() for d in doc_diags + reg_diags]


# --- bodies -----------------------------------------------------------------------------------

def test_clean_body_drops_the_generated_title_and_demotes_other_h1s():
    assert clean_body("# review\n\nText.\n", "review")[0] == "Text.\n"
    body, _ = clean_body("# Review guide\n\n### Steps\n\n```\nx\n```\n", "review")
    assert body == "## Review guide\n\n### Steps\n\n```text\nx\n```\n"


def test_clean_body_fences_off_client_syntax_once():
    body, found = clean_body("Read @docs/a.md first.\n\nThen go.\n")
    assert body == "<!-- @client:claude -->\nRead @docs/a.md first.\n<!-- @endclient -->\n\nThen go.\n"
    assert found == [("claude", "file import '@path'")]
    assert clean_body(body) == (body, [])  # idempotent: a directive block already decides
    assert clean_body("Fix #$ARGUMENTS.\n", arguments=True) == ("Fix #$ARGUMENTS.\n", [])


def test_a_body_with_no_hint_of_client_syntax_is_not_scanned_for_it(monkeypatch):
    """Every body of an import is cleaned twice (as read, then as the document's entry is
    written): one with no line holding a hint of any client's syntax (most) is not scanned
    line by line for constructs. A 1,000-item import 1.11 -> 1.00 s."""
    from agentrc.importers import cleanup

    scans = []
    real = cleanup.Scanned
    monkeypatch.setattr(cleanup, "Scanned", lambda text: scans.append(text) or real(text))
    assert clean_body("## Steps\n\n- Run the tests.\n- Read the docs.\n")[1] == []
    assert scans == []
    assert clean_body("## Steps\n\n- Read @docs/a.md.\n")[1] == [("claude", "file import '@path'")]
    assert len(scans) == 1


def test_clean_body_quotes_client_syntax_in_the_global_context():
    body, found = clean_body("Follow @docs/style.md here.\n", context=True)
    assert body == "Follow `@docs/style.md` here.\n" and found
    # `$ARGUMENTS` means nothing in a memory file: Claude substitutes it in commands and skills only.
    assert clean_body("Use $ARGUMENTS here.\n", context=True) == ("Use $ARGUMENTS here.\n", [])


def test_clean_body_fences_off_the_list_item_or_the_paragraph_and_leaves_lookalikes():
    text = ("Set up:\n- read @docs/setup.md\n- run the tests\n\n| Plan | Price |\n| --- | --- |\n| Team | $5.00 |\n\n"
            "Routes use `@router.post`, @router.get and @Next.js conventions.\n\nFirst read\n@docs/a.md then go.\n")
    body, found = clean_body(text)
    # the list item alone: the rest of the list reaches every client; a paragraph whole
    assert body == ("Set up:\n<!-- @client:claude -->\n\n- read @docs/setup.md\n<!-- @endclient -->\n- run the tests\n\n"
                    "| Plan | Price |\n| --- | --- |\n| Team | $5.00 |\n\n"
                    "Routes use `@router.post`, @router.get and @Next.js conventions.\n\n"
                    "<!-- @client:claude -->\nFirst read\n@docs/a.md then go.\n<!-- @endclient -->\n")
    assert found == [("claude", "file import '@path'")]
    assert clean_body(body) == (body, [])
    # A skill: Claude reads no `@` imports there, so nothing is fenced off.
    assert clean_body("Read @docs/setup.md.\n", kind="skill") == ("Read @docs/setup.md.\n", [])


def test_unmanage_keeps_the_users_text_and_the_block_without_its_title():
    text = ("# Billing\n\nOwn notes.\n\n<!-- agentrc:begin: generated by agentrc; edit the sources, not this "
            "block -->\n# Project instructions\n\n## Section\n\nGenerated.\n<!-- agentrc:end -->\n\nTail.\n")
    assert unmanage(text) == "# Billing\n\nOwn notes.\n\n## Section\n\nGenerated.\n\nTail.\n"


def test_skills_section_is_read_back():
    body = ("Do it.\n\n## Skills\n\nThis agent relies on the following skills, installed alongside it. Use them "
            "when relevant:\n\n- review\n- release-notes\n")
    assert split_skills_section(body) == ("Do it.\n", ["review", "release-notes"])
    assert split_skills_section("## Skills\n\nMine.\n") == ("## Skills\n\nMine.\n", [])


def test_globs_split_on_commas_outside_braces():
    assert glob_list("src/{a,b}/**/*.ts, docs/**,") == ["src/{a,b}/**/*.ts", "docs/**"]
    assert glob_list(["a/**", " "]) == ["a/**"]


def test_jsonc_and_hook_commands():
    assert json.loads(strip_jsonc('{"a": "x//y", /* c\n */ "b": [1, 2,], // t\n}')) == {"a": "x//y", "b": [1, 2]}
    assert project_command("./scripts/x.sh --fast") == "scripts/x.sh --fast"
    assert project_command("./x.sh") == '"./x.sh"'
    assert project_command("npm test") == "npm test"


# --- each client's forms ------------------------------------------------------------------------

def test_claude_md_imports_are_inlined_and_agents_md_comes_in_through_its_import():
    doc, diags = imported("claude", {
        "CLAUDE.md": "<!-- agentrc:begin: generated by agentrc; edit the sources, not this block -->\n"
                     "# Project instructions\n\n@AGENTS.md\n<!-- agentrc:end -->\n\nSee @docs/more.md and @missing.md.\n",
        "AGENTS.md": "## Shared\n\nText.\n",
        "docs/more.md": "More.\n",
    })
    assert doc["context"]["global"].startswith("## Shared\n\nText.\n\nSee\nMore.\n")
    assert "@missing.md" in doc["context"]["global"]
    assert any("import @missing.md" in m for m in messages(diags))


def test_claude_user_invoked_skill_without_files_is_a_command():
    doc, _ = imported("claude", {
        ".claude/skills/ship/SKILL.md": "---\nname: ship\ndescription: Ship it\ndisable-model-invocation: true\n---\n\n"
                                        "# ship\n\nShip $ARGUMENTS.\n",
        ".claude/skills/lint/SKILL.md": "---\nname: lint\ndescription: Lint\ndisable-model-invocation: true\n---\n\n"
                                        "Lint.\n",
        ".claude/skills/lint/references/rules.md": "Rules.\n",
    })
    assert doc["commands"] == {"ship": {"description": "Ship it", "prompt": "Ship $ARGUMENTS.\n"}}
    assert doc["skills"]["lint"]["disableModelInvocation"] is True
    assert doc["skills"]["lint"]["references"] == {"rules.md": "Rules.\n"}


def test_cursor_globs_are_read_as_cursor_reads_them():
    doc, diags = imported("cursor", {
        ".cursor/rules/py.mdc": "---\ndescription:\nglobs: **/*.py,tests/**\nalwaysApply: false\n---\n\nPy.\n",
        ".cursor/rules/all.mdc": "---\nalwaysApply: true\nglobs: src/**\n---\n\nAll.\n",
        ".cursor/rules/quoted.mdc": '---\nglobs: ["a/**", "b/**"]\n---\n\nQ.\n',
    })
    assert doc["rules"]["py"]["globs"] == ["**/*.py", "tests/**"]
    assert doc["rules"]["all"]["alwaysApply"] is True and "globs" not in doc["rules"]["all"]
    assert doc["rules"]["quoted"]["globs"] == ["a/**", "b/**"]
    assert any("ignored with alwaysApply: true" in m for m in messages(diags))


def test_binary_sidecars_are_base64():
    doc, _ = imported("cursor", {".cursor/skills/logo/SKILL.md": "---\nname: logo\ndescription: Logo\n---\n\nUse it.\n",
                                 ".cursor/skills/logo/assets/logo.png": b"\x89PNG\r\n\x1a\n\xff"})
    assert doc["skills"]["logo"]["assets"]["logo.png"]["encoding"] == "base64"


def test_invalid_names_are_renamed_and_reported():
    doc, diags = imported("copilot", {".github/instructions/API_Style.instructions.md": "---\napplyTo: '**'\n---\n\nX.\n"})
    assert list(doc["rules"]) == ["api-style"]
    assert "globs" not in doc["rules"]["api-style"]  # applyTo ** is every file
    assert any("imported as 'api-style'" in m for m in messages(diags))


def test_unreadable_files_are_errors():
    _, diags = imported("claude", {".mcp.json": "{", ".claude/rules/x.md": "---\npaths: [\n---\nX\n"})
    assert [d.code for d in diags if d.is_error] == ["AR131", "AR131"]


def test_unknown_client_has_no_importer():
    assert set(importer.IMPORTERS) == {"claude", "copilot", "cursor", "opencode", "codex"}


# --- the command line -----------------------------------------------------------------------------

def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(CASES / "claude" / "project", project)
    return project


def test_cli_writes_the_registry_and_reimports_in_place(tmp_path, monkeypatch, capsys):
    project = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    err = capsys.readouterr().err
    assert "imported from claude: 2 rules, 1 skills, 1 agents, 2 commands, 3 hooks, 2 mcp servers" in err
    assert (tmp_path / "registry" / "skills" / "release" / "scripts" / "bump.sh").stat().st_mode & 0o100
    assert main(["lint", "registry"]) == 0
    # Again: nothing changes; after a source change only that file does.
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    assert "0 created, 0 updated, 0 deleted" in capsys.readouterr().err
    (project / ".claude" / "rules" / "testing.md").unlink()
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    assert "0 created, 1 updated, 1 deleted" in capsys.readouterr().err  # the bundle's list, the rule


def test_cli_never_overwrites_foreign_files(tmp_path, monkeypatch, capsys):
    _project(tmp_path)
    (tmp_path / "registry" / "rules" / "testing").mkdir(parents=True)
    (tmp_path / "registry" / "rules" / "testing" / "RULE.md").write_text("mine\n")
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 1
    err = capsys.readouterr().err
    assert "error[AR091]" in err and "import failed: nothing written" in err
    assert sorted(p.name for p in (tmp_path / "registry").rglob("*") if p.is_file()) == ["RULE.md"]


def test_cli_canonical_document_builds_the_client_files_again(tmp_path, monkeypatch, capsys):
    """import --canonical writes an ai.config.json: building it gives back the imported files."""
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "again").mkdir()
    assert main(["import", "--from", "claude", "project", "--out", "registry", "--canonical",
                 "again/ai.config.json"]) == 0
    assert "tools.<client>" not in capsys.readouterr().err  # kept in the canonical document
    assert main(["build", "again", "--client", "claude", "--out", "out", "--no-cache"]) == 0
    settings = json.loads((tmp_path / "out" / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["deny"] == ["Read(./.env)"]
    assert settings["hooks"]["PreToolUse"][0]["matcher"] == "Bash"
    skill = (tmp_path / "out" / ".claude" / "skills" / "release" / "SKILL.md").read_text()
    assert "allowed-tools: Bash(git tag:*) Bash(pnpm version:*) Read" in skill


def test_cli_usage_errors(tmp_path, capsys):
    assert main(["import", "--from", "emacs", str(tmp_path), "--out", str(tmp_path / "r")]) == 2
    assert main(["import", "--from", "claude", str(tmp_path / "missing"), "--out", str(tmp_path / "r")]) == 2
    assert "unknown client to import from: emacs" in capsys.readouterr().err


JUNK = [None, 1, "x", [], [1, "a", None], {"a": 1}, {"a": [None]}, {"a": {"b": 2}}]


@pytest.mark.parametrize("client", sorted(importer.IMPORTERS))
def test_malformed_shapes_never_crash(client):
    """Wrong JSON/TOML/YAML shapes anywhere are reported or skipped, never an exception."""
    paths = {
        "claude": [".mcp.json", ".claude/settings.json"],
        "copilot": [".vscode/mcp.json", ".mcp.json", ".github/hooks/h.json"],
        "cursor": [".cursor/mcp.json", ".cursor/hooks.json"],
        "opencode": ["opencode.json"],
        "codex": [".codex/hooks.json"],
    }[client]
    for path in paths:
        for junk in JUNK:
            for wrap in (junk, {"mcpServers": junk, "servers": junk, "hooks": junk, "mcp": junk, "agent": junk,
                                "command": junk, "instructions": junk},
                         {"mcpServers": {"s": junk}, "servers": {"s": junk}, "hooks": {"PreToolUse": junk},
                          "mcp": {"s": junk}},
                         {"hooks": {"PreToolUse": [junk], "preToolUse": [junk]}},
                         {"hooks": {"PreToolUse": [{"matcher": junk, "hooks": junk}]}},
                         {"mcpServers": {"s": {"command": "x", "args": junk, "env": junk}},
                          "servers": {"s": {"url": "u", "headers": junk}},
                          "mcp": {"s": {"type": "local", "command": junk, "environment": junk}}}):
                importer.import_tree(client, tree({path: json.dumps(wrap)}))
    frontmatter = ["---\nname: [\n---\n", "---\n- a\n---\nX\n", "---\ndescription: 3\ntools: 4\nskills: x\n---\nX\n",
                   "---\n---\n", "no frontmatter\n", b"\xff\xfe"]
    for text in frontmatter:
        importer.import_tree(client, tree({p: text for p in (
            ".claude/agents/a.md", ".claude/skills/s/SKILL.md", ".claude/rules/r.md", ".github/agents/a.agent.md",
            ".github/prompts/p.prompt.md", ".cursor/rules/r.mdc", ".cursor/agents/a.md", ".opencode/agents/a.md",
            ".agents/skills/s/SKILL.md", ".agents/skills/s/agents/openai.yaml", "AGENTS.md", "CLAUDE.md")}))
    if client == "codex":
        for text in ("[mcp_servers]\ns = 1\n", "mcp_servers = [1]\n", "[mcp_servers.s]\nargs = 1\nenv = 2\n", "x = ["):
            importer.import_tree(client, tree({".codex/config.toml": text, ".codex/agents/a.toml": text}))


# --- nothing lost silently (issue 10) ----------------------------------------------------------

def _items(client, files):
    """The portable item files of an import, by path: their frontmatter as data."""
    result = importer.import_project(client, tree(files))
    lossy = Diagnostics()
    portable = importer.portable_from_document(result.document, lossy, "r/imported.bundle.yaml", result.fields)
    _, lint = pipeline.lint(importer.relative(portable, "r"))
    assert not any(d.is_error for d in lint), [d.format() for d in lint]
    out = {}
    for f in portable.files:
        if f.path.endswith(("/SKILL.md", "/AGENT.md", "/COMMAND.md", "/RULE.md")):
            out[f.path] = load_yaml(f.content.decode().split("---\n")[1]).data
    return out, messages(result.diagnostics + lossy.sorted())


def test_claude_agents_keep_model_tools_and_their_own_keys():
    items, notes = _items("claude", {
        ".claude/agents/a.md": "---\nname: a\ndescription: A\nmodel: opus\ntools: Read, Grep\ncolor: red\n---\nDo a.\n",
        ".claude/agents/b.md": "---\nname: b\ndescription: B\nmodel: claude-haiku-4-5\ntools: []\n---\nDo b.\n",
        ".claude/agents/c.md": "---\nname: c\ndescription: C\ntools: Read, Task\n---\nDo c.\n",
        ".claude/agents/d.md": "---\nname: d\ndescription: D\ndisallowedTools: Write, Bash(rm:*)\n---\nDo d.\n"})
    assert items["agents/a/AGENT.md"] == {"schema": 1, "description": "A", "model": "opus", "tools": ["read", "grep"],
                                          "claude": {"color": "red"}}
    assert items["agents/b/AGENT.md"]["model"] == "anthropic/claude-haiku-4-5"
    assert items["agents/b/AGENT.md"]["tools"] == []  # no tools, never every tool
    assert items["agents/c/AGENT.md"]["tools"] == ["read"]
    assert items["agents/c/AGENT.md"]["claude"] == {"tools": "Read, Task"}
    assert any("Task has no portable capability" in m for m in notes)
    assert items["agents/d/AGENT.md"]["tools"] == ["read", "edit", "grep", "glob", "web-fetch", "web-search"]
    assert any("Bash(rm:*) denies part of Bash" in m for m in notes)


def test_claude_commands_keep_argument_hint_model_tools_and_agent():
    items, _ = _items("claude", {
        ".claude/commands/fix.md": "---\ndescription: Fix\nargument-hint: <n>\nmodel: sonnet\n"
                                   "allowed-tools: Read, Edit\n---\nFix $ARGUMENTS.\n",
        ".claude/skills/ship/SKILL.md": "---\nname: ship\ndescription: Ship\ndisable-model-invocation: true\n"
                                        "context: fork\nagent: releaser\n---\nShip it.\n"})
    assert items["commands/fix/COMMAND.md"] == {"schema": 1, "description": "Fix", "argument-hint": "<n>",
                                                "model": "sonnet", "tools": ["read", "edit"]}
    assert items["commands/ship/COMMAND.md"]["agent"] == "releaser"


def test_opencode_deny_maps_import_as_the_allowed_capabilities_only():
    items, notes = _items("opencode", {
        ".opencode/agents/r.md": "---\ndescription: R\nmode: primary\nmodel: openai/gpt-5\ntemperature: 0.1\n"
                                 "permission:\n  edit: deny\n  bash:\n    'git *': allow\n    '*': deny\n"
                                 "tools: {}\n---\nReview.\n",
        "opencode.json": json.dumps({"agent": {"t": {"description": "T", "prompt": "Triage.",
                                                     "tools": {"write": False, "edit": False, "bash": False}}}})})
    r = items["agents/r/AGENT.md"]
    assert (r["mode"], r["model"], r["tools"]) == ("primary", "openai/gpt-5", ["read", "grep", "glob", "web-fetch",
                                                                                 "web-search"])
    assert r["opencode"]["temperature"] == 0.1 and r["opencode"]["permission"]["edit"] == "deny"
    assert any("bash (some patterns only)" in m for m in notes)
    assert items["agents/t/AGENT.md"]["tools"] == ["read", "grep", "glob", "web-fetch", "web-search"]


def test_copilot_prompt_keeps_argument_hint_and_model():
    items, _ = _items("copilot", {".github/prompts/plan.prompt.md": "---\ndescription: Plan\nargument-hint: topic\n"
                                  "model: Claude Opus 5.5\nagent: ask\ntools: [read, search]\n---\nPlan it.\n"})
    assert items["commands/plan/COMMAND.md"] == {"schema": 1, "description": "Plan", "argument-hint": "topic",
                                                 "model": "opus", "tools": ["read", "grep", "glob"],
                                                 "copilot": {"agent": "ask"}}


@pytest.mark.parametrize("client,path", [("claude", ".claude/skills"), ("opencode", ".opencode/skills"),
                                         ("copilot", ".github/skills"), ("cursor", ".cursor/skills")])
def test_skills_keep_license_compatibility_and_metadata(client, path):
    items, _ = _items(client, {f"{path}/s/SKILL.md": "---\nname: s\ndescription: S\nlicense: MIT\n"
                               "compatibility: Needs git\nmetadata:\n  version: '2'\nwhen_to_use: Often\n---\nUse s.\n"})
    skill = items["skills/s/SKILL.md"]
    assert (skill["license"], skill["compatibility"], skill["metadata"]) == ("MIT", "Needs git", {"version": "2"})
    assert skill[client] == {"when_to_use": "Often"}


def test_opencode_agents_md_in_instructions_is_the_context_only():
    doc, diags = imported("opencode", {"AGENTS.md": "Be brief.\n", "docs/style.md": "Use tabs.\n",
                                       "opencode.json": json.dumps({"instructions": ["AGENTS.md", "docs/style.md"]})})
    assert doc["context"]["global"] == "Be brief.\n"
    assert list(doc["rules"]) == ["style"]


def test_a_skill_md_nested_in_a_skill_is_not_copied():
    items, notes = _items("claude", {".claude/skills/a/SKILL.md": "---\nname: a\ndescription: A\n---\nUse a.\n",
                                     ".claude/skills/a/sub/SKILL.md": "---\nname: sub\ndescription: S\n---\nSub.\n",
                                     ".claude/skills/a/notes.md": "Notes.\n"})
    assert list(items) == ["skills/a/SKILL.md"]
    assert any("SKILL.md inside the skill a" in m for m in notes)


def test_cli_skips_a_file_it_cannot_import_unless_strict(tmp_path, monkeypatch, capsys):
    project = tmp_path / "project"
    (project / ".claude" / "rules").mkdir(parents=True)
    (project / ".claude" / "rules" / "good.md").write_text("Keep it short.\n")
    (project / ".claude" / "rules" / "bad.md").write_text("---\npaths: [\n---\nBroken.\n")
    (project / ".mcp.json").write_text("{")
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "claude", "project", "--out", "strict", "--strict"]) == 1
    assert "import failed: nothing written" in capsys.readouterr().err
    assert not (tmp_path / "strict").exists()
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning[AR131]") == 2 and "error" not in err.split("imported from")[0]
    assert (tmp_path / "registry" / "rules" / "good" / "RULE.md").exists()
    assert main(["lint", "registry"]) == 0


def test_codex_skill_settings_survive_import_and_build(monkeypatch):
    """agents/openai.yaml's settings (interface, ...) become the skill's codex: block, which
    the Codex adapter writes back to the same file."""
    monkeypatch.chdir(CASES / "codex")
    files, _ = read_project("project", lambda rel: importer.wants("codex", rel))
    doc, fields, _ = importer.import_project("codex", files, "project")
    portable = importer.portable_from_document(doc, None, "imported.bundle.yaml", fields,
                                               blocks=client_registry.passthrough_blocks())
    skill = next(f for f in portable.files if f.path == "skills/deploy/SKILL.md").content.decode()
    assert "codex:\n  interface:\n    display_name: Deploy to staging\n" in skill
    plan = pipeline.generate(portable, ["codex"])
    assert plan.ok, [d.format() for d in plan.diagnostics]
    built = {f.path: f.content for f in plan.files}
    original = (CASES / "codex" / "project" / ".agents/skills/deploy/agents/openai.yaml").read_text()
    assert load_yaml(built[".agents/skills/deploy/agents/openai.yaml"].decode()).data == load_yaml(original).data


def test_import_never_writes_the_canonical_document_through_a_link(tmp_path, monkeypatch, capsys):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    victim = tmp_path / "victim.json"
    victim.write_text("precious\n")
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "ai.config.json").symlink_to(victim)
    assert main(["import", "--from", "claude", "project", "--out", "registry", "--canonical",
                 "again/ai.config.json"]) == 1
    err = capsys.readouterr().err
    assert "again/ai.config.json: error[AR224]" in err and "import failed: nothing written" in err
    assert victim.read_text() == "precious\n" and not (tmp_path / "registry").exists()


@pytest.mark.parametrize("kind", ["other", "fifo", "same"])
def test_a_canonical_document_outside_out_is_written_only_over_its_own_bytes(tmp_path, monkeypatch, capsys,
                                                                           kind, no_hang):
    """--canonical outside --out: a file already there with other bytes is AR091 (not this
    import's), compared without reading past the new document's length; a FIFO there is
    refused (AR224, as a link is), not waited on; the same bytes again are no conflict."""
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    target = tmp_path / "docs" / "ai.config.json"
    argv = ["import", "--from", "claude", "project", "--out", "registry", "--canonical", "docs/ai.config.json"]
    if kind == "same":
        assert main(argv) == 0
        shutil.rmtree(tmp_path / "registry")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.write_text("precious\n")
    code = main(argv)
    err = capsys.readouterr().err
    if kind == "same":
        assert code == 0, err
    else:
        assert code == 1 and f"docs/ai.config.json: error[{'AR224' if kind == 'fifo' else 'AR091'}]" in err, err


_KILLED_IMPORT = """
import os, sys
sys.path.insert(0, {src!r})
from agentrc.output import imports
from agentrc.cli.main import main
imports.write = lambda out, record: os._exit(9)   # killed after the files, before the record
os.chdir({cwd!r})
main(["import", "--from", "claude", "project", "--out", "registry"])
"""


def test_an_import_killed_before_its_record_is_completed_by_the_next(tmp_path, monkeypatch, capsys):
    """The import's files and its record are one plan of the steps executor: a kill between
    them leaves the journal, and the next import writes the record before reading it, so the
    paths the first import wrote are known as claude's (an import of another client keeps
    them; a new claude import replaces them)."""
    import subprocess
    import sys

    _project(tmp_path)
    script = tmp_path / "killed.py"
    script.write_text(_KILLED_IMPORT.format(src=str(Path(__file__).resolve().parents[1] / "src"), cwd=str(tmp_path)))
    assert subprocess.run([sys.executable, str(script)], check=False).returncode == 9
    registry = tmp_path / "registry"
    assert (registry / ".agentrc" / "import-journal.json").is_file()
    assert not (registry / ".agentrc" / "imports.json").exists()
    assert (registry / "rules" / "testing" / "RULE.md").is_file()  # the files were committed
    monkeypatch.chdir(tmp_path)
    (tmp_path / "project" / ".claude" / "rules" / "testing.md").unlink()
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    assert not (registry / ".agentrc" / "import-journal.json").exists()
    record = json.loads((registry / ".agentrc" / "imports.json").read_text())
    assert "rules/testing/RULE.md" not in record["clients"]["claude"]
    # Without the recovered record the rule would have been kept as another import's.
    assert not (registry / "rules" / "testing" / "RULE.md").exists()
    capsys.readouterr()


@pytest.mark.parametrize("planted", [b"{not json", b'{"version": 1, "steps": [{"kind": "rm", "record": {},'
                                     b' "state": "done", "point": true}]}'])
def test_a_planted_import_journal_is_dropped_and_nothing_else_is_done(tmp_path, monkeypatch, capsys, planted):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    journal = tmp_path / "registry" / ".agentrc" / "import-journal.json"
    journal.write_bytes(planted)
    before = (tmp_path / "registry" / ".agentrc" / "imports.json").read_bytes()
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    assert not journal.exists()
    assert (tmp_path / "registry" / ".agentrc" / "imports.json").read_bytes() == before
    capsys.readouterr()
