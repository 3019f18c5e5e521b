"""Each item loads once per client, by default (issue 31, item 6): where a built client also
reads another built client's directory and would find there the same bytes as its own copy of
an item, agentrc writes one shared copy (Copilot reads .claude/skills: no .github/skills copy);
`shared-copies: false` in agentrc.yaml writes every client its own. What stays loaded twice is
named by AR095, one line per (client, directory) with a count and a fix for one tree, and by
`also_loaded_by`; agents that OpenClaw and Hermes write as skills into .agents/skills included.
tests/conformance/test_cross_discovery.py checks the same with the real CLIs."""

from __future__ import annotations

import json
from typing import Dict, List

from agentrc.output import plan as planning
from agentrc.pipeline import stages
from agentrc.project.model import parse_file

from clients.harness import build, item, plan, tree

SKILL = item("skill", "plain", "description: Use when planning\n", "Plan the work.\n",
             {"scripts/run.sh": "#!/bin/sh\necho run\n", "notes.md": "Notes.\n"})


def _report(result, client: str, kind: str, name: str):
    return next(r for r in result.reports if (r.client, r.kind, r.name) == (client, kind, name))


def _ar095(result) -> List[str]:
    return [d.message for d in result.diagnostics if d.code == "AR095"]


def test_copilot_gets_no_copy_of_a_skill_it_reads_from_claude_byte_for_byte():
    result, out = build(SKILL, ("claude", "copilot"))
    assert ".claude/skills/plain/SKILL.md" in out and ".claude/skills/plain/scripts/run.sh" in out
    assert not [p for p in out if p.startswith(".github/skills/")], sorted(out)
    run = next(f for f in result.files if f.path == ".claude/skills/plain/scripts/run.sh")
    assert run.executable  # the mode travels with the one copy
    copilot = _report(result, "copilot", "skill", "plain")
    assert copilot.generated and copilot.outputs == _report(result, "claude", "skill", "plain").outputs
    loaded = dict(((c, p), d) for c, p, d in _report(result, "claude", "skill", "plain").also_loaded_by)
    assert loaded == {("copilot", ".claude/skills/plain/SKILL.md"):
                      "copilot loads it from here as its own: the same bytes, so agentrc writes no second copy "
                      "(shared-copies)"}
    assert not _ar095(result)  # one copy, loaded once: nothing to warn about


def test_shared_copies_false_writes_every_client_its_own_copy():
    result, out = build(SKILL, ("claude", "copilot"), shared_copies=False)
    assert out[".github/skills/plain/SKILL.md"] == out[".claude/skills/plain/SKILL.md"]
    assert ".github/skills/plain/scripts/run.sh" in out
    assert _report(result, "copilot", "skill", "plain").outputs[0] == ".github/skills/plain/SKILL.md"
    assert not _ar095(result)


def test_seven_clients_save_files_and_lose_none_of_their_items():
    """Every client keeps a report per item; only identical copies go, and each one that goes
    is a file another built client writes."""
    files = {**SKILL, **item("skill", "other", "description: Another\n", "Do it.\n")}
    clients = ("claude", "copilot", "opencode", "cursor", "windsurf", "codex", "gemini")
    shared, _ = build(files, clients)
    whole, _ = build(files, clients, shared_copies=False)
    assert len(shared.files) < len(whole.files)
    kept = {f.path: f for f in shared.files}
    for f in whole.files:
        if f.path not in kept:
            assert f.path.split("/")[0] in (".github", ".opencode", ".cursor", ".windsurf"), f.path
    assert [(r.client, r.kind, r.name, r.generated) for r in shared.reports] == \
        [(r.client, r.kind, r.name, r.generated) for r in whole.reports]


def test_a_copy_whose_bytes_differ_is_kept_and_named():
    files = item("skill", "plain", "description: Use when planning\n",
                 "Plan.\n\n<!-- @client:claude -->\nUse plan mode.\n<!-- @endclient -->\n")
    result, out = build(files, ("claude", "copilot"))
    assert ".github/skills/plain/SKILL.md" in out
    assert _ar095(result) == ["copilot also loads 1 skill written for claude from .claude/skills, different from "
                              "its own copy (plain); its own copy wins"]


def test_a_reader_keeps_its_copy_when_another_directory_it_reads_holds_different_bytes():
    """opencode reads .claude/skills and .agents/skills: Codex's copy there has a Codex-only
    block, so opencode keeps its own (which of two differing copies it loads is not defined)."""
    files = item("skill", "plain", "description: Use when planning\n",
                 "Plan.\n\n<!-- @client:codex -->\nCodex only.\n<!-- @endclient -->\n")
    result, out = build(files, ("claude", "opencode", "codex"))
    assert out[".opencode/skills/plain/SKILL.md"] == out[".claude/skills/plain/SKILL.md"]
    assert "Codex only." in out[".agents/skills/plain/SKILL.md"]
    # Without the Codex block all three are one text: opencode loads Claude Code's copy.
    result, out = build(SKILL, ("claude", "opencode", "codex"))
    assert not [p for p in out if p.startswith(".opencode/skills/")]
    assert _report(result, "opencode", "skill", "plain").outputs[0] == ".claude/skills/plain/SKILL.md"
    assert "plain" not in json.loads(out.get("opencode.json", "{}")).get("permission", {}).get("skill", {})


