"""Text cleanup for imported files: text in, text out, no files and no diagnostics.

What enters is the raw text of a client file (a body, a JSONC file, a shared AGENTS.md, a
hook command); what leaves is the text as the canonical document and the portable items
hold it, plus, where something was changed, what was found (so the caller can report it).
Bodies are cleaned so the document builds and the portable items lint clean: agentrc's own
`# <name>` title is dropped, other H1s demoted, skipped heading levels closed, bare fences
given a language, client-specific constructs fenced off for their client, and links leaving
the item kept as plain text. Kept apart from the reader because `document` cleans bodies
of any canonical document too, and because these are pure functions tested on their own.
"""

from __future__ import annotations

import posixpath
import re

from agentrc.patterns import pattern
from agentrc.portable.body import LINK_RE, SCHEME_RE, find_constructs, fix_style, heading_levels, hint_lines
from agentrc.portable.directives import END_RE, OPEN_RE
from agentrc.text.markdown import PROSE, Scanned, format_body
from agentrc.text.markedblock import BEGIN, CONTEXT_TITLE, END

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Set, Tuple

# The sentence agentrc.clients.base.with_skills_section writes for preload-skills: two lines
# since the output passes markdownlint's default line length, one line before; both read back.
SKILLS_INTROS = ("This agent relies on the following skills, installed alongside it.\n"
                 "Use them when relevant:",
                 "This agent relies on the following skills, installed alongside it. "
                 "Use them when relevant:")
_SKILLS_SECTION = pattern(r"(?:^|\n)## Skills\n\n(?:" + "|".join(map(re.escape, SKILLS_INTROS))
                          + r")\n\n((?:- [^\n]+\n?)+)$")


def strip_jsonc(text: str) -> str:
    """JSON with // and /* */ comments and trailing commas -> strict JSON (strings untouched)."""
    out: List[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))  # keep line numbers for error positions
            i = j
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def project_command(command: str) -> str:
    """A hook command with a leading `./path` written so that agentrc does not take it for a
    file of the hook item (HOOK.md's `./FILE`): `scripts/x.sh` (a path with a slash runs
    from the current directory as `./scripts/x.sh` does), or `"./x.sh"` for a file at the
    root. The shell runs either the same way."""
    command = command.strip()
    first, sep, rest = command.partition(" ")
    if not first.startswith("./"):
        return command
    path = first[2:]
    return (path if "/" in path else f'"{first}"') + sep + rest


def unmanage(text: str) -> str:
    """A file agentrc shares with its user (AGENTS.md, CLAUDE.md): the user's text with
    agentrc's block inlined, without the markers and without the title agentrc adds."""
    start = text.find(BEGIN)
    if start < 0:
        return text
    end = text.find(END, start)
    end = len(text) if end < 0 else end
    inner = text[start + len(BEGIN):end].strip("\n")
    lines = inner.split("\n")
    if lines and lines[0].strip() == f"# {CONTEXT_TITLE}":
        inner = "\n".join(lines[1:]).strip("\n")
    after = text[end + len(END):] if end < len(text) else ""
    parts = [p.strip("\n") for p in (text[:start], inner, after) if p.strip()]
    return "\n\n".join(parts) + "\n" if parts else ""


def clean_body(text: str, title: str = "", arguments: bool = False, context: bool = False,
               kind: Optional[str] = None) -> Tuple[str, List[Tuple[str, str]]]:
    """(body, (family, construct) of each kind of client-specific syntax fenced off or quoted).
    `kind`: the item kind of the body, which decides what counts as client syntax (None:
    a command's when `arguments`, the context's when `context`, else any kind's). See the
    module docstring. Idempotent."""
    lines = text.replace("\r\n", "\n").lstrip("\ufeff").strip("\n").split("\n")
    # agentrc's generated title: `# <name>` as the first line.
    if title and lines and _is_title(lines[0], title):
        lines = lines[1:]
    text = "\n".join(lines).strip("\n")
    text = fix_style(text)
    text, families = _constructs(text, arguments, context, kind)
    return (format_body(text) if text.strip() else ""), families


def _is_title(line: str, title: str) -> bool:
    """Whether `line` is `# <title>` (`^#\\s+TITLE\\s*$`), told without compiling a pattern per
    title: one for each of 1,000 items was a fifth of an import."""
    if title != title.strip():
        return re.match(r"^#\s+%s\s*$" % re.escape(title), line) is not None
    return line.startswith("#") and line[1:2].isspace() and line[1:].strip() == title


