"""A recording checkpoint saver for LangGraph Python.

:class:`RecordingSaver` wraps any ``BaseCheckpointSaver`` (by default a
fresh ``InMemorySaver``) and logs every call, sync or async, in the JSON
shape of checkpointkit's ``refengine/trace`` format (``{"calls": [...]}``,
see ``go doc ./refengine/trace``). It is the Python counterpart of
``bridge/js/recorder.js``: the saver traffic of LangGraph Python and of
refengine on the same graph compare equal after ``trace.Canonical`` when
the two engines drive their savers the same way.

How Python values are recorded (what canonicalization then absorbs):
channel versions are the wrapped saver's strings (``"<counter>.<random>"``
for ``InMemorySaver``); task IDs are LangGraph's own; a ``Send`` is
recorded as refengine stores it, ``{"node", "arg"}``; an ``Interrupt`` as
``{"value", "id"}``; an exception (a failed task's ``__error__`` write) as
its ``repr``, the string LangGraph's serde stores for it (refengine stores
the message); a ``_DeltaSnapshot`` as ``{"$delta": value}`` (the bridge's
tag for a delta channel snapshot); tuples and sets as lists; any other
object by its ``repr``. Error messages of failed saver calls are Python's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.base import DeltaChannelHistory
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.types import Interrupt, Send

Call = dict[str, Any]


def plain(v: Any) -> Any:
    """Return v as a JSON value (a snapshot, not a live object)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, bytes):
        return list(v)
    if isinstance(v, _DeltaSnapshot):
        return {"$delta": plain(v.value)}
    if isinstance(v, Send):
        return {"node": v.node, "arg": plain(v.arg)}
    if isinstance(v, Interrupt):
        return {"value": plain(v.value), "id": v.id}
    if isinstance(v, BaseException):
        return repr(v)
    if isinstance(v, Mapping):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
        return [plain(x) for x in items]
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if hasattr(v, "model_dump"):
        return plain(v.model_dump())
    return repr(v)


def config(c: RunnableConfig | None) -> dict[str, str]:
    """The thread, namespace and checkpoint a config addresses."""
    conf = (c or {}).get("configurable", {}) or {}
    out = {"thread_id": str(conf.get("thread_id", "")), "checkpoint_ns": conf.get("checkpoint_ns", "") or ""}
    if conf.get("checkpoint_id"):
        out["checkpoint_id"] = conf["checkpoint_id"]
    return out


# The delta history method takes a keyword argument named config.
_config_of = config


def versions(vs: Mapping[str, Any] | None) -> dict[str, str] | None:
    """Channel versions as strings."""
    if vs is None:
        return None
    return {k: str(v) for k, v in vs.items()}


def checkpoint(cp: Checkpoint) -> dict[str, Any]:
    """A checkpoint in the trace's JSON shape."""
    updated = cp.get("updated_channels")
    return {
        "v": cp.get("v", 0),
        "id": cp["id"],
        "ts": cp.get("ts", ""),
        "channel_values": plain(cp.get("channel_values") or {}),
        "channel_versions": versions(cp.get("channel_versions") or {}),
        "versions_seen": {n: versions(vs) for n, vs in (cp.get("versions_seen") or {}).items()},
        "updated_channels": sorted(updated) if updated is not None else None,
    }


def tuple_(t: CheckpointTuple) -> dict[str, Any]:
    """A checkpoint tuple in the trace's JSON shape."""
    out: dict[str, Any] = {
        "config": config(t.config),
        "checkpoint": checkpoint(t.checkpoint),
        "metadata": plain(t.metadata or {}),
        "pending_writes": [
            {"task_id": tid, "channel": ch, "value": plain(v)} for tid, ch, v in (t.pending_writes or [])
        ],
    }
    if t.parent_config:
        out["parent"] = config(t.parent_config)
    return out


def list_options(
    c: RunnableConfig | None, filter: dict[str, Any] | None, before: RunnableConfig | None, limit: int | None
) -> dict[str, Any]:
    """List's arguments in the trace's JSON shape."""
    conf = (c or {}).get("configurable", {}) or {}
    out: dict[str, Any] = {"namespace": conf.get("checkpoint_ns", "") or ""}
    if conf.get("thread_id"):
        out["thread_id"] = str(conf["thread_id"])
    if "checkpoint_ns" not in conf:
        out["all_namespaces"] = True
    if conf.get("checkpoint_id"):
        out["checkpoint_id"] = conf["checkpoint_id"]
    if filter:
        out["filter"] = plain(filter)
    if before:
        out["before"] = before.get("configurable", {}).get("checkpoint_id")
    if limit:
        out["limit"] = limit
    return out


