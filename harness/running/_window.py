"""A sliding window of scenario runs in one pytest process.

The plugin hands the window the runs of a worker's share (or of a unit of work, or of the
whole session without pytest-xdist) in the order they should start, then waits for each run
as its first item comes up.
The window keeps `width` runs working. A run that says it is waiting on the client
(`waiting`: its drive waits for what the client does on its own) holds no place until it
says its wait is over, and a run still going after `stale` seconds is waiting too (almost
always out a bound: an answer the client never sends); either way the next run starts
beside it. At most `cap` runs are ever under way, so a client that makes every run wait
cannot start the whole unit at once.

Fixed groups (start two, wait for both) left a place idle for as long as the slower run
of the pair took: with a client that makes a run wait out a 10 s bound, 10 s of one place.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Generic, TypeVar

__all__ = ["RunWindow"]

T = TypeVar("T")

_IDLE_CHECK = 1.0
"""How often an idle dispatcher looks again though nothing woke it (a bound, not a poll)."""


class RunWindow(Generic[T]):
    """Carries out jobs in the order submitted, `width` working at once, at most `cap` in all."""

    def __init__(self, width: int, *, cap: int, stale: float) -> None:
        if width < 1 or cap < width:
            raise ValueError(f"a window needs 1 <= width <= cap, not width={width}, cap={cap}")
        self.width, self.cap, self.stale = width, cap, stale
        self._futures: dict[Hashable, Future[T]] = {}
        self._waiting: deque[tuple[Callable[[], T], Future[T]]] = deque()
        self._started: dict[Future[T], float] = {}  # under way: when each began
        self._idle: set[Future[T]] = set()  # under way, and waiting on the client
        self._threads: list[threading.Thread] = []
        self._changed = threading.Condition()
        self._closed = False
        self._dispatcher = threading.Thread(
            target=self._dispatch, name="mcp-testbench run window", daemon=True
        )
        self._dispatcher.start()

    def submit(self, key: Hashable, job: Callable[[], T]) -> Future[T]:
        """The future of `key`'s job; the job is queued the first time its key is seen."""
        with self._changed:
            if self._closed:
                raise RuntimeError("the run window is closed")
            future = self._futures.get(key)
            if future is None:
                future = self._futures[key] = Future()
                self._waiting.append((job, future))
                self._changed.notify_all()
            return future

    def waiting(self, key: Hashable, waiting: bool) -> None:
        """Whether `key`'s run is waiting on the client (then it holds no place)."""
        with self._changed:
            future = self._futures.get(key)
            if future is not None and future in self._started:
                if waiting:
                    self._idle.add(future)
                else:
                    self._idle.discard(future)
                self._changed.notify_all()

    def close(self) -> None:
        """Drop the jobs not yet started and wait for those under way (each is bounded)."""
        with self._changed:
            self._closed = True
            for _, future in self._waiting:
                future.cancel()
            self._waiting.clear()
            self._changed.notify_all()
        self._dispatcher.join()
        for thread in self._threads:
            thread.join()
        self._futures.clear()  # their results (whole runs) are no longer anybody's

    def _dispatch(self) -> None:
        with self._changed:
            while not self._closed:
                now = time.monotonic()
                working = [
                    began
                    for future, began in self._started.items()
                    if now - began < self.stale and future not in self._idle
                ]
                if self._waiting and len(working) < self.width and len(self._started) < self.cap:
                    self._start(*self._waiting.popleft())
                    continue
                # Wake when a run goes stale (or anything changes: a submit, an end).
                due = [began + self.stale - now for began in working]
                self._changed.wait(min([*due, _IDLE_CHECK]) if self._waiting else _IDLE_CHECK)

    def _start(self, job: Callable[[], T], future: Future[T]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        self._started[future] = time.monotonic()

        def carry_out() -> None:
            try:
                future.set_result(job())
            except BaseException as error:  # the item that waits for it reports it
                future.set_exception(error)
            finally:
                with self._changed:
                    del self._started[future]
                    self._idle.discard(future)
                    self._changed.notify_all()

        thread = threading.Thread(target=carry_out, name="mcp-testbench run", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()]
        self._threads.append(thread)
        thread.start()
