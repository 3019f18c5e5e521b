"""Body rules (spec 001 §5) and the links a body makes to supporting files.

Checked on the canonical body and on every override body: no H1, no skipped heading
levels, fenced code with a language, and client-specific constructs only where just that
client reads them (inside a matching directive block, or in that client's override file).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import FrozenSet, Iterable, List, Optional, Tuple
from urllib.parse import unquote

from agentrc.diagnostics import Diagnostics
from agentrc.portable.directives import Block
from agentrc.text.markdown import heading_level, prose, scan, strip_inline_code

# Client-specific constructs (spec 001 §5.5). Each belongs to one source family.
CONSTRUCTS: Tuple[Tuple[str, str, "re.Pattern[str]"], ...] = (
    ("claude", "file import '@path'",
     re.compile(r"(?<![\w@/`.-])@(?:~|\.{1,2})?/?[\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]+\b")),
    ("claude", "substitution variable '$ARGUMENTS'/'$N'", re.compile(r"\$(?:ARGUMENTS\b|[0-9]\b)")),
    ("claude", "shell pre-execution '!`cmd`'", re.compile(r"!`[^`]+`")),
    ("claude", "extended-thinking trigger 'ultrathink'", re.compile(r"\bultrathink\b", re.IGNORECASE)),
    ("claude", "internal MCP tool name 'mcp__server__tool'", re.compile(r"\bmcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+")),
    ("copilot", "tool reference '#tool:'", re.compile(r"#tool:[\w./-]+")),
    ("copilot", "file reference '#file:'", re.compile(r"#file:[\w./-]+")),
    ("copilot", "substitution variable '${workspaceFolder}'/'${file}'",
     re.compile(r"\$\{(?:workspaceFolder|file|input:[^}]*)\}")),
)

# Every construct above contains one of these; lines without any skip the eight patterns.
CONSTRUCT_HINT_RE = re.compile(r"[@$]|!`|ultrathink|mcp__|#(?:tool|file):", re.IGNORECASE)

LINK_RE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
REFDEF_RE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Link:
    line: int  # 0-based body line
    col: int  # 0-based column
    target: str  # as written
    path: str  # resolved relative to the item directory ('' for anchors-only)
    escapes: bool


def check(body: str, path: str, line0: int, diags: Diagnostics, blocks: Tuple[Block, ...],
          families: FrozenSet[str], reader: Optional[str] = None, arguments: bool = False) -> None:
    """Report §5 violations. `reader` is the single family of an override file, if any.
    `arguments`: the body is a command's, where `$ARGUMENTS` is the portable placeholder
    each client adapter maps to its own."""
    lines = scan(body)
    previous = 1
    for ln in lines:
        i = ln.index
        pos = (line0 + i, 1)
        level = heading_level(lines, i)
        if level == 1:
            diags.error(path, pos, "AR020", "H1 heading in the body; generated output adds '# <name>' itself")
        elif level:
            if level > previous + 1:
                diags.error(path, pos, "AR021", f"heading level {level} follows level {previous}")
            previous = level
        if ln.fence_open and not ln.fence_info:
            diags.error(path, pos, "AR022", "fenced code block without a language")
    for ln in prose(lines):
        if not CONSTRUCT_HINT_RE.search(ln.text):
            continue
        readers = _readers(ln.index, blocks, families) if reader is None else frozenset({reader})
        text = strip_inline_code(ln.text)
        for family, what, rx in CONSTRUCTS:
            for m in rx.finditer(text):
                if arguments and m.group(0) == "$ARGUMENTS":
                    continue
                if readers != frozenset({family}):
                    where = "an override for " + reader if reader else (
                        "content that reaches " + ", ".join(sorted(readers)) if readers else "content")
                    diags.error(path, (line0 + ln.index, m.start() + 1), "AR023",
                                f"{family}-specific {what} in {where}")


def _readers(i: int, blocks: Tuple[Block, ...], families: FrozenSet[str]) -> FrozenSet[str]:
    for b in blocks:
        if b.start <= i <= b.end:
            return b.audience(families)
    return families


def links(body: str) -> List[Link]:
    """Relative links and reference definitions outside code, resolved within the item."""
    out: List[Link] = []
    for ln in prose(scan(body)):
        if "](" not in ln.text and "]:" not in ln.text:
            continue
        text = strip_inline_code(ln.text)
        targets: Iterable[Tuple[int, str]] = [(m.start(1), m.group(1)) for m in LINK_RE.finditer(text)]
        m = REFDEF_RE.match(text)
        if m:
            targets = list(targets) + [(m.start(1), m.group(1))]
        for col, target in targets:
            if SCHEME_RE.match(target) or target.startswith("#") or target.startswith("//"):
                continue
            raw = unquote(target.split("#", 1)[0].split("?", 1)[0])
            if not raw:
                continue
            norm = posixpath.normpath(raw)
            escapes = raw.startswith("/") or norm == ".." or norm.startswith("../")
            out.append(Link(ln.index, col, target, "" if escapes else norm, escapes))
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
