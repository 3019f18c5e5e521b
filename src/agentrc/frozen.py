"""Immutable, hashable containers for free-form data (metadata, passthrough blocks).

The model is made of frozen dataclasses so Pants can hash and cache it; free-form YAML
values therefore become `FrozenMap` (an ordered, hashable mapping) and tuples.
"""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, ItemsView, Iterator, KeysView, Optional, Tuple, ValuesView


class FrozenMap(Mapping):
    """An insertion-ordered, immutable, hashable mapping.

    One dict holds it (insertion-ordered since Python 3.7), not a tuple of pairs beside
    one: a cold build at 5,000 items made 36,000 of these, and the pairs and their tuple
    were 6 MB of the parsed items. Keys are unique, as in any mapping."""

    __slots__ = ("_index", "_hash")

    def __init__(self, pairs: Any = ()):
        self._index: Dict[Any, Any] = dict(pairs)
        self._hash: Optional[int] = None

    def __getitem__(self, key: Any) -> Any:
        return self._index[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def get(self, key: Any, default: Any = None) -> Any:
        return self._index.get(key, default)

    def keys(self) -> KeysView[Any]:
        return self._index.keys()

    def values(self) -> ValuesView[Any]:
        return self._index.values()

    def items(self) -> ItemsView[Any, Any]:
        return self._index.items()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self._index.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._index == other._index
        if isinstance(other, Mapping):
            return self._index == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._index!r})"

    def __reduce__(self):
        # Only the pairs (as the tuple of them earlier versions kept, so memos and their
        # digests are unchanged): the dict and the hash are rebuilt, by `_restore`.
        return (_restore, (tuple(self._index.items()),))


def _restore(pairs: Tuple[Tuple[Any, Any], ...]) -> FrozenMap:
    restored = FrozenMap.__new__(FrozenMap)
    restored._index = dict(pairs)
    restored._hash = None
    return restored


_PLAIN = (str, int, float, bool, type(None))


def freeze(value: Any) -> Any:
    """Recursively turn dicts into FrozenMap and lists into tuples."""
    kind = type(value)
    if kind in _PLAIN:  # most values: no ABC check (an isinstance against Mapping is slow)
        return value
    if kind is dict or isinstance(value, Mapping):
        frozen = FrozenMap.__new__(FrozenMap)
        frozen._index = {k: freeze(v) for k, v in value.items()}
        frozen._hash = None
        return frozen
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
