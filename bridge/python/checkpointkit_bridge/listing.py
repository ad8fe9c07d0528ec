"""The server's list stream: LangGraph Python's list/alist driven by the
protocol's credit, and the parameter readers the server shares."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import TYPE_CHECKING, Any

from . import codec, shapes
from .codec import BadRequest

if TYPE_CHECKING:
    from .server import Request, Server

_DONE = object()


def string_param(params: dict[str, Any], name: str) -> str:
    """The string member name of params, "" when absent."""
    v = params.get(name)
    if v is None:
        return ""
    if type(v) is not str:
        raise BadRequest(f"{name}: want a string, got {codec.type_name(v)}")
    return v


def strings_param(params: dict[str, Any], name: str) -> list[str]:
    """The list-of-strings member name of params, [] when absent."""
    v = params.get(name)
    if v is None:
        return []
    if type(v) is not list or any(type(s) is not str for s in v):
        raise BadRequest(f"{name}: want a list of strings")
    return list(v)


def list_args(params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The config and keyword arguments of LangGraph Python's list for the
    protocol's list params.

    Python's only every-thread form is list(None, ...), which has no
    namespace and no checkpoint ID: with thread_id "" those are not passed,
    and what the saver returns is what the client gets.
    """
    thread = string_param(params, "thread_id")
    ns = string_param(params, "checkpoint_ns")
    all_ns = params.get("all_namespaces", False)
    if type(all_ns) is not bool:
        raise BadRequest("all_namespaces: want a boolean")
    cid = string_param(params, "checkpoint_id")
    before = string_param(params, "before")
    limit = params.get("limit", 0)
    if limit is None:
        limit = 0
    if type(limit) is not int:
        raise BadRequest("limit: want an integer")
    filt = codec.decode_map(params.get("filter"), "filter")

    config: dict[str, Any] | None = None
    if thread != "":
        configurable: dict[str, Any] = {"thread_id": thread}
        if not all_ns:
            configurable["checkpoint_ns"] = ns
        if cid != "":
            configurable["checkpoint_id"] = cid
        config = {"configurable": configurable}
    before_cfg = None
    if before != "":
        b: dict[str, Any] = {"checkpoint_id": before}
        if thread != "":
            b["thread_id"] = thread
        before_cfg = {"configurable": b}
    return config, {"filter": filt or None, "before": before_cfg, "limit": limit or None}


class _SyncCursor:
    """A sync iterator whose every step runs on one thread of its own, so
    that a saver's lock or cursor taken in the generator stays on the thread
    that took it."""

    def __init__(self, saver: Any, config: Any, kwargs: dict[str, Any]) -> None:
        self.thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="list")
        self.saver, self.config, self.kwargs = saver, config, kwargs
        self.it: Any = None

    def _next(self) -> Any:
        if self.it is None:
            self.it = iter(self.saver.list(self.config, **self.kwargs))
        return next(self.it, _DONE)

    async def next(self) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.thread, self._next)

    def close(self) -> None:
        def close() -> None:
            if self.it is not None and hasattr(self.it, "close"):
                self.it.close()

        # Queued behind a step still running, on the iterator's own thread.
        self.thread.submit(close)
        self.thread.shutdown(wait=False)


class _AsyncCursor:
    def __init__(self, saver: Any, config: Any, kwargs: dict[str, Any]) -> None:
        self.it = saver.alist(config, **kwargs)

    async def next(self) -> Any:
        try:
            return await self.it.__anext__()
        except StopAsyncIteration:
            return _DONE

    def close(self) -> None:
        aclose = getattr(self.it, "aclose", None)
        if aclose is not None:
            task = asyncio.get_running_loop().create_task(aclose())
            task.add_done_callback(lambda t: t.cancelled() or t.exception())


async def stream(server: Server, req: Request, params: dict[str, Any]) -> None:
    """Answer list: send the saver's items as credit allows; the result is null."""
    h = server.hosted(req)
    config, kwargs = list_args(params)
    credit = params.get("credit")
    if type(credit) is int and credit >= 0:
        req.credit = credit
    kinds = [_AsyncCursor, _SyncCursor] if h.mode == "async" else [_SyncCursor, _AsyncCursor]
    cursor = kinds[0](h.saver, config, kwargs)
    first = True
    try:
        while True:
            try:
                item = await cursor.next()
            except NotImplementedError:
                if not first:
                    raise
                # This form is missing: the saver's other API.
                cursor.close()
                cursor = kinds[1](h.saver, config, kwargs)
                item = await cursor.next()
            first = False
            if item is _DONE:
                return None
            wire = server.encoded(shapes.tuple_to_wire, item, "list")
            while req.credit <= 0:
                req.wake.clear()
                await req.wake.wait()
            req.credit -= 1
            server.send({"id": req.id, "item": wire})
    finally:
        cursor.close()
