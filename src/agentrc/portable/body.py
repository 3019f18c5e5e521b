"""Body rules (spec 001 §5), the fixes of the stylistic ones, and the links a body makes.

Checked on the canonical body and on every override body: no H1, no skipped heading
levels, fenced code with a language, and client-specific constructs only where just that
client reads them (inside a matching directive block, or in that client's override file).

The heading and fence rules (STYLE_CODES) have a fix that is a function of the text alone
(`fix_style`), shared by `agentrc import` (importers.cleanup), `agentrc fmt` (portable.fmt)
and the consumer's way in (portable.normalize): one rewrite, so the three never disagree.
"""

from __future__ import annotations

import posixpath
import re

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.patterns import pattern
from agentrc.portable.directives import Block
from agentrc.text.markdown import (
    ATX_RE,
    FENCE_RE,
    PROSE,
    Scanned,
    closes_fence,
    heading_level,
    literal_lines,
    matching_lines,
    opens_fence,
    scan,
    strip_inline_code,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

# The body rules that are purely stylistic: they say how a body is written, never what any
# client receives or whether it loads it, and `fix_style` fixes them without a choice to
# make. Everything else breaks output and stays an error wherever it is found: names and
# schema (AR006, AR010-AR014), cycles and references (AR061-AR071), escapes and unreadable
# files (AR050, AR054, AR008), client constructs (AR023: which client reads a line is
# meaning, not style). AR101 (canonical form) is style too, but of a whole file (`fmt`).
STYLE_CODES = frozenset({"AR020", "AR021", "AR022"})

# Client-specific constructs (spec 001 §5.5): (what, pattern, the families that interpret
# it with the kinds of body they interpret it in, None for every kind). Only what a client
# really reads is a construct: Claude expands `@path` imports in memory files (CLAUDE.md,
# .claude/rules) and file references in commands, not in skills or agents; it substitutes
# `$ARGUMENTS`/`$N` and runs `!`cmd`` in commands and skills. opencode reads the same three
# in its commands (`.opencode/commands/*.md`: `@file` includes, `$ARGUMENTS`, `$1`, ...,
# `!`cmd`` output), so in a command they are allowed where only Claude Code and opencode
# read them. A token must also look like what the client reads: an `@` import names a file
# (`_is_import`), so decorators (`@router.post`), product names (`@Next.js`), handles,
# emails and npm scopes are not imports; `$N` is not a price (`$5.00`, `$1,200`) or a
# spreadsheet reference (`$B$6`). Never in code (fenced or inline). docs/format.md states
# the false-positive rate measured on tests/test_construct_corpus.py.
_MEMORY_AND_COMMANDS = frozenset({"rule", "context", "command"})
_INVOKED = frozenset({"command", "skill"})
_COMMANDS = frozenset({"command"})
IMPORT_RE = pattern(r"(?<![\w@/`.:\\-])@((?:~/|\.{1,2}/|/)?[\w.-]+(?:/[\w.-]+)*)")
ARGUMENT_RE = pattern(r"(?<![\w$\\])\$(?:ARGUMENTS\b|[0-9]\b(?![.,]\d))")
SHELL_RE = pattern(r"(?<![\w`!])!`[^`\n]+`(?!`)")
if TYPE_CHECKING:
    Readers = Tuple[Tuple[str, Optional[FrozenSet[str]]], ...]
CONSTRUCTS: Tuple[Tuple[str, "re.Pattern[str]", Readers], ...] = (
    ("file import '@path'", IMPORT_RE, (("claude", _MEMORY_AND_COMMANDS), ("opencode", _COMMANDS))),
    ("substitution variable '$ARGUMENTS'/'$N'", ARGUMENT_RE, (("claude", _INVOKED), ("opencode", _COMMANDS))),
    ("shell pre-execution '!`cmd`'", SHELL_RE, (("claude", _INVOKED), ("opencode", _COMMANDS))),
    ("extended-thinking trigger 'ultrathink'", pattern(r"\bultrathink\b", re.IGNORECASE), (("claude", None),)),
    ("internal MCP tool name 'mcp__server__tool'",
     pattern(r"\bmcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+"), (("claude", None),)),
    ("tool reference '#tool:'", pattern(r"#tool:[\w./-]+"), (("copilot", None),)),
    ("file reference '#file:'", pattern(r"#file:[\w./-]+"), (("copilot", None),)),
    ("substitution variable '${workspaceFolder}'/'${file}'",
     pattern(r"\$\{(?:workspaceFolder|file|input:[^}]*)\}"), (("copilot", None),)),
)

# Every construct above contains one of these; lines without any skip the patterns.
CONSTRUCT_HINT_RE = pattern(r"[@$]|!`|ultrathink|mcp__|#(?:tool|file):", re.IGNORECASE)
_HINTS = ("@", "$", "!`", "ultrathink", "mcp__", "#tool:", "#file:")


def hint_lines(body: str) -> List[int]:
    """The lines of `body` CONSTRUCT_HINT_RE finds something in. An ASCII body is searched
    lower-cased for the hints as plain strings (there, IGNORECASE is exactly ASCII case
    folding), several times faster than the case-insensitive pattern over the whole body."""
    if body.isascii():
        return literal_lines(body.lower(), _HINTS)
    return matching_lines(CONSTRUCT_HINT_RE, body)

# Files an `@` import plausibly names: documents, configuration and source code. Not data
# (`@stage/data.csv`) and not top-level domains (`@acme.io`, `@team.dev`).
IMPORT_EXTENSIONS = frozenset("""
    md mdx mdc markdown txt rst adoc json jsonc json5 yaml yml toml ini cfg conf env xml html css scss
    sh bash zsh ps1 py pyi js mjs cjs jsx ts mts cts tsx go rs rb java kt kts swift c h cc cpp hpp cs
    php lua dart scala ex exs hs sql graphql proto tf hcl vue svelte gradle lock mk nix
""".split())
_BARE_PRODUCT_RE = pattern(r"^[A-Z][A-Za-z0-9]*\.(?:js|ts)$")  # Next.js, Node.js, Three.js


def _is_import(token: str) -> bool:
    """Whether `@token` names a file as an import does: a known file extension, and a path
    (with a slash) or a bare file name that is not a product name such as `Next.js`."""
    last = token.rsplit("/", 1)[-1]
    stem, dot, ext = last.rpartition(".")
    if not dot or not stem.strip(".") or ext not in IMPORT_EXTENSIONS:
        return False
    if "/" not in token and _BARE_PRODUCT_RE.match(last):
        return False
    return True


def interpreters(readers: Readers, kind: Optional[str]) -> FrozenSet[str]:
    """The families that interpret a construct in a body of `kind`; for a body of unknown
    kind (None), the client the construct is first of all (Claude Code's `$1` in a rule
    says nothing to opencode, which reads it only in commands)."""
    if kind is None:
        return frozenset([readers[0][0]])
    return frozenset(f for f, kinds in readers if kinds is None or kind in kinds)


def find_constructs(text: str, kind: Optional[str] = None) -> List[Tuple[int, int, FrozenSet[str], str]]:
    """(start, end, the families that interpret it, what) of every client construct on one
    prose line, outside inline code, that some client interprets in a body of `kind` (None:
    any kind). In a command, `$ARGUMENTS` is the portable placeholder each adapter maps, not
    a construct."""
    if not CONSTRUCT_HINT_RE.search(text):
        return []
    plain = strip_inline_code(text)
    out: List[Tuple[int, int, FrozenSet[str], str]] = []
    for what, rx, readers in CONSTRUCTS:
        families = interpreters(readers, kind)
        if not families:
            continue
        # Matched outside inline code; `!`cmd`` is a `!` outside code before a code span, so
        # it is matched in the text as written, where its `!` is not blanked out.
        shell = rx is SHELL_RE
        for m in rx.finditer(text if shell else plain):
            if shell and plain[m.start()] != "!":
                continue
            start, end = m.start(), m.end()
            if rx is IMPORT_RE:
                token = m.group(1).rstrip(".-")
                if not _is_import(token):
                    continue
                end = start + 1 + len(token)
            elif kind == "command" and m.group(0) == "$ARGUMENTS":
                continue
            out.append((start, end, families, what))
    return sorted(out, key=lambda h: (h[0], h[1], h[3]))


LINK_RE = pattern(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
REFDEF_RE = pattern(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
SCHEME_RE = pattern(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Link:
    """A relative link in an item's body: where it is, what it names and whether it leaves the item."""
    line: int  # 0-based body line
    col: int  # 0-based column
    target: str  # as written
    path: str  # resolved relative to the item directory ('' for anchors-only)
    escapes: bool


# An ATX heading as `markdown.ATX_RE` reads one (up to three spaces, one to six '#', then a
# space, a tab or the line's end), searched at once in the body with a newline put before
# and after it: the '#' run is the level. The lines above a setext '=' underline are the
# only other headings (`_SETEXT_LINE_RE`, as `Scanned.heading_candidates` finds them).
_ATX_LEVEL_RE = pattern(r"\n {0,3}(#{1,6})(?=[ \t\n])")
_SETEXT_LINE_RE = pattern(r"\n {0,3}=+[ \t]*$", re.MULTILINE)


def heading_levels(scanned: Scanned) -> Dict[int, int]:
    """Line -> heading level of every prose line that may be a heading (the rest are level
    0), the same levels as `Scanned.heading_level`: one search of the whole body gives the
    ATX headings with their levels; only a line above a '=' underline is asked the careful
    way. (Asking every line that holds a '#' cost a regex match and a call per heading.)"""
    text, kinds = scanned.text, scanned.kinds
    levels: Dict[int, int] = {}
    if "#" in text:
        t = "\n" + text + "\n"
        count = t.count
        n = counted = 0
        for m in _ATX_LEVEL_RE.finditer(t):
            start = m.start()
            n += count("\n", counted, start)  # the newline before the line `n`
            counted = start
            if kinds is None or kinds[n] == PROSE:
                levels[n] = m.end(1) - m.start(1)
    if "=" in text:
        for i in matching_lines(_SETEXT_LINE_RE, text, at_start=True):
            if i and i - 1 not in levels:
                levels[i - 1] = scanned.heading_level(i - 1)
    return levels


def check(body: str, path: str, line0: int, diags: Diagnostics, blocks: Tuple[Block, ...],
          families: FrozenSet[str], reader: Optional[str] = None, arguments: bool = False,
          kind: Optional[str] = None, scanned: Optional[Scanned] = None) -> None:
    """Report §5 violations. `reader` is the single family of an override file, if any.
    `kind`: the item kind whose body this is (None when the caller does not say: every
    construct counts); `arguments` alone says it is a command's (see `find_constructs`).
    `scanned`: the body's `Scanned`, when the caller has it already."""
    if scanned is None:
        scanned = Scanned(body)
    if not _headings_fine(scanned):
        _check_headings(scanned, path, line0, diags)
    _check_constructs(scanned, path, line0, diags, blocks, families, reader,
                      kind or ("command" if arguments else None))


def _prose_text(scanned: Scanned) -> str:
    """The body's prose lines (fenced blocks and their delimiters left out), joined again."""
    if not scanned.blocks:
        return scanned.text
    lines = scanned.lines
    kept: List[str] = []
    line = 0
    for opened, closed in scanned.blocks:
        kept += lines[line:opened]
        if closed is None:
            line = len(lines)
            break
        line = closed + 1
    kept += lines[line:]
    return "\n".join(kept)


def _headings_fine(scanned: Scanned) -> bool:
    """Whether the body certainly breaks none of the heading and fence rules (AR020-AR022):
    every fence has a language, no line could be a setext heading, and the ATX headings of
    its prose, found at once in the text with the fenced blocks cut out, start at level 2
    or below and never skip a level. False sends the body to `_check_headings`, which finds
    the same answer line by line, with each line's position."""
    return all(scanned.info.values()) and _levels_fine(scanned.text, lambda: _prose_text(scanned))


def _levels_fine(text: str, prose: Callable[[], str]) -> bool:
    """No line of `text` could be a setext heading, and the ATX headings of its prose (asked
    for only when `text` holds a '#') start at level 2 or below and never skip a level."""
    if "=" in text and _SETEXT_LINE_RE.search("\n" + text):
        return False
    if "#" not in text:
        return True
    previous = 1
    for hashes in _ATX_LEVEL_RE.findall("\n" + prose() + "\n"):
        level = len(hashes)
        if level == 1 or level > previous + 1:
            return False
        previous = level
    return True


# A line `markdown.FENCE_RE` matches, found in the body with a newline put before it: the run
# of backticks or tildes, then the rest of the line. Led by the newline, the search stops at
# line starts only (a `^` in MULTILINE mode is tried at every character).
_DELIMITER_RE = pattern(r"\n {0,3}(`{3,}|~{3,})([^\n]*)")


def headings_fine(body: str) -> bool:
    """`_headings_fine(Scanned(body))`, without splitting the body into lines: the fence
    delimiters are matched up as `Scanned` matches them, and the prose is the body with the
    fenced blocks cut out by position (it may end with one newline more, which holds no
    heading). Normalizing consumed content asks it of every body: a 1,000-item source, 33 -> 22 ms."""
    cut = _fenced_out(body) if "```" in body or "~~~" in body else body
    if cut is None:
        return False
    prose: str = cut
    return _levels_fine(body, lambda: prose)


def _fenced_out(body: str) -> Optional[str]:
    """`body` without its fenced blocks (delimiters included), as `_prose_text` gives it but
    for a newline more at the end; None when a fence opens without a language."""
    parts: List[str] = []
    fence: Optional[Tuple[str, int]] = None
    kept = opened = 0
    for m in _DELIMITER_RE.finditer("\n" + body):  # in the body: m.start() a line's start, m.end() past its end
        ticks, rest = m.group(1), m.group(2)
        if fence is None:
            if opens_fence(ticks, rest):
                if not rest.strip():
                    return None
                fence, opened = (ticks[0], len(ticks)), m.start()
        elif closes_fence(fence, ticks, rest):
            fence = None
            parts.append(body[kept:opened])
            kept = m.end()
    parts.append(body[kept:opened] if fence is not None else body[kept:])
    return "".join(parts)


def _check_headings(scanned: Scanned, path: str, line0: int, diags: Diagnostics) -> None:
    """AR020 (H1), AR021 (a skipped level) and AR022 (a fence without a language), in line order."""
    info = scanned.info
    previous = 1
    levels = heading_levels(scanned)
    # Only lines that can hold a heading or open a fence are looked at, in line order (one
    # search of the whole body finds them); every other line is level 0 and no fence.
    for i in sorted(levels.keys() | info.keys()) if info else sorted(levels):
        pos = (line0 + i, 1)
        level = levels.get(i, 0)
        if level == 1:
            diags.error(path, pos, "AR020", "H1 heading in the body; generated output adds '# <name>' itself")
        elif level:
            if level > previous + 1:
                diags.error(path, pos, "AR021", f"heading level {level} follows level {previous}")
            previous = level
        if i in info and not info[i]:
            diags.error(path, pos, "AR022", "fenced code block without a language")


def style_findings(body: str, path: str, line0: int, diags: Diagnostics) -> None:
    """The STYLE_CODES findings of `body` (what `fix_style` would change), as errors."""
    scanned = Scanned(body)
    if not _headings_fine(scanned):
        _check_headings(scanned, path, line0, diags)


def fix_style(body: str) -> str:
    """`body` with the STYLE_CODES fixed: H1s demoted (every heading one level down), no
    skipped levels, and bare fences given `text`. Deterministic and idempotent; a body
    that breaks none of them is returned as it is, after one scan."""
    if headings_fine(body):
        return body
    return fence_languages(fix_headings(body))


def fix_headings(text: str) -> str:
    """No H1 (all headings move down a level when there is one) and no skipped levels."""
    lines = text.split("\n")
    scanned = scan(text)
    levels = [heading_level(scanned, i) for i in range(len(lines))]
    setext = {i for i, lv in enumerate(levels) if lv == 1 and not ATX_RE.match(lines[i])}
    shift = 1 if 1 in levels else 0
    out: List[str] = []
    previous = 1
    skip_next = False
    for i, line in enumerate(lines):
        if skip_next:
            skip_next = False
            continue
        level = levels[i]
        if not level:
            out.append(line)
            continue
        new = min(level + shift, previous + 1, 6)
        previous = new
        if i in setext:
            out.append("#" * new + " " + line.strip())
            skip_next = True
            continue
        m = ATX_RE.match(line)
        out.append("#" * new + (" " + m.group(2) if m and m.group(2) else ""))
    return "\n".join(out)


def fence_languages(text: str) -> str:
    """Every fence opened without a language given `text`."""
    lines = text.split("\n")
    for ln in scan(text):
        if ln.fence_open and not ln.fence_info:
            m = FENCE_RE.match(ln.text)
            if m:
                lines[ln.index] = m.group(1) + m.group(2) + "text"
    return "\n".join(lines)


def _check_constructs(scanned: Scanned, path: str, line0: int, diags: Diagnostics, blocks: Tuple[Block, ...],
                      families: FrozenSet[str], reader: Optional[str], kind: Optional[str]) -> None:
    """AR023: client constructs where a client that does not read them would get them."""
    lines = scanned.lines
    for i in scanned.prose_lines(hint_lines(scanned.text)):
        hits = find_constructs(lines[i], kind)
        if not hits:
            continue
        readers = _readers(i, blocks, families) if reader is None else frozenset({reader})
        for start, _, families, what in hits:
            if not readers or not readers <= families:
                where = "an override for " + reader if reader else (
                    "content that reaches " + ", ".join(sorted(readers)) if readers else "content")
                diags.error(path, (line0 + i, start + 1), "AR023",
                            f"{'/'.join(sorted(families))}-specific {what} in {where}")


def _readers(i: int, blocks: Tuple[Block, ...], families: FrozenSet[str]) -> FrozenSet[str]:
    for b in blocks:
        if b.start <= i <= b.end:
            return b.audience(families)
    return families


def links(body: str, scanned: Optional[Scanned] = None) -> List[Link]:
    """Relative links and reference definitions outside code, resolved within the item.
    `scanned`: the body's `Scanned`, when the caller has it already."""
    out: List[Link] = []
    if "](" not in body and "]:" not in body:
        return out
    if scanned is None:
        scanned = Scanned(body)
    for i in scanned.prose_lines(literal_lines(body, ("](", "]:"))):
        text = strip_inline_code(scanned.lines[i])
        targets: Iterable[Tuple[int, str]] = [(m.start(1), m.group(1)) for m in LINK_RE.finditer(text)]
        m = REFDEF_RE.match(text)
        if m:
            targets = list(targets) + [(m.start(1), m.group(1))]
        for col, target in targets:
            if SCHEME_RE.match(target) or target.startswith("#") or target.startswith("//"):
                continue
            raw = target.split("#", 1)[0].split("?", 1)[0]
            if "%" in raw:  # `unquote` changes nothing else; urllib.parse is 1 ms of an edit's start-up
                from urllib.parse import unquote

                raw = unquote(raw)
            if not raw:
                continue
            norm = posixpath.normpath(raw)
            escapes = raw.startswith("/") or norm == ".." or norm.startswith("../")
            out.append(Link(i, col, target, "" if escapes else norm, escapes))
    return out


def rewrite_links(body: str, prefix: str) -> str:
    """Prefix every relative link target with `prefix` (resources placed in another dir)."""
    if not prefix:
        return body
    lines = body.split("\n")
    for link in sorted(links(body), key=lambda lk: (lk.line, -lk.col)):
        if link.escapes:
            continue
        text = lines[link.line]
        target = link.target[2:] if link.target.startswith("./") else link.target
        lines[link.line] = text[: link.col] + posixpath.join(prefix, target) + text[link.col + len(link.target):]
    return "\n".join(lines)
