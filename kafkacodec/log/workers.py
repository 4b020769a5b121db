"""Work shared by worker processes, its results taken in order: what `rewrite --jobs` and
`verify --jobs` run their units on."""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

__all__ = ["in_order"]

T = TypeVar("T")


def in_order(items: Iterable[T], unit_of: Callable[[T], Any], here: Callable[[Any], Any],
             there: Callable[[Any], Any], jobs: int) -> Generator[tuple[T, Any], None, None]:  # fmt: skip
    """Each item with its unit's result, in the items' order (an item whose unit is None:
    None, nothing run): here(unit) in this process when jobs is 1, else there(unit) (a
    module-level function, its unit picklable) in `jobs` worker processes at most 2 * jobs
    units ahead of the item taken (so at most that many results wait in memory). An
    exception a unit raises is raised when its item is taken."""
    if jobs <= 1:
        for item in items:
            unit = unit_of(item)
            yield item, None if unit is None else here(unit)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    pool = ProcessPoolExecutor(jobs, mp_context=context)
    window: deque[tuple[T, Future | None]] = deque()
    running = 0
    try:
        for item in items:
            unit = unit_of(item)
            window.append((item, None if unit is None else pool.submit(there, unit)))
            running += unit is not None
            while running > 2 * jobs or (window and window[0][1] is None):
                head, future = window.popleft()
                running -= future is not None
                yield head, None if future is None else future.result()
        while window:
            head, future = window.popleft()
            yield head, None if future is None else future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
