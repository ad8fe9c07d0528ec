"""Serves LangGraph Python checkpoint savers over the checkpointkit bridge
protocol (../../PROTOCOL.md) on stdin/stdout, so that checkpointkit's
conformance suite can judge them.

    python -m checkpointkit_bridge serve module:factory [--name NAME]

Every `open` calls the factory for a saver over fresh, isolated storage;
`close` and the end of the session release it. The server only translates:
what the saver stores, returns or raises is reported as it is. It adds no
locking: requests run concurrently (sync saver methods in worker threads),
so a saver that is not safe for concurrent use shows it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import sys
import threading
from collections.abc import Callable
from importlib import metadata as importlib_metadata
from typing import Any

from . import codec, hosting, listing, shapes
from .snapshot import HAS_DELTA_SNAPSHOT
from .codec import BadRequest, BridgeError
from .listing import string_param, strings_param
from .wire import message_line, parse_line

PROTOCOL = "checkpointkit-bridge"
VERSION = 1

# Methods that change storage: once the saver call has started, its real
# outcome is the answer, also after a cancel or the deadline.
WRITES = frozenset({"close", "put", "put_writes", "delete_thread", "copy_thread", "delete_for_runs", "prune"})
# How long the end of the session waits for open requests before abandoning them.
DRAIN_SECONDS = 3.0
# How long closing one saver at the end of the session may take.
CLOSE_SECONDS = 10.0
PRUNE_STRATEGIES = {"keep_latest": "keep_latest", "delete_all": "delete"}


def log(*args: Any) -> None:
    print("lgpy-server:", *args, file=sys.stderr, flush=True)


class AnswerNotCarried(codec.UnsupportedValue):
    """A saver's answer holds a value the encoding cannot carry."""


class Request:
    """One open request: its task, why it was stopped, and list credit."""

    def __init__(self, msg: dict[str, Any]) -> None:
        self.id: int = msg["id"]
        self.method: str = msg["method"]
        self.msg = msg
        self.task: asyncio.Task[None] | None = None
        self.stopped: BridgeError | None = None  # cancel or deadline
        self.started = False  # handle() runs: a cancel may interrupt it
        self.writing = False  # a write's saver call has started
        self.credit: float = float("inf")
        self.wake = asyncio.Event()
        self.timer: asyncio.TimerHandle | None = None


