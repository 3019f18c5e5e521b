"""1-based positions in text, and the error of a text format at one.

The in-place editors (`jsonedit`, `tomledit`) report malformed input where it is, the way
every diagnostic does (`path:line:col`); both raise a `TextError` subclass.
"""

from __future__ import annotations

from typing import Tuple


def line_col(text: str, pos: int) -> Tuple[int, int]:
    """The 1-based line and column of the character at offset `pos`."""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


class TextError(ValueError):
    """Malformed input, or an edit that cannot apply, at a 1-based line and column."""

    def __init__(self, line: int, col: int, message: str):
        super().__init__(f"{line}:{col}: {message}")
        self.line = line
        self.col = col
        self.message = message

