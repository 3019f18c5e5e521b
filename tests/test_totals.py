"""`summary`: the per-client totals `agentrc build` prints and the no-change stamp keeps."""

from __future__ import annotations

from agentrc.fidelity import FieldOutcome, ItemReport
from agentrc.output.totals import summary, summary_lines


def _fields(*statuses: str, detail: str = "") -> tuple:
    return tuple(FieldOutcome(f"f{i}", s, detail) for i, s in enumerate(statuses))


def test_items_servers_and_fields_are_counted_per_client():
    shared = _fields("emitted", "mapped", "omitted")  # one tuple held by several reports
    reports = [
        ItemReport("claude", "rule", "a", "a/RULE.md", True, ("CLAUDE.md",), shared),
        ItemReport("claude", "rule", "b", "b/RULE.md", True, ("CLAUDE.md",), shared),
        ItemReport("claude", "skill", "c", "c/SKILL.md", True, (".claude/skills/c/SKILL.md",),
                   _fields("emitted", "dropped", detail="its own")),
        ItemReport("claude", "agent", "d", "d/AGENT.md", False, (), _fields("omitted")),  # audience
        ItemReport("claude", "mcp", "srv", "mcp.yaml", True, (".mcp.json",), _fields("emitted", "degraded")),
        ItemReport("claude", "mcp", "off", "mcp.yaml", False, (), ()),
        ItemReport("claude", "tools", "tools.claude", "registry.yaml", True, (".claude/settings.json",),
                   _fields("mapped")),
        ItemReport("copilot", "rule", "a", "a/RULE.md", True, (".github/instructions/a.instructions.md",), shared),
    ]
    totals = summary(iter(reports))  # any iterable, read once
    assert totals == {
        "claude": {"items": 3, "skipped": 1, "servers": 1, "emitted": 4, "mapped": 3, "degraded": 1,
                   "dropped": 1, "omitted": 3},
        "copilot": {"items": 1, "skipped": 0, "servers": 0, "emitted": 1, "mapped": 1, "degraded": 0,
                    "dropped": 0, "omitted": 1},
    }
    assert list(totals) == ["claude", "copilot"]  # in the order the build made them
    assert summary_lines(totals)[1] == ("copilot: 1 items generated, 0 not generated (audience, or a kind the "
                                        "client lacks); fields: 1 emitted, 1 mapped, 0 degraded, 0 dropped")


def test_no_reports_no_totals():
    assert summary([]) == {}
