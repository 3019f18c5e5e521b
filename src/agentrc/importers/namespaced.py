"""Namespaced references in imported bodies (issue 31, item 5): Claude Code names a plugin's
skills, commands and agents `plugin:name` ("use the superpowers:brainstorming skill",
`/superpowers:brainstorm`), but installed content is named by its own name. A reference to
an item the same import holds is rewritten to that item's name; one to an item it does not
hold is reported (AR130) and kept as written, so no reference is left dangling unseen.

What counts as a reference: `plugin:name` (or `/plugin:name`) with the import's plugin as
its prefix; with another prefix, only a form that cannot be prose: a slash command, a whole
inline code span, or one beside the word skill, command, agent or subagent. Fenced code is
left alone (it is an example, not a reference), and so are URLs, times and `key: value`."""

from __future__ import annotations

import re

from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set, Tuple

NAME = r"[a-z0-9]+(?:-[a-z0-9]+)*"
# prefix:name, not inside a word, path, URL or longer a:b:c chain.
REF_RE = pattern(r"(?<![\w./:@-])(/?)([a-z][a-z0-9]*(?:-[a-z0-9]+)*):(" + NAME + r")(?![\w/:@-])")
_COLON_RE = pattern(r":(?=[a-z0-9])")  # in every match of REF_RE
# Words that make `a:b` a reference to another plugin's item.
KIND_WORDS = pattern(r"\b(?:skills?|commands?|agents?|subagents?)\b", re.IGNORECASE)
FENCE_RE = pattern(r"^ {0,3}(```|~~~)")
# The document's body key of each section that holds named bodies.
BODIES = (("skills", "content"), ("commands", "prompt"), ("agents", "content"), ("rules", "content"))
NEAR = 40  # characters either side of a reference in which a kind word makes it one


def rewrite(text: str, namespaces: Dict[str, Dict[str, str]]) -> Tuple[str, List[str], List[str]]:
    """`text` with each `plugin:name` that `namespaces` (plugin -> item name -> the name it
    is installed under) knows rewritten to the installed name; the references rewritten, and
    those left as written (of a plugin of `namespaces` but an unknown name, or of another
    plugin), each once, in order."""
    done: Dict[str, None] = {}
    left: Dict[str, None] = {}
    # Nothing shaped like a reference anywhere: no line to look at. A reference holds a colon
    # before a name's first character, which is found a hundred times faster than REF_RE
    # (its lookbehind is tried at every position: 0.2 ms a body).
    if not _COLON_RE.search(text) or not REF_RE.search(text):
        return text, [], []
    out: List[str] = []
    fenced: Optional[str] = None
    for line in text.splitlines(keepends=True):
        fence = FENCE_RE.match(line)
        if fenced is not None:
            fenced = None if fence and fence.group(1) == fenced else fenced
            out.append(line)
            continue
        if fence:
            fenced = fence.group(1)
            out.append(line)
            continue
        out.append(REF_RE.sub(lambda m: _one(m, line, namespaces, done, left), line))
    return "".join(out), list(done), list(left)


def _one(m: "re.Match[str]", line: str, namespaces: Dict[str, Dict[str, str]], done: Dict[str, None],
         left: Dict[str, None]) -> str:
    slash, prefix, name = m.group(1), m.group(2), m.group(3)
    ref = f"{slash}{prefix}:{name}"
    installed = namespaces.get(prefix, {}).get(name)
    if installed is not None:
        done[ref] = None
        return slash + installed
    if prefix in namespaces or _looks_like_reference(m, line):
        left[ref] = None
    return m.group(0)


def _looks_like_reference(m: "re.Match[str]", line: str) -> bool:
    """Whether `a:b` of another prefix is a reference rather than prose: a slash command, a
    whole inline code span, or a kind word near it."""
    start, end = m.start(), m.end()
    if m.group(1):
        return True
    if line[start - 1:start] == "`" and line[end:end + 1] == "`":
        return True
    return bool(KIND_WORDS.search(line[max(0, start - NEAR):start]) or KIND_WORDS.search(line[end:end + NEAR]))


def rewrite_document(doc: Dict[str, Any], namespaces: Dict[str, Dict[str, str]]) -> List[Tuple[str, str, str]]:
    """Each body of `doc` rewritten (`rewrite`); the references left as written, as (section,
    item name, reference). What a published layout of several plugins calls with every
    plugin's names (and their names after its renames), after the first pass of each plugin
    alone (`Reader.namespaced`)."""
    left: List[Tuple[str, str, str]] = []
    for section, key in BODIES:
        for name, entry in (doc.get(section) or {}).items():
            body = entry.get(key) if isinstance(entry, dict) else None
            if isinstance(body, str) and ":" in body:
                entry[key], _, refs = rewrite(body, namespaces)
                left += [(section, name, ref) for ref in refs]
    return left


def document_names(doc: Dict[str, Any]) -> Set[str]:
    """The names of the skills, commands and agents of an import's document."""
    names: Set[str] = set()
    for section in ("skills", "commands", "agents"):
        entries = doc.get(section)
        if isinstance(entries, dict):
            names.update(entries)
    return names
