"""MCP servers' literal `env` and `headers` values are secrets as often as not: they may go into
the generated config files (where the client reads them; `${VAR}` references are the portable
way to keep them out), but never into a diagnostic, a summary or the fidelity report, which
end up in CI logs (issue 9). Messages name the key only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.clients import registry as client_registry

ENV_SECRET = "sk-ENV-SECRET-4242"
HEADER_SECRET = "HDR-SECRET-9191"
SECRETS = (ENV_SECRET, HEADER_SECRET)

BUNDLE = f"""schema: 1
name: tools
description: Servers with literal secrets
items:
  rules: [style]
mcps:
  local-one:
    local:
      command: npx
      args: ["-y", "@example/mcp"]
      env:
        API_KEY: {ENV_SECRET}
        PLAIN_REF: "${{OTHER}}"
  remote-one:
    remote:
      type: http
      url: https://mcp.example.com/mcp
      headers:
        Authorization: "Bearer {HEADER_SECRET}"
        X-Ref: "${{TOKEN}}"
    requires-env: [TOKEN]
"""
RULE = "---\ndescription: Style\n---\n\nWrite clearly.\n"
CANONICAL = {"mcp": {"servers": {
    "local-one": {"command": "npx", "env": {"API_KEY": ENV_SECRET}},
    "remote-one": {"type": "http", "url": "https://mcp.example.com/mcp",
                   "headers": {"Authorization": f"Bearer {HEADER_SECRET}"}, "scope": "user"}}}}


def _write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _leaks(text: str) -> list:
    return [s for s in SECRETS if s in text]


def _build(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("source", ["portable", "canonical"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_secret_in_messages_or_reports(tmp_path, monkeypatch, capsys, source, fmt):
    if source == "portable":
        _write(tmp_path / "reg", {"tools.bundle.yaml": BUNDLE, "style/RULE.md": RULE})
    else:
        _write(tmp_path / "reg", {"ai.config.json": json.dumps(CANONICAL)})
    everyone = ",".join(client_registry.CLIENTS)
    code, printed = _build(tmp_path, monkeypatch, capsys, ["build", "reg", "--out", "out", "--client", everyone,
                                                           "--report", "report.json", "--format", fmt])
    assert code == 0, printed
    assert "AR092" in printed or fmt == "json"  # the warnings that used to carry the values are still there
    assert not _leaks(printed), printed
    report = json.loads((tmp_path / "report.json").read_text())
    # "merged" is data, not a message: the keys agentrc wrote into shared config files, with the
    # very bytes of those files, which the package's workspace sync merges back (and the
    # manifest in the output tree records). It holds a value exactly where a written file does.
    merged = report.pop("merged")
    assert not _leaks(json.dumps(report))
    written = {str(p.relative_to(tmp_path / "out")): p.read_text(errors="replace")
               for p in (tmp_path / "out").rglob("*") if p.is_file()}
    for path, info in merged.items():
        for secret in _leaks(json.dumps(info)):
            assert secret in written[path]
    # Where a client reads the server from a project file, the literal value is the user's choice: kept.
    assert any(ENV_SECRET in text for text in written.values())
    assert any(HEADER_SECRET in text for text in written.values())


@pytest.mark.parametrize("client", sorted(client_registry.PLUGIN_LAYOUTS))
def test_no_secret_in_plugin_builds(tmp_path, monkeypatch, capsys, client):
    _write(tmp_path / "reg", {"tools.bundle.yaml": BUNDLE, "style/RULE.md": RULE})
    code, printed = _build(tmp_path, monkeypatch, capsys, ["build", "reg", "--out", "out", "--layout", "plugin",
                                                           "--client", client, "--bundle", "tools",
                                                           "--report", "report.json"])
    assert code == 0, printed
    report = json.loads((tmp_path / "report.json").read_text())
    report.pop("merged", None)
    assert not _leaks(printed + json.dumps(report))


def test_no_secret_in_strict_failures(tmp_path, monkeypatch, capsys):
    """--strict turns the dropped-field warnings into errors: the same words, no values."""
    _write(tmp_path / "reg", {"tools.bundle.yaml": BUNDLE, "style/RULE.md": RULE})
    code, printed = _build(tmp_path, monkeypatch, capsys, ["build", "reg", "--out", "out", "--client",
                                                           "hermes,openclaw", "--strict"])
    assert code == 1 and not _leaks(printed)


@pytest.mark.parametrize("client", ["claude", "copilot", "cursor", "opencode", "codex"])
def test_no_secret_in_import_messages(tmp_path, monkeypatch, capsys, client):
    """Importing a client's MCP configuration: the values reach the imported bundle, never a message."""
    env = {"API_KEY": ENV_SECRET}
    headers = {"Authorization": f"Bearer {HEADER_SECRET}"}
    files = {
        "claude": {".mcp.json": json.dumps({"mcpServers": {
            "a": {"command": "x", "env": env}, "b": {"type": "http", "url": "https://x", "headers": headers},
            "c": {"type": "weird", "command": "y", "env": env}}})},
        "copilot": {".vscode/mcp.json": json.dumps({"servers": {
            "a": {"command": "x", "env": env, "envFile": ENV_SECRET},
            "b": {"type": "http", "url": "https://x", "headers": headers}}})},
        "cursor": {".cursor/mcp.json": json.dumps({"mcpServers": {
            "a": {"command": "x", "env": env}, "b": {"url": "https://x", "headers": headers}}})},
        "opencode": {"opencode.json": json.dumps({"mcp": {
            "a": {"type": "local", "command": ["x"], "environment": env},
            "b": {"type": "remote", "url": "https://x", "headers": headers, "oauth": {"clientSecret": ENV_SECRET}}}})},
        "codex": {".codex/config.toml": f'[mcp_servers.a]\ncommand = "x"\nenv = {{ API_KEY = "{ENV_SECRET}" }}\n\n'
                                        f'[mcp_servers.b]\nurl = "https://x"\nhttp_headers = {{ Authorization = '
                                        f'"Bearer {HEADER_SECRET}" }}\nbearer_token = "{HEADER_SECRET}"\n'},
    }[client]
    _write(tmp_path / "proj", files)
    code, printed = _build(tmp_path, monkeypatch, capsys, ["import", "proj", "--from", client, "--out", "reg"])
    assert code in (0, 1), printed
    assert not _leaks(printed), printed
