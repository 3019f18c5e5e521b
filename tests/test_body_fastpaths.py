"""The body rules' whole-text answers agree with their line-by-line ones: a body the
heading check passes at once (`_headings_fine`) is one the careful check
(`_check_headings`) finds nothing in, and heading levels read from one search are the
levels `Scanned.heading_level` gives line by line."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrc.diagnostics import Diagnostics
from agentrc.portable import body as body_rules
from agentrc.text.markdown import Scanned

LINE = st.one_of(st.text(alphabet=" #=`~-*abc\t", max_size=8), st.sampled_from([
    "# H1", "## H2", "### H3", "#### H4", "##### H5", "###### H6", "####### seven", "#no-space", "  ## indented",
    "    ## code", "##", "## trailing ##", "```", "```py", "````", "~~~", "~~~ sh", "``` `x`", "text", "", "===",
    "= =", "  ==  ", "- item", "1. item", "---", "## a\tb", "\t## tab"]))


def _careful(scanned: Scanned) -> list:
    diags = Diagnostics()
    body_rules._check_headings(scanned, "p", 1, diags)
    return [d.format() for d in diags.items]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, max_size=16), st.booleans())
def test_a_body_passed_at_once_has_nothing_line_by_line(lines, final_newline):
    text = "\n".join(lines) + ("\n" if final_newline else "")
    scanned = Scanned(text)
    found = _careful(scanned)
    fine = body_rules._headings_fine(scanned)
    if fine:
        assert found == []
    elif not found and all(scanned.info.values()) and not body_rules._SETEXT_LINE_RE.search("\n" + text):
        raise AssertionError(f"a body with nothing to report took the careful path: {text!r}")
    # The levels of one search are the levels line by line.
    levels = body_rules.heading_levels(scanned)
    for i in range(len(scanned.lines)):
        assert levels.get(i, 0) == scanned.heading_level(i), (text, i)
    # The prose text holds the prose lines, in order.
    prose = [ln for i, ln in enumerate(scanned.lines) if scanned.is_prose(i)]
    cut = body_rules._prose_text(scanned).split("\n")
    assert cut[:len(prose)] == prose and all(not ln for ln in cut[len(prose):])


FENCED = st.one_of(LINE, st.sampled_from([
    "```sh", "````md", "~~~~", "~~~~ text", "   ```", "    ```", "```\r", "``` \t", "~~~`x`", "```x`y", "\r", "a\rb",
    "\x85", "\u2028", "``", "~~", "```\u2028"]))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(FENCED, max_size=18), st.booleans())
def test_the_heading_check_without_lines_answers_as_the_scanned_one(lines, final_newline):
    """`headings_fine` (what normalizing consumed content asks of every body) matches the
    fences up and cuts the prose out by position, without `Scanned`: the same answer."""
    text = "\n".join(lines) + ("\n" if final_newline else "")
    assert body_rules.headings_fine(text) == body_rules._headings_fine(Scanned(text)), text


def test_common_bodies_pass_at_once():
    body = "## Use\n\nText.\n\n### Details\n\n```python\n# a comment, not a heading\nx = 1\n```\n\n## Next\n"
    assert body_rules._headings_fine(Scanned(body)) and body_rules.headings_fine(body)
    for broken in (body.replace("### Details", "#### Details"), body.replace("```python", "```"), "# H1\n" + body):
        assert not body_rules._headings_fine(Scanned(broken)) and not body_rules.headings_fine(broken)


PIECE = st.sampled_from(["---", "...", "--- ", "---\t", "-- -", "....", "\n", "\n", "\n", " ", "\t", "\x0b", "\x1c",
                         "\u2028", "\xa0", "\r", "\x85", "a", "## b", "x: 1", ""])


@settings(max_examples=1500, deadline=None)
@given(st.lists(PIECE, max_size=14), st.booleans())
def test_entrypoints_split_as_split_does(pieces, opened):
    from agentrc.portable.items import split_entrypoint
    from agentrc.text.frontmatter import split

    text = ("---\n" if opened else "") + "".join(pieces)
    assert split_entrypoint(text) == split(text)


def test_common_entrypoints_split_as_split_does():
    from agentrc.portable.items import split_entrypoint
    from agentrc.text.frontmatter import split

    for text in ("---\nname: x\n---\n\n## Body\n", "---\n---\n", "---\na: 1\n---", "---\na: 1\n--- \n \n\t\n",
                 "---\na: 1\n...\nbody\n\n", "---\na\n---\n\n\n", "---\n\n---\n  \nx", "---\nno close\n"):
        assert split_entrypoint(text) == split(text), text
