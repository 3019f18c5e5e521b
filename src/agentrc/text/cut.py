"""A text cut to a length at a word boundary, for a field a reader limits (an Agent Skills
description: 1,024 characters), shared by the client adapters (what each client gets) and the
importers (what an import writes, so it lints clean)."""

from __future__ import annotations

DESCRIPTION_LIMIT = 1024  # the Agent Skills specification's limit on a description


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters at a word boundary, ending in an ellipsis
    (one character) so a reader sees it was cut; a text without a space in reach is cut
    at the limit."""
    if len(text) <= limit:
        return text
    head = text[:limit - 1]
    cut = head.rfind(" ")
    if cut >= limit // 2:
        head = head[:cut]
    return head.rstrip(" ,;:.-") + "\u2026"
