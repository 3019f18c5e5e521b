"""opencode (the real CLI, offline) parses the commands and MCP servers agentrc generates for it.

`opencode debug config` prints the resolved configuration without starting MCP servers or
calling a model: its `command` map holds every .opencode/commands/*.md (frontmatter fields plus
the body as `template`) and its `mcp` map opencode.json's servers (header values masked).
opencode hooks are JavaScript plugins, of which agentrc writes none (its report marks hooks
dropped for opencode), so there is nothing to discover there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

from .conformance_helpers import Opencode, split_frontmatter


def _mask_headers(servers: Dict[str, Any]) -> Dict[str, Any]:
    masked = json.loads(json.dumps(servers))
    for server in masked.values():
        if isinstance(server.get("headers"), dict):
            server["headers"] = {k: "***" for k in server["headers"]}
    return masked


def test_opencode_config_has_every_generated_command(opencode: Opencode, oc_project: Path, build: Path):
    files = sorted((build / ".opencode" / "commands").glob("*.md"))
    assert files, "the build generated no commands under .opencode/commands"

    config = opencode.json(oc_project, "debug", "config")
    commands = config.get("command") or {}

    assert sorted(commands) == sorted(f.stem for f in files)
    for f in files:
        frontmatter, body = split_frontmatter(f.read_text(encoding="utf-8"))
        parsed = commands[f.stem]
        assert frontmatter.get("description"), f"{f.name}: generated command has no description"
        for key, value in frontmatter.items():
            assert parsed.get(key) == value, f"{f.name}: opencode parsed {key}={parsed.get(key)!r}, generated {value!r}"
        assert (parsed.get("template") or "").strip() == body.strip(), f"{f.name}: template != generated body"
        if frontmatter.get("agent"):
            assert (build / ".opencode" / "agents" / f"{frontmatter['agent']}.md").is_file(), \
                f"{f.name}: runs agent {frontmatter['agent']!r}, which the build does not define"


def test_opencode_config_has_every_generated_mcp_server(opencode: Opencode, oc_project: Path, build: Path):
    generated = json.loads((build / "opencode.json").read_text(encoding="utf-8")).get("mcp") or {}
    assert generated, "opencode.json has no mcp servers"

    config = opencode.json(oc_project, "debug", "config")

    assert config.get("mcp") == _mask_headers(generated)
