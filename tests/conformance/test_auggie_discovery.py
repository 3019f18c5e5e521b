"""Auggie (the real CLI, offline) loads what agentrc generates for it.

`AUGMENT_SESSION_AUTH` names the local sink as the Augment tenant, so `auggie --print` sends
its first `chat-stream` request there (the sink refuses it): the request lists the rules
(AGENTS.md and `.augment/rules`, each with its type and description) and the skills (name,
description, location) Auggie loaded. `auggie mcp list --json` lists the servers of
`.augment/settings.json` without starting them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import yaml

from .conformance_helpers import NPM_MODULES, check_npm_package, describe, run
from .offline_clients import LocalSink, cli_argv, client_build, copy_project, isolated_dirs, offline_env

PACKAGE = "@augmentcode/auggie"
RULE_TYPES = {"always_apply": 0, "manual": 1, "agent_requested": 2}


def _auggie() -> List[str]:
    check_npm_package(PACKAGE)
    return cli_argv(NPM_MODULES / PACKAGE / "augment.mjs")


def _env(sink: LocalSink) -> Dict[str, str]:
    _, home, tmp = isolated_dirs("agentrc-auggie-")
    auth = {"accessToken": "agentrc-dummy", "tenantURL": f"{sink.url}/", "scopes": ["email"]}
    return offline_env(home, tmp, proxy=sink, extra={"AUGMENT_SESSION_AUTH": json.dumps(auth)})


def _chat_request(project: Path) -> Dict[str, Any]:
    with LocalSink() as sink:
        proc = run(_auggie() + ["--print", "hello"], cwd=project, env=_env(sink))
        chats = [r for r in sink.requests if r["method"] == "POST" and r["path"].endswith("/chat-stream")]
    assert chats, f"auggie sent no chat-stream request to the sink:\n{describe(proc)}"
    body: Dict[str, Any] = chats[0]["body"]
    return body


def _split(path: Path) -> Tuple[Dict[str, Any], str]:
    _, fm, body = path.read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(fm), body


@pytest.fixture(scope="module")
def auggie_project(tmp_path_factory) -> Path:
    _auggie()
    return copy_project(client_build("registry", "auggie").out, tmp_path_factory.mktemp("auggie") / "project")


@pytest.fixture(scope="module")
def auggie_request(auggie_project: Path) -> Dict[str, Any]:
    return _chat_request(auggie_project)


def test_auggie_request_has_agents_md_and_every_generated_rule(auggie_project: Path, auggie_request):
    rules = {r["path"]: r for r in auggie_request["rules"] if r["path"] != "non-interactive-prompt.md"}
    agents_md = rules.pop("AGENTS.md")
    assert agents_md["content"] == (auggie_project / "AGENTS.md").read_text(encoding="utf-8")
    assert agents_md["type"] == 0
    generated = client_build("registry", "auggie").generated("rule")
    assert generated and sorted(rules) == sorted(f".augment/rules/{name}.md" for name in generated)
    for path, rule in rules.items():
        fm, body = _split(auggie_project / path)
        assert rule["type"] == RULE_TYPES[fm["type"]], path
        assert rule["description"] == fm["description"], path
        assert rule["content"].strip() == body.strip(), path


def test_auggie_request_has_every_generated_skill(auggie_project: Path, auggie_request):
    skills = [s for s in auggie_request["skills"] if s.get("source") == "workspace"]
    expected = {}
    for name, outputs in client_build("registry", "auggie").generated("skill").items():
        entry = next(o for o in outputs if o.endswith("/SKILL.md"))
        expected[name] = (_split(auggie_project / entry)[0]["description"], str(auggie_project / entry))
    assert expected, "the build generated no skill"
    assert {s["name"]: (s["description"], s["location"]) for s in skills} == expected
    assert len(skills) == len(expected), "a skill listed twice"


def test_auggie_mcp_list_lists_every_generated_server(auggie_project: Path):
    servers = json.loads((auggie_project / ".augment" / "settings.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers, "the build wrote no MCP server"
    with LocalSink() as sink:
        proc = run(_auggie() + ["mcp", "list", "--json"], cwd=auggie_project, env=_env(sink))
    assert proc.returncode == 0, describe(proc)
    listed = {s["name"]: s for s in json.loads(proc.stdout)["servers"]}
    assert sorted(listed) == sorted(servers)
    for name, entry in servers.items():
        got = listed[name]
        assert got["transport"] == entry["type"] and got["enabled"], got
        if entry["type"] == "stdio":
            assert got["command"] == " ".join([entry["command"], *entry.get("args", [])]), got
        else:
            assert got["url"] == entry["url"], got


def test_auggie_in_a_claude_and_auggie_tree_loads_what_ar095_warns_about(tmp_path: Path):
    """Auggie also loads .claude/skills (skills and Claude's commands-as-skills): every copy
    there is in its request, and the report names each one (also_loaded_by, AR095)."""
    build = client_build("registry", "claude,auggie")
    project = copy_project(build.out, tmp_path / "project")
    skills = _chat_request(project)["skills"]
    own = {s["name"] for s in skills if s.get("source") == "workspace"}
    from_claude = {s["name"] for s in skills if s.get("source") == ".claude"}
    claude = set(build.generated_skills(".claude/skills", "claude"))
    assert claude and from_claude == claude - own, "one skill per name, Auggie's own .augment/skills copy first"
    notes = {i["name"]: a["detail"] for i in build.report["items"]
             if i.get("client") == "claude" and i.get("kind") in ("skill", "command")
             for a in i.get("also_loaded_by") or () if a["client"] == "auggie"}
    assert set(notes) == claude, "the report names every .claude/skills copy Auggie loads"
    for name in claude & own:
        assert "its own copy wins" in notes[name], (name, notes[name])
