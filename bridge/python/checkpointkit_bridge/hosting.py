"""Hosting one LangGraph Python saver for the server: opening it from a
factory, calling its sync or async API, and mapping its exceptions to the
protocol's error codes by type."""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import inspect
import socket
import sqlite3
import traceback
from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from . import codec

# Optional methods, advertised as capabilities when the saver's class
# overrides the sync or the async form.
OPTIONAL = ("copy_thread", "delete_for_runs", "prune")


def load_factory(spec: str) -> Callable[[], Any]:
    """The callable named by "module:attribute" (attribute may be dotted)."""
    mod_name, sep, attr = spec.partition(":")
    if not sep or not mod_name or not attr:
        raise ValueError(f"factory {spec!r}: want module:function")
    obj: Any = importlib.import_module(mod_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"factory {spec!r} is not callable")
    return obj


def overrides(cls: type, name: str) -> bool:
    """Whether cls overrides BaseCheckpointSaver's method name or its async twin."""
    for n in (name, "a" + name):
        base = getattr(BaseCheckpointSaver, n, None)
        if base is not None and getattr(cls, n, base) is not base:
            return True
    return False


class Hosted:
    """A saver opened from a factory, with how to call and close it.

    mode is "async" when the factory gave the saver through an async context
    manager or an awaitable: its a* methods are then called on the event
    loop; otherwise its sync methods run in worker threads. Either way a
    method that raises NotImplementedError is retried with its other form.
    """

    def __init__(self, saver: Any, mode: str, close: Callable[[], Any] | None) -> None:
        if not isinstance(saver, BaseCheckpointSaver):
            raise TypeError(f"the factory gave a {codec.type_name(saver)}, not a BaseCheckpointSaver")
        _wrap_serde(saver)
        self.saver = saver
        self.mode = mode
        self._close = close

    async def close(self) -> None:
        """Release the saver and its storage."""
        if self._close is None:
            return
        r = self._close()
        if inspect.isawaitable(r):
            await r


_MARK = "_checkpointkit_serializer_error"


class MarkingSerde:
    """Stands in for a saver's serde: delegates everything to it, and marks
    what its serializing methods raise as a serializer error, so that the
    server can tell those apart by origin rather than by message."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def _marked(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as err:
            try:
                setattr(err, _MARK, True)
            except AttributeError:
                pass
            raise

    def dumps_typed(self, obj: Any) -> Any:
        return self._marked(self.inner.dumps_typed, obj)

    def __getattr__(self, name: str) -> Any:
        # dumps (the serde API before langgraph-checkpoint 3) is marked too,
        # but only where the inner serde has it: a saver that checks
        # hasattr(serde, "dumps") must see what its serde really offers.
        attr = getattr(self.inner, name)
        if name == "dumps" and callable(attr):
            return lambda obj: self._marked(attr, obj)
        return attr


def _wrap_serde(saver: Any) -> None:
    serde = getattr(saver, "serde", None)
    if serde is not None and not isinstance(serde, MarkingSerde):
        saver.serde = MarkingSerde(serde)


async def open_saver(factory: Callable[[], Any], pool: concurrent.futures.Executor) -> Hosted:
    """Open a saver from factory: a context manager, an async context manager,
    an awaitable or a plain saver (closed with its close(), if any)."""
    loop = asyncio.get_running_loop()
    obj = await loop.run_in_executor(pool, factory)
    mode = "sync"
    if inspect.isawaitable(obj):
        obj = await obj
        mode = "async"
    if hasattr(obj, "__aenter__") and not isinstance(obj, BaseCheckpointSaver):
        saver = await obj.__aenter__()
        return Hosted(saver, "async", lambda: obj.__aexit__(None, None, None))
    if hasattr(obj, "__enter__") and not isinstance(obj, BaseCheckpointSaver):
        saver = await loop.run_in_executor(pool, obj.__enter__)
        return Hosted(saver, mode, lambda: loop.run_in_executor(pool, obj.__exit__, None, None, None))
    close = getattr(obj, "close", None)
    if close is not None and not inspect.iscoroutinefunction(close):
        sync_close = close
        close = lambda: loop.run_in_executor(pool, sync_close)  # noqa: E731
    return Hosted(obj, mode, close)


async def call(hosted: Hosted, pool: concurrent.futures.Executor, name: str, *args: Any, **kwargs: Any) -> Any:
    """Call the saver's method name (sync, in a worker thread) or a+name
    (async), whichever the hosting mode prefers, falling back to the other
    on NotImplementedError."""
    saver = hosted.saver
    loop = asyncio.get_running_loop()

    async def sync() -> Any:
        fn = getattr(saver, name)
        kw = _accepted(fn, kwargs)
        return await loop.run_in_executor(pool, lambda: fn(*args, **kw))

    async def asyn() -> Any:
        fn = getattr(saver, "a" + name)
        return await fn(*args, **_accepted(fn, kwargs))

    first, second = (asyn, sync) if hosted.mode == "async" else (sync, asyn)
    try:
        return await first()
    except NotImplementedError:
        return await second()


# Keyword arguments a saver written for an older BaseCheckpointSaver may not
# take: LangGraph's runtime passes them only to a method whose signature has
# them (put_writes' task_path: langgraph/pregel/_checkpoint.py
# put_writes_accepts_task_path), and the server does the same.
_OPTIONAL_KWARGS = frozenset({"task_path"})


def _accepted(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """kwargs without the optional ones fn's signature does not take."""
    if not kwargs.keys() & _OPTIONAL_KWARGS:
        return kwargs
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params or k not in _OPTIONAL_KWARGS}


