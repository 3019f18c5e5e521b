"""What agentrc shows of text it did not write: names and paths on a terminal, hidden
characters in fetched text.

agentrc prints names that came from someone else (a fetched repository's directory and
file names, a lock's entries, a bundle's servers). Printed raw, a name holding ESC can
erase or recolour the line before it (`x\\x1b[2K\\rall good`), a newline or a carriage
return forges a line of output, and a bidirectional override makes a name read backwards.
`printable` is the one function every such name goes through before it is shown: it
escapes those characters and leaves everything else as it is, so an ordinary name is
shown unchanged and a hostile one is shown, visibly, for what it is. It is defined in
`agentrc.diagnostics` (`Diagnostic.format` escapes a diagnostic's path, message and hint
with it, and a shared top-level module imports no stage) and is the same function here.

`hidden_characters` finds the characters that change how text reads without being seen
(bidirectional controls, zero-width characters, tag characters that can spell a whole
hidden instruction): fetched content is checked with it and each one is a warning (AR240),
since an assistant reads what a reviewer of the file does not see.
"""

from __future__ import annotations

import re
import unicodedata

from agentrc import diagnostics
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Tuple

printable = diagnostics.printable


def printable_lines(text: str) -> str:
    """`printable` of each line of `text`, its line breaks kept: for output of several lines
    (a diagnostic and its hint, a document shown to the user)."""
    if text.isprintable():
        return text
    return "\n".join(printable(line) for line in text.split("\n"))


# What `json.dumps(..., ensure_ascii=False)` leaves raw that `printable` escapes: DEL, C1 and
# the format characters (it escapes C0 itself, and a raw newline or tab in its output is
# layout, not data).
_JSON_RAW = pattern("[\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                    "\ufff9-\ufffb\U000e0000-\U000e007f]")


def _json_escape(m: re.Match) -> str:
    n = ord(m.group())
    if n <= 0xffff:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xd800 + (n >> 10):04x}\\u{0xdc00 + (n & 0x3ff):04x}"


def json_printable(document: str) -> str:
    """JSON text written with `ensure_ascii=False` (to keep other languages readable), with
    the characters `printable` escapes written as JSON escapes (`\\u202e`): the same data
    for a JSON reader, nothing that acts on a terminal for a person reading it."""
    if document.isprintable() or _JSON_RAW.search(document) is None:
        return document
    return _JSON_RAW.sub(_json_escape, document)


# --- hidden characters ---------------------------------------------------------------------

# Bidirectional controls (Trojan Source, CVE-2021-42574): they reorder what is displayed.
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_TAGS = (0xE0000, 0xE007F)  # tag characters: ASCII spelled invisibly ("ASCII smuggling")
_JOINERS = "\u200c\u200d"
_HIDDEN = pattern("[\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
                  "\U000e0000-\U000e007f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_BLACK_FLAG = "\U0001f3f4"  # the base of the emoji flags of subdivisions, spelled in tag characters


def hidden_characters(text: str) -> List[Tuple[int, int, str]]:
    """Each invisible or bidirectional control character of `text` as (line, column, char),
    1-based, the column counted in characters. Left out, because text that uses them
    legitimately is common and they hide nothing: a byte order mark at the very start; a
    zero-width joiner or non-joiner between two non-ASCII letters, marks or symbols (emoji
    sequences, Persian and Indic words; between ASCII letters one splits a word to slip it
    past a reader); a subdivision flag's tag sequence (U+1F3F4, up to 7 tag characters,
    U+E007F); a variation selector right after its base character (one after another
    variation selector carries data, as a run of them can). The soft hyphen (U+00AD) is not
    reported: it is ordinary in prose, shows as a hyphen where a line breaks and hides nothing.
    Cheap on text that holds none: none in ASCII text (each is outside it), else one
    regular-expression search."""
    found: List[Tuple[int, int, str]] = []
    if text.isascii():
        return found
    m = _HIDDEN.search(text)
    if m is None:
        return found
    flag_until = -1  # the end of the subdivision flag's tag sequence being skipped
    line, line_start, counted = 1, 0, 0  # lines counted up to `counted`, incrementally: no rescan per hit
    for m in _HIDDEN.finditer(text, m.start()):
        i, c = m.start(), m.group()
        if i < flag_until or (c == "\ufeff" and i == 0):
            continue
        n = ord(c)
        if _TAGS[0] <= n <= _TAGS[1] and i > 0 and text[i - 1] == _BLACK_FLAG:
            end = _flag_end(text, i)
            if end:
                flag_until = end
                continue
        if c in _JOINERS and _joins(text, i):
            continue
        if _is_selector(n) and i > 0 and not _is_selector(ord(text[i - 1])):
            continue
        nl = text.rfind("\n", counted, i)
        if nl >= 0:
            line += text.count("\n", counted, i)
            line_start = nl + 1
        counted = i
        found.append((line, i - line_start + 1, c))
    return found


def describe(c: str) -> str:
    """One hidden character for a message: `U+202E RIGHT-TO-LEFT OVERRIDE, a bidirectional
    control` (tag characters say which ASCII character they spell)."""
    n = ord(c)
    name = unicodedata.name(c, "")
    if _TAGS[0] <= n <= _TAGS[1]:
        spelled = chr(n - _TAGS[0])
        what = f"a tag character, spelling {spelled!r} invisibly" if spelled.isprintable() else "a tag character"
    elif c in BIDI:
        what = "a bidirectional control"
    elif _is_selector(n):
        what = "a variation selector after another one"
    else:
        what = "an invisible character"
    return f"U+{n:04X} {name}, {what}" if name else f"U+{n:04X}, {what}"


def _flag_end(text: str, i: int) -> int:
    """The end of a subdivision flag's tag sequence starting at `i` (0: it is not one)."""
    for j in range(i, min(i + 8, len(text))):
        n = ord(text[j])
        if n == 0xE007F:
            return j + 1 if j > i else 0
        if not (0xE0030 <= n <= 0xE0039 or 0xE0061 <= n <= 0xE007A):
            return 0
    return 0


def _joins(text: str, i: int) -> bool:
    """A joiner between two non-ASCII letters, marks or symbols (an emoji's variation
    selector counts as part of the symbol before it)."""
    if i == 0 or i + 1 >= len(text):
        return False
    before = text[i - 1]
    if before == "\ufe0f" and i >= 2:
        before = text[i - 2]
    return _joinable(before) and _joinable(text[i + 1])


def _joinable(c: str) -> bool:
    return ord(c) > 0x7f and unicodedata.category(c)[0] in "LMS"


def _is_selector(n: int) -> bool:
    return 0xFE00 <= n <= 0xFE0F or 0xE0100 <= n <= 0xE01EF
