"""1-based positions in text, and the error of a text format at one.

The in-place editors (`jsonedit`, `tomledit`) report malformed input where it is, the way
every diagnostic does (`path:line:col`); both raise a `TextError` subclass.
"""

from __future__ import annotations

import bisect

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Tuple


def line_col(text: str, pos: int) -> Tuple[int, int]:
    """The 1-based line and column of the character at offset `pos`."""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


class Lines:
    """`line_col` for many offsets of one text: the line starts once, then a binary search
    per offset (positions of every key of a large file stay n log n)."""

    def __init__(self, text: str):
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def line_col(self, pos: int) -> Tuple[int, int]:
        line = bisect.bisect_right(self.starts, pos)
        return line, pos - self.starts[line - 1] + 1


class TextError(ValueError):
    """Malformed input, or an edit that cannot apply, at a 1-based line and column."""

    def __init__(self, line: int, col: int, message: str):
        super().__init__(f"{line}:{col}: {message}")
        self.line = line
        self.col = col
        self.message = message

