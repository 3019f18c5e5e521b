"""Claude Code adapter cases beyond the goldens."""

from __future__ import annotations

from . import harness


def test_an_agent_with_no_tools_gets_none_in_claude_code():
    """`tools: []` means no tool. Claude Code gives an agent with no `tools` value every tool,
    so the empty list is written as `tools: []` and every portable tool is disallowed too:
    the list never widens into all tools."""
    result, files = harness.build(harness.item("agent", "thinker", "description: Thinks only.\ntools: []\n"),
                                  ["claude"])
    fm = harness.frontmatter(files[".claude/agents/thinker.md"])
    assert fm["tools"] == []
    assert set(fm["disallowedTools"]) == {"Read", "Write", "Edit", "Bash", "Grep", "Glob", "WebFetch", "WebSearch"}
    assert harness.fields(result, "agent", "thinker", "claude")["tools"][0] == "mapped"


def test_a_tool_list_is_written_as_is():
    _, files = harness.build(harness.item("agent", "reader", "description: Reads.\ntools: [read, grep]\n"),
                             ["claude"])
    fm = harness.frontmatter(files[".claude/agents/reader.md"])
    assert fm["tools"] == "Read, Grep" and "disallowedTools" not in fm
