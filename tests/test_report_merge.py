"""The fidelity report names the keys agentrc merges into users' config files, never their
values (issue 9); a workspace sync reads the values back from the packaged files, which hold
agentrc's keys alone (`pipeline.stages.with_merge_info`, `output.merge.recover`)."""

from __future__ import annotations

import json

import pytest
from helpers import ROOT

from agentrc.clients.registry import CLIENTS
from agentrc.diagnostics import Diagnostics
from agentrc.files import Fragment, OutputFile, fragment
from agentrc.inputs.tree import read_tree
from agentrc.output.merge import assemble
from agentrc.pipeline import stages

HOOK_A = {"matcher": "Bash", "hooks": [{"type": "command", "command": "a.sh", "timeout": 10}]}
HOOK_B = {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "b.sh"}]}
SERVER = {"command": "npx", "args": ["-y", "x"], "env": {"API_KEY": "sk-SECRET", "N": 1.5}, "off": False}


def _packaged(built):
    """What a sync sees: the file's bytes, without the keys the build had in memory."""
    return OutputFile(built.path, built.content, built.executable, "pants")


def _round_trip(built):
    report = json.loads(json.dumps({"version": stages.REPORT_VERSION, "merged": stages.merged_keys(built)}))
    return stages.with_merge_info([_packaged(f) for f in built], report)


def _assembled(path, *fragments):
    diags = Diagnostics()
    built = assemble(path, list(fragments), diags)
    assert built is not None and not diags.items
    return built


def test_values_come_back_from_json_arrays_and_objects_in_order():
    built = _assembled(
        ".claude/settings.json",
        fragment(".claude/settings.json", "json", ("hooks", "PreToolUse"), HOOK_A, "claude", append=True),
        fragment(".claude/settings.json", "json", ("env", "X"), {"deep": [1, {"k": "v"}]}, "claude"),
        fragment(".claude/settings.json", "json", ("hooks", "PreToolUse"), HOOK_B, "claude", append=True),
        fragment(".claude/settings.json", "json", ("hooks", "PostToolUse"), HOOK_B, "claude", append=True),
        fragment(".claude/settings.json", "json", ("mcpServers", "s"), SERVER, "claude"))
    assert [k for k, _, a in built.keys if a].count(("hooks", "PreToolUse")) == 2
    report = stages.merged_keys([built])
    assert "sk-SECRET" not in json.dumps(report) and "a.sh" not in json.dumps(report)
    assert report[built.path]["keys"][0] == [["hooks", "PreToolUse"], True]
    [synced] = _round_trip([built])
    assert synced.merge == "json" and synced.keys == built.keys  # the very canonical JSON strings, in order


def test_values_come_back_from_toml_tables():
    built = _assembled(".codex/config.toml",
                       fragment(".codex/config.toml", "toml", ("mcp_servers", "s"), SERVER, "codex"),
                       fragment(".codex/config.toml", "toml", ("mcp_servers", "t"),
                                {"url": "https://x", "http_headers": {"Authorization": "Bearer tok"}}, "codex"))
    assert "sk-SECRET" in built.content.decode()
    [synced] = _round_trip([built])
    assert synced.merge == "toml" and [(k, a) for k, _, a in synced.keys] == [(k, a) for k, _, a in built.keys]
    assert [json.loads(v) for _, v, _ in synced.keys] == [json.loads(v) for _, v, _ in built.keys]


def test_the_block_comes_back_from_the_markdown_file():
    built = _assembled("AGENTS.md", Fragment("AGENTS.md", "sections", ("0", "a"), "## A\n\nDo A.\n"))
    assert stages.merged_keys([built]) == {"AGENTS.md": {"format": "block", "keys": [[[], False]]}}
    [synced] = _round_trip([built])
    assert synced.merge == "block" and synced.keys == built.keys


@pytest.mark.parametrize("clients", [sorted(CLIENTS)] + [[c] for c in sorted(CLIENTS)])
def test_every_merged_file_of_the_examples_comes_back(monkeypatch, clients):
    monkeypatch.chdir(ROOT)
    plan = stages.generate(read_tree(["examples/registry"]).tree, clients)
    assert plan.ok
    report = json.loads(json.dumps(stages.report_document(clients, plan)))
    assert report["version"] == 2
    synced = {f.path: f for f in stages.with_merge_info([_packaged(f) for f in plan.files], report)}
    for f in plan.files:
        assert (synced[f.path].merge, synced[f.path].keys) == (f.merge, f.keys), f.path


def test_an_older_report_with_values_is_still_read():
    """Packages built before version 2 carry the values in the report: those are used as they are."""
    built = _assembled(".mcp.json", fragment(".mcp.json", "json", ("mcpServers", "s"), SERVER, "claude"))
    keys = [[["mcpServers", "s"], '{"a": 1}', False]]
    old = {"version": 1, "merged": {".mcp.json": {"format": "json", "keys": keys}}}
    [synced] = stages.with_merge_info([_packaged(built)], old)
    assert synced.keys == ((("mcpServers", "s"), '{"a": 1}', False),)


@pytest.mark.parametrize("keys, content, why", [
    ([[["mcpServers", "t"], False]], '{"mcpServers": {"s": {}}}\n', "no key 'mcpServers.t'"),
    ([[["mcpServers", "s"], False]], '{"mcpServers": {"s": {}}, "x": 1}\n', "holds more than agentrc's keys"),
    ([[["hooks", "E"], True]], '{"hooks": {"E": [1, 2]}}\n', "holds more than agentrc's keys"),
    ([[["hooks", "E"], True], [["hooks", "E"], True]], '{"hooks": {"E": [1]}}\n', "no entry 'hooks.E'"),
    ([[["hooks", "E"], False]], "not json", "cannot take"),
])
def test_a_report_the_package_does_not_match_is_an_error(keys, content, why):
    report = {"version": 2, "merged": {"f.json": {"format": "json", "keys": keys}}}
    with pytest.raises(ValueError, match=why):
        stages.with_merge_info([OutputFile("f.json", content.encode())], report)


def test_a_newer_report_is_refused():
    with pytest.raises(ValueError, match="report version 3"):
        stages.with_merge_info([], {"version": 3})
