"""Markdown for the generated pages: free text escaped for a paragraph or a table cell,
code spans, tables, fences, and a page's blocks joined (markdownlint-clean under the
default rules). Used by `docgen.pages` (which re-exports it) and `docgen.probing`.
"""

from __future__ import annotations

from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Sequence

_CODE_SPAN = pattern(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_HTML_COMMENT = pattern(r"<!--.*?-->")


def inline(text: str, table: bool = False) -> str:
    """Escape free text for a markdown paragraph or table cell.

    Balanced code spans are kept; elsewhere backslashes, stray backticks, emphasis
    markers and angle brackets (HTML comments, `<name>`) are escaped, and in tables `|`.
    """
    out: List[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_escape(text[pos:m.start()]))
        span = m.group(0)
        out.append(span.replace("|", "\\|") if table else span)
        pos = m.end()
    out.append(_escape(text[pos:]))
    return "".join(out)


def _escape(text: str) -> str:
    """Free text: HTML comments (directive syntax) become code spans, the rest is escaped."""
    out: List[str] = []
    pos = 0
    for m in _HTML_COMMENT.finditer(text):
        out.append(_escape_plain(text[pos:m.start()]))
        out.append(code(m.group(0)))
        pos = m.end()
    out.append(_escape_plain(text[pos:]))
    return "".join(out)


def _escape_plain(text: str) -> str:
    text = text.replace("\\", "\\\\").replace("`", "\\`").replace("*", "\\*")
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|")


def code(text: str) -> str:
    """`text` as a code span (safe for tables)."""
    ticks = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{ticks}{pad}{text.replace('|', chr(92) + '|')}{pad}{ticks}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell if cell else "—" for cell in row) + " |" for row in rows]
    return lines


def fence(text: str, lang: str) -> List[str]:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return [ticks + lang] + text.rstrip("\n").split("\n") + [ticks]


def page(lines: Sequence[str]) -> str:
    """Join blocks, fold blank runs to one, end with a single newline (MD012, MD047)."""
    out: List[str] = []
    for line in lines:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"
