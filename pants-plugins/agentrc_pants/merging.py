"""Merging thousands of digests so that an edit merges a few dozen of them again.

A registry's tree is its item directories' digests merged, and a closure's sources are its
targets' digests merged: 5,000 of each at 5,000 items. Pants 2.17 memoises a rule by its
request but not an intrinsic `Get(Digest, MergeDigests(...))` awaited inside one, so every
edit merged all 5,000 again (0.25-1.0 s of the tree's and 0.1-0.3 s of the sources' on this
machine, timed inside pantsd). Here the digests go into buckets by a stable hash of a key
(a directory, an address), each bucket's merge is a node keyed by its digests, and only the
bucket holding the edited digest is merged again, then the buckets' results (a hundred or
so). The merged digest is the same: a merge is content-addressed, whatever its grouping,
and two different files at one path fail it in a bucket as they did in the whole.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from pants.engine.fs import EMPTY_DIGEST, Digest, MergeDigests
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.logging import LogLevel

merged = 0  # digests handed to a bucket's merge, in this process (tests count the work of an edit)
DIRECT = 32  # at most this many digests are merged at once, without buckets


def bucket_count(n: int) -> int:
    """About the square root of `n`, a power of two so the buckets change only when the
    number of digests crosses a power of four (128 at 5,000 and at 10,000)."""
    return 1 << ((max(n, 1).bit_length() + 1) // 2)


def buckets(keys: Sequence[str]) -> List[List[int]]:
    """The positions of `keys`, grouped by a hash of each key that no other key changes:
    adding, removing or editing one item leaves every other bucket as it was. crc32, not
    `hash()`, which is salted per process."""
    count = bucket_count(len(keys))
    grouped: Dict[int, List[int]] = {}
    for i, key in enumerate(keys):
        grouped.setdefault(zlib.crc32(key.encode()) % count, []).append(i)
    return [grouped[b] for b in sorted(grouped)]


@dataclass(frozen=True)
class BucketMergeRequest:
    digests: Tuple[Digest, ...]


@dataclass(frozen=True)
class KeyedMergeRequest:
    """Digests to merge, each with the key that places it in a bucket, plus `extra` digests
    merged at the top (those that change with most edits, such as a registry's report)."""

    keyed: Tuple[Tuple[str, Digest], ...]
    extra: Tuple[Digest, ...] = ()


@rule(desc="Merge a bucket of agentrc digests", level=LogLevel.DEBUG)
async def merge_bucket(request: BucketMergeRequest) -> Digest:
    global merged
    merged += len(request.digests)
    return await Get(Digest, MergeDigests(request.digests))


@rule(desc="Merge agentrc digests by buckets", level=LogLevel.DEBUG)
async def merge_keyed(request: KeyedMergeRequest) -> Digest:
    keyed = [(k, d) for k, d in request.keyed if d != EMPTY_DIGEST]
    if len(keyed) <= DIRECT:
        tops = [d for _, d in keyed]
    else:
        groups = buckets([k for k, _ in keyed])
        tops = list(await MultiGet(Get(Digest, BucketMergeRequest(tuple(keyed[i][1] for i in group)))
                                   for group in groups))
    tops += [d for d in request.extra if d != EMPTY_DIGEST]
    if not tops:
        return EMPTY_DIGEST
    if len(tops) == 1:
        return tops[0]
    return await Get(Digest, MergeDigests(tops))


def rules():
    return collect_rules()
