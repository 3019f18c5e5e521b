"""Generated docs (error codes, client mapping tables) match the code that generates them."""

from __future__ import annotations

from helpers import ROOT

from agentrc.docgen import pages as docgen


def test_generated_docs_are_current():
    pages = docgen.render_all()
    assert "docs/error-codes.md" in pages and any(p.startswith("docs/clients/") for p in pages)
    stale = [p for p, text in pages.items() if not (ROOT / p).exists() or (ROOT / p).read_text() != text]
    assert not stale, f"regenerate with 'python -m agentrc.docgen': {stale}"
