"""A consumer project's declared sources (`agentrc.yaml`'s `sources:`) and its lock, kept
together: `add`, `remove` and `update --ref` write the block from the lock's direct entries
(`declared_from`, `with_sources`), and `install` compares them (`mismatch`).

Pure text in, text out. Only the `sources:` block is rewritten, so the rest of the file —
its comments, its order — stays as the user wrote it.
"""

from __future__ import annotations

import json

from agentrc.patterns import pattern
from agentrc.project.model import Declared

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Optional, Sequence, Tuple

_TOP_KEY = pattern(r"^[A-Za-z_][A-Za-z0-9_-]*\s*:")


def declared_from(entries: Iterable) -> Tuple[Declared, ...]:
    """The sources the lock's direct entries (`agentrc.sources.lock.Entry`) come from, each
    with the bundles and items asked for, in a stable order."""
    by: Dict[Tuple[str, Optional[str]], Tuple[List[str], List[str]]] = {}
    for e in entries:
        if not e.direct:
            continue
        bundles, items = by.setdefault((e.source, e.ref), ([], []))
        (bundles if e.kind == "bundle" else items).append(e.name if e.kind == "bundle" else f"{e.kind}:{e.name}")
    return tuple(Declared(src, ref, tuple(sorted(b)), tuple(sorted(i)))
                 for (src, ref), (b, i) in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")))


def block(declared: Sequence[Declared]) -> str:
    """The `sources:` block for `declared` (JSON strings are YAML strings: nothing to quote
    by hand)."""
    if not declared:
        return "sources: []\n"
    lines = ["sources:\n"]
    for d in declared:
        lines.append(f"  - source: {json.dumps(d.source)}\n")
        if d.ref:
            lines.append(f"    ref: {json.dumps(d.ref)}\n")
        if d.bundles:
            lines.append(f"    bundles: [{', '.join(json.dumps(b) for b in d.bundles)}]\n")
        if d.items:
            lines.append(f"    items: [{', '.join(json.dumps(i) for i in d.items)}]\n")
    return "".join(lines)


def with_sources(text: str, declared: Sequence[Declared]) -> str:
    """`text` with its `sources:` block replaced by `declared`'s (appended when it has none)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("sources:")), None)
    if start is None:
        sep = "" if not text or text.endswith("\n") else "\n"
        return text + sep + block(declared)
    end = start + 1
    while end < len(lines) and not _TOP_KEY.match(lines[end]):
        end += 1
    return "".join(lines[:start]) + block(declared) + "".join(lines[end:])


def mismatch(declared: Sequence[Declared], entries: Iterable) -> List[str]:
    """What differs between the project file's sources and the lock's direct entries, one
    line each (none: they agree)."""
    locked = {(d.source, d.ref): d for d in declared_from(entries)}
    wanted = {(d.source, d.ref): d for d in declared}
    problems = []
    for key in sorted(set(wanted) | set(locked), key=lambda k: (k[0], k[1] or "")):
        label = key[0] + (f"@{key[1]}" if key[1] else "")
        w, h = wanted.get(key), locked.get(key)
        if h is None:
            problems.append(f"{label} is declared but not locked")
        elif w is None:
            problems.append(f"{label} is locked but not declared")
        elif (set(w.bundles), set(w.items)) != (set(h.bundles), set(h.items)):
            problems.append(f"{label} declares {_what(w)} but the lock installs {_what(h)}")
    return problems


def missing(declared: Sequence[Declared], entries: Iterable) -> Tuple[Declared, ...]:
    """The declared sources (or their bundles and items) the lock does not install yet."""
    locked = {(d.source, d.ref): d for d in declared_from(entries)}
    out = []
    for d in declared:
        h = locked.get((d.source, d.ref))
        if h is None:
            out.append(d)
            continue
        more = Declared(d.source, d.ref, tuple(b for b in d.bundles if b not in h.bundles),
                        tuple(i for i in d.items if i not in h.items))
        if more.bundles or more.items:
            out.append(more)
    return tuple(out)


def _what(d: Declared) -> str:
    parts = list(d.bundles) + list(d.items)
    return ", ".join(parts) if parts else "everything"
