"""Hooks arrive whole on import (issue 31 item 3), on look-alikes of published content: a
Claude Code plugin's hooks/hooks.json with scripts under ${CLAUDE_PLUGIN_ROOT}, `if`
conditions, asyncRewake and a SessionStart matcher; a .claude/settings.json project whose
hook runs a script of its own; a Copilot .github/hooks/<name>/ hook with its script. The
file a command runs travels with its executable bit and runs from every client's layout;
conditions and matchers are kept, or the client does not get the hook; names never clash."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agentrc.cli.main import main
from agentrc.diagnostics import Diagnostics
from agentrc.importers import document as importer
from agentrc.importers.base import Reader
from agentrc.importers.shapes import CLAUDE_HOOK_TOOLS, hooks_claude_shape
from agentrc.inputs.projectread import read_project
from agentrc.model import HOOK_EVENTS, SourceTree
from agentrc.pipeline import stages as pipeline

PLUGIN_HOOKS = {"hooks": {
    "SessionStart": [{"matcher": "startup|clear|compact", "hooks": [
        {"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/hooks/run-hook.cmd\" session-start", "async": False}]}],
    "PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/guard.py --strict",
         "if": "Bash(git commit:*)", "asyncRewake": True, "timeout": 30}]}],
}}


def write(path: Path, text: str, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755 if executable else 0o644)
    return path


def plugin(tmp_path: Path, hooks=PLUGIN_HOOKS) -> Path:
    """A plugin-like directory: hooks/hooks.json and the scripts it names (+x as published)."""
    root = tmp_path / "security-guidance"
    write(root / "hooks" / "hooks.json", json.dumps(hooks))
    write(root / "hooks" / "run-hook.cmd", '#!/bin/sh\nexec sh "$(dirname "$0")/session-start"\n', True)
    write(root / "hooks" / "session-start", "#!/bin/sh\necho started > \"$OUT\"\n", True)
    write(root / "hooks" / "guard.py", "print('guarded')\n")
    return root


def import_plugin(root: Path, source: str = "security-guidance"):
    """What the plugin reader does with hooks/hooks.json: the shared Claude shape, read with
    the plugin directory as the Reader's root."""
    tree, unread = read_project(str(root), lambda rel: True)
    assert not unread
    diags = Diagnostics()
    r = Reader("claude", "claude", tree, str(root).replace(os.sep, "/"), diags, source)
    data = r.json_object("hooks/hooks.json")
    hooks_claude_shape(r, "hooks/hooks.json", data["hooks"], {e: e for e in HOOK_EVENTS}, CLAUDE_HOOK_TOOLS)
    lossy = Diagnostics()
    portable = importer.portable_from_document(r.finish(), lossy, "imported.bundle.yaml", r.fields)
    return {f.path: f for f in portable.files}, [d.message for d in diags.sorted() + lossy.sorted()]


def frontmatter(text: bytes) -> str:
    return text.decode().split("---\n")[1]


def test_plugin_hooks_bring_their_scripts_conditions_and_matchers(tmp_path):
    files, messages = import_plugin(plugin(tmp_path))
    start = frontmatter(files["hooks/security-guidance-sessionstart-1/HOOK.md"].content)
    assert "matcher: startup|clear|compact\n" in start
    assert "script: ./run-hook.cmd session-start\n" in start
    # The script and the file its argument names beside it, executable as published.
    assert files["hooks/security-guidance-sessionstart-1/run-hook.cmd"].executable
    assert files["hooks/security-guidance-sessionstart-1/session-start"].executable
    guard = frontmatter(files["hooks/security-guidance-posttooluse-1/HOOK.md"].content)
    assert "if: Bash(git commit:*)\n" in guard and "script: python3 ./guard.py --strict\n" in guard
    assert "async: true\n" in guard and "claude:\n  asyncRewake: true\n" in guard
    assert "tools:\n  - bash\n" in guard and "timeout: 30\n" in guard
    assert not files["hooks/security-guidance-posttooluse-1/guard.py"].executable
    assert not any("CLAUDE_PLUGIN_ROOT" in f.content.decode() for f in files.values() if f.path.endswith(".md"))
    assert any("asyncRewake: no portable field; kept for claude only" in m for m in messages)


def test_imported_hooks_build_for_every_client_never_wider(tmp_path):
    files, _ = import_plugin(plugin(tmp_path))
    registry = tmp_path / "registry"
    for path, f in files.items():
        write(registry / path, f.content.decode(), f.executable)
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    assert main(["lint", str(registry)]) == 0
    assert main(["build", str(registry), "--client", "claude,codex,gemini,cursor", "--out", str(out),
                 "--report", str(report), "--no-cache"]) == 0
    settings = json.loads((out / ".claude" / "settings.json").read_text())
    start = settings["hooks"]["SessionStart"][0]
    assert start["matcher"] == "startup|clear|compact"
    guard = settings["hooks"]["PostToolUse"][0]
    assert guard["matcher"] == "Bash" and guard["hooks"][0]["if"] == "Bash(git commit:*)"
    assert guard["hooks"][0]["asyncRewake"] is True and guard["hooks"][0]["async"] is True
    assert guard["hooks"][0]["command"].startswith('python3 "${CLAUDE_PROJECT_DIR:-.}/.claude/agentrc/hooks/')
    copied = out / ".claude" / "agentrc" / "hooks" / "security-guidance-sessionstart-1"
    assert os.access(copied / "run-hook.cmd", os.X_OK) and os.access(copied / "session-start", os.X_OK)
    # The command as Claude Code runs it (sh -c, from the project, CLAUDE_PROJECT_DIR set) runs the copy.
    marker = tmp_path / "ran"
    subprocess.run(["sh", "-c", start["hooks"][0]["command"]], cwd=str(out), check=True,
                   env=dict(os.environ, CLAUDE_PROJECT_DIR=str(out), OUT=str(marker)))
    assert marker.read_text() == "started\n"
    # Codex can limit SessionStart but has no condition: it gets the one, not the other.
    codex = json.loads((out / ".codex" / "hooks.json").read_text())["hooks"]
    assert list(codex) == ["SessionStart"] and codex["SessionStart"][0]["matcher"] == "startup|clear|compact"
    assert not (out / ".gemini" / "settings.json").exists() or "hooks" not in json.loads(
        (out / ".gemini" / "settings.json").read_text())
    text = report.read_text()
    assert "Gemini CLI hooks have no condition like if: Bash(git commit:*)" in text
    assert "Gemini CLI cannot limit SessionStart hooks to matcher 'startup|clear|compact'" in text
    assert "Codex hooks have no condition like if: Bash(git commit:*)" in text


