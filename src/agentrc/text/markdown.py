"""Line-level markdown helpers shared by validation, directives, rendering and fmt.

agentrc does not need a full CommonMark parser: it needs to know, for every line, whether it
sits inside a fenced code block, and to find headings, fences and links outside them.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

FENCE_RE = pattern(r"^( {0,3})(`{3,}|~{3,})(.*)$")
ATX_RE = pattern(r"^ {0,3}(#{1,6})(?:[ \t]+|$)(.*?)(?:[ \t]+#+[ \t]*)?$")
SETEXT_H1_RE = pattern(r"^ {0,3}=+[ \t]*$")
LIST_RE = pattern(r"^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)")
INLINE_CODE_RE = pattern(r"(`+)(?:(?!\1).)+?\1")


class Line:
    """One body line with its fence context."""

    __slots__ = ("index", "text", "in_fence", "fence_open", "fence_close", "fence_info")

    def __init__(self, index: int, text: str, in_fence: bool = False, fence_open: bool = False,
                 fence_close: bool = False, fence_info: str = ""):
        self.index = index  # 0-based within the body
        self.text = text
        self.in_fence = in_fence  # inside a fenced block (delimiters excluded)
        self.fence_open = fence_open
        self.fence_close = fence_close
        self.fence_info = fence_info


def opens_fence(ticks: str, rest: str) -> bool:
    """Whether a delimiter line (`FENCE_RE`: its run of backticks or tildes, then the rest
    of the line) opens a fenced block when none is open: a backtick run may not have a
    backtick after it on its line (that is inline code)."""
    return not (ticks[0] == "`" and "`" in rest)


def closes_fence(fence: Tuple[str, int], ticks: str, rest: str) -> bool:
    """Whether a delimiter line closes the open fence `fence` (its character and length):
    the same character, at least as many, and nothing but blanks after them."""
    return ticks[0] == fence[0] and len(ticks) >= fence[1] and not rest.strip()


# What `Scanned.kinds` holds for each line.
PROSE, IN_FENCE, FENCE_OPEN, FENCE_CLOSE = 0, 1, 2, 3

# The lines ATX_RE and SETEXT_H1_RE can match, found in the whole text at once (see
# `matching_lines`): only those lines are looked at, so the per-line work of a check is
# proportional to the headings, not to the lines.
_ATX_LINE_RE = pattern(r"\n {0,3}#")
_SETEXT_LINE_RE = pattern(r"\n {0,3}=+[ \t]*$", re.MULTILINE)


class Scanned:
    """A body split into lines with the fence context of each, without an object per line.

    `kinds` is None when the body has no fence delimiter (every line is prose, the common
    case), else one of PROSE, IN_FENCE, FENCE_OPEN, FENCE_CLOSE per line; `info` maps the
    index of each opening delimiter to its info string. Same classification as `scan`.
    """

    __slots__ = ("text", "lines", "kinds", "info", "blocks")

    # The last text scanned, and what was found: checking an item's body, then finding its
    # links, scan the same string one after the other (2,200 scans of 5,000 at 5,000 items).
    # A Scanned is never changed once made, and it holds its text, so `is` is a safe test.
    _last: Optional["Scanned"] = None

    def __new__(cls, text: str) -> "Scanned":
        last = cls._last
        if last is not None and last.text is text:
            return last
        self = super().__new__(cls)
        self._scan(text)
        cls._last = self
        return self

    def __init__(self, text: str):
        pass  # made by __new__ (a repeat of the last text is not scanned again)

    def _scan(self, text: str) -> None:
        self.text = text
        self.lines = lines = text.split("\n")
        self.kinds: Optional[List[int]] = None
        self.info: Dict[int, str] = {}
        # (opening line, closing line or None when the fence runs to the end), in order.
        self.blocks: List[Tuple[int, Optional[int]]] = []
        fence: Optional[Tuple[str, int]] = None
        opened = 0
        # A line FENCE_RE matches holds three backticks or tildes: only those lines are tried.
        for i in literal_lines(text, ("```", "~~~")):
            m = FENCE_RE.match(lines[i])
            if m is None:
                continue
            if self.kinds is None:
                self.kinds = [PROSE] * len(lines)
            kinds = self.kinds
            ticks, rest = m.group(2), m.group(3)
            if fence is None:
                if opens_fence(ticks, rest):
                    fence = (ticks[0], len(ticks))
                    kinds[i] = FENCE_OPEN
                    self.info[i] = rest.strip()
                    opened = i
            elif closes_fence(fence, ticks, rest):
                fence = None
                kinds[opened + 1:i] = [IN_FENCE] * (i - opened - 1)
                kinds[i] = FENCE_CLOSE
                self.blocks.append((opened, i))
        if fence is not None and self.kinds is not None:
            self.kinds[opened + 1:] = [IN_FENCE] * (len(lines) - opened - 1)
            self.blocks.append((opened, None))

    def is_prose(self, i: int) -> bool:
        return self.kinds is None or self.kinds[i] == PROSE

    def prose_lines(self, indices: Iterable[int]) -> List[int]:
        """The prose lines among `indices` (from `matching_lines` or `literal_lines`)."""
        kinds = self.kinds
        return list(indices) if kinds is None else [i for i in indices if kinds[i] == PROSE]

    def heading_level(self, i: int) -> int:
        """`heading_level(scan(text), i)` without the `Line`s."""
        kinds, lines = self.kinds, self.lines
        if kinds is not None and kinds[i] != PROSE:
            return 0
        text = lines[i]
        m = ATX_RE.match(text)
        if m:
            return len(m.group(1))
        if (text.strip() and i + 1 < len(lines) and (kinds is None or kinds[i + 1] != IN_FENCE)
                and SETEXT_H1_RE.match(lines[i + 1]) and not LIST_RE.match(text)):
            return 1
        return 0

    def heading_candidates(self) -> List[int]:
        """Every line `heading_level` can find a heading on (an ATX '#' or the line above a
        setext '=' underline), in order: the others are level 0 without looking."""
        atx, setext = _line_starts(self.text)
        if not setext:
            return atx
        found = set(atx)
        found.update(i - 1 for i in setext if i)
        return sorted(found)


def _line_starts(text: str) -> Tuple[List[int], List[int]]:
    """`matching_lines(rx, text, at_start=True)` of `_ATX_LINE_RE` and of `_SETEXT_LINE_RE`,
    each match found by `finditer` (neither pattern can match past the end of its line, so
    no line is skipped) and counted as it comes: fewer calls per heading than the general
    search, which also serves patterns that can."""
    t = "\n" + text
    count = t.count
    out: Tuple[List[int], List[int]] = ([], [])
    for rx, lines in zip((_ATX_LINE_RE, _SETEXT_LINE_RE), out):
        counted = n = 0
        for m in rx.finditer(t):
            start = m.start()
            n += count("\n", counted, start)
            counted = start
            lines.append(n)
    return out


def matching_lines(rx: "re.Pattern[str]", text: str, at_start: bool = False) -> List[int]:
    """The 0-based indices of the lines of `text` in which `rx` finds a match, searched over
    the whole text (one search per matching line, no Python work per other line). `rx` must
    not match across a newline. With `at_start`, `rx` begins with a newline and matches at a
    line's start: it is searched in the text with a newline put first. (A leading literal
    newline lets the regex engine skip ahead to candidates; a MULTILINE `^` tries every
    character and costs several times more.)"""
    t = "\n" + text if at_start else text
    out: List[int] = []
    pos = counted = n = 0
    search, count, find = rx.search, t.count, t.find
    while True:
        m = search(t, pos)
        if m is None:
            return out
        start = m.start()
        n += count("\n", counted, start)  # the newlines before the match: its line's index
        counted = start
        out.append(n)
        nl = find("\n", start + 1 if at_start else start)
        if nl < 0:
            return out
        pos = nl if at_start else nl + 1


def _probes(literal: str) -> str:
    """The characters of `literal` (of two or more) worth looking for alone first: its
    punctuation, each once. A text without one of them cannot hold the literal, and a
    one-character search runs at memory speed, where a search for a longer string that is
    not there reads the text several times slower ('~~~' in a body without a tilde: 0.2 us
    against 3 us for 3,600 characters)."""
    if len(literal) < 2:
        return ""
    return "".join(dict.fromkeys(c for c in literal if not c.isalnum()))


# literal -> `_probes(literal)`: the callers pass a few constant literals (emptied past 256,
# should one ever pass literals of its own).
_PROBES: Dict[str, str] = {}


def literal_lines(text: str, literals: Iterable[str]) -> List[int]:
    """The 0-based indices, in order, of the lines of `text` holding one of `literals` (none
    of them holding a newline): a few `str.find`s instead of a regex or a loop over lines.
    Each literal's lines are counted as they are found (a line holding it twice is counted
    once), and only several literals' lines are merged. A literal one of whose punctuation
    characters the text lacks is not searched for (`_probes`)."""
    find, count = text.find, text.count
    found: List[List[int]] = []
    for lit in literals:
        probes = _PROBES.get(lit)
        if probes is None:
            if len(_PROBES) >= 256:
                _PROBES.clear()
            probes = _PROBES[lit] = _probes(lit)
        absent = False
        for c in probes:
            if c not in text:
                absent = True
                break
        if absent:
            continue
        lines: List[int] = []
        p = find(lit)
        counted = n = 0
        while p >= 0:
            n += count("\n", counted, p)
            counted = p
            lines.append(n)
            nl = find("\n", p)
            if nl < 0:
                break
            p = find(lit, nl + 1)
        if lines:
            found.append(lines)
    if len(found) < 2:
        return found[0] if found else []
    return sorted(set().union(*found))


# Bodies each memo keeps. A build formats a body every client renders alike once through
# `RenderContext.formatted` and scans through `Scanned` (no memo), so these memos only spare
# small repeats (fmt, the importer, shared sections); the earlier bound of 65,536 kept
# every body a long-running process (pantsd, a test run) had seen alive.
TEXT_CACHE_ENTRIES = 512


@lru_cache(maxsize=TEXT_CACHE_ENTRIES)
def scan(text: str) -> Tuple[Line, ...]:
    """Classify every line of `text` as fence delimiter, fenced content or prose.

    Memoised for the callers that want a `Line` per line (the importer's cleanup); the
    build's own checks and formatting use `Scanned`, which makes no object per line.
    """
    s = Scanned(text)
    kinds = s.kinds
    if kinds is None:
        return tuple([Line(i, raw) for i, raw in enumerate(s.lines)])
    info = s.info
    return tuple([Line(i, raw, k == IN_FENCE, k == FENCE_OPEN, k == FENCE_CLOSE, info.get(i, ""))
                  for i, (raw, k) in enumerate(zip(s.lines, kinds))])


def prose(lines: Sequence[Line]) -> Iterator[Line]:
    """Lines outside fenced code, delimiters excluded."""
    return (ln for ln in lines if not (ln.in_fence or ln.fence_open or ln.fence_close))


def strip_inline_code(text: str) -> str:
    """Blank out inline code spans so constructs inside them are not matched."""
    if "`" not in text:
        return text
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
    s = Scanned("\n".join(lines))
    kinds = s.kinds
    for i, text in enumerate(s.lines):
        blank = not text.strip()
        in_fence = kinds is not None and kinds[i] == IN_FENCE
        if blank and not in_fence and (not out or not out[-1].strip()):
            continue
        out.append("" if blank and not in_fence else text)
    while out and not out[-1].strip():
        out.pop()
    return out


# First characters of a line ATX_RE or LIST_RE can match (digits: any `str.isdigit`).
_BLOCK_START = frozenset(" #-*+")


@lru_cache(maxsize=TEXT_CACHE_ENTRIES)
def format_body(text: str) -> str:
    """The canonical form of a markdown body, shared by `fmt` and generated output (§7.4).

    A deliberately small formatter that fixes what markdownlint's default rules flag and
    can be fixed without judgement: trailing whitespace (MD009), blank lines around
    headings (MD022), fences (MD031) and list starts (MD032), runs of blank lines (MD012)
    and the final newline (MD047). Fenced code is never touched. Idempotent by design.

    Most bodies are already canonical but for their final newlines (a build formats ~6,000
    documents at 5,000 items, 85% of them unchanged, the rest short of a final newline):
    `_canonical` tells so from a few searches of the whole text, and only the others are
    formatted line by line.
    """
    if "\r" not in text:
        body = text.rstrip("\n")
        if body:
            body += "\n"
            if _canonical(body):
                return body
            return _format(Scanned(body))
    return _format(Scanned(text.replace("\r\n", "\n")))


# One search of the whole text finds every line `_canonical` must look at, each match
# being the newline before such a line (the rest is a lookahead, so that every line is tried):
_LIST_LINE = r" {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|\n)"  # LIST_RE, for a line ending at a newline
_CANONICAL_RE = pattern(
    # whitespace `str.rstrip` strips (`\s` is the same Unicode class) before the newline, or
    # two blank lines after it: the formatter drops those anywhere but in fences (first: at
    # one newline only the first alternative that matches is seen, and this one ends the look);
    r"\n(?:(?:(?<=[^\S\n]\n)|(?=\n\n))(?P<drop>)"
    # a line FENCE_RE matches (an opening or closing delimiter, or fenced content);
    r"|(?=( {0,3})(`{3,}|~{3,})([^\n]*))"
    # a line that may be an ATX heading, after or before a line that is not blank;
    r"|(?= {0,3}#)(?:(?<!\n\n)|(?=[^\n]*\n[^\n]))"
    # a line that is not blank, not a list start and not indented (a line `_in_list` would
    # not stop at), before a list start.
    r"|(?=(?!" + _LIST_LINE + r"|[ \t])[^\n]+\n" + _LIST_LINE + "))")


# A canonical text in its common shape, matched whole (`_canonical`'s first look): blocks
# separated by one blank line, each a heading, a fence whose delimiters start their lines
# and whose content holds no line that could close it, a list (items, indented
# continuations and plain lines, none of which `_format` separates), or a paragraph of plain
# lines (not blank, not indented, not a heading, fence or list start), every line outside
# the fences ending in a character `str.rstrip` keeps. Each line's class is told by its
# first characters, so the match never goes back more than a line: linear on any text.
_END = r"(?<=\S)"
_ITEM = r"(?:[-*+]|\d{1,9}[.)])(?:[ \t][^\n]*" + _END + r")?(?=\n)"
_PLAIN = r"(?:[^\s#`~*+\d-]|(?!```|~~~|" + _LIST_LINE + r")[`~*+\d-])[^\n]*" + _END
_CONT = r"[ \t]+[^\s#`~][^\n]*" + _END
_FENCED = r"(?:\n(?! {0,3}(?:```|~~~))[^\n]*)*"
_SIMPLE_RE = pattern(
    r"(?:(?:#{1,6}(?:[ \t][^\n]*" + _END + r")?(?=\n)"
    r"|(`{3,})(?:[^`\n]*" + _END + r")?" + _FENCED + r"\n\1"
    r"|(~{3,})(?:[^\n]*" + _END + r")?" + _FENCED + r"\n\2"
    r"|" + _ITEM + r"(?:\n(?:" + _ITEM + "|" + _CONT + "|" + _PLAIN + r"))*"
    r"|" + _PLAIN + r"(?:\n" + _PLAIN + r")*"
    r")\n(?:\Z|\n(?=[^\n])))+")


def _canonical(text: str) -> bool:
    """Whether `_format` would give back `text` (which ends with one newline and holds no
    carriage return) unchanged: no blank line to drop (leading, or two in a row, looked for
    in fences too, which is only stricter), no trailing whitespace, and a blank line before
    and after every fence, around every heading and before every list start that does not
    continue a list. A False may be wrong (the formatter then runs and finds nothing to
    change); a True never is (tests/test_markdown_scan.py holds it to the formatter).

    The searches are of the whole text, and the Python work is per fence line and per line
    that looks like a heading or list start without blank lines around it (fenced code
    comments): a tenth of formatting line by line. A text `_SIMPLE_RE` matches whole (every
    document of the benchmark's registry) is canonical without it, in half the time."""
    if _SIMPLE_RE.fullmatch(text):
        return True
    t = "\n\n" + text  # line 0 after a blank line, and a newline before every line
    fence: Optional[Tuple[str, int]] = None  # Scanned's state machine, on the delimiters only
    for m in _CANONICAL_RE.finditer(t):
        ticks = m.group(3)
        if ticks is None:  # not a fence: something the formatter would change, unless fenced
            if fence is None or m.group("drop") is not None:  # (that one even in fences)
                return False
            continue
        at = m.end()  # the start of the line
        if fence is None:
            if not opens_fence(ticks, m.group(4)):
                return False  # prose that looks like a fence: what follows was not looked at
            if t[at - 2] != "\n":  # the line before the fence is not blank
                return False
            fence = (ticks[0], len(ticks))
        elif closes_fence(fence, ticks, m.group(4)):
            fence = None
            end = t.find("\n", at)
            if end + 1 < len(t) and t[end + 1] != "\n":  # the line after the fence is not blank
                return False
    return True


def _format(s: Scanned) -> str:
    """`format_body` line by line, on the scanned text."""
    lines = s.lines
    out: List[str] = []
    pending_blank = False  # a blank line is owed before the next non-blank line
    start = 0
    for opened, closed in s.blocks:
        pending_blank = _format_prose(lines[start:opened], out, pending_blank)
        if out and out[-1] != "":
            out.append("")
        out.append(lines[opened].rstrip())
        if closed is None:
            out.extend(lines[opened + 1:])
            start = len(lines)
            pending_blank = False
            break
        out.extend(lines[opened + 1:closed])
        out.append(lines[closed].rstrip())
        pending_blank = True
        start = closed + 1
    _format_prose(lines[start:], out, pending_blank)
    while out and out[-1] == "":
        out.pop()
    first = 0
    while first < len(out) and out[first] == "":
        first += 1
    return "\n".join(out[first:]) + "\n" if first < len(out) else ""


def _format_prose(lines: List[str], out: List[str], pending_blank: bool) -> bool:
    """Append the formatted form of `lines` (outside fences) to `out`; returns whether a
    blank line is still owed. Ordinary lines (not blank, not able to start a heading or a
    list) only lose trailing whitespace and are copied in runs; the others are looked at
    one by one, each with at most one pattern unless a list starts."""
    stripped = [ln.rstrip() for ln in lines]
    special = [i for i, r in enumerate(stripped) if not r or r[0] in _BLOCK_START or r[0].isdigit()]
    special.append(len(stripped))
    prev = 0
    item_at = -1  # the index in `out` of the last list item appended (it is in a list)
    for i in special:
        if i > prev:
            if pending_blank and out and out[-1] != "":
                out.append("")
            pending_blank = False
            out.extend(stripped[prev:i])
        if i == len(stripped):
            break
        prev = i + 1
        raw = stripped[i]
        if not raw:
            pending_blank = False
            if out and out[-1] != "":
                out.append("")
            continue
        if pending_blank and out and out[-1] != "":
            out.append("")
        pending_blank = False
        first = raw[0]
        if (first == "#" or first == " ") and ATX_RE.match(raw):
            if out and out[-1] != "":
                out.append("")
            out.append(raw)
            pending_blank = True
            continue
        if first != "#" and LIST_RE.match(raw):
            if out and out[-1] != "" and item_at != len(out) - 1 and not _in_list(out):
                out.append("")
            out.append(raw)
            item_at = len(out) - 1
            continue
        out.append(raw)
    return pending_blank


def _in_list(out: List[str]) -> bool:
    """Whether the paragraph ending at out[-1] belongs to a list (item or continuation)."""
    for prev in reversed(out):
        if prev == "":
            return False
        if LIST_RE.match(prev) or prev.startswith((" ", "\t")):
            return True
    return False


_FENCE_RE = pattern(r"^(`{3,}|~{3,})")
_H1_RE = pattern(r"^# ")
_HEADING_RE = pattern(r"^#{1,5} ")


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
