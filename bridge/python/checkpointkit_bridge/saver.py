"""BridgeSaver: a LangGraph Python checkpoint saver that forwards every call
to a saver served over the checkpointkit bridge protocol, normally one of
checkpointkit's Go adapters served by cmd/checkpointkit-saver.

    with BridgeSaver.start(adapter="sqlite") as saver:   # its own server process
        graph = builder.compile(checkpointer=saver)
        graph.invoke(inputs, {"configurable": {"thread_id": "t1"}})

or, several savers on one process (each over fresh, isolated storage):

    proc = start_saver_process(adapter="postgres")
    saver = BridgeSaver.open(proc)
    ...
    saver.close(); proc.close()

Sync and async methods share the process; any number of threads and tasks
may call one BridgeSaver at once (the Go adapter does the locking). Values
cross as described in typed.py: plain values stay plain, LangGraph's typed
values go through `self.serde` and come back as the same Python types.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from . import codec, shapes, typed
from .client import BridgeProcess, NotFound, Unsupported, start_saver_process

# Python's prune strategy names and the wire's.
_PRUNE_STRATEGIES = {"keep_latest": "keep_latest", "delete": "delete_all", "delete_all": "delete_all"}


class BridgeSaver(BaseCheckpointSaver[str]):
    """A BaseCheckpointSaver backed by a saver across the checkpointkit bridge."""

    def __init__(
        self,
        proc: BridgeProcess,
        saver_id: str | None = None,
        *,
        serde: SerializerProtocol | None = None,
        timeout: float | None = None,
        owns_process: bool = False,
        plain_values: bool | None = None,
    ) -> None:
        """Use the saver saver_id on proc (None: a server without `open`).

        timeout (seconds) is the deadline of every call; owns_process makes
        close() stop proc too. plain_values (default: whether the serde is
        LangGraph's JsonPlusSerializer) stores plain channel and write values
        as real values in the Go store; otherwise every one goes through the
        serde, so that an EncryptedSerializer encrypts them all. Metadata is
        always stored plain, for filters. BridgeSaver.open and .start are the
        usual ways in.
        """
        super().__init__(serde=serde)
        if plain_values is None:
            plain_values = isinstance(self.serde, JsonPlusSerializer)
        self.opaque_values = not plain_values
        self.proc = proc
        self.saver_id = saver_id
        self.timeout = timeout
        self.owns_process = owns_process
        self._closed = False

    # --- construction and lifetime -------------------------------------

    @classmethod
    def open(cls, proc: BridgeProcess, **options: Any) -> BridgeSaver:
        """A saver over fresh, isolated storage on proc (the server's `open`)."""
        saver_id = None
        if "open" in proc.capabilities:
            saver_id = proc.request("open", {}, timeout=options.get("timeout"))["saver"]
        return cls(proc, saver_id, **options)

    @classmethod
    async def aopen(cls, proc: BridgeProcess, **options: Any) -> BridgeSaver:
        """open, without blocking the event loop."""
        saver_id = None
        if "open" in proc.capabilities:
            saver_id = (await proc.arequest("open", {}, timeout=options.get("timeout")))["saver"]
        return cls(proc, saver_id, **options)

    @classmethod
    def start(
        cls,
        adapter: str = "memory",
        *,
        bin: str | None = None,
        args: Sequence[str] | None = None,
        serde: SerializerProtocol | None = None,
        timeout: float | None = None,
        plain_values: bool | None = None,
        **process_options: Any,
    ) -> BridgeSaver:
        """Start a checkpointkit-saver process of its own (see start_saver_process) and open a saver on it.

        close() then stops both.
        """
        proc = start_saver_process(adapter, bin=bin, args=args, **process_options)
        try:
            saver = cls.open(proc, serde=serde, timeout=timeout, plain_values=plain_values)
        except BaseException:
            proc.close()
            raise
        saver.owns_process = True
        return saver

    def close(self) -> None:
        """Release the saver's storage on the server (and stop the server when this saver started it)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.saver_id is not None and self.proc.exited is None:
                self.proc.request("close", {}, saver=self.saver_id, timeout=self.timeout)
        finally:
            if self.owns_process:
                self.proc.close()

    async def aclose(self) -> None:
        """close, for asyncio."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.saver_id is not None and self.proc.exited is None:
                await self.proc.arequest("close", {}, saver=self.saver_id, timeout=self.timeout)
        finally:
            if self.owns_process:
                await self.proc.aclose()

    def __enter__(self) -> BridgeSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> BridgeSaver:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- request building ----------------------------------------------

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        return self.proc.request(method, params, saver=self.saver_id, timeout=self.timeout)

    async def _acall(self, method: str, params: dict[str, Any]) -> Any:
        return await self.proc.arequest(method, params, saver=self.saver_id, timeout=self.timeout)

    def _need(self, capability: str) -> None:
        if capability not in self.proc.capabilities:
            raise Unsupported(f"{self.proc.name}: {capability}: not supported by the server", codec.UNSUPPORTED)

    def _list_params(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> dict[str, Any] | None:
        """The wire params of a list call, or None when the answer is empty without asking."""
        if limit is not None and limit <= 0:
            return None  # as InMemorySaver: no tuples (the wire's 0 would mean "no limit")
        if config is None:
            # Python's only every-thread form: every thread, every namespace.
            wire = {"thread_id": "", "checkpoint_ns": "", "checkpoint_id": ""}
            all_ns = True
        else:
            c = config.get("configurable") or {}
            wire = shapes.config_to_wire(config)
            if wire["thread_id"] == "":
                return None  # thread "" holds nothing; the wire's "" would mean every thread
            all_ns = c.get("checkpoint_ns") is None
        return {
            "thread_id": wire["thread_id"],
            "checkpoint_ns": wire["checkpoint_ns"],
            "all_namespaces": all_ns,
            "checkpoint_id": wire["checkpoint_id"],
            "filter": typed.metadata_to_wire(self.serde, filter, "filter"),
            "before": shapes.config_to_wire(before)["checkpoint_id"] if before else "",
            "limit": limit or 0,
        }

    def _put_params(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        return {
            "config": shapes.config_to_wire(config),
            "checkpoint": typed.checkpoint_to_wire(self.serde, checkpoint, self.opaque_values),
            # Config values join the metadata and NULs are stripped from its
            # top-level strings, as in every LangGraph saver.
            "metadata": typed.metadata_to_wire(self.serde, get_checkpoint_metadata(config, metadata)),
            "new_versions": shapes.versions_to_wire(new_versions, "new_versions"),
        }

    def _writes_params(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> dict[str, Any]:
        return {
            "config": shapes.config_to_wire(config),
            "writes": typed.writes_to_wire(self.serde, writes, self.opaque_values),
            "task_id": shapes.id_to_wire(task_id, "task_id"),
            "task_path": shapes.id_to_wire(task_path, "task_path"),
        }

    @staticmethod
    def _put_result(result: Any) -> RunnableConfig:
        return shapes.config_from_wire((result or {}).get("config"), "put result")

    def _tuple(self, w: Any) -> CheckpointTuple | None:
        return None if w is None else typed.tuple_from_wire(self.serde, w)

    @staticmethod
    def _prune_params(thread_ids: Sequence[str], strategy: str) -> dict[str, Any]:
        wire = _PRUNE_STRATEGIES.get(strategy)
        if wire is None:
            raise codec.InvalidArgument(
                f"prune: unknown strategy {strategy!r} (want 'keep_latest' or 'delete')", codec.INVALID_ARGUMENT
            )
        return {"thread_ids": [shapes.id_to_wire(t, "thread_id") for t in thread_ids], "strategy": wire}

    @staticmethod
    def _delta_params(config: RunnableConfig, channels: Sequence[str]) -> dict[str, Any]:
        return {"channels": [shapes.id_to_wire(c, "channel") for c in channels], "config": shapes.config_to_wire(config)}

    def _histories(self, w: Any) -> dict[str, Any]:
        out = shapes.histories_from_wire(w)
        for h in out.values():
            h["writes"] = [(task, ch, typed.lift(self.serde, v)) for task, ch, v in h["writes"]]
            if "seed" in h:
                h["seed"] = typed.lift(self.serde, h["seed"])
        return out

    def _delta_local(self, config: RunnableConfig, channels: Sequence[str]) -> dict[str, Any] | None:
        """The answer that needs no request, or None: none for no channels
        or no thread (as LangGraph's walk, whose get_tuple finds nothing)."""
        if not channels:
            return {}
        if (config.get("configurable") or {}).get("thread_id") is None:
            return {ch: {"writes": []} for ch in channels}
        return None

    # --- sync API ------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint of config (its checkpoint_id, else the latest of its thread and namespace), or None."""
        if (config.get("configurable") or {}).get("thread_id") is None:
            return None
        try:
            return self._tuple(self._call("get_tuple", {"config": shapes.config_to_wire(config)}))
        except NotFound:
            return None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: config None lists every thread; no checkpoint_ns, every namespace."""
        params = self._list_params(config, filter, before, limit)
        if params is None:
            return
        stream = self.proc.stream("list", params, saver=self.saver_id, timeout=self.timeout)
        try:
            for item in stream:
                yield typed.tuple_from_wire(self.serde, item)
        finally:
            stream.close()  # stopped early: the server's list is cancelled

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint; config's checkpoint_id, if any, is its parent."""
        return self._put_result(self._call("put", self._put_params(config, checkpoint, metadata, new_versions)))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store the pending writes of task_id against config's checkpoint."""
        self._call("put_writes", self._writes_params(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of the thread, in every namespace."""
        self._call("delete_thread", {"thread_id": shapes.id_to_wire(thread_id, "thread_id")})

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata run_id is one of run_ids."""
        self._need("delete_for_runs")
        self._call("delete_for_runs", {"run_ids": [shapes.id_to_wire(r, "run_id") for r in run_ids]})

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of one thread to another."""
        self._need("copy_thread")
        self._call(
            "copy_thread",
            {"src": shapes.id_to_wire(source_thread_id, "src"), "dst": shapes.id_to_wire(target_thread_id, "dst")},
        )

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """keep_latest keeps the newest checkpoint of each namespace; delete removes all."""
        self._need("prune")
        self._call("prune", self._prune_params(thread_ids, strategy))

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Any:
        """The delta history of channels as seen from config's checkpoint,
        read by the server in one request (PROTOCOL.md, "delta_history").
        A server without the capability gets LangGraph's default walk over
        get_tuple, one request per ancestor."""
        local = self._delta_local(config, channels)
        if local is not None:
            return local
        if "delta_history" not in self.proc.capabilities:
            return super().get_delta_channel_history(config=config, channels=channels)
        return self._histories(self._call("delta_history", self._delta_params(config, channels)))

    # --- async API -----------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """get_tuple, for asyncio."""
        if (config.get("configurable") or {}).get("thread_id") is None:
            return None
        try:
            return self._tuple(await self._acall("get_tuple", {"config": shapes.config_to_wire(config)}))
        except NotFound:
            return None

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """list, for asyncio; stopping early cancels the server's list."""
        params = self._list_params(config, filter, before, limit)
        if params is None:
            return
        stream = self.proc.astream("list", params, saver=self.saver_id, timeout=self.timeout)
        try:
            async for item in stream:
                yield typed.tuple_from_wire(self.serde, item)
        finally:
            await stream.aclose()  # stopped early: the server's list is cancelled

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """put, for asyncio."""
        params = self._put_params(config, checkpoint, metadata, new_versions)
        return self._put_result(await self._acall("put", params))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """put_writes, for asyncio."""
        await self._acall("put_writes", self._writes_params(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        """delete_thread, for asyncio."""
        await self._acall("delete_thread", {"thread_id": shapes.id_to_wire(thread_id, "thread_id")})

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """delete_for_runs, for asyncio."""
        self._need("delete_for_runs")
        await self._acall("delete_for_runs", {"run_ids": [shapes.id_to_wire(r, "run_id") for r in run_ids]})

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """copy_thread, for asyncio."""
        self._need("copy_thread")
        await self._acall(
            "copy_thread",
            {"src": shapes.id_to_wire(source_thread_id, "src"), "dst": shapes.id_to_wire(target_thread_id, "dst")},
        )

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """prune, for asyncio."""
        self._need("prune")
        await self._acall("prune", self._prune_params(thread_ids, strategy))

    async def aget_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Any:
        """get_delta_channel_history, for asyncio."""
        local = self._delta_local(config, channels)
        if local is not None:
            return local
        if "delta_history" not in self.proc.capabilities:
            return await super().aget_delta_channel_history(config=config, channels=channels)
        return self._histories(await self._acall("delta_history", self._delta_params(config, channels)))

    # --- versions ------------------------------------------------------

    def get_next_version(self, current: str | int | float | None, channel: None = None) -> str:
        """The next channel version, computed here, in the form of LangGraph's own savers.

        "<counter, 32 digits>.<random fraction>", the counter one above
        current's integer part (an int current counts as that integer).
        The server's next_version mints the same form, but the Pregel loop
        calls this synchronously for every updated channel of every step,
        also inside async runs, where a round trip would block the event
        loop; versions are opaque strings that the engine and the Go
        adapters only compare (by the integer before the first ".").
        """
        if current is None:
            n = 0
        elif isinstance(current, str):
            n = int(current.split(".", 1)[0])
        else:
            n = int(current)
        return f"{n + 1:032}.{random.random():016}"
