"""Conditional content directives (spec 001 §6).

    <!-- @client:claude,copilot -->   ...   <!-- @endclient -->
    <!-- @client:!opencode -->        ...   <!-- @endclient -->

Validation and processing share one parser so they cannot disagree. Directive-looking
lines inside fenced code blocks are literal text (a body may document the syntax).
"""

from __future__ import annotations

import re

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.patterns import pattern
from agentrc.text.markdown import Scanned, collapse_blank_lines, literal_lines

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import FrozenSet, List, Optional, Tuple

OPEN_RE = pattern(r"^\s*<!--\s*@client:(.*?)\s*-->\s*$")
END_RE = pattern(r"^\s*<!--\s*@endclient\s*-->\s*$")
LOOSE_RE = pattern(r"<!--\s*@(?:client|endclient)\b")


@dataclass(frozen=True)
class Block:
    """An `@client` ... `@endclient` block of a body: its lines and the clients it is for."""
    start: int  # 0-based body line of the opening directive
    end: int  # 0-based body line of @endclient
    clients: FrozenSet[str]
    negated: bool

    def matches(self, family: str) -> bool:
        return (family in self.clients) != self.negated

    def audience(self, families: FrozenSet[str]) -> FrozenSet[str]:
        """The families whose output this block's content reaches."""
        return families - self.clients if self.negated else self.clients & families


def parse(body: str, families: FrozenSet[str], diags: Optional[Diagnostics] = None,
          path: str = "", line0: int = 1, scanned: Optional[Scanned] = None) -> Tuple[Block, ...]:
    """Find directive blocks; report malformed, unknown, nested and unbalanced ones.
    `scanned`: the body's `Scanned`, when the caller has it already."""
    blocks: List[Block] = []
    open_at: Optional[Tuple[int, FrozenSet[str], bool]] = None

    def report(code: str, i: int, message: str) -> None:
        if diags is not None:
            diags.error(path, (line0 + i, 1), code, message)

    if "@" not in body or ("@client" not in body and "@endclient" not in body):
        return ()  # none of the three patterns can match: no directive, nothing to report
    if scanned is None:
        scanned = Scanned(body)
    for i in scanned.prose_lines(literal_lines(body, ("<!--",))):
        text = scanned.lines[i]
        m_open, m_end = OPEN_RE.match(text), END_RE.match(text)
        if m_open:
            parsed = _client_list(m_open.group(1))
            if parsed is None:
                report("AR033", i, f"malformed directive client list {m_open.group(1)!r}")
                continue
            clients, negated = parsed
            unknown = sorted(clients - families)
            if unknown:
                report("AR032", i, f"unknown client identifier(s) {', '.join(unknown)} in directive "
                       f"(known: {', '.join(sorted(families))})")
            if open_at is not None:
                report("AR031", i, f"directive opened inside the block opened on line {line0 + open_at[0]}")
                continue
            open_at = (i, clients, negated)
        elif m_end:
            if open_at is None:
                report("AR030", i, "<!-- @endclient --> without an opening <!-- @client:... -->")
                continue
            blocks.append(Block(open_at[0], i, open_at[1], open_at[2]))
            open_at = None
        elif LOOSE_RE.search(text):
            report("AR033", i,
                   "a directive must stand alone on its line as <!-- @client:a,b --> or <!-- @endclient -->")
    if open_at is not None:
        report("AR030", open_at[0], "<!-- @client:... --> is never closed with <!-- @endclient -->")
    return tuple(blocks)


def _client_list(raw: str) -> Optional[Tuple[FrozenSet[str], bool]]:
    parts = [p.strip() for p in raw.split(",")]
    if not parts or any(not p or p == "!" for p in parts):
        return None
    negs = {p.startswith("!") for p in parts}
    if len(negs) != 1:
        return None  # mixing positive and negated identifiers has no defined meaning
    negated = negs.pop()
    names = frozenset(p.lstrip("!").strip() for p in parts)
    if any(not re.fullmatch(r"[a-z][a-z0-9-]*", n) for n in names):
        return None
    return names, negated


def process(body: str, family: str, blocks: Tuple[Block, ...]) -> str:
    """Keep matching blocks' content, drop the rest with their delimiters (§6.3).

    Removing lines can leave two blank lines touching; those runs are folded so the
    result never violates MD012, and leading/trailing blank lines are dropped.
    """
    if not blocks:
        return body
    lines = body.split("\n")
    drop = set()
    for b in blocks:
        drop.add(b.start)
        drop.add(b.end)
        if not b.matches(family):
            drop.update(range(b.start, b.end + 1))
    kept = [ln for i, ln in enumerate(lines) if i not in drop]
    return "\n".join(collapse_blank_lines(kept))
