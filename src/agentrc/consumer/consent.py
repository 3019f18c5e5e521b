"""The consent gate of the consumer workflow: what a source would let run, asked before
it is installed (`agentrc.sources.surface` says what counts and how consent is recorded).

`add`, `update` and `install` call `gate` after the sources are read and checked and
before anything is written: an entry whose executable surface (hook commands, MCP server
commands and URLs, executable scripts, plugins) has a digest the lock as read does not
record as trusted needs the consumer's word (`trust`); without it every such hook, server,
script and plugin is AR229 and nothing is written. `remove` takes things away and asks
nothing. `hidden_text` warns about invisible and bidirectional control characters in the
fetched text of what is installed (AR240), which can hide instructions from a reviewer.
"""

from __future__ import annotations

from dataclasses import replace

from agentrc.diagnostics import Diagnostics
from agentrc.model import Registry, SourceTree
from agentrc.sources import surface
from agentrc.sources.lock import Entry
from agentrc.text.shown import describe, hidden_characters

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple
    Surfaces = Dict[str, Tuple[surface.Exposure, ...]]
MAX_HIDDEN_PER_FILE = 3


def surfaces_of(registry: Registry, entries: Iterable[Entry]) -> Surfaces:
    """Each entry's executable surface, by entry id."""
    out: Surfaces = {}
    for e in entries:
        if e.kind == "bundle":
            b = registry.bundle(e.name)
            out[e.id] = surface.of_bundle(b) if b is not None else ()
        else:
            it = registry.item(e.kind, e.name)  # type: ignore[arg-type]  # Kind is a str enum
            out[e.id] = surface.of_item(it) if it is not None else ()
    return out


def approved(*locks: Optional[Sequence[Entry]]) -> Dict[Tuple[str, str], str]:
    """(entry id, source) -> the surface digest a lock records as consented."""
    out: Dict[Tuple[str, str], str] = {}
    for entries in locks:
        for e in entries or ():
            if e.trusted is not None:
                out[(e.id, e.source)] = e.trusted
    return out


def gate(entries: Sequence[Entry], surfaces: Surfaces, consented: Dict[Tuple[str, str], str],
         trust: Optional[bool], diags: Diagnostics) -> Tuple[Tuple[Entry, ...], Tuple[surface.Exposure, ...]]:
    """The entries with the consent they carry (`trusted`), and what still needs consent.
    `trust` True: the consumer consents to all; False: only what the lock already records;
    None: nothing is asked (a removal), consent is carried over where the surface is unchanged.
    Each exposure that needs consent is an AR229 error in `diags`."""
    out: List[Entry] = []
    needed: List[surface.Exposure] = []
    for e in entries:
        exposures = surfaces.get(e.id, ())
        digest = surface.digest(exposures)
        if digest is None:
            out.append(replace(e, trusted=None))
        elif trust or consented.get((e.id, e.source)) == digest:
            out.append(replace(e, trusted=digest))
        else:
            out.append(replace(e, trusted=None))
            if trust is not None:
                needed.extend(exposures)
    for x in needed:
        diags.error(x.path, x.pos, "AR229", f"{x.shown()}: not approved; run again with --trust to install it, "
                    "or answer y at the prompt")
    return tuple(out), tuple(needed)


def _below(path: str, dirs: Set[str]) -> bool:
    """Whether `path` starts with one of `dirs` and a '/': each of its prefixes that ends
    before a '/' looked up (a file's depth of lookups, not one comparison per item: a
    source of 1,000 entries compared each of its files with 1,000 directories)."""
    end = path.rfind("/")
    while end >= 0:
        if path[:end] in dirs:
            return True
        end = path.rfind("/", 0, end)
    return False


def _non_ascii_text(content: bytes) -> Optional[str]:
    """`content` as text, when it may hold a hidden character: None for ASCII (no hidden
    character is ASCII: neither decoded nor searched, most of an install's files) and for
    bytes that are not UTF-8."""
    if content.isascii():
        return None
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None


def hidden_text(tree: SourceTree, registry: Registry, entries: Iterable[Entry], diags: Diagnostics) -> None:
    """AR240 for hidden Unicode in the files of `entries` (their item directories and
    bundle files), a few per file."""
    bundles: List[str] = []  # bundle files' paths: a file whose path starts with one (as ever)
    dirs: Set[str] = set()  # item directories: a file below one
    for e in entries:
        if e.kind == "bundle":
            b = registry.bundle(e.name)
            if b is not None:
                bundles.append(b.path)
        else:
            it = registry.item(e.kind, e.name)  # type: ignore[arg-type]
            if it is not None:
                dirs.add(it.directory.rstrip("/"))
    if not bundles and not dirs:
        return
    starts = tuple(bundles)
    for f in tree.files:
        if not (_below(f.path, dirs) or (starts and f.path.startswith(starts))):
            continue
        text = _non_ascii_text(f.content)
        if text is None:
            continue
        for line, col, char in hidden_characters(text)[:MAX_HIDDEN_PER_FILE]:
            diags.warning(f.path, (line, col), "AR240", f"{describe(char)} in fetched text: it is invisible in "
                          "most editors and can hide instructions")
