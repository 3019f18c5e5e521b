""""Did you mean": the known word closest to a mistyped one, for every message that names
something the user typed and agentrc does not know (a field, a key, a client, a kind, a
tool, an entrypoint's file name).

Shared by the core (portable.checks) and the command line, so it imports nothing of
agentrc; difflib is imported on first use, when a message needs a suggestion (a build with
nothing to do never does).
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Iterable, Optional

CUTOFF = 0.6  # difflib's own default: 'descripton' -> 'description', 'claud' -> 'claude'


def closest(word: str, choices: Iterable[str], cutoff: float = CUTOFF) -> Optional[str]:
    """The choice `word` most likely meant, or None: the same word in another case first
    (`Read` -> `read`, `skill.md` -> `SKILL.md`), else difflib's closest above `cutoff`,
    compared case-insensitively, first in the choices' order on a tie."""
    known = [c for c in dict.fromkeys(choices) if isinstance(c, str)]
    if not isinstance(word, str) or not word or word in known:
        return None
    folded = word.casefold()
    for c in known:
        if c.casefold() == folded:
            return c
    import difflib  # only for a word nobody knows

    by_fold: Dict[str, str] = {}
    for c in known:
        by_fold.setdefault(c.casefold(), c)
    found = difflib.get_close_matches(folded, list(by_fold), n=1, cutoff=cutoff)
    return by_fold[found[0]] if found else None


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = CUTOFF) -> str:
    """`; did you mean 'x'?` to end a message with, or "" when nothing is close."""
    found = closest(word, choices, cutoff)
    return f"; did you mean {found!r}?" if found else ""