AGENT = item("agent", "reviewer", "description: Reviews changes\n", "Review the diff.\n")


def test_agents_openclaw_writes_as_skills_are_named_for_every_client_reading_agents_skills():
    result, out = build(AGENT, ("copilot", "codex", "gemini", "openclaw"))
    assert ".agents/skills/reviewer/SKILL.md" in out
    loaded = {c for c, p, _ in _report(result, "openclaw", "agent", "reviewer").also_loaded_by
              if p == ".agents/skills/reviewer/SKILL.md"}
    assert loaded == {"copilot", "codex", "gemini"}
    warnings = _ar095(result)
    assert "copilot also loads 1 agent written for openclaw from .agents/skills, as a second copy beside its own " \
           "(reviewer)" in warnings, warnings
    # Gemini CLI hides it with its own switch: it has the agent already.
    settings = json.loads(out[".gemini/settings.json"])
    assert settings["skills"]["disabled"] == ["reviewer"]
    assert not [w for w in warnings if w.startswith("gemini ")]


def test_codex_agent_files_are_not_read_as_agent_skills():
    """Codex writes agents as TOML under .codex/agents, not into .agents/skills: no reader of
    .agents/skills loads those."""
    result, _ = build(AGENT, ("codex", "copilot"))
    assert not _report(result, "codex", "agent", "reviewer").also_loaded_by


def test_ar095_is_one_line_per_client_and_directory_with_a_count_and_a_fix_for_one_tree():
    files = {**item("skill", "deep", "description: Think\naudience:\n  - claude\n", "Think.\n"),
             **item("command", "ship", "description: Ship it\n", "Ship.\n"),
             **item("rule", "style", "description: Style\nscope:\n  paths:\n    - \"src/**\"\n", "Spaces.\n")}
    result = plan(files, ("claude", "copilot"))
    found = [d for d in result.diagnostics if d.code == "AR095"]
    by_dir: Dict[str, List[str]] = {}
    for d in found:
        head = d.message.split(":")[0]
        by_dir.setdefault(head, []).append(d.message)
    assert sorted(m for m in (d.message for d in found)) == sorted([
        "copilot also loads 1 rule written for claude from .claude/rules, as a second copy beside its own (style)",
        "copilot also loads 2 copies from .claude/skills: 1 command written for claude, as a second copy beside "
        "its own (ship); 1 skill written for claude, outside its audience (deep)"])
    for d in found:
        assert "out of clients: in agentrc.yaml" in d.hint and "shared-copies" in d.hint, d.hint
        assert "separate trees" not in d.hint


def test_opencodes_fix_names_its_own_switch():
    files = item("skill", "plain", "description: Use when planning\n",
                 "Plan.\n\n<!-- @client:claude -->\nClaude only.\n<!-- @endclient -->\n")
    result = plan(files, ("claude", "opencode"))
    [d] = [d for d in result.diagnostics if d.code == "AR095"]
    assert d.hint.startswith("set shared-copies: false in agentrc.yaml and run opencode with "
                             "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS=1, or leave opencode (or claude) out of clients:")


def test_the_incremental_view_is_the_plans():
    """`_render` and `memoized` (what an incremental build compares) give the rendering the
    plan took: no files for a shared copy, so a replay writes only the shared file."""
    from agentrc.clients import registry
    from agentrc.memo.cache import Memo

    loaded = stages.load(tree(SKILL))
    item_ = loaded.registry.items[0]
    adapters = registry.get(["claude", "copilot"])
    ctx = planning._context(loaded.registry.items, adapters)
    memo = Memo()
    copilot = planning._render(adapters[1], item_, ctx, memo)
    assert copilot.files == () and copilot.report.outputs[0] == ".claude/skills/plain/SKILL.md"
    assert planning.memoized(adapters[1], item_, ctx, memo) == copilot
    off = planning._context(loaded.registry.items, adapters, shared=False)
    assert planning._render(adapters[1], item_, off, memo).files[0].path == ".github/skills/plain/SKILL.md"


def test_the_project_file_key():
    def parsed(text: str):
        return parse_file(text, "agentrc.yaml", ["claude", "copilot"], ["AR095"])

    project, problems = parsed("schema: 1\nclients: [claude, copilot]\n")
    assert project is not None and project.shares and project.shared_copies is None
    project, _ = parsed("schema: 1\nshared-copies: false\n")
    assert project is not None and not project.shares
    project, problems = parsed("schema: 1\nshared-copies: sometimes\n")
    assert project is None
    [d] = problems
    assert (d.code, d.line) == ("AR243", 2) and "shared-copies" in d.message and d.is_error
