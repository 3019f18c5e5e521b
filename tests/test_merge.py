"""Config files users own: agentrc merges its keys, keeps every other byte, removes only what
it added, and never loses an edit to what it wrote (writer + managed + jsonedit/tomledit)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import ROOT

from agentrc.cli.main import main

REGISTRY = "examples/registry"


def _build(out: Path, clients: str, *extra: str) -> int:
    return main(["build", REGISTRY, "--client", clients, "--out", str(out), "--no-cache", *extra])


def test_user_keys_and_comments_stay_byte_stable_and_agentrc_keys_go_away(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "project"
    user = '{\n  // my servers\n  "servers": {\n    "mine": {"type": "stdio", "command": "mine"}\n  }\n}\n'
    (out / ".vscode").mkdir(parents=True)
    (out / ".vscode" / "mcp.json").write_text(user)
    assert _build(out, "copilot") == 0
    merged = (out / ".vscode" / "mcp.json").read_text()
    assert merged.startswith('{\n  // my servers\n  "servers": {\n    "mine": {"type": "stdio", "command": "mine"},')
    assert {"mine", "api-docs", "schema-tools"} <= set(json.loads(merged.replace("  // my servers\n", ""))["servers"])
    manifest = json.loads((out / ".agentrc" / "manifest.json").read_text())
    assert ".vscode/mcp.json" in manifest["merged"] and ".vscode/mcp.json" not in manifest["files"]
    # Built without copilot, agentrc takes out exactly what it added: the user's bytes return.
    assert _build(out, "claude") == 0
    assert (out / ".vscode" / "mcp.json").read_text() == user


def test_a_file_agentrc_created_goes_away_with_its_keys(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "project"
    assert _build(out, "claude") == 0
    assert (out / ".claude" / "settings.json").exists() and (out / ".mcp.json").exists()
    assert _build(out, "opencode") == 0
    assert not (out / ".claude" / "settings.json").exists() and not (out / ".mcp.json").exists()


def test_edits_to_agentrc_keys_are_never_lost(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "project"
    assert _build(out, "claude") == 0
    settings = out / ".claude" / "settings.json"
    original = settings.read_text()
    # An edited hook entry (it still names agentrc's script): AR094, nothing written.
    settings.write_text(original.replace('"timeout": 10', '"timeout": 99'))
    capsys.readouterr()
    assert _build(out, "claude") == 1
    err = capsys.readouterr().err
    assert "error[AR094] hooks.PreToolUse was edited" in err and "nothing written" in err
    assert '"timeout": 99' in settings.read_text()
    # A removed entry is added again, with a warning.
    data = json.loads(original)
    del data["hooks"]["PreToolUse"]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    assert _build(out, "claude") == 0
    assert "warning[AR094] an entry agentrc added under hooks.PreToolUse" in capsys.readouterr().err
    assert json.loads(settings.read_text()) == json.loads(original)


def test_toml_tables_of_a_users_codex_config_are_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "project"
    user = '# mine\nmodel = "gpt-5"\n\n[mcp_servers.mine]\ncommand = "mine"\n'
    (out / ".codex").mkdir(parents=True)
    (out / ".codex" / "config.toml").write_text(user)
    assert _build(out, "codex") == 0
    text = (out / ".codex" / "config.toml").read_text()
    assert text.startswith(user) and "[mcp_servers.schema-tools]" in text
    assert _build(out, "claude") == 0
    assert (out / ".codex" / "config.toml").read_text() == user
