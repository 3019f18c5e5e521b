"""Line-level markdown helpers shared by validation, directives, rendering and fmt.

agentrc does not need a full CommonMark parser: it needs to know, for every line, whether it
sits inside a fenced code block, and to find headings, fences and links outside them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator, List, Optional, Sequence, Tuple

FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)(.*?)(?:[ \t]+#+[ \t]*)?$")
SETEXT_H1_RE = re.compile(r"^ {0,3}=+[ \t]*$")
LIST_RE = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)")
INLINE_CODE_RE = re.compile(r"(`+)(?:(?!\1).)+?\1")


class Line:
    """One body line with its fence context."""

    __slots__ = ("index", "text", "in_fence", "fence_open", "fence_close", "fence_info")

    def __init__(self, index: int, text: str):
        self.index = index  # 0-based within the body
        self.text = text
        self.in_fence = False  # inside a fenced block (delimiters excluded)
        self.fence_open = False
        self.fence_close = False
        self.fence_info = ""


@lru_cache(maxsize=1 << 16)
def scan(text: str) -> Tuple[Line, ...]:
    """Classify every line of `text` as fence delimiter, fenced content or prose.

    Memoised: validation, directive parsing, link extraction and formatting each need the
    same classification of the same bodies, and the result is never mutated.
    """
    out: List[Line] = []
    fence: Optional[Tuple[str, int]] = None
    for i, raw in enumerate(text.split("\n")):
        line = Line(i, raw)
        m = FENCE_RE.match(raw)
        if fence is None:
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                fence = (m.group(2)[0], len(m.group(2)))
                line.fence_open = True
                line.fence_info = m.group(3).strip()
        else:
            if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= fence[1] and not m.group(3).strip():
                fence = None
                line.fence_close = True
            else:
                line.in_fence = True
        out.append(line)
    return tuple(out)


def prose(lines: Sequence[Line]) -> Iterator[Line]:
    """Lines outside fenced code, delimiters excluded."""
    return (ln for ln in lines if not (ln.in_fence or ln.fence_open or ln.fence_close))


def strip_inline_code(text: str) -> str:
    """Blank out inline code spans so constructs inside them are not matched."""
    return INLINE_CODE_RE.sub(lambda m: " " * len(m.group(0)), text)


def heading_level(lines: Sequence[Line], i: int) -> int:
    """The heading level of line i (ATX, or setext with the underline on i+1); 0 if none."""
    ln = lines[i]
    if ln.in_fence or ln.fence_open or ln.fence_close:
        return 0
    m = ATX_RE.match(ln.text)
    if m:
        return len(m.group(1))
    if ln.text.strip() and i + 1 < len(lines) and not lines[i + 1].in_fence:
        nxt = lines[i + 1].text
        if SETEXT_H1_RE.match(nxt) and not LIST_RE.match(ln.text):
            return 1
    return 0


def collapse_blank_lines(lines: List[str]) -> List[str]:
    """Drop blank lines at both ends and fold runs of blank lines outside fences into one."""
    out: List[str] = []
    for ln in scan("\n".join(lines)):
        blank = not ln.text.strip()
        if blank and not ln.in_fence and (not out or not out[-1].strip()):
            continue
        out.append("" if blank and not ln.in_fence else ln.text)
    while out and not out[-1].strip():
        out.pop()
    return out


@lru_cache(maxsize=1 << 16)
def format_body(text: str) -> str:
    """The canonical form of a markdown body, shared by `fmt` and generated output (§7.4).

    A deliberately small formatter that fixes what markdownlint's default rules flag and
    can be fixed without judgement: trailing whitespace (MD009), blank lines around
    headings (MD022), fences (MD031) and list starts (MD032), runs of blank lines (MD012)
    and the final newline (MD047). Fenced code is never touched. Idempotent by design.
    """
    text = text.replace("\r\n", "\n")
    lines = scan(text)
    out: List[str] = []

    def blank_before() -> None:
        if out and out[-1] != "":
            out.append("")

    pending_blank = False
    for i, ln in enumerate(lines):
        raw = ln.text
        if ln.in_fence:
            out.append(raw)
            continue
        raw = raw.rstrip()
        if pending_blank and raw:
            blank_before()
        pending_blank = False
        if not raw:
            if out and out[-1] != "":
                out.append("")
            continue
        if ln.fence_open:
            blank_before()
            out.append(raw)
            continue
        if ln.fence_close:
            out.append(raw)
            pending_blank = True
            continue
        if ATX_RE.match(raw):
            blank_before()
            out.append(raw)
            pending_blank = True
            continue
        if LIST_RE.match(raw) and out and out[-1] != "" and not _in_list(out):
            blank_before()
        out.append(raw)
    while out and out[-1] == "":
        out.pop()
    while out and out[0] == "":
        out.pop(0)
    return "\n".join(out) + "\n" if out else ""


def _in_list(out: List[str]) -> bool:
    """Whether the paragraph ending at out[-1] belongs to a list (item or continuation)."""
    for prev in reversed(out):
        if prev == "":
            return False
        if LIST_RE.match(prev) or prev.startswith((" ", "\t")):
            return True
    return False


_FENCE_RE = re.compile(r"^(`{3,}|~{3,})")
_H1_RE = re.compile(r"^# ")
_HEADING_RE = re.compile(r"^#{1,5} ")


def _outside_fences(text: str):
    """(line, outside a code fence?) for each line."""
    fence = None
    for ln in text.split("\n"):
        m = _FENCE_RE.match(ln)
        if m:
            fence = None if fence and ln.startswith(fence) else (fence or m.group(1))
            yield ln, False
        else:
            yield ln, fence is None


def has_h1(text: str) -> bool:
    return any(outside and _H1_RE.match(ln) for ln, outside in _outside_fences(text))


def demote_headings(text: str) -> str:
    """Every ATX heading one level down (H6 stays), outside code fences."""
    return "\n".join("#" + ln if outside and _HEADING_RE.match(ln) else ln for ln, outside in _outside_fences(text))
