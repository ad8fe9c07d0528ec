"""Tests of the recording saver and the scenario runner."""

from __future__ import annotations

import asyncio
import json

from langgraph.types import Interrupt, Send

from checkpointkit_bridge.recorder import RecordingSaver, plain

from .run import record
from .registry import SCENARIOS


def cfg(thread: str, checkpoint_id: str | None = None) -> dict:
    conf = {"thread_id": thread, "checkpoint_ns": ""}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def checkpoint(cid: str) -> dict:
    return {
        "v": 4,
        "id": cid,
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {"x": 1},
        "channel_versions": {"x": "1.0"},
        "versions_seen": {},
        "updated_channels": ["x"],
    }


def test_plain_values() -> None:
    assert plain(Send("w", {"item": 1})) == {"node": "w", "arg": {"item": 1}}
    assert plain([Interrupt(value="?", id="abc")]) == [{"value": "?", "id": "abc"}]
    assert plain(ValueError("boom")) == "ValueError('boom')"
    assert plain((1, b"\x01")) == [1, [1]]


def test_records_sync_calls() -> None:
    saver = RecordingSaver()
    assert saver.get_tuple(cfg("t")) is None
    out = saver.put(cfg("t"), checkpoint("c1"), {"source": "input", "step": -1}, {"x": "1.0"})
    saver.put_writes(out, [("x", 2)], "task", "~__pregel_pull, a")
    list(saver.list(cfg("t")))
    methods = [c["method"] for c in saver.calls]
    assert methods == ["GetTuple", "Put", "PutWrites", "List"]
    assert saver.calls[0]["not_found"] is True
    assert saver.calls[1]["result"] == {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}
    assert saver.calls[2]["writes"] == [{"channel": "x", "value": 2}]
    assert saver.calls[3]["tuples"][0]["pending_writes"] == [{"task_id": "task", "channel": "x", "value": 2}]
    json.dumps(saver.trace())


def test_records_async_calls_and_stopped_lists() -> None:
    async def run() -> RecordingSaver:
        saver = RecordingSaver()
        for cid in ("c1", "c2"):
            await saver.aput(cfg("t"), checkpoint(cid), {"source": "loop", "step": 0}, {})
        async for _ in saver.alist(cfg("t"), limit=1):
            pass
        gen = saver.list(cfg("t"))
        next(gen)
        gen.close()
        await saver.adelete_thread("t")
        return saver

    saver = asyncio.run(run())
    assert [c["method"] for c in saver.calls] == ["Put", "Put", "List", "List", "DeleteThread"]
    assert saver.calls[2]["list"]["limit"] == 1 and "stopped" not in saver.calls[2]
    assert saver.calls[3]["stopped"] is True


def test_every_scenario_records() -> None:
    assert len(SCENARIOS) >= 45
    out = record("linear")
    assert [c["method"] for c in out["calls"]][:2] == ["GetTuple", "Put"]
    assert [c["method"] for c in out["stored"]] == ["List"]
