"""The tree hash of spec 003's `integrity` values, computed the way the OAS kernel does, so
a lock either tool writes verifies with the other.

`sha256-<hex>` of one SHA-256 over the tree's entries, walked depth first, the entries of
each directory in the order of JavaScript's `String.prototype.localeCompare` (ICU's root
collation: punctuation, then digits, then letters ignoring case, lower case first on a tie).
A regular file adds `<relative path>\\0file\\0<its bytes>\\0`, a symbolic link
`<relative path>\\0symlink\\0<its target as written>\\0` (never followed), with '/' between
the path's parts; a directory adds nothing of its own (so an empty one adds nothing), and
other file types nothing. Two variants: a capability artifact's hash covers every entry; a
package payload's leaves out every entry named `node_modules` and an `oas-lock.json` at the
root.

The order is reproduced exactly for names of printable ASCII characters, which is what
packages hold; a name with any other character is refused (`collation_key` raises), since a
guessed order would give a hash the kernel does not.
"""

from __future__ import annotations

import hashlib

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Iterable, Tuple

# Printable ASCII in ICU root collation order (each letter: its lower case, then upper case).
_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789" + "".join(c + c.upper() for c in "abcdefghijklmnopqrstuvwxyz")
_PRIMARY = {}
_TERTIARY = {}
for _i, _c in enumerate(_ORDER):
    _low = _c.lower()
    _PRIMARY[_c] = _ORDER.index(_low) if _c.isalpha() else _i
    _TERTIARY[_c] = 1 if _c.isupper() else 0


class UnorderableName(ValueError):
    """A file name whose place in the kernel's order agentrc cannot reproduce."""


def collation_key(name: str) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """Sort key giving `localeCompare`'s order for names of printable ASCII."""
    try:
        return tuple(_PRIMARY[c] for c in name), tuple(_TERTIARY[c] for c in name)
    except KeyError:
        bad = next(c for c in name if c not in _PRIMARY)
        raise UnorderableName(f"{name!r} holds {bad!r}; integrity values are defined for names of printable "
                              "ASCII characters") from None


FILE = "file"
SYMLINK = "symlink"


def digest(entries: Iterable[Tuple[str, str, Iterable[bytes]]]) -> str:
    """`sha256-<hex>` of (relative path, FILE or SYMLINK, content chunks) entries, already in
    walk order."""
    h = hashlib.sha256()
    for rel, kind, chunks in entries:
        h.update(rel.encode("utf-8"))
        h.update(b"\0" + kind.encode("ascii") + b"\0")
        for chunk in chunks:
            h.update(chunk)
        h.update(b"\0")
    return "sha256-" + h.hexdigest()


def tree_digest(entries: Iterable[Tuple[str, str, bytes]], payload: bool = False) -> str:
    """The integrity of a tree given as (relative path with '/', FILE or SYMLINK, bytes or
    link target) entries in any order: the value `inputs.captree.tree_hash` computes for
    the same tree on disk, for a caller holding contents rather than a directory (the Pants
    backend's digests). `payload` leaves out what a package payload's integrity does.
    Raises UnorderableName."""

    def key(rel: str):
        return tuple(collation_key(part) for part in rel.split("/"))

    kept = []
    for rel, kind, data in entries:
        parts = rel.split("/")
        if payload and ("node_modules" in parts[:-1] or parts[-1] == "node_modules" or rel == "oas-lock.json"):
            continue
        kept.append((key(rel), rel, kind, data))
    kept.sort(key=lambda e: e[0])
    return digest((rel, kind, (data,)) for _k, rel, kind, data in kept)
