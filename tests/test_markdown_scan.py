"""The markdown scan and formatter: same answers as a line-by-line reading, less work per line.

`Scanned`, `matching_lines`, `literal_lines` and `hint_lines` replace a per-line cascade of
regexes (700k `match` calls for 1,000 items) with a few searches of the whole body. The
reference functions below are the straightforward per-line definitions they must agree
with, checked on random bodies built from the pieces markdown's edge cases are made of;
the counting tests pin down that the work follows the special lines, not all lines.
"""

from __future__ import annotations

import random
import re
from typing import List, Optional, Tuple

import pytest

from agentrc.diagnostics import Diagnostics
from agentrc.portable import body as body_rules
from agentrc.portable import directives
from agentrc.text import markdown
from agentrc.text.markdown import (
    ATX_RE,
    FENCE_RE,
    LIST_RE,
    SETEXT_H1_RE,
    Scanned,
    format_body,
    literal_lines,
    matching_lines,
    scan,
)

PIECES = [
    "", " ", "   ", "    ", "\t", "#", "##", "###", "####### x", "# Title", "## Sub #", "#x", " ## a",
    "```", "````", "```py", "``` `x`", "~~~", "~~~~ sh", "   ```", "    ```", "```  ", "~~~ ", "```\r",
    "===", " = ", "=", "---", "- item", "* item", "+ item", "1. one", "12) two", "\u0661. x", "-item",
    "text", "some prose here", "  indented", "trailing  ", "a `code` b", "\r", "x\r",
    "<!-- @client:claude -->", "<!-- @client:!opencode -->", "<!-- @endclient -->", " <!-- @client:bogus -->",
    "x <!-- @endclient -->", "<!--", "@foo.md", "see @docs/a.md", "`@x.md`", "$1", "$ARGUMENTS", "!`ls`",
    "$5.00", "ultrathink", "Ultrathink", "ULTRATH\u0130NK", "ultrathin\u212a", "mcp__a__b", "MCP__a__b",
    "#tool:x", "#FILE:x.md", "${file}", "\u00e9 @b.md", "[a](b.md)", "[r]: ./x.md", "](", "x]: y",
]


def _body(rng: random.Random) -> str:
    return "\n".join(rng.choice(PIECES) + (rng.choice(PIECES) if rng.random() < 0.3 else "")
                     for _ in range(rng.randrange(0, 30)))


BODIES = [_body(random.Random(seed)) for seed in range(3000)]


# --- the per-line definitions ------------------------------------------------------------

def reference_scan(text: str) -> List[Tuple[str, bool, bool, bool, str]]:
    """(text, in_fence, fence_open, fence_close, info) per line, one FENCE_RE match a line."""
    out = []
    fence: Optional[Tuple[str, int]] = None
    for raw in text.split("\n"):
        m = FENCE_RE.match(raw)
        row = [raw, False, False, False, ""]
        if fence is None:
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                fence = (m.group(2)[0], len(m.group(2)))
                row[2], row[4] = True, m.group(3).strip()
        elif m and m.group(2)[0] == fence[0] and len(m.group(2)) >= fence[1] and not m.group(3).strip():
            fence, row[3] = None, True
        else:
            row[1] = True
        out.append(tuple(row))
    return out


def reference_heading(rows, i: int) -> int:
    text, in_fence, fopen, fclose, _ = rows[i]
    if in_fence or fopen or fclose:
        return 0
    m = ATX_RE.match(text)
    if m:
        return len(m.group(1))
    if text.strip() and i + 1 < len(rows) and not rows[i + 1][1]:
        if SETEXT_H1_RE.match(rows[i + 1][0]) and not LIST_RE.match(text):
            return 1
    return 0


def reference_format(text: str) -> str:
    """format_body as a per-line cascade of patterns (the implementation before it was made
    single-pass with a first-character filter)."""
    rows = reference_scan(text.replace("\r\n", "\n"))
    out: List[str] = []

    def in_list() -> bool:
        for prev in reversed(out):
            if prev == "":
                return False
            if LIST_RE.match(prev) or prev.startswith((" ", "\t")):
                return True
        return False

    pending = False
    for raw, in_fence, fopen, fclose, _ in rows:
        if in_fence:
            out.append(raw)
            continue
        raw = raw.rstrip()
        if pending and raw and out and out[-1] != "":
            out.append("")
        pending = False
        if not raw:
            if out and out[-1] != "":
                out.append("")
        elif fopen:
            if out and out[-1] != "":
                out.append("")
            out.append(raw)
        elif fclose:
            out.append(raw)
            pending = True
        elif ATX_RE.match(raw):
            if out and out[-1] != "":
                out.append("")
            out.append(raw)
            pending = True
        else:
            if LIST_RE.match(raw) and out and out[-1] != "" and not in_list():
                out.append("")
            out.append(raw)
    while out and out[-1] == "":
        out.pop()
    while out and out[0] == "":
        out.pop(0)
    return "\n".join(out) + "\n" if out else ""


# --- equivalence ---------------------------------------------------------------------------

@pytest.mark.parametrize("chunk", range(3))
def test_scan_headings_and_format_agree_with_the_line_by_line_reading(chunk):
    for text in BODIES[chunk::3]:
        rows = reference_scan(text)
        lines = scan.__wrapped__(text)
        assert [(ln.text, ln.in_fence, ln.fence_open, ln.fence_close, ln.fence_info) for ln in lines] == rows, text
        assert [ln.index for ln in lines] == list(range(len(rows)))
        s = Scanned(text)
        levels = [reference_heading(rows, i) for i in range(len(rows))]
        assert [s.heading_level(i) for i in range(len(rows))] == levels, text
        assert [markdown.heading_level(lines, i) for i in range(len(rows))] == levels, text
        assert {i for i, level in enumerate(levels) if level} <= set(s.heading_candidates()), text
        assert format_body.__wrapped__(text) == reference_format(text), text
        assert s.prose_lines(range(len(rows))) == [i for i, r in enumerate(rows) if not any(r[1:4])]


