"""Index search: the binary search Kafka's index files are read with."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["last_at_or_below"]


def last_at_or_below(key: Callable[[int], int], count: int, target: int) -> int:
    """The position of the last of `count` entries whose key is <= target, or -1; `key(i)`
    reads entry i's key (non-decreasing in i), O(log count) of them. Kafka's
    AbstractIndex.largestLowerBoundSlotFor answers the same (it searches the index's warm
    last 8 KB first, for the page cache, with the same result)."""
    lo, hi = 0, count - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        if key(mid) <= target:
            found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return found
