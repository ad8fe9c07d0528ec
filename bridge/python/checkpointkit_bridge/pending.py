"""The bookkeeping of open requests for client.py: a request waiting for
its answer (Call) and the items of a list stream on their way from the
reader thread to the one thread or asyncio task that consumes them (Stream).
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from concurrent.futures import Future
from typing import Any


class Stream:
    """The items of one list stream, handed from the reader thread to one consumer (a thread or a task)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._items: collections.deque[Any] = collections.deque()
        self._done = False
        self._error: BaseException | None = None
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None

    def push(self, item: Any) -> None:
        with self._cond:
            self._items.append(item)
            self._wake()

    def finish(self, error: BaseException | None) -> None:
        with self._cond:
            if self._done:
                return
            self._done = True
            self._error = error
            self._wake()

    def _wake(self) -> None:
        self._cond.notify_all()
        if self._waiter is not None:
            loop, fut = self._waiter
            self._waiter = None
            try:
                loop.call_soon_threadsafe(_resolve, fut)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

    def next_sync(self, deadline: float | None) -> tuple[bool, Any]:
        """Return (True, item), or (False, None) at the end; raise the stream's error or TimeoutError."""
        with self._cond:
            while True:
                if self._items:
                    return True, self._items.popleft()
                if self._done:
                    if self._error is not None:
                        raise self._error
                    return False, None
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError
                self._cond.wait(left)

    async def next_async(self) -> tuple[bool, Any]:
        """Like next_sync, for a task."""
        loop = asyncio.get_running_loop()
        while True:
            with self._cond:
                if self._items:
                    return True, self._items.popleft()
                if self._done:
                    if self._error is not None:
                        raise self._error
                    return False, None
                fut: asyncio.Future[None] = loop.create_future()
                self._waiter = (loop, fut)
            try:
                await fut
            finally:
                with self._cond:
                    if self._waiter is not None and self._waiter[1] is fut:
                        self._waiter = None


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Call:
    """One open request."""

    __slots__ = ("id", "method", "future", "stream")

    def __init__(self, id: int, method: str, stream: Stream | None) -> None:
        self.id = id
        self.method = method
        self.future: Future[Any] = Future()
        self.stream = stream

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        if self.future.done():
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(result)
        if self.stream is not None:
            self.stream.finish(error)