class RecordingSaver(BaseCheckpointSaver[str]):
    """A saver that forwards every call to another and records it."""

    def __init__(self, inner: BaseCheckpointSaver | None = None) -> None:
        self.inner = inner if inner is not None else InMemorySaver()
        super().__init__(serde=self.inner.serde)
        self.calls: list[Call] = []

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)

    def trace(self) -> dict[str, Any]:
        """The recorded calls as a refengine/trace JSON document."""
        return {"calls": self.calls}

    def _fail(self, call: Call, err: BaseException) -> None:
        call["error"] = str(err) or type(err).__name__
        self.calls.append(call)

    # --- reads ---------------------------------------------------------

    def _got(self, call: Call, t: CheckpointTuple | None) -> None:
        if t is None:
            call["not_found"] = True
        else:
            call["tuple"] = tuple_(t)
        self.calls.append(call)

    def get_tuple(self, config_: RunnableConfig) -> CheckpointTuple | None:
        call: Call = {"method": "GetTuple", "config": config(config_)}
        try:
            t = self.inner.get_tuple(config_)
        except BaseException as err:
            self._fail(call, err)
            raise
        self._got(call, t)
        return t

    async def aget_tuple(self, config_: RunnableConfig) -> CheckpointTuple | None:
        call: Call = {"method": "GetTuple", "config": config(config_)}
        try:
            t = await self.inner.aget_tuple(config_)
        except BaseException as err:
            self._fail(call, err)
            raise
        self._got(call, t)
        return t

    def _listed(self, call: Call, done: bool) -> None:
        if not done:
            call["stopped"] = True
        if not call["tuples"]:
            del call["tuples"]
        self.calls.append(call)

    def list(
        self,
        config_: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        call: Call = {"method": "List", "list": list_options(config_, filter, before, limit), "tuples": []}
        done = False
        try:
            for t in self.inner.list(config_, filter=filter, before=before, limit=limit):
                call["tuples"].append(tuple_(t))
                yield t
            done = True
        except GeneratorExit:
            raise
        except BaseException as err:
            call.pop("tuples", None)
            self._fail(call, err)
            raise
        finally:
            if "error" not in call:
                self._listed(call, done)

    async def alist(
        self,
        config_: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        call: Call = {"method": "List", "list": list_options(config_, filter, before, limit), "tuples": []}
        done = False
        try:
            async for t in self.inner.alist(config_, filter=filter, before=before, limit=limit):
                call["tuples"].append(tuple_(t))
                yield t
            done = True
        except GeneratorExit:
            raise
        except BaseException as err:
            call.pop("tuples", None)
            self._fail(call, err)
            raise
        finally:
            if "error" not in call:
                self._listed(call, done)

    @staticmethod
    def _histories(hs: Mapping[str, DeltaChannelHistory]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for ch, h in hs.items():
            entry: dict[str, Any] = {"writes": [[tid, c, plain(v)] for tid, c, v in h.get("writes", [])]}
            if "seed" in h:
                entry["seed"] = plain(h["seed"])
            out[ch] = entry
        return out

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        call: Call = {"method": "delta_history", "config": _config_of(config), "channels": list(channels)}
        try:
            out = self.inner.get_delta_channel_history(config=config, channels=channels)
        except BaseException as err:
            self._fail(call, err)
            raise
        call["histories"] = self._histories(out)
        self.calls.append(call)
        return out

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        call: Call = {"method": "delta_history", "config": _config_of(config), "channels": list(channels)}
        try:
            out = await self.inner.aget_delta_channel_history(config=config, channels=channels)
        except BaseException as err:
            self._fail(call, err)
            raise
        call["histories"] = self._histories(out)
        self.calls.append(call)
        return out

    # --- writes --------------------------------------------------------

    @staticmethod
    def _put_call(
        config_: RunnableConfig, cp: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> Call:
        return {
            "method": "Put",
            "config": config(config_),
            "checkpoint": checkpoint(cp),
            "metadata": plain(dict(metadata)),
            "new_versions": versions(new_versions),
        }

    def put(
        self, config_: RunnableConfig, cp: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> RunnableConfig:
        call = self._put_call(config_, cp, metadata, new_versions)
        try:
            out = self.inner.put(config_, cp, metadata, new_versions)
        except BaseException as err:
            self._fail(call, err)
            raise
        call["result"] = config(out)
        self.calls.append(call)
        return out

    async def aput(
        self, config_: RunnableConfig, cp: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> RunnableConfig:
        call = self._put_call(config_, cp, metadata, new_versions)
        try:
            out = await self.inner.aput(config_, cp, metadata, new_versions)
        except BaseException as err:
            self._fail(call, err)
            raise
        call["result"] = config(out)
        self.calls.append(call)
        return out

    @staticmethod
    def _writes_call(config_: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str) -> Call:
        return {
            "method": "PutWrites",
            "config": config(config_),
            "writes": [{"channel": ch, "value": plain(v)} for ch, v in writes],
            "task_id": task_id,
            "task_path": task_path or "",
        }

    def put_writes(
        self, config_: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        call = self._writes_call(config_, writes, task_id, task_path)
        try:
            self.inner.put_writes(config_, writes, task_id, task_path)
        except BaseException as err:
            self._fail(call, err)
            raise
        self.calls.append(call)

    async def aput_writes(
        self, config_: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        call = self._writes_call(config_, writes, task_id, task_path)
        try:
            await self.inner.aput_writes(config_, writes, task_id, task_path)
        except BaseException as err:
            self._fail(call, err)
            raise
        self.calls.append(call)

    def delete_thread(self, thread_id: str) -> None:
        call: Call = {"method": "DeleteThread", "thread_id": thread_id}
        try:
            self.inner.delete_thread(thread_id)
        except BaseException as err:
            self._fail(call, err)
            raise
        self.calls.append(call)

    async def adelete_thread(self, thread_id: str) -> None:
        call: Call = {"method": "DeleteThread", "thread_id": thread_id}
        try:
            await self.inner.adelete_thread(thread_id)
        except BaseException as err:
            self._fail(call, err)
            raise
        self.calls.append(call)