_ITEM_RE = pattern(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")


def _span(lines: List[str], index: int, outside: set) -> Tuple[int, int]:
    """The lines to fence off with line `index`: its list item (the item's line and its
    indented continuation) when it is in one, so the rest of the list reaches every client;
    else its whole paragraph, so no client gets half a sentence."""
    if index not in outside:
        return index, index
    first = index
    while not _ITEM_RE.match(lines[first]) and first - 1 in outside and lines[first][:1] in (" ", "\t"):
        first -= 1  # a continuation line: up to its item
    if _ITEM_RE.match(lines[first]):
        last = first
        while last + 1 in outside and not _ITEM_RE.match(lines[last + 1]) and lines[last + 1][:1] in (" ", "\t"):
            last += 1
        return first, last
    first = last = index
    while first - 1 in outside:
        first -= 1
    while last + 1 in outside:
        last += 1
    return first, last


def _constructs(text: str, arguments: bool, context: bool, kind: Optional[str] = None
                ) -> Tuple[str, List[Tuple[str, str]]]:
    """Client constructs (`body.find_constructs`, for the body's kind) fenced off for their
    client: the list item that holds one, else its whole paragraph (`_span`: no other client
    gets half a sentence or a table, and the rest of a list reaches everyone); in the global
    context (`context`), quoted as inline code instead."""
    kind = kind or ("command" if arguments else "context" if context else None)
    lines = text.split("\n")
    hits_at, outside = _construct_hits(text, kind)
    found: List[Tuple[str, str]] = []
    marked: Dict[int, str] = {}
    for index, hits in sorted(hits_at.items()):
        found.extend((family, what) for _, _, family, what in hits)
        if context:
            lines[index] = _quoted(lines[index], hits)
            continue
        if index in marked:
            continue
        first, last = _span(lines, index, outside)
        families = {f for i in range(first, last + 1) for _, _, f, _ in hits_at.get(i, ())}
        if len(families) == 1:
            marked.update((i, hits[0][2]) for i in range(first, last + 1))
        else:  # constructs of two clients in one paragraph: each line for its own client
            marked.update((i, hits_at[i][0][2]) for i in range(first, last + 1) if i in hits_at)
    if marked:
        lines = _fenced(lines, marked)
    return "\n".join(lines), list(dict.fromkeys(found))


def _construct_hits(text: str, kind: Optional[str]) -> Tuple[Dict[int, List[Tuple[int, int, str, str]]], Set[int]]:
    """The constructs on each prose line outside directive blocks and fences (start, end, the
    families that read it as a directive names them, what it is), and the prose lines
    outside directive blocks (the ones a paragraph may span). One `Scanned` of the text, its
    headings from one search (`heading_levels`) and the constructs asked of the lines that
    hold a hint of one (`hint_lines`): a Line object, a heading match and a construct search
    per line were 0.9 s of a 1,000-item import."""
    hinted = set(hint_lines(text))
    if not hinted:  # no line holds a hint of a construct (most bodies): none to find, no span to take
        return {}, set()
    scanned = Scanned(text)
    kinds = scanned.kinds
    levels = heading_levels(scanned)
    hits_at: Dict[int, List[Tuple[int, int, str, str]]] = {}
    outside: Set[int] = set()
    in_block = False
    for index, line in enumerate(scanned.lines):
        if kinds is not None and kinds[index] != PROSE:
            continue
        if "<!--" in line and (OPEN_RE.match(line) or END_RE.match(line)):
            in_block = bool(OPEN_RE.match(line))
            continue
        if in_block:
            continue  # a directive block already says who reads these lines
        if line.strip() and not levels.get(index):
            outside.add(index)
        if index in hinted:
            hits = [(start, end, ",".join(sorted(families)), what)
                    for start, end, families, what in find_constructs(line, kind)]
            if hits:
                hits_at[index] = hits
    return hits_at, outside


def _quoted(line: str, hits: List[Tuple[int, int, str, str]]) -> str:
    """`line` with each construct quoted as inline code (the global context's way)."""
    for start, end, _, _ in sorted(hits, reverse=True):
        token = line[start:end]
        line = line[:start] + (f"``{token}``" if "`" in token else f"`{token}`") + line[end:]
    return line


def _fenced(lines: List[str], marked: Dict[int, str]) -> List[str]:
    """`lines` with each run of lines marked for one family inside its directive block."""
    out: List[str] = []
    open_family = None
    for i, line in enumerate(lines):
        line_family = marked.get(i)
        if open_family is not None and line_family != open_family:
            out.append("<!-- @endclient -->")
            open_family = None
        if line_family is not None and open_family is None:
            out.append(f"<!-- @client:{line_family} -->")
            open_family = line_family
        out.append(line)
    if open_family is not None:
        out.append("<!-- @endclient -->")
    return out


def unlink_escaping(text: str) -> Tuple[str, List[str]]:
    """Links leaving the item directory (`../x`, `/x`) as plain text `label (target)`."""
    found: List[str] = []
    if "](" not in text:
        return text, found
    scanned = Scanned(text)  # no Line object per line: only a line holding a link is looked at
    kinds, lines = scanned.kinds, list(scanned.lines)
    for index, line in enumerate(scanned.lines):
        if "](" not in line or (kinds is not None and kinds[index] != PROSE):
            continue
        def repl(m: "re.Match[str]") -> str:
            target = m.group(1)
            if SCHEME_RE.match(target) or target.startswith(("#", "//")):
                return m.group(0)
            norm = posixpath.normpath(target.split("#", 1)[0])
            if not (target.startswith("/") or norm == ".." or norm.startswith("../")):
                return m.group(0)
            found.append(target)
            label = re.match(r"!?\[((?:[^\]\\]|\\.)*)\]", m.group(0))
            return f"{label.group(1) if label else ''} ({target})"
        lines[index] = LINK_RE.sub(repl, line)
    return "\n".join(lines), found


def split_skills_section(body: str) -> Tuple[str, List[str]]:
    """The `## Skills` section agentrc appends for preload-skills (clients without a skills
    field), taken off the body's end and read back as the list of skill names."""
    m = _SKILLS_SECTION.search(body)
    if not m:
        return body, []
    names = [ln[2:].strip() for ln in m.group(1).strip("\n").split("\n")]
    rest = body[:m.start()].rstrip("\n")
    return (rest + "\n" if rest.strip() else ""), names

