"""Work shared by worker processes, its results taken in order: what `rewrite --jobs` and
`verify --jobs` run their units on."""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable, Generator, Iterable
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar, cast

from ..runtime.errors import WorkerError

__all__ = ["in_order", "usable_cpus", "worker_count"]

T = TypeVar("T")

#: Seconds a worker asked to stop (SIGTERM) has before it is killed (SIGKILL).
GRACE = 5.0
#: Seconds between two reports of a worker's progress (a progress bar redraws as often).
RELAY_EVERY = 0.1
#: The kinds of a worker's messages: a unit's end (its result or exception), progress.
_DONE, _PROGRESS = "done", "progress"


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


class _RemoteTraceback(Exception):
    """The traceback of an exception a worker raised, as its __cause__ in this process."""

    def __str__(self) -> str:
        return self.args[0]


class _Relay:
    """A worker's report of where its unit is (a byte position), sent to the parent at
    most every RELAY_EVERY seconds."""

    def __init__(self, conn: Connection) -> None:
        self.conn, self.last = conn, 0.0

    def __call__(self, position: int) -> None:
        now = time.monotonic()
        if now - self.last >= RELAY_EVERY:
            self.last = now
            self.conn.send((_PROGRESS, position))


def _serve(conn: Connection, other_end: Connection | None, there: Callable[..., Any],
           relay: bool) -> None:  # fmt: skip
    """A worker: there(unit) (with relay: there(unit, report)) for each unit received, its
    result or its exception sent back, until None or the parent's end closes. Ctrl-C
    (SIGINT to the terminal's process group) is the parent's to handle, which ends the
    workers: a worker printing its own KeyboardInterrupt traceback is what an operator
    must not see."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if other_end is not None:  # forked: the parent's end, so that its death reads as EOF here
        other_end.close()
    extra = (_Relay(conn),) if relay else ()
    while True:
        try:
            unit = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if unit is None:
            return
        reply: tuple[str, bool, Any, str | None]
        try:
            reply = (_DONE, True, there(unit, *extra), None)
        except Exception as err:  # noqa: BLE001 (handed to the parent, raised there)
            reply = (_DONE, False, err, "".join(traceback.format_exception(err)))
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception:  # noqa: BLE001 (a result or an exception that does not pickle)
            text = reply[3] or f"the result of a unit of work ({type(reply[2]).__name__}) cannot be pickled"
            conn.send((_DONE, False, RuntimeError(text.strip().splitlines()[-1]), text))


class _Workers:
    """`jobs` worker processes, each with a pipe of its own: a worker that dies (a signal,
    the kernel's OOM killer) reads as the end of its pipe, never as a wait for the rest of
    a message it had begun (the hang of a shared result queue, as concurrent.futures'
    ProcessPoolExecutor has when a worker is killed mid-write), and ending them is a
    signal and a join, with no thread or lock of ours in between."""

    def __init__(self, there: Callable[..., Any], jobs: int,
                 on_progress: Callable[[int, int], None] | None = None) -> None:  # fmt: skip
        self.on_progress = on_progress
        methods = multiprocessing.get_all_start_methods()
        self.forked = "fork" in methods
        context: Any = multiprocessing.get_context("fork" if self.forked else "spawn")
        self.procs: dict[Connection, multiprocessing.process.BaseProcess] = {}
        self.idle: list[Connection] = []
        self.busy: dict[Connection, int] = {}
        self.waiting: deque[tuple[int, Any]] = deque()
        self.done: dict[int, tuple[str, bool, Any, str | None]] = {}
        try:
            for _ in range(jobs):
                ours, theirs = context.Pipe(duplex=True)
                proc = context.Process(target=_serve, args=(theirs, ours if self.forked else None, there,
                                                                     on_progress is not None),
                                       daemon=True, name="kafkacodec-worker")  # fmt: skip
                proc.start()
                theirs.close()  # before the next fork: each worker holds its own end alone
                self.procs[ours] = proc
                self.idle.append(ours)
        except BaseException:
            self.end()
            raise

    def submit(self, ticket: int, unit: Any) -> None:
        self.waiting.append((ticket, unit))
        self._dispatch()

    def _dispatch(self) -> None:
        while self.idle and self.waiting:
            conn = self.idle.pop()
            ticket, unit = self.waiting.popleft()
            self.busy[conn] = ticket
            conn.send(unit)

    def result(self, ticket: int) -> Any:
        """The result of a ticket's unit (waiting for it), or the exception it raised."""
        while ticket not in self.done:
            if not self.busy:  # every ticket taken is submitted, so one of them is this one
                raise AssertionError(f"unit {ticket} was never handed to a worker")
            for ready in wait(list(self.busy)):
                conn = cast(Connection, ready)  # wait() returns what it was given: our pipes
                try:
                    reply = conn.recv()
                except (EOFError, OSError):
                    raise self._died(conn) from None
                if reply[0] == _PROGRESS:
                    if self.on_progress is not None:
                        self.on_progress(self.busy[conn], reply[1])
                    continue
                self.done[self.busy.pop(conn)] = reply
                self.idle.append(conn)
            self._dispatch()
        _done, ok, value, text = self.done.pop(ticket)
        if ok:
            return value
        if text is not None:
            value.__cause__ = _RemoteTraceback(text)
        raise value

    def _died(self, conn: Connection) -> WorkerError:
        proc = self.procs[conn]
        proc.join(GRACE)
        code = proc.exitcode
        if code is not None and code < 0:
            how = f"was killed by {signal.Signals(-code).name}"
        elif code is not None:
            how = f"exited with status {code}"
        else:
            how = "closed its pipe"
        return WorkerError(f"worker process {proc.pid} {how} before it returned its result; "
                           "its unit of work was not done")  # fmt: skip

    def close(self) -> None:
        """The work is done: each worker told to stop, and waited for."""
        for conn in self.procs:
            try:
                conn.send(None)
            except OSError:
                pass
        for proc in self.procs.values():
            proc.join(GRACE)
        self.end()

    def end(self) -> None:
        """Stop the workers now, whatever they are doing (an interrupt, an error, a
        consumer that stopped taking results): SIGTERM, then SIGKILL after GRACE seconds
        for one still running; no process is left behind."""
        procs = list(self.procs.values())
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(GRACE)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for conn in self.procs:
            conn.close()
        self.procs.clear()


def in_order(items: Iterable[T], unit_of: Callable[[T], Any], here: Callable[..., Any],
             there: Callable[..., Any], jobs: int,
             on_progress: Callable[[T, int], None] | None = None) -> Generator[tuple[T, Any], None, None]:  # fmt: skip
    """Each item with its unit's result, in the items' order (an item whose unit is None:
    None, nothing run): here(unit) in this process when jobs is 1, else there(unit) (a
    module-level function, its unit picklable) in `jobs` worker processes at most 2 * jobs
    units ahead of the item taken (so at most that many results wait in memory). An
    exception a unit raises is raised when its item is taken; a worker that dies raises
    WorkerError then. Interrupted (Ctrl-C), failed or closed early, it ends its workers.

    With on_progress, here and there are called as f(unit, report), and what a unit
    reports (report(position), a worker's at most every RELAY_EVERY seconds) reaches
    on_progress(item, position) in this process while the items are taken."""
    if jobs <= 1:
        for item in items:
            unit = unit_of(item)
            if unit is None:
                yield item, None
            elif on_progress is None:
                yield item, here(unit)
            else:
                yield item, here(unit, functools.partial(on_progress, item))
        return
    running_items: dict[int, T] = {}
    relay = None if on_progress is None else (lambda ticket, n: on_progress(running_items[ticket], n))
    workers = _Workers(there, jobs, relay)
    window: deque[tuple[T, int | None]] = deque()
    running = 0

    def take(ticket: int) -> Any:
        try:
            return workers.result(ticket)
        finally:
            running_items.pop(ticket, None)

    try:
        for ticket, item in enumerate(items):
            unit = unit_of(item)
            if unit is not None:
                running_items[ticket] = item
                workers.submit(ticket, unit)
            window.append((item, None if unit is None else ticket))
            running += unit is not None
            while running > 2 * jobs or (window and window[0][1] is None):
                head, taken = window.popleft()
                running -= taken is not None
                yield head, None if taken is None else take(taken)
        while window:
            head, taken = window.popleft()
            yield head, None if taken is None else take(taken)
    except BaseException:
        workers.end()
        raise
    workers.close()