def test_line_finders_agree_with_a_search_per_line():
    hint = body_rules.CONSTRUCT_HINT_RE
    for text in BODIES[:1500]:
        lines = text.split("\n")
        assert body_rules.hint_lines(text) == [i for i, ln in enumerate(lines) if hint.search(ln)], text
        assert matching_lines(hint, text) == [i for i, ln in enumerate(lines) if hint.search(ln)], text
        for lits in (("<!--",), ("](", "]:"), ("@", "$", "!`")):
            assert literal_lines(text, lits) == [i for i, ln in enumerate(lines) if any(x in ln for x in lits)]
        for rx, line_rx in ((markdown._ATX_LINE_RE, re.compile(r" {0,3}#")), (markdown._SETEXT_LINE_RE, SETEXT_H1_RE)):
            assert matching_lines(rx, text, at_start=True) == [i for i, ln in enumerate(lines) if line_rx.match(ln)]


def test_the_kelvin_sign_and_dotted_capital_i_still_hint_a_construct():
    """Non-ASCII bodies keep the case-insensitive pattern: under IGNORECASE 'ultrathin\u212a'
    (a Kelvin sign) is 'ultrathink', which lower-casing ASCII alone would miss."""
    assert body_rules.hint_lines("a\nultrathin\u212a\nb") == [1]
    assert body_rules.hint_lines("ULTRATH\u0130NK") == [0]


# --- work counts ---------------------------------------------------------------------------

class _Counting:
    """A compiled pattern whose match/search/finditer calls are counted."""

    def __init__(self, rx, counts, name):
        self._rx, self._counts, self._name = rx, counts, name

    def __getattr__(self, attr):
        real = getattr(self._rx, attr)
        if not callable(real):
            return real

        def counted(*a, **kw):
            self._counts[self._name] = self._counts.get(self._name, 0) + 1
            return real(*a, **kw)
        return counted


PROSE_BODY = "\n".join(
    [line for s in range(50) for line in
     [f"## Section {s}", ""] + [f"Some prose line {i} about it, with `code` and a [link](ref.md)." for i in range(16)]]
    + ["", "```python", "x = 1", "```", "", "- a list", "- of items", "", "Closing words."])


def _count_patterns(monkeypatch):
    counts = {}
    for mod, names in ((markdown, ("FENCE_RE", "ATX_RE", "SETEXT_H1_RE", "LIST_RE")),
                       (body_rules, ("CONSTRUCT_HINT_RE",)),
                       (directives, ("OPEN_RE", "END_RE", "LOOSE_RE"))):
        for name in names:
            monkeypatch.setattr(mod, name, _Counting(getattr(mod, name), counts, name))
    return counts


def test_checking_and_formatting_a_body_match_patterns_per_special_line_not_per_line(monkeypatch):
    """Before: FENCE_RE on every line, ATX_RE (and the setext pair) on every line for headings
    and again in the formatter, CONSTRUCT_HINT_RE on every prose line, OPEN_RE, END_RE and
    LOOSE_RE on every prose line: ~9 pattern calls per line. Now the patterns run on the
    lines that can be what they look for (headings, fences, list starts)."""
    counts = _count_patterns(monkeypatch)
    lines = PROSE_BODY.count("\n") + 1
    assert lines > 900
    families = frozenset({"claude", "copilot"})
    diags = Diagnostics()
    blocks = directives.parse(PROSE_BODY, families, diags, "p", 1)
    body_rules.check(PROSE_BODY, "p", 1, diags, blocks, families)
    format_body.__wrapped__("# T\n\n" + PROSE_BODY)
    assert not diags.items
    headings, fences, items = 50, 2, 2
    assert counts.get("FENCE_RE", 0) == 2 * fences  # one body checked, one formatted
    assert counts.get("ATX_RE", 0) <= 2 * headings + 1 + items  # the check, the formatter (H1, list starts)
    assert counts.get("LIST_RE", 0) <= 2 * items
    assert counts.get("SETEXT_H1_RE", 0) <= headings
    for name in ("CONSTRUCT_HINT_RE", "OPEN_RE", "END_RE", "LOOSE_RE"):
        assert counts.get(name, 0) == 0, name


def test_the_build_path_makes_no_line_objects(monkeypatch):
    """Checking, directive parsing, link finding and formatting share `Scanned` (a list of
    strings and, only when there are fences, one int per line): no `Line` per line, and no
    entry in `scan`'s memo (which in pantsd lived as long as the daemon)."""
    made = []
    real_init = markdown.Line.__init__
    monkeypatch.setattr(markdown.Line, "__init__", lambda self, *a, **kw: made.append(1) or real_init(self, *a, **kw))
    families = frozenset({"claude", "copilot"})
    text = PROSE_BODY + "\n<!-- @client:claude -->\nonly claude\n<!-- @endclient -->"
    blocks = directives.parse(text, families, Diagnostics(), "p", 1)
    body_rules.check(text, "p", 1, Diagnostics(), blocks, families)
    body_rules.links(text)
    directives.process(text, "claude", blocks)
    format_body.__wrapped__(text)
    assert made == []


def test_a_body_without_directives_is_not_scanned_for_them(monkeypatch):
    scans = []
    real = markdown.Scanned.__init__
    monkeypatch.setattr(markdown.Scanned, "__init__", lambda self, text: scans.append(1) or real(self, text))
    assert directives.parse(PROSE_BODY, frozenset({"claude"}), Diagnostics()) == ()
    assert body_rules.links("no links here\n" * 100) == []
    assert scans == []
