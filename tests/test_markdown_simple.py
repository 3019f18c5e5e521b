"""`_canonical`'s first look: `_SIMPLE_RE`, a whole-text match of canonical markdown in its
common shape. Whatever it matches must be a text the formatter gives back unchanged; it
should match most canonical texts; and, each line's class being told by its first
characters, it must stay linear on texts it fails on late."""

from __future__ import annotations

import random
import time

import pytest

from agentrc.text import markdown
from test_markdown_canonical import _canonical_text, _edited
from test_markdown_scan import reference_format

simple = markdown._SIMPLE_RE.fullmatch


@pytest.mark.parametrize("chunk", range(2))
def test_what_the_simple_form_matches_the_formatter_leaves_alone(chunk):
    matched = 0
    for seed in range(chunk, 6000, 2):
        rng = random.Random(seed)
        canonical = _canonical_text(rng)
        for text in [canonical] + [_edited(rng, canonical) for _ in range(4)]:
            body = text.rstrip("\n") + "\n"
            if body.strip("\n") and simple(body):
                matched += 1
                assert reference_format(body) == body, repr(body)
    assert matched > 600


@pytest.mark.parametrize("text", [
    "# T\n\nSome prose.\n\n## H\n\n- a\n- b\n  continued\nplain\n- c\n\n1. one\n2) two\n\n"
    "```python\n# comment\n\nx = 1\n```\n\n~~~\n## not a heading\n~~~\n\nThe end.\n",
    "x\n", "-\n", "#\n", "1.5 is a number\n", "*emphasis* first\n", "`code` first\n", "- a\n\n- b\n",
    "````\nx\n````\n",
])
def test_common_canonical_texts_are_matched(text):
    assert simple(text)
    assert reference_format(text) == text


@pytest.mark.parametrize("text", [
    "# T\nx\n", "x\n# H\n", "x\n- a\n", "x\n```\ny\n```\n", "```\ny\n```\nx\n", "x \n", "x\u00a0\n",
    "\nx\n", "x\n\n\ny\n", "```py\t\n```\n", "``` `x`\n- a\n", "- a \n", "## H #\t\n",
    "```\nx\n", "```\n  ```\n", "````\n```\n````\n", "~~~\n```\n~~~\n", "x\n  # H\n", "x\n\u3000\n",
    "  indented first\n", "#tag\n", "####### seven\n",
])
def test_texts_outside_the_simple_form_are_left_to_the_search(text):
    assert not simple(text)
    assert markdown._canonical(text) is False or reference_format(text) == text


@pytest.mark.parametrize("text", [
    "\n".join(["word " * 10 + "x"] * 20000) + " \n",
    "\n\n".join(["## h", "text", "- a\n- b\n  c", "```py\nx\n```"] * 5000) + "\nfoo \n",
    "```\n" + "x\n" * 50000,
    "x" * 1000000 + " \n",
    "- a\n  b\nc\n" * 20000 + "\n\n",
])
def test_a_late_failure_costs_one_pass(text):
    start = time.perf_counter()
    assert not simple(text)
    assert time.perf_counter() - start < 2.0


def test_every_document_of_a_benchmark_build_is_of_the_simple_form(tmp_path, monkeypatch, capsys):
    """The benchmark's registry (bench/gen_registry.py) is what the build is timed on: each
    document it formats should be told canonical by the whole-text match, not the search."""
    from agentrc.cli.main import main
    from test_edit_cost import _generator

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    reg, out = tmp_path / "reg", tmp_path / "out"
    _generator().generate(str(reg), 120, seed=7)
    seen = []
    real = markdown._canonical
    monkeypatch.setattr(markdown, "_canonical", lambda text: seen.append(text) or real(text))
    assert main(["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out), "--jobs", "1"]) == 0
    capsys.readouterr()
    assert len(seen) > 100
    assert [t[:200] for t in seen if not simple(t)] == []
