"""MCP servers' literal `env` and `headers` values are secrets as often as not: they may go into
the generated config files (where the client reads them; `${VAR}` references are the portable
way to keep them out), but never into a diagnostic, a summary or the fidelity report, which
end up in CI logs (issue 9). Messages and reports name the key only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.clients import registry as client_registry
from agentrc.files import OutputFile
from agentrc.inputs.tree import read_tree
from agentrc.pipeline import stages

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
    # "merged" names the keys agentrc wrote into shared config files, not their values: a
    # package's workspace sync reads those from the packaged files themselves.
    assert report["merged"] and not _leaks(json.dumps(report))
    written = {str(p.relative_to(tmp_path / "out")): p.read_text(errors="replace")
               for p in (tmp_path / "out").rglob("*") if p.is_file()}
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
    assert not _leaks(printed + (tmp_path / "report.json").read_text())


def test_no_secret_in_package_reports_and_sync_still_gets_the_values(tmp_path):
    """`pants package` writes the report into the package; `agentrc-sync` takes the values from
    the packaged config files instead, and merges exactly the keys the build had."""
    _write(tmp_path / "reg", {"tools.bundle.yaml": BUNDLE, "style/RULE.md": RULE})
    tree = read_tree([str(tmp_path / "reg")]).tree
    clients = sorted(client_registry.CLIENTS)
    plan, files = stages.package(tree, clients)
    assert plan.ok
    packaged = {path: content for path, content, _ in files}
    assert not _leaks(packaged.pop(stages.REPORT).decode())
    assert any(ENV_SECRET.encode() in content for content in packaged.values())
    synced = stages.with_merge_info([OutputFile(p, c) for p, c in packaged.items()],
                                    json.loads(dict((p, c) for p, c, _ in files)[stages.REPORT]))
    assert {f.path: f.keys for f in synced if f.merge} == {f.path: f.keys for f in plan.files if f.merge}


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
