"""Tests of BridgeSaver on checkpointkit's Go adapters (cmd/checkpointkit-saver)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import decimal
import enum
import math
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ckbackends import ADAPTERS, require_adapter, saver_bin
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.types import Command, Interrupt, Send
from pydantic import BaseModel

from checkpointkit_bridge.client import BridgeProcess, start_saver_process
from checkpointkit_bridge.codec import InvalidArgument, InvalidConfig
from checkpointkit_bridge.saver import BridgeSaver


class Color(enum.Enum):
    RED = "red"


class Point(BaseModel):
    x: int
    label: str


@dataclasses.dataclass
class Box:
    width: float
    tags: list[str]


UTC = datetime.timezone.utc

# Every kind of value LangGraph puts in a checkpoint, a write or metadata,
# each of which must come back equal and of the same Python types.
TYPED_VALUES: dict[str, Any] = {
    "none": None,
    "bool": True,
    "int": 42,
    "int64_max": 2**63 - 1,
    "int64_min": -(2**63),
    "big_int": 2**70,
    "big_negative_int": -(2**80) - 3,
    "float": 0.25,
    "integral_float": 2.0,
    "negative_zero": -0.0,
    "infinity": math.inf,
    "str": "héllo \u2028 wörld\n",
    "empty_str": "",
    "bytes": b"\x00\xffbinary",
    "bytearray": bytearray(b"mutable"),
    "list": [1, "two", 3.5, None, [4]],
    "empty_list": [],
    "dict": {"nested": {"deep": [1, 2]}, "flag": False},
    "empty_dict": {},
    "dollar_key_dict": {"$where": 1},
    "marker_lookalike": {"$lg": {"type": "msgpack", "data": b"\x01"}},
    "marker_lookalike_plain": {"$lg": 1},
    "tuple": (1, "a", (2.5, None)),
    "empty_tuple": (),
    "list_of_tuples": [(1, 2), (3, 4)],
    "set": {1, 2, 3},
    "frozenset": frozenset({"a", "b"}),
    "int_keys": {1: "one", 2: "two"},
    "datetime": datetime.datetime(2026, 11, 25, 21, 0, 1, 123456, tzinfo=UTC),
    "naive_datetime": datetime.datetime(2026, 1, 2, 3, 4, 5),
    "date": datetime.date(2026, 11, 25),
    "timedelta": datetime.timedelta(days=1, seconds=5),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "decimal": decimal.Decimal("1.10"),
    "enum": Color.RED,
    "pydantic": Point(x=3, label="p"),
    "dataclass": Box(width=1.5, tags=["a"]),
    "send": Send("node", {"arg": 1}),
    "interrupt": Interrupt(value={"question": "ok?"}, id="i-1"),
    "interrupts": [Interrupt(value="a", id="x"), Interrupt(value=2, id="y")],
    "command": Command(resume="yes"),
    "human_message": HumanMessage(content="hi", id="m1"),
    "ai_message": AIMessage(content="", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}], id="m2"),
    "tool_message": ToolMessage(content="42", tool_call_id="c1", id="m3"),
    "messages": [HumanMessage(content="q", id="a"), AIMessage(content="r", id="b")],
    "mixed": {"when": datetime.date(2020, 1, 1), "items": [(1, uuid.UUID(int=7))], "plain": [1, 2]},
}


def expected(name: str, saver: BridgeSaver) -> Any:
    """What a value must come back as: itself, except where LangGraph's own
    serde changes it in every saver (Command's goto tuple becomes a list)."""
    value = TYPED_VALUES[name]
    if name == "command":
        return saver.serde.loads_typed(saver.serde.dumps_typed(value))
    return value


def metadata_form(v: Any) -> Any:
    """v as metadata gives it back: JSON in every LangGraph saver, so a plain
    tuple there is a list (typed.lower)."""
    if type(v) in (tuple, list):
        return [metadata_form(e) for e in v]
    if type(v) is dict:
        return {k: metadata_form(e) for k, e in v.items()}
    return v


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


@pytest.fixture(scope="module", params=ADAPTERS)
def proc(request: pytest.FixtureRequest) -> Iterator[BridgeProcess]:
    require_adapter(request.param)
    p = start_saver_process(request.param, bin=saver_bin())
    yield p
    p.close()


@pytest.fixture
def saver(proc: BridgeProcess) -> Iterator[BridgeSaver]:
    with BridgeSaver.open(proc, timeout=60) as s:
        yield s


def cfg(thread: str, ns: str | None = "", cid: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"thread_id": thread}
    if ns is not None:
        c["checkpoint_ns"] = ns
    if cid is not None:
        c["checkpoint_id"] = cid
    return {"configurable": c}


def put(saver: BridgeSaver, thread: str, *, ns: str = "", parent: str | None = None, step: int = 0, **md: Any) -> dict:
    cp = empty_checkpoint()
    return saver.put(cfg(thread, ns, parent), cp, {"source": "loop", "step": step, "parents": {}, **md}, {})


def test_typed_values_round_trip_as_channel_values_writes_and_metadata(saver: BridgeSaver) -> None:
    cp = empty_checkpoint()
    cp["channel_values"] = dict(TYPED_VALUES)
    versions = {k: saver.get_next_version(None, None) for k in TYPED_VALUES}
    cp["channel_versions"] = versions
    metadata = {"source": "loop", "step": 1, "parents": {}, **TYPED_VALUES}
    stored = saver.put(cfg("typed"), cp, metadata, versions)
    saver.put_writes(stored, list(TYPED_VALUES.items()), "task-1", "path")

    got = saver.get_tuple(stored)
    assert got is not None
    listed = list(saver.list(cfg("typed")))
    assert len(listed) == 1
    for t in (got, listed[0]):
        writes = {channel: value for _, channel, value in t.pending_writes}
        for name in TYPED_VALUES:
            want = expected(name, saver)
            assert same(t.checkpoint["channel_values"][name], want), f"channel value {name}"
            assert same(t.metadata[name], metadata_form(want)), f"metadata {name}"
            assert same(writes[name], want), f"write {name}"
        assert t.checkpoint["channel_versions"] == versions


def test_nan_round_trips(saver: BridgeSaver) -> None:
    cp = empty_checkpoint()
    cp["channel_values"] = {"nan": math.nan, "nested": [math.nan]}
    cp["channel_versions"] = {"nan": "1", "nested": "1"}
    stored = saver.put(cfg("nan"), cp, {"source": "loop", "step": 0}, {"nan": "1", "nested": "1"})
    t = saver.get_tuple(stored)
    assert t is not None
    assert math.isnan(t.checkpoint["channel_values"]["nan"])
    assert math.isnan(t.checkpoint["channel_values"]["nested"][0])


def test_int_versions_come_back_as_ints_and_string_versions_as_strings(saver: BridgeSaver) -> None:
    cp = empty_checkpoint()
    cp["channel_values"] = {"a": 1, "b": 2}
    cp["channel_versions"] = {"a": 3, "b": "00000000000000000000000000000002.0123"}
    cp["versions_seen"] = {"node": {"a": 2}}
    stored = saver.put(cfg("v"), cp, {"source": "loop", "step": 0}, dict(cp["channel_versions"]))
    t = saver.get_tuple(stored)
    assert t is not None
    assert t.checkpoint["channel_versions"] == cp["channel_versions"]
    assert t.checkpoint["versions_seen"] == {"node": {"a": 2}}


def test_metadata_filters_on_plain_and_typed_values(saver: BridgeSaver) -> None:
    put(saver, "f", step=0, kind="a", score=1, tag=uuid.UUID(int=1), nested={"x": [1, 2]})
    put(saver, "f", step=1, kind="b", score=1.5, tag=uuid.UUID(int=2), nested={"x": [1]})
    assert [t.metadata["kind"] for t in saver.list(cfg("f"), filter={"kind": "a"})] == ["a"]
    assert [t.metadata["kind"] for t in saver.list(cfg("f"), filter={"score": 1.5})] == ["b"]
    assert [t.metadata["kind"] for t in saver.list(cfg("f"), filter={"tag": uuid.UUID(int=2)})] == ["b"]
    assert [t.metadata["kind"] for t in saver.list(cfg("f"), filter={"nested": {"x": [1, 2]}})] == ["a"]
    assert list(saver.list(cfg("f"), filter={"kind": "a", "step": 1})) == []


def test_config_values_join_the_metadata_and_nuls_are_stripped(saver: BridgeSaver) -> None:
    config = cfg("md")
    config["configurable"]["user"] = "bob"
    config["configurable"]["__private"] = "x"
    config["metadata"] = {"origin": "a\x00b"}
    stored = saver.put(config, empty_checkpoint(), {"source": "input", "step": -1, "note": "n\x00ul"}, {})
    t = saver.get_tuple(stored)
    assert t is not None
    assert t.metadata["user"] == "bob"
    assert t.metadata["origin"] == "ab"
    assert t.metadata["note"] == "nul"
    assert "__private" not in t.metadata and "thread_id" not in t.metadata


def test_list_scopes_before_limit(saver: BridgeSaver) -> None:
    a1 = put(saver, "la", step=0)
    a2 = put(saver, "la", parent=a1["configurable"]["checkpoint_id"], step=1)
    c1 = put(saver, "la", ns="child:1", step=0)
    b1 = put(saver, "lb", step=0)
    ids = lambda ts: [t.config["configurable"]["checkpoint_id"] for t in ts]  # noqa: E731
    every = ids(saver.list(None))
    assert set(every) == {x["configurable"]["checkpoint_id"] for x in (a1, a2, c1, b1)}
    assert set(ids(saver.list(cfg("la", ns=None)))) == {x["configurable"]["checkpoint_id"] for x in (a1, a2, c1)}
    assert ids(saver.list(cfg("la"))) == [a2["configurable"]["checkpoint_id"], a1["configurable"]["checkpoint_id"]]
    assert ids(saver.list(cfg("la", ns="child:1"))) == [c1["configurable"]["checkpoint_id"]]
    assert ids(saver.list(cfg("la"), before=a2)) == [a1["configurable"]["checkpoint_id"]]
    assert ids(saver.list(cfg("la"), limit=1)) == [a2["configurable"]["checkpoint_id"]]
    assert ids(saver.list(cfg("la"), limit=0)) == []
    assert ids(saver.list(cfg("la", cid=a1["configurable"]["checkpoint_id"]))) == [a1["configurable"]["checkpoint_id"]]
    assert ids(saver.list(cfg(""))) == []
    t = saver.get_tuple(cfg("la"))
    assert t is not None and t.parent_config == cfg("la", "", a1["configurable"]["checkpoint_id"])


def test_missing_checkpoints_are_none(saver: BridgeSaver) -> None:
    assert saver.get_tuple(cfg("nothing")) is None
    assert saver.get_tuple(cfg("nothing", cid="1ef00000-0000-6000-8000-000000000000")) is None
    assert saver.get_tuple({"configurable": {}}) is None


def test_extended_methods(saver: BridgeSaver) -> None:
    first = put(saver, "x", step=0, run_id="r1")
    put(saver, "x", parent=first["configurable"]["checkpoint_id"], step=1, run_id="r2")
    saver.copy_thread("x", "y")
    assert [t.metadata["step"] for t in saver.list(cfg("y"))] == [1, 0]
    saver.prune(["y"], strategy="keep_latest")
    assert [t.metadata["step"] for t in saver.list(cfg("y"))] == [1]
    saver.prune(["y"], strategy="delete")
    assert list(saver.list(cfg("y"))) == []
    saver.delete_for_runs(["r1"])
    assert [t.metadata["run_id"] for t in saver.list(cfg("x"))] == ["r2"]
    saver.delete_thread("x")
    assert saver.get_tuple(cfg("x")) is None


def test_async_methods(saver: BridgeSaver) -> None:
    async def main() -> None:
        cp = empty_checkpoint()
        cp["channel_values"] = {"when": TYPED_VALUES["datetime"]}
        cp["channel_versions"] = {"when": "1"}
        stored = await saver.aput(cfg("as"), cp, {"source": "loop", "step": 0, "run_id": "ra"}, {"when": "1"})
        await saver.aput_writes(stored, [("ch", Send("n", 1))], "t1")
        t = await saver.aget_tuple(stored)
        assert t is not None and t.checkpoint["channel_values"]["when"] == TYPED_VALUES["datetime"]
        assert t.pending_writes == [("t1", "ch", Send("n", 1))]
        assert [x.checkpoint["id"] async for x in saver.alist(cfg("as"))] == [cp["id"]]
        await saver.acopy_thread("as", "as2")
        await saver.aprune(["as2"], strategy="delete")
        assert [x async for x in saver.alist(cfg("as2"))] == []
        await saver.adelete_for_runs(["ra"])
        await saver.adelete_thread("as")
        assert await saver.aget_tuple(cfg("as")) is None

    asyncio.run(main())


def test_concurrent_threads_and_tasks(saver: BridgeSaver) -> None:
    errors: list[BaseException] = []

    def chain(thread: str) -> None:
        try:
            parent = None
            for step in range(10):
                stored = put(saver, thread, parent=parent, step=step)
                saver.put_writes(stored, [("ch", (thread, step))], f"task-{step}")
                parent = stored["configurable"]["checkpoint_id"]
            steps = [t.metadata["step"] for t in saver.list(cfg(thread))]
            assert steps == list(range(9, -1, -1))
            latest = saver.get_tuple(cfg(thread))
            assert latest is not None and latest.pending_writes == [("task-9", "ch", (thread, 9))]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=chain, args=(f"thr-{n}",)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []

    async def achain(thread: str) -> int:
        parent = None
        for step in range(10):
            cp = empty_checkpoint()
            c = cfg(thread, "", parent)
            stored = await saver.aput(c, cp, {"source": "loop", "step": step}, {})
            parent = stored["configurable"]["checkpoint_id"]
        return len([t async for t in saver.alist(cfg(thread))])

    async def main() -> list[int]:
        return await asyncio.gather(*(achain(f"task-{n}") for n in range(8)))

    assert asyncio.run(main()) == [10] * 8


def test_async_list_stopped_early_and_cancelled(saver: BridgeSaver) -> None:
    parent = None
    for step in range(70):
        parent = put(saver, "many", parent=parent, step=step)["configurable"]["checkpoint_id"]

    async def main() -> None:
        agen = saver.alist(cfg("many"))
        first = await agen.__anext__()
        assert first.metadata["step"] == 69
        await agen.aclose()
        assert saver.proc._pending == {}

        async def consume() -> None:
            # Cancelling a task does not close the async generator it was
            # iterating: that waits for the generator's finalisation, after
            # the task is done. aclosing closes it as the task unwinds, so
            # the request is cancelled by the time the task ends.
            async with contextlib.aclosing(saver.alist(cfg("many"))) as items:
                async for _ in items:
                    await asyncio.Event().wait()  # blocks until cancelled

        task = asyncio.create_task(consume())
        while not saver.proc._pending:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert saver.proc._pending == {}
        assert len([t async for t in saver.alist(cfg("many"), limit=65)]) == 65

    asyncio.run(main())


def test_errors_map_to_the_exceptions_langgraph_code_expects(saver: BridgeSaver) -> None:
    stored = put(saver, "err")
    with pytest.raises(ValueError) as no_id:
        saver.put_writes(cfg("err"), [("ch", 1)], "t")
    assert isinstance(no_id.value, InvalidConfig)
    with pytest.raises(ValueError) as bad_strategy:
        saver.prune(["err"], strategy="keep_some")
    assert isinstance(bad_strategy.value, InvalidArgument)
    with pytest.raises(TypeError):
        saver.put_writes(stored, [("ch", object())], "t")  # LangGraph's serde cannot encode it
    with pytest.raises(ValueError):
        saver.get_tuple(cfg("bad\ud800thread"))
    with pytest.raises(ValueError):
        saver.put(cfg(""), empty_checkpoint(), {"source": "loop", "step": 0}, {})


def test_get_next_version_counts_like_langgraphs_savers(saver: BridgeSaver) -> None:
    v1 = saver.get_next_version(None, None)
    v2 = saver.get_next_version(v1, None)
    assert v1.startswith("0" * 31 + "1.") and v2.startswith("0" * 31 + "2.")
    assert saver.get_next_version(7, None).startswith("0" * 30 + "08.")
    assert v1 < v2


def test_start_owns_its_process() -> None:
    with BridgeSaver.start("memory", bin=saver_bin()) as s:
        put(s, "own")
        proc = s.proc
        assert s.get_tuple(cfg("own")) is not None
    assert proc.exited is not None


class XorCipher:
    """A toy cipher for the test (EncryptedSerializer's CipherProtocol)."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "xor", bytes(b ^ 0x5A for b in plaintext)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        assert ciphername == "xor"
        return bytes(b ^ 0x5A for b in ciphertext)


def test_an_encrypting_serde_sees_every_value(proc: BridgeProcess) -> None:
    serde = EncryptedSerializer(XorCipher())
    with BridgeSaver.open(proc, serde=serde) as saver:
        assert saver.opaque_values
        cp = empty_checkpoint()
        cp["channel_values"] = {"secret": "plain text", "n": 7, "when": TYPED_VALUES["datetime"]}
        cp["channel_versions"] = {k: "1" for k in cp["channel_values"]}
        stored = saver.put(cfg("enc"), cp, {"source": "loop", "step": 0, "who": "me"}, dict(cp["channel_versions"]))
        saver.put_writes(stored, [("ch", "also secret")], "t")
        # What the Go store holds: serde payloads only, no plain text.
        params = {
            "thread_id": "enc",
            "checkpoint_ns": "",
            "all_namespaces": False,
            "checkpoint_id": "",
            "filter": {},
            "before": "",
            "limit": 0,
        }
        raw = list(proc.stream("list", params, saver=saver.saver_id))
        assert len(raw) == 1
        assert "plain text" not in repr(raw[0]["checkpoint"]) and "also secret" not in repr(raw[0]["pending_writes"])
        assert raw[0]["checkpoint"]["channel_values"]["n"]["$map"]["$lg"]["type"].endswith("+xor")
        assert raw[0]["metadata"]["who"] == "me"  # metadata stays plain, for filters
        t = saver.get_tuple(stored)
        assert t is not None
        assert t.checkpoint["channel_values"] == cp["channel_values"]
        assert t.pending_writes == [("t", "ch", "also secret")]
        assert [x.metadata["who"] for x in saver.list(cfg("enc"), filter={"who": "me"})] == ["me"]
