"""Consumed content normalised on the way in: style never blocks an install (issue 31).

A consumer cannot fix someone else's repository, so the purely stylistic body rules
(`body.STYLE_CODES`: an H1 in a body, a skipped heading level, a fence without a language)
are fixed in what is built, the way `agentrc import` fixes them (`body.fix_style`), and
reported as warnings, one per file and code. What enters is the source tree as fetched;
what leaves is a tree of the same files, the entrypoints and override files rewritten where
a rule was broken. The fix is a function of the fetched bytes alone, so the lock's digests,
which are of those bytes, still say what gets built. Nothing else is touched: frontmatter,
supporting files and every finding that breaks output stay as they are.
"""

from __future__ import annotations

from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.model import SourceFile, SourceTree
from agentrc.portable import body as body_rules
from agentrc.portable.fmt import kind_of
from agentrc.portable.items import split_entrypoint

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

_FIXED = {"AR020": "H1 heading(s) demoted a level",
          "AR021": "skipped heading level(s) closed",
          "AR022": "fence(s) without a language given 'text'"}


def normalize_tree(tree: SourceTree) -> Tuple[SourceTree, Tuple[Diagnostic, ...]]:
    """`tree` with the style of every entrypoint and override body fixed, and a warning per
    (file, code) fixed, at its first place in the file as fetched."""
    diags = Diagnostics()
    files: List[SourceFile] = []
    for f in tree.files:
        fixed = normalize_file(f.path, f.content, diags)
        files.append(f if fixed is None else SourceFile(f.path, fixed, f.executable, f.link))
    return SourceTree(tuple(files)), diags.sorted()


def normalize_file(path: str, content: bytes, diags: Diagnostics) -> Optional[bytes]:
    """The bytes of the file at `path` with its body's style fixed; None when nothing
    changes (not an entrypoint or override, not UTF-8, no frontmatter: loading reports
    those as it always does)."""
    parts = _body(path, content)
    if parts is None:
        return None
    head, body, tail, line0 = parts
    fixed = body_rules.fix_style(body)
    if fixed == body:
        return None
    found = Diagnostics()
    body_rules.style_findings(body, path, line0, found)
    first: Dict[str, Diagnostic] = {}
    counts: Dict[str, int] = {}
    for d in sorted(found.items):
        first.setdefault(d.code, d)
        counts[d.code] = counts.get(d.code, 0) + 1
    for code, d in sorted(first.items()):
        diags.warning(path, (d.line, d.col), code, f"{counts[code]} {_FIXED[code]} in what is installed "
                      "(the source is left as it is; normalized on the way in)")
    return (head + fixed + tail).encode("utf-8")


def _body(path: str, content: bytes) -> Optional[Tuple[str, str, str, int]]:
    """(text before the body, the body, text after it, the body's first line) of an
    entrypoint or override file, as `checks` reads it (CRLF and a BOM normalised away)."""
    kind = kind_of(path)
    if kind is None or kind == "bundle":
        return None
    try:
        text = content.decode("utf-8").replace("\r\n", "\n").lstrip("\ufeff")
    except UnicodeDecodeError:
        return None
    if kind == "override":
        body = text.strip("\n")
        if not body:
            return None
        lead = len(text) - len(text.lstrip("\n"))
        return text[:lead], body, text[lead + len(body):], 1 + lead
    parts = split_entrypoint(text)
    if parts.yaml_text is None or not parts.closed or not parts.body or not text.endswith(parts.body):
        return None
    return text[:len(text) - len(parts.body)], parts.body, "", parts.body_line