class Server:
    """A session of the protocol over one pair of pipes."""

    def __init__(self, factory: Callable[[], Any], name: str | None, out: Any) -> None:
        self.factory = factory
        self.name = name
        self.out = out
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="saver")
        self.savers: dict[str, hosting.Hosted] = {}
        self.inflight: dict[int, Request] = {}
        self.seq = itertools.count(1)
        self.saver_class: type | None = None
        self.ending = False
        self.closed_out = False

    # --- output -------------------------------------------------------------

    def send(self, msg: dict[str, Any]) -> None:
        if self.closed_out:
            return
        try:
            self.out.write(message_line(msg))
            self.out.flush()
        except (BrokenPipeError, ValueError) as err:
            # The client is gone: nothing more can be answered.
            log(f"stdout: {err}")
            self.closed_out = True

    def send_error(self, rid: int, code: str, message: str) -> None:
        self.send({"id": rid, "error": {"code": code, "message": message}})

    # --- input --------------------------------------------------------------

    def on_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            msg = parse_line(line)
        except BadRequest as err:
            log(f"ignoring a line that is not a JSON object ({err}): {line[:200]!r}")
            self.send_error(0, codec.BAD_REQUEST, str(err))
            return
        rid = msg.get("id")
        if type(rid) is not int or rid <= 0:
            log(f"ignoring a message without a positive integer id: {line[:200]!r}")
            self.send_error(0, codec.BAD_REQUEST, "message without a positive integer id")
            return
        if msg.get("cancel") is True:
            req = self.inflight.get(rid)
            if req:
                self.stop(req, BridgeError(f"{req.method}: request {rid} canceled", codec.CANCELED))
            return
        if "credit" in msg and "method" not in msg:
            req = self.inflight.get(rid)
            k = msg["credit"]
            if req and type(k) is int and k > 0:
                req.credit += k
                req.wake.set()
            return
        if type(msg.get("method")) is not str:
            self.send_error(rid, codec.BAD_REQUEST, "message has no method")
            return
        if rid in self.inflight:
            self.send_error(rid, codec.BAD_REQUEST, f"request id {rid} is already open")
            return
        if self.ending:
            self.send_error(rid, codec.CANCELED, "the server is shutting down")
            return
        req = Request(msg)
        self.inflight[rid] = req
        timeout = msg.get("timeout_ms")
        if type(timeout) in (int, float):
            err = BridgeError(f"{req.method}: deadline exceeded (timeout_ms {timeout})", codec.DEADLINE_EXCEEDED)
            if timeout <= 0:
                req.stopped = err
            else:
                req.timer = asyncio.get_running_loop().call_later(timeout / 1000, self.stop, req, err)
        req.task = asyncio.create_task(self.handle(req))

    def stop(self, req: Request, why: BridgeError) -> None:
        """Cancel a request or let its deadline pass: a read is stopped at
        once; a write whose saver call has started is left to finish."""
        if req.stopped is None:
            req.stopped = why
        # A task that has not started yet sees req.stopped when it does.
        if req.started and not req.writing and req.task is not None:
            req.task.cancel()

    # --- dispatch -------------------------------------------------------------

    async def handle(self, req: Request) -> None:
        req.started = True
        try:
            if req.stopped is not None:
                raise req.stopped
            method = getattr(self, "m_" + req.method, None)
            if method is None:
                raise BadRequest(f"unknown method {req.method!r}")
            params = req.msg.get("params")
            if params is None:
                params = {}
            if type(params) is not dict:
                raise BadRequest("params: want an object")
            result = await method(req, params)
            self.send({"id": req.id, "result": result})
        except asyncio.CancelledError:
            why = req.stopped or BridgeError(f"{req.method}: canceled", codec.CANCELED)
            self.send_error(req.id, why.code, str(why))
        except BaseException as err:  # noqa: BLE001 - every failure is an answer
            if req.stopped is not None and not req.writing:
                self.send_error(req.id, req.stopped.code, str(req.stopped))
            else:
                self.send_error(req.id, hosting.error_code(err, req.method, _params(req)), self.describe(req, err))
        finally:
            if req.timer:
                req.timer.cancel()
            self.inflight.pop(req.id, None)

    def describe(self, req: Request, err: BaseException) -> str:
        if isinstance(err, AnswerNotCarried):
            return str(err)
        if isinstance(err, BridgeError):
            return f"{req.method}: {err}"
        p = req.msg.get("params") or {}
        thread = None
        if isinstance(p, dict):
            cfg = p.get("config")
            thread = cfg.get("thread_id") if isinstance(cfg, dict) else p.get("thread_id", p.get("src"))
        where = req.method if thread is None else f"{req.method} (thread {thread!r})"
        cls = self.saver_class.__name__ if self.saver_class else "saver"
        return f"{cls}.{where}: {codec.type_name(err)}: {err}"

    def hosted(self, req: Request) -> hosting.Hosted:
        h = self.savers.get(req.msg.get("saver"))  # type: ignore[arg-type]
        if h is None:
            raise BadRequest(f"unknown saver {req.msg.get('saver')!r}")
        return h

    async def call(self, req: Request, h: hosting.Hosted, name: str, *args: Any, **kwargs: Any) -> Any:
        if req.method in WRITES:
            req.writing = True
        return await hosting.call(h, self.pool, name, *args, **kwargs)

    def encoded(self, fn: Callable[..., Any], value: Any, what: str) -> Any:
        """fn(value), where a value the encoding cannot carry is the saver's
        answer: unsupported_value naming its Python type."""
        try:
            return fn(value)
        except codec.UnsupportedValue as err:
            cls = self.saver_class.__name__ if self.saver_class else "the saver"
            raise AnswerNotCarried(f"{cls}.{what} answered with a value the bridge cannot carry: {err}") from None

    # --- methods ------------------------------------------------------------

    async def m_hello(self, req: Request, params: dict[str, Any]) -> Any:
        if params.get("version") != VERSION:
            log(f"client speaks protocol version {params.get('version')}; this server speaks {VERSION}")
        if self.saver_class is None:
            # Open one saver to learn its class (capabilities, name).
            h = await hosting.open_saver(self.factory, self.pool)
            self.saver_class = type(h.saver)
            await h.close()
        cls = self.saver_class
        # delta_history wherever the method exists: BaseCheckpointSaver's
        # default walk gives it to every saver on a LangGraph with delta
        # channels (PROTOCOL.md, "delta_history"); older ones have neither.
        caps = ["open", "next_version"] + [m for m in hosting.OPTIONAL if hosting.overrides(cls, m)]
        if hasattr(cls, "get_delta_channel_history"):
            caps.append("delta_history")
        hello: dict[str, Any] = {"protocol": PROTOCOL, "version": VERSION, "name": self.name or describe_class(cls), "capabilities": caps}
        if not HAS_DELTA_SNAPSHOT:
            hello["unsupported"] = ["delta_channels"]
        return hello

    async def m_open(self, req: Request, params: dict[str, Any]) -> Any:
        # open is a read: a cancel or the deadline answers at once. A saver
        # that opens after that is closed again, so its storage is released.
        opening = asyncio.ensure_future(hosting.open_saver(self.factory, self.pool))
        try:
            h = await asyncio.shield(opening)
        except asyncio.CancelledError:
            opening.add_done_callback(self._close_orphan)
            raise
        if self.saver_class is None:
            self.saver_class = type(h.saver)
        sid = f"s{next(self.seq)}"
        self.savers[sid] = h
        return {"saver": sid}

    def _close_orphan(self, opening: asyncio.Future[hosting.Hosted]) -> None:
        if opening.cancelled() or opening.exception() is not None:
            return
        task = asyncio.ensure_future(opening.result().close())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def m_close(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        req.writing = True
        del self.savers[req.msg["saver"]]
        await h.close()
        return None

    async def m_put(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        config = shapes.config_from_wire(params.get("config"))
        if type(params.get("checkpoint")) is not dict:
            raise BadRequest("checkpoint: want an object")
        cp = shapes.checkpoint_from_wire(params["checkpoint"])
        md = codec.decode_map(params.get("metadata"), "metadata")
        nv = shapes.versions_from_wire(params.get("new_versions"), "new_versions")
        out = await self.call(req, h, "put", config, cp, md, nv)
        return {"config": self.encoded(shapes.config_to_wire, out, "put")}

    async def m_put_writes(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        config = shapes.config_from_wire(params.get("config"))
        writes = shapes.decode_writes(params.get("writes"))
        task_id = string_param(params, "task_id")
        task_path = string_param(params, "task_path")
        await self.call(req, h, "put_writes", config, writes, task_id, task_path=task_path)
        return None

    async def m_get_tuple(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        config = shapes.config_from_wire(params.get("config"))
        t = await self.call(req, h, "get_tuple", config)
        return None if t is None else self.encoded(shapes.tuple_to_wire, t, "get_tuple")

    async def m_delete_thread(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        await self.call(req, h, "delete_thread", string_param(params, "thread_id"))
        return None

    async def m_copy_thread(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        await self.call(req, h, "copy_thread", string_param(params, "src"), string_param(params, "dst"))
        return None

    async def m_delete_for_runs(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        await self.call(req, h, "delete_for_runs", strings_param(params, "run_ids"))
        return None

    async def m_prune(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        threads = strings_param(params, "thread_ids")
        strategy = string_param(params, "strategy")
        if strategy not in PRUNE_STRATEGIES:
            # No Python strategy has this name: nothing to hand the saver.
            raise codec.InvalidArgument(f"unknown strategy {strategy!r} (want keep_latest or delete_all)")
        await self.call(req, h, "prune", threads, strategy=PRUNE_STRATEGIES[strategy])
        return None

    async def m_next_version(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        current = string_param(params, "current")
        saver = h.saver
        loop = asyncio.get_running_loop()

        def next_version() -> Any:
            if current == "":
                return saver.get_next_version(None, None)
            try:
                return saver.get_next_version(current, None)
            except NotImplementedError:
                # BaseCheckpointSaver's default counts in ints: give it the
                # int a decimal string stands for.
                n = shapes.version_from_wire(current, "current", numeric=True)
                if type(n) is not int:
                    raise
                return saver.get_next_version(n, None)

        v = await loop.run_in_executor(self.pool, next_version)
        return {"version": shapes.version_to_wire(v, "next version")}

    async def m_delta_history(self, req: Request, params: dict[str, Any]) -> Any:
        h = self.hosted(req)
        config = shapes.config_from_wire(params.get("config"))
        channels = strings_param(params, "channels")
        histories = await self.call(req, h, "get_delta_channel_history", config=config, channels=channels)
        return self.encoded(shapes.histories_to_wire, histories, "get_delta_channel_history")

    async def m_list(self, req: Request, params: dict[str, Any]) -> Any:
        return await listing.stream(self, req, params)

    # --- session ------------------------------------------------------------

    async def serve(self, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                line = await reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as err:
                if err.partial.strip():
                    self.on_line(err.partial)
                break
            except asyncio.LimitOverrunError:
                log("a line exceeds the read limit; ending the session")
                break
            self.on_line(line)
        await self.shutdown()

    async def shutdown(self) -> None:
        self.ending = True
        # No more credit can arrive: streams may finish without it.
        for req in self.inflight.values():
            req.credit = float("inf")
            req.wake.set()
        tasks = [r.task for r in self.inflight.values() if r.task]
        if tasks:
            await asyncio.wait(tasks, timeout=DRAIN_SECONDS)
        for req in list(self.inflight.values()):
            self.stop(req, BridgeError("session ended", codec.CANCELED))
        for sid, h in list(self.savers.items()):
            try:
                await asyncio.wait_for(h.close(), CLOSE_SECONDS)
            except BaseException as err:  # noqa: BLE001
                log(f"closing saver {sid}: {codec.type_name(err)}: {err}")
        self.savers.clear()


def _params(req: Request) -> dict[str, Any]:
    p = req.msg.get("params")
    return p if type(p) is dict else {}


def describe_class(cls: type) -> str:
    """A saver's name for hello: its class and the version of its package."""
    dist = {
        "langgraph.checkpoint.memory": "langgraph-checkpoint",
        "langgraph.checkpoint.sqlite": "langgraph-checkpoint-sqlite",
        "langgraph.checkpoint.postgres": "langgraph-checkpoint-postgres",
        "langgraph.checkpoint.mongodb": "langgraph-checkpoint-mongodb",
    }
    mod = cls.__module__
    for prefix, pkg in dist.items():
        if mod.startswith(prefix):
            try:
                return f"LangGraph Python {cls.__name__} ({pkg} {importlib_metadata.version(pkg)})"
            except importlib_metadata.PackageNotFoundError:
                break
    return f"{mod}.{cls.__qualname__}"


def _feed(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    for chunk in iter(lambda: sys.stdin.buffer.read1(1 << 16), b""):
        loop.call_soon_threadsafe(reader.feed_data, chunk)
    loop.call_soon_threadsafe(reader.feed_eof)


async def _main(factory: Callable[[], Any], name: str | None) -> None:
    # Keep the protocol's stdout to ourselves: anything else printed (by a
    # saver, a driver, C code) goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 30)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    except ValueError:
        # Not a pipe (a file, say): read it on a thread.
        threading.Thread(target=_feed, args=(loop, reader), daemon=True).start()
    server = Server(factory, name, out)
    loop.set_default_executor(server.pool)
    await server.serve(reader)


def serve(factory_spec: str, name: str | None = None) -> None:
    """Serve the savers of factory_spec ("module:function") on stdin/stdout
    until stdin ends; then exit with status 0."""
    factory = hosting.load_factory(factory_spec)
    try:
        asyncio.run(_main(factory, name))
    except BrokenPipeError:
        log("stdout closed")
    finally:
        sys.stderr.flush()
        # Worker threads stuck in a saver call must not keep the process alive.
        os._exit(0)
