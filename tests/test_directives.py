"""Directive processing (spec 001 §6.3), exactly."""

from __future__ import annotations

import pytest

from agentrc.portable import directives
from agentrc.diagnostics import Diagnostics

FAMILIES = frozenset({"claude", "copilot", "codex", "opencode"})


def run(body: str, family: str) -> str:
    diags = Diagnostics()
    blocks = directives.parse(body, FAMILIES, diags, "x.md")
    assert not diags.items, [d.format() for d in diags.items]
    return directives.process(body, family, blocks)


BODY = "## A\n\nshared\n\n<!-- @client:claude -->\n\nclaude only\n\n<!-- @endclient -->\n\nafter\n"


@pytest.mark.parametrize("family,expected", [
    ("claude", "## A\n\nshared\n\nclaude only\n\nafter"),
    ("copilot", "## A\n\nshared\n\nafter"),
])
def test_blocks_and_blank_lines(family, expected):
    assert run(BODY, family) == expected


def test_negated_and_lists():
    body = "x\n<!-- @client:!opencode -->\nnot opencode\n<!-- @endclient -->\n<!-- @client:claude,copilot -->\ncc\n<!-- @endclient -->\ny"
    assert run(body, "opencode") == "x\ny"
    assert run(body, "copilot") == "x\nnot opencode\ncc\ny"
    assert run(body, "codex") == "x\nnot opencode\ny"


def test_directives_in_fences_are_literal():
    body = "```markdown\n<!-- @client:claude -->\n```\n"
    assert run(body, "copilot") == body


def test_block_at_start_and_end_leaves_no_blank_edges():
    body = "<!-- @client:claude -->\nc\n<!-- @endclient -->\n\nmiddle\n\n<!-- @client:claude -->\nc\n<!-- @endclient -->"
    assert run(body, "opencode") == "middle"
