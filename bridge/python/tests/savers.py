"""Savers for the server tests, each built to show one behaviour."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import ormsgpack
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver

SLOW = 0.5  # seconds a slow call takes: longer than the short deadlines the tests give


class Slow(InMemorySaver):
    """put and get_tuple take SLOW seconds."""

    def put(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(SLOW)
        return super().put(*args, **kwargs)

    def get_tuple(self, config: Any) -> Any:
        if config["configurable"]["thread_id"] == "slow":
            time.sleep(SLOW)
        return super().get_tuple(config)


def slow() -> Slow:
    return Slow()


class Refusing(InMemorySaver):
    """Raises by thread ID: "value" a ValueError, "serde" an encoding error
    of ormsgpack, "boom" a RuntimeError, "tuple" returns a Python tuple value."""

    def get_tuple(self, config: Any) -> Any:
        t = config["configurable"]["thread_id"]
        if t == "value":
            raise ValueError("bad thread")
        if t == "boom":
            raise RuntimeError("boom")
        if t == "tuple":
            cp = {"v": 4, "id": "1", "ts": "", "channel_values": {"x": (1, 2)}, "channel_versions": {}, "versions_seen": {}}
            return CheckpointTuple(config, cp, {}, None, [])  # type: ignore[arg-type]
        return super().get_tuple(config)

    def list(self, config: Any, **kwargs: Any) -> Any:
        if config and config["configurable"].get("thread_id") == "value":
            raise ValueError("bad thread")
        return super().list(config, **kwargs)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        t = config["configurable"]["thread_id"]
        if t == "value":
            raise ValueError("bad checkpoint")
        if t == "serde":
            ormsgpack.packb(object())
        return super().put(config, checkpoint, metadata, new_versions)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        raise NotImplementedError


def refusing() -> Refusing:
    return Refusing()


class AsyncOnly(InMemorySaver):
    """Only the async API works."""

    def get_tuple(self, config: Any) -> Any:
        raise NotImplementedError

    def list(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def put(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def aget_tuple(self, config: Any) -> Any:
        return InMemorySaver.get_tuple(self, config)

    async def alist(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        for t in InMemorySaver.list(self, *args, **kwargs):
            yield t

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        return InMemorySaver.put(self, *args, **kwargs)


async def async_only() -> AsyncOnly:
    return AsyncOnly()


class _Passthrough:
    """A serde that keeps objects as they are, so the saver stores what it is given."""

    def dumps_typed(self, obj: Any) -> tuple[str, Any]:
        return ("python", obj)

    def loads_typed(self, data: tuple[str, Any]) -> Any:
        return data[1]


def keeping() -> InMemorySaver:
    """An InMemorySaver storing objects unserialized (a non-UTF-8 ts survives)."""
    return InMemorySaver(serde=_Passthrough())  # type: ignore[arg-type]


class _Picky:
    """LangGraph's serde, except that it refuses the string "refuse"."""

    def __init__(self) -> None:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        self.inner = JsonPlusSerializer()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if obj == "refuse":
            raise ValueError("this serde refuses that value")
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)


def picky() -> InMemorySaver:
    """An InMemorySaver whose serde refuses the value "refuse" with a ValueError."""
    return InMemorySaver(serde=_Picky())  # type: ignore[arg-type]


@contextmanager
def slow_open() -> Iterator[InMemorySaver]:
    """An InMemorySaver that takes SLOW seconds to open."""
    time.sleep(SLOW)
    yield InMemorySaver()


class OldStyle(InMemorySaver):
    """A saver written for an older BaseCheckpointSaver: its put_writes takes
    no task_path, and its serde has the pre-3.0 dumps, which it prefers when
    present (as some third-party savers check with hasattr)."""

    def __init__(self) -> None:
        super().__init__()
        self.serde = NoDumpsSerde(self.serde)

    def put_writes(self, config: Any, writes: Any, task_id: str) -> None:  # type: ignore[override]
        super().put_writes(config, writes, task_id)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if hasattr(self.serde, "dumps"):
            raise AssertionError("the serde offers dumps, which the saver's own serde lacks")
        return super().put(config, checkpoint, metadata, new_versions)


class NoDumpsSerde:
    """A serde with dumps_typed/loads_typed only."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def dumps_typed(self, obj: Any) -> Any:
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: Any) -> Any:
        return self.inner.loads_typed(data)


def old_style() -> OldStyle:
    return OldStyle()
