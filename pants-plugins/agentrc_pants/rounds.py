"""A MultiGet in rounds: a bounded number of requests under way at once.

Pants starts every Get of a MultiGet at once, and each one under way holds its task's state
until it completes. At 10,000 items the index's 10,000 entrypoint peeks were all under way
together, and pantsd's anonymous memory rose by 1.4 GB until the last of them completed (then
fell back at once); the closure's sources and the item directories' nodes did the same on a
smaller scale. In rounds of a few hundred, the peak is what a round holds, and two cores
are kept as busy: the rules are Python, which runs one at a time anyway.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from pants.engine.rules import MultiGet

IN_FLIGHT = 500  # requests (or, with `weights`, the work they stand for) under way at once


async def in_rounds(gets: Sequence[Any], weights: Optional[Sequence[int]] = None) -> Tuple[Any, ...]:
    """`await MultiGet(gets)`, a round at a time: consecutive Gets whose `weights` (1 each by
    default; a bucket's count of members) add up to at most IN_FLIGHT, one Get at least."""
    out: List[Any] = []
    for start, end in _rounds([1] * len(gets) if weights is None else list(weights)):
        out.extend(await MultiGet(gets[start:end]))
    return tuple(out)


def _rounds(weights: Sequence[int]) -> List[Tuple[int, int]]:
    """(start, end) of each round over `weights`."""
    out: List[Tuple[int, int]] = []
    start, load = 0, 0
    for i, weight in enumerate(weights):
        if i > start and load + weight > IN_FLIGHT:
            out.append((start, i))
            start, load = i, 0
        load += weight
    if start < len(weights):
        out.append((start, len(weights)))
    return out