# --- errors -----------------------------------------------------------------


def _types(*names: str) -> tuple[type, ...]:
    """The exception classes named "module:Class" that can be imported."""
    out = []
    for n in names:
        mod, _, attr = n.partition(":")
        try:
            out.append(getattr(importlib.import_module(mod), attr))
        except (ImportError, AttributeError):
            pass
    return tuple(out)


_UNAVAILABLE = _types(
    "psycopg_pool:PoolTimeout",
    "pymongo.errors:ConnectionFailure",
) + (ConnectionError, socket.gaierror)
_PG_OPERATIONAL = _types("psycopg:OperationalError")
_INPUT = _types(
    "psycopg:DataError",
    "bson.errors:InvalidDocument",
    "bson.errors:InvalidStringData",
    "pymongo.errors:WriteError",
) + (sqlite3.InterfaceError, sqlite3.DataError)
_SERIALIZE = _types("ormsgpack:MsgpackEncodeError")
_SERDE_MODULES = ("langgraph.checkpoint.serde", "ormsgpack", "json.")

# Wire methods whose only input a saver can refuse is a config or identifiers
# (prune's strategy is checked by the server before the call).
CONFIG_ONLY = frozenset({"get_tuple", "delete_thread", "copy_thread", "prune", "delta_history"})


def _chain(err: BaseException) -> list[BaseException]:
    """err and the errors it was raised from or while handling."""
    out: list[BaseException] = []
    e: BaseException | None = err
    while e is not None and e not in out and len(out) < 8:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def _unavailable(err: BaseException) -> bool:
    if isinstance(err, _UNAVAILABLE):
        return True
    # psycopg: a lost or refused connection (SQLSTATE class 08, or none),
    # not the other operational errors (serialization failures, ...).
    if isinstance(err, _PG_OPERATIONAL):
        state = getattr(err, "sqlstate", None)
        return state is None or state.startswith("08")
    return False


def _serializer_error(err: BaseException) -> bool:
    if any(getattr(e, _MARK, False) for e in _chain(err)):
        return True
    return isinstance(err, _SERIALIZE) or (isinstance(err, (TypeError, ValueError)) and _raised_in_serde(err))


def _raised_in_serde(err: BaseException) -> bool:
    for frame, _ in traceback.walk_tb(err.__traceback__):
        mod = frame.f_globals.get("__name__", "")
        if mod.startswith(_SERDE_MODULES):
            return True
    return False


def config_only(method: str, params: dict[str, Any]) -> bool:
    """Whether the only input of this call a saver can refuse is its config
    or identifiers: the methods of CONFIG_ONLY, and a list without a filter
    and with a limit that is not negative."""
    if method in CONFIG_ONLY:
        return True
    if method == "list":
        limit = params.get("limit") or 0
        return not params.get("filter") and isinstance(limit, int) and limit >= 0
    return False


def error_code(err: BaseException, method: str, params: dict[str, Any] | None = None) -> str:
    """The protocol code of an exception a saver raised in method (called
    with params), by its type."""
    if isinstance(err, codec.BridgeError):
        return err.code
    if isinstance(err, NotImplementedError):
        return codec.UNSUPPORTED
    if isinstance(err, asyncio.CancelledError):
        return codec.CANCELED
    if _unavailable(err):
        return codec.UNAVAILABLE
    if _serializer_error(err):
        return codec.UNSUPPORTED_VALUE
    if isinstance(err, (ValueError, TypeError, KeyError) + _INPUT):
        if config_only(method, params or {}):
            return codec.INVALID_CONFIG
        return codec.INVALID_ARGUMENT
    return codec.INTERNAL
