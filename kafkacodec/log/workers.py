"""Work shared by worker processes, its results taken in order: what `rewrite --jobs` and
`verify --jobs` run their units on."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

__all__ = ["in_order", "usable_cpus", "worker_count"]

T = TypeVar("T")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, else the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def worker_count(asked: int, units: int) -> int:
    """The worker processes to start for `units` units of work when `asked` were asked
    for: never more than the units (a worker with nothing to do costs a process) nor
    than the CPUs this process may use (the work is CPU-bound: more would only wait);
    1 means none (the work runs here)."""
    return max(1, min(asked, units, usable_cpus()))


def _ignore_interrupts() -> None:
    """A worker's start: Ctrl-C (SIGINT to the terminal's process group) is the parent's
    to handle, which ends the workers; a worker printing its own KeyboardInterrupt
    traceback is what an operator must not see."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _end(pool: ProcessPoolExecutor) -> None:
    """Stop the workers now, whatever they are doing (an interrupt, an error, a consumer
    that stopped taking results): nothing is waited for, no process is left behind."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


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
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_ignore_interrupts)
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
    except BaseException:
        _end(pool)
        raise
    pool.shutdown(wait=True)
