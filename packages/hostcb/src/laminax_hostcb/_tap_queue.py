"""The host side of asynchronous taps: a bounded queue and one worker thread.

A tap's custom call copies its operands and hands them to `TAPS.put`, which returns at once, so
the computation goes on while the worker calls the tap functions, one at a time, in the order
the taps were sent. The queue holds at most `jax_host_callback_max_queue_byte_size` bytes of
operands: a producer that would overflow it waits until the worker has made room (back-pressure
pauses the computation; nothing is dropped). An exception in a tap function is logged and kept;
`barrier_wait` raises the last one as `CallbackException`.
"""

from __future__ import annotations

import collections
import logging
import threading
import traceback
from collections.abc import Callable

from laminax_hostcb._config import max_queue_byte_size

__all__ = ["TAPS", "TapQueue"]

logger = logging.getLogger("laminax_hostcb")


class TapQueue:
    """Tap invocations waiting for the worker thread, in arrival order."""

    def __init__(self, max_bytes: Callable[[], int]):
        self._max_bytes = max_bytes
        self._cond = threading.Condition()
        self._items: collections.deque = collections.deque()
        self._bytes = 0
        self._enqueued = 0
        self._done = 0
        self._worker: threading.Thread | None = None
        self._worker_idle = False  # notify only a waiting worker: a notify per tap is costly
        self._producers_waiting = 0
        self._waiters = 0
        self.last_exception: tuple[BaseException, str] | None = None

    def on_worker(self) -> bool:
        """Whether the caller is the worker thread (a tap function calling back in)."""
        return threading.current_thread() is self._worker

    def put(self, run: Callable[[], None], nbytes: int) -> None:
        """Queues `run()`; waits while the queue is full (and not empty)."""
        if self.on_worker():
            # A tap function whose own computation taps: waiting for the worker would wait
            # for ourselves, so run it now (it still comes after the tap that caused it).
            self._run(run)
            return
        with self._cond:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(
                    target=self._work, name="laminax-host-callback", daemon=True
                )
                self._worker.start()
            limit = self._max_bytes()
            while self._bytes and self._bytes + nbytes > limit:
                self._producers_waiting += 1
                self._cond.wait()
                self._producers_waiting -= 1
            self._items.append((run, nbytes))
            self._bytes += nbytes
            self._enqueued += 1
            if self._worker_idle:
                self._cond.notify_all()

    def _run(self, run: Callable[[], None]) -> None:
        try:
            run()
        except BaseException as err:  # noqa: BLE001 (the worker must survive any tap)
            formatted = traceback.format_exc()
            logger.error("Postponing exception raised in callback function: %s", formatted)
            self.last_exception = (err, formatted)

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._items:
                    self._worker_idle = True
                    self._cond.notify_all()  # wake barrier waiters: everything has run
                    self._cond.wait()
                self._worker_idle = False
                batch = list(self._items)
            for run, nbytes in batch:
                self._run(run)
                with self._cond:
                    self._items.popleft()
                    self._bytes -= nbytes
                    self._done += 1
                    if self._producers_waiting or self._waiters:
                        self._cond.notify_all()

    def wait_until_processed(self) -> None:
        """Returns once every tap queued before the call has run."""
        if self.on_worker():
            return
        with self._cond:
            target = self._enqueued
            self._waiters += 1
            try:
                while self._done < target:
                    self._cond.wait()
            finally:
                self._waiters -= 1

    def pending(self) -> tuple[int, int]:
        """(taps waiting, bytes waiting): for tests and logging."""
        with self._cond:
            return len(self._items), self._bytes

    def take_exception(self) -> tuple[BaseException, str] | None:
        """The last exception a tap raised since the previous call, and clears it."""
        last, self.last_exception = self.last_exception, None
        return last


def _max_queue_bytes() -> int:
    return max_queue_byte_size.value


TAPS = TapQueue(_max_queue_bytes)
