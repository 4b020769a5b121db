"""The runtime's index search (kafkacodec.runtime.search) against bisect."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st


@given(st.lists(st.integers(-5, 50), max_size=40).map(sorted), st.integers(-10, 60))
def test_index_search_finds_the_last_key_at_or_below_the_target(keys, target):
    import bisect

    from kafkacodec.runtime.search import last_at_or_below

    reads = []

    def key(i):
        reads.append(i)
        return keys[i]

    assert last_at_or_below(key, len(keys), target) == bisect.bisect_right(keys, target) - 1
    assert len(reads) <= max(1, len(keys)).bit_length()  # O(log n) entries read
