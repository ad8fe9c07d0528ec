"""Delta snapshots ($delta) in codec.py, typed.py and shapes.py, and the
delta_history method of the Python server over LangGraph's savers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from conftest import cfg, put_params
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from checkpointkit_bridge import codec, shapes, typed
from checkpointkit_bridge.wire import dumps


def test_snapshot_encodes_as_delta_and_back() -> None:
    v = {"m": _DeltaSnapshot([1, {"$k": b"\x00\x01"}]), "n": [_DeltaSnapshot(None)]}
    w = codec.encode_value(v)
    assert dumps(w) == '{"m":{"$delta":[1,{"$map":{"$k":{"$bytes":"AAE="}}}]},"n":[{"$delta":null}]}'
    back = codec.decode_value(w)
    assert type(back["m"]) is _DeltaSnapshot and back["m"].value == [1, {"$k": b"\x00\x01"}]
    assert type(back["n"][0]) is _DeltaSnapshot and back["n"][0].value is None


def test_plain_tuple_is_still_refused() -> None:
    with pytest.raises(codec.UnsupportedValue):
        codec.encode_value((1, 2))


def test_bad_delta_payload_is_bad_request() -> None:
    with pytest.raises(codec.BadRequest):
        codec.decode_value({"$delta": {"$nope": 1}})


def test_typed_keeps_snapshots_and_lowers_their_values() -> None:
    serde = InMemorySaver().serde
    v = _DeltaSnapshot([("a", 1), uuid.UUID(int=7)])
    w = typed.value_to_wire(serde, v)
    assert set(w) == {"$delta"}, w
    back = typed.value_from_wire(serde, w)
    assert type(back) is _DeltaSnapshot
    assert back.value == [("a", 1), uuid.UUID(int=7)]


def test_histories_round_trip() -> None:
    h = {
        "m": {"seed": _DeltaSnapshot(["a"]), "writes": [("t1", "m", ["b"]), ("t2", "m", 3)]},
        "n": {"writes": []},
        "p": {"seed": None, "writes": []},
    }
    w = shapes.histories_to_wire(h)
    assert dumps(w) == (
        '{"histories":{"m":{"seed":{"$delta":["a"]},"writes":[["t1","m",["b"]],["t2","m",3]]},'
        '"n":{"writes":[]},"p":{"seed":null,"writes":[]}}}'
    )
    assert shapes.histories_from_wire(w) == h


def test_server_advertises_delta_history(client: Any) -> None:
    assert "delta_history" in client.hello["capabilities"]


def _chain(client: Any, saver: str) -> None:
    """Four checkpoints on thread t: a snapshot of m at the second, writes to m against each."""
    parent = ""
    for i, cid in enumerate(["1f01", "1f02", "1f03", "1f04"]):
        values = {"m": {"$delta": ["s"]}} if i == 1 else {}
        params = put_params(cid, values, parent=parent)
        params["new_versions"] = {k: str(i + 1) for k in values}
        params["checkpoint"]["channel_versions"] = dict(params["new_versions"])
        client.call("put", params, saver=saver)
        for task in ("tb", "ta"):
            client.call(
                "put_writes",
                {"config": cfg(cid=cid), "task_id": task, "task_path": "", "writes": [["m", f"{cid}-{task}"]]},
                saver=saver,
            )
        parent = cid


def test_server_answers_delta_history_from_in_memory_saver(client: Any) -> None:
    sid = client.call("open", {})["saver"]
    _chain(client, sid)
    got = client.call("delta_history", {"channels": ["m", "x"], "config": cfg(cid="1f04")}, saver=sid)
    assert got == {
        "histories": {
            "m": {
                "seed": {"$delta": ["s"]},
                "writes": [["ta", "m", "1f02-ta"], ["tb", "m", "1f02-tb"], ["ta", "m", "1f03-ta"], ["tb", "m", "1f03-tb"]],
            },
            "x": {"writes": []},
        }
    }
    # latest by default, the same; a missing checkpoint: empty histories
    assert client.call("delta_history", {"channels": ["m", "x"], "config": cfg()}, saver=sid) == got
    missing = client.call("delta_history", {"channels": ["m"], "config": cfg(thread="none")}, saver=sid)
    assert missing == {"histories": {"m": {"writes": []}}}
    assert client.call("delta_history", {"channels": [], "config": cfg()}, saver=sid) == {"histories": {}}
