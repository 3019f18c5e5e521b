"""Immutable, hashable containers for free-form data (metadata, passthrough blocks).

The model is made of frozen dataclasses so Pants can hash and cache it; free-form YAML
values therefore become `FrozenMap` (an ordered, hashable mapping) and tuples.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Optional, Tuple


class FrozenMap(Mapping):
    """An insertion-ordered, immutable, hashable mapping."""

    __slots__ = ("_pairs", "_index", "_hash")

    def __init__(self, pairs: Any = ()):
        if isinstance(pairs, Mapping):
            pairs = pairs.items()
        self._pairs: Tuple[Tuple[Any, Any], ...] = tuple(pairs)
        self._index = {k: v for k, v in self._pairs}
        self._hash: Optional[int] = None

    def __getitem__(self, key: Any) -> Any:
        return self._index[key]

    def __iter__(self) -> Iterator[Any]:
        return (k for k, _ in self._pairs)

    def __len__(self) -> int:
        return len(self._pairs)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._pairs)
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._index == other._index
        if isinstance(other, Mapping):
            return self._index == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({dict(self._pairs)!r})"

    def __reduce__(self):
        # Only the pairs: the index and the hash are rebuilt (keeps build memos small), by
        # `_restore`, which skips __init__'s check for a Mapping (typing's isinstance was most
        # of the cost of reading a one-edit build's memo entries back).
        return (_restore, (self._pairs,))


def _restore(pairs: Tuple[Tuple[Any, Any], ...]) -> FrozenMap:
    restored = FrozenMap.__new__(FrozenMap)
    restored._pairs = pairs
    restored._index = dict(pairs)
    restored._hash = None
    return restored


def freeze(value: Any) -> Any:
    """Recursively turn dicts into FrozenMap and lists into tuples."""
    if isinstance(value, Mapping):
        return FrozenMap((k, freeze(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The inverse of `freeze`: plain dicts and lists, for serialisers."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value
