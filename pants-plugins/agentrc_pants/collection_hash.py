"""A fix for Pants 2.17's `Collection.__hash__`, applied when the backend loads.

`pants.engine.collection.Collection` sets `__hash__ = Tuple.__hash__`, which is the hash of
the `typing.Tuple` object itself: every Collection (`CreateDigest`, `Addresses`, ...) hashes
to one constant. The engine interns each `Get`'s input in a hash table, so every new
`CreateDigest` was compared, byte for byte, with every one interned before it: quadratic
in the number of targets packaged. At 5,000 items a py-spy profile of a cold
`pants package ::` had 44% of all samples in those comparisons (docs/benchmarks.md).

The fix gives Collections the hash of their elements, which agrees with their `__eq__`
(same type and equal elements). It is applied only when the constant hash is seen, so a
Pants that fixed it is left alone.
"""

from __future__ import annotations

from pants.engine.collection import Collection


class _Probe(Collection[int]):
    pass


def broken() -> bool:
    return hash(_Probe((1,))) == hash(_Probe((2, 3)))


def apply() -> bool:
    """Give Collection an element-wise hash if its hash is constant; True when it was."""
    if not broken():
        return False
    Collection.__hash__ = tuple.__hash__  # type: ignore[assignment]
    return True


APPLIED = apply()