def test_a_script_that_cannot_travel_is_reported_and_its_hook_not_imported(tmp_path):
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/missing.sh"},
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/../outside.sh"},
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/linked.sh"},
        {"type": "command", "command": "npm test"}]}]}}
    root = plugin(tmp_path, hooks)
    write(tmp_path / "outside.sh", "#!/bin/sh\n", True)
    os.symlink("guard.py", str(root / "hooks" / "linked.sh"))
    files, messages = import_plugin(root)
    hook_items = sorted(p for p in files if p.endswith("HOOK.md"))
    assert hook_items == ["hooks/security-guidance-pretooluse-1/HOOK.md"]  # npm test, as written
    assert "script: npm test\n" in frontmatter(files[hook_items[0]].content)
    assert any("missing.sh, which is not in the source; the hook is not imported" in m for m in messages)
    assert any("../outside.sh, outside the source; the hook is not imported" in m for m in messages)
    assert any("linked.sh, which is reached through a link" in m for m in messages)


def test_two_sources_hooks_of_one_event_get_their_own_names(tmp_path):
    one, _ = import_plugin(plugin(tmp_path / "a"), "security-guidance")
    two, _ = import_plugin(plugin(tmp_path / "b"), "superpowers")
    names = {p.split("/")[1] for p in list(one) + list(two) if p.endswith("HOOK.md")}
    assert names == {"security-guidance-sessionstart-1", "security-guidance-posttooluse-1",
                     "superpowers-sessionstart-1", "superpowers-posttooluse-1"}


def test_claude_project_hook_script_travels_through_the_cli(tmp_path, monkeypatch, capsys):
    project = tmp_path / "project"
    write(project / ".claude" / "settings.json", json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh --fast"},
        {"type": "command", "command": "bash ./scripts/lint.sh"}]}]}}))
    write(project / ".claude" / "hooks" / "check.sh", "#!/bin/sh\necho checked\n", True)
    write(project / "scripts" / "lint.sh", "echo linted\n")
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    first = tmp_path / "registry" / "hooks" / "claude-pretooluse-1"
    assert "script: ./check.sh --fast\n" in (first / "HOOK.md").read_text()
    assert os.access(first / "check.sh", os.X_OK)
    second = tmp_path / "registry" / "hooks" / "claude-pretooluse-2"
    assert "script: bash ./lint.sh\n" in (second / "HOOK.md").read_text()
    assert not os.access(second / "lint.sh", os.X_OK)  # as in the source: bash runs it
    assert main(["build", "registry", "--client", "claude", "--out", "out", "--no-cache"]) == 0
    handlers = json.loads((tmp_path / "out" / ".claude" / "settings.json").read_text())["hooks"]["PreToolUse"]
    commands = [h["hooks"][0]["command"] for h in handlers]
    for command, said in zip(commands, ("checked", "linted")):
        ran = subprocess.run(["sh", "-c", command], cwd=str(tmp_path / "out"), capture_output=True, text=True,
                             env=dict(os.environ, CLAUDE_PROJECT_DIR=str(tmp_path / "out")), check=True)
        assert ran.stdout == said + "\n"


def test_copilot_hook_directory_brings_its_script(tmp_path):
    project = tmp_path / "project"
    write(project / ".github" / "hooks" / "logger" / "hooks.json", json.dumps({"version": 1, "hooks": {
        "sessionStart": [{"type": "command", "bash": ".github/hooks/logger/log.sh start", "timeoutSec": 5}],
        "postToolUse": [{"type": "command", "bash": "./log.sh tool", "cwd": ".github/hooks/logger"}]}}))
    write(project / ".github" / "hooks" / "logger" / "log.sh", "#!/bin/sh\necho \"$1\"\n", True)
    tree, unread = read_project(str(project), lambda rel: importer.wants("copilot", rel))
    assert not unread
    result = importer.import_project("copilot", tree, str(project).replace(os.sep, "/"))
    portable = {f.path: f for f in importer.portable_from_document(result.document, None, "b", result.fields).files}
    start = frontmatter(portable["hooks/copilot-sessionstart-1/HOOK.md"].content)
    assert "script: ./log.sh start\n" in start and "timeout: 5\n" in start
    assert portable["hooks/copilot-sessionstart-1/log.sh"].executable
    assert "script: ./log.sh tool\n" in frontmatter(portable["hooks/copilot-posttooluse-1/HOOK.md"].content)
    _, lint = pipeline.lint(importer.relative(SourceTree(tuple(portable.values())), "registry"))
    assert not [d for d in lint if d.is_error]
