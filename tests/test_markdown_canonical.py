"""`format_body`'s shortcut for bodies already in canonical form.

A build formats every generated document (about 6,000 distinct ones at 5,000 items) and
nearly all of them are canonical already, but for a missing final newline. `_canonical`
says so from one search of the whole text, and the line-by-line formatter runs only when it
cannot. It may say False of a canonical text (the formatter then changes nothing), never
True of one the formatter would change: these tests hold it to the per-line reference
formatter on canonical texts and on texts one or a few edits away from canonical, where the
shortcut's mistakes would be.
"""

from __future__ import annotations

import random

import pytest

from agentrc.text import markdown
from agentrc.text.markdown import format_body
from test_markdown_scan import PIECES, reference_format

# Lines a formatted body is made of, and the edits that take it out of canonical form.
LINES = PIECES + [
    "", "", "", "# H", "## H", "### Deep", "- a", "* b", "+ c", "1. one", "2) two", "  - nested", "   3. x",
    "text", "more text", "  continued", "\tcontinued", "```", "```python", "~~~", "~~~~", "  ```", "````",
    "    # indented comment", "# comment in code", "x = 1", "\u00a0", "x\u00a0", "x\x0b", "x\x1f", "\u3000",
    "#", "-", "10.", "1234567890. no", "#tag", "``` `x` ```", "caf\u00e9 \u2014 na\u00efve", "\U0001f600 emoji",
]
TAILS = ["", " ", "\t", "  ", "\u00a0", "\x0c", "x", "\n", "\n\n"]


def _canonical_text(rng: random.Random) -> str:
    body = "\n".join(rng.choice(LINES) + (rng.choice(LINES) if rng.random() < 0.15 else "")
                     for _ in range(rng.randrange(1, 30)))
    return reference_format(body)


def _edited(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randrange(1, 4)):
        k = rng.randrange(len(lines))
        op = rng.randrange(6)
        if op == 0:
            del lines[k]
        elif op == 1:
            lines.insert(k, rng.choice(LINES))
        elif op == 2:
            lines[k] += rng.choice(TAILS)
        elif op == 3 and k:
            lines[k], lines[k - 1] = lines[k - 1], lines[k]
        elif op == 4:
            lines.insert(k, "")
        else:
            lines[k] = rng.choice(LINES)
        if not lines:
            lines = [""]
    return "\n".join(lines)


@pytest.mark.parametrize("chunk", range(4))
def test_the_shortcut_agrees_with_the_formatter(chunk):
    taken = 0
    for seed in range(chunk, 8000, 4):
        rng = random.Random(seed)
        canonical = _canonical_text(rng)
        variants = [canonical, canonical.rstrip("\n"), canonical + "\n\n", "\n" + canonical]
        variants += [_edited(rng, canonical) for _ in range(4)]
        for text in variants:
            assert format_body.__wrapped__(text) == reference_format(text), repr(text)
            body = text.rstrip("\n") + "\n"
            if body.strip("\n") and "\r" not in body and markdown._canonical(body):
                taken += 1
                assert reference_format(body) == body, repr(body)
    assert taken > 2000  # the shortcut is taken for most canonical texts


def test_the_shortcut_is_taken_for_a_canonical_body_short_of_its_final_newline(monkeypatch):
    body = ("# Title\n\n## Section\n\nSome prose.\n\n- a\n- b\n  continued\n- c\n\n1. one\n2. two\n\n"
            "```python\n# a comment\nx = 1\n\ny = 2\n```\n\n~~~\n## not a heading\n~~~\n\nThe end.")
    formatted = []
    monkeypatch.setattr(markdown, "_format", lambda s: formatted.append(1) or "")
    assert format_body.__wrapped__(body) == body + "\n"
    assert format_body.__wrapped__(body + "\n\n\n") == body + "\n"
    assert formatted == []


@pytest.mark.parametrize("text", [
    "# T\nx\n", "# T\n\nx\n# H\n", "x\n- a\n", "x\n```\ny\n```\n", "```\ny\n```\nx\n", "x \n", "x\u00a0\n",
    "\nx\n", "x\n\n\ny\n", "```py\t\n```\n", "``` `x`\n- a\n", "#tag\n- a\n", "a\r\nb\n", "x\n  # H\n",
])
def test_texts_the_formatter_changes_are_not_taken_for_canonical(text):
    assert not markdown._canonical(text) or reference_format(text) == text
    assert format_body.__wrapped__(text) == reference_format(text)


def test_the_last_text_scanned_is_not_scanned_again(monkeypatch):
    """Checking a body and then finding its links scan one string one after the other: the
    second `Scanned` is the first. An equal string that is another object is scanned anew,
    with the same result."""
    scans = []
    real = markdown.Scanned._scan
    monkeypatch.setattr(markdown.Scanned, "_scan", lambda self, text: scans.append(text) or real(self, text))
    text = "".join(["# T\n\n```py\nx\n```\n\n", "- a\n"])
    first = markdown.Scanned(text)
    assert markdown.Scanned(text) is first and len(scans) == 1
    other = markdown.Scanned("".join(["# T\n\n```py\nx\n```\n\n", "- a\n"]))
    assert other is not first and len(scans) == 2
    assert (other.lines, other.kinds, other.info, other.blocks) == (first.lines, first.kinds, first.info, first.blocks)
    assert markdown.Scanned(text) is not first  # only the last text is kept


def test_heading_candidates_and_literal_lines_are_the_general_searches():
    """`heading_candidates` counts its two patterns' matches as `finditer` gives them, and
    `literal_lines` each literal's lines as it finds them: the same lines as the search per
    line (`matching_lines`) and the per-line definition."""
    for seed in range(3000):
        rng = random.Random(seed)
        text = "\n".join(rng.choice(LINES) + (rng.choice(LINES) if rng.random() < 0.3 else "")
                         for _ in range(rng.randrange(0, 30)))
        found = set(markdown.matching_lines(markdown._ATX_LINE_RE, text, at_start=True))
        found.update(i - 1 for i in markdown.matching_lines(markdown._SETEXT_LINE_RE, text, at_start=True) if i)
        assert markdown.Scanned(text).heading_candidates() == sorted(found), repr(text)
        lines = text.split("\n")
        for lits in (("```", "~~~"), ("#",), ("-", "1", "x"), ("](", "]:", "`")):
            assert markdown.literal_lines(text, lits) == [i for i, ln in enumerate(lines) if any(x in ln for x in lits)]
