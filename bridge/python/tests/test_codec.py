"""The value codec and shapes of checkpointkit_bridge.codec, and the wire framing."""

from __future__ import annotations

import datetime
import enum
import math
import random
import struct
import uuid

import pytest
from langgraph.checkpoint.base import CheckpointTuple

from checkpointkit_bridge import codec, shapes
from checkpointkit_bridge.codec import BadRequest, UnsupportedValue, decode_value, encode_value
from checkpointkit_bridge.wire import dumps, message_line, parse_line


class Color(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize(
    "value",
    [(1, 2), {1, 2}, frozenset(), datetime.datetime(2026, 1, 1), uuid.UUID(int=1), Color.RED, object(), 1 + 2j,
     {1: "a"}, {("a",): 1}, [1, (2,)], {"a": {"b": {3}}}, 2**63, -(2**63) - 1, "lone \ud800", {"\udfff": 1},
     memoryview(b"x")],
    ids=repr,
)
def test_values_outside_the_model_are_refused(value: object) -> None:
    with pytest.raises(UnsupportedValue) as err:
        encode_value(value)
    assert err.value.code == "unsupported_value"
    assert isinstance(err.value, TypeError)


def test_refusals_name_the_type_and_the_place() -> None:
    with pytest.raises(UnsupportedValue, match=r"\$\['a'\]\[1\]: type tuple"):
        encode_value({"a": [0, (1,)]})
    with pytest.raises(UnsupportedValue, match="datetime.datetime"):
        encode_value(datetime.datetime(2026, 1, 1))


def test_booleans_and_ints_stay_apart() -> None:
    assert encode_value(True) is True
    assert type(decode_value(1)) is int and type(decode_value(1.0)) is float
    assert decode_value(True) is True


@pytest.mark.parametrize("v", [0, -1, 2**53 - 1, 2**53, -(2**53), 2**63 - 1, -(2**63)])
def test_int_round_trip(v: int) -> None:
    e = encode_value(v)
    assert (type(e) is int) == (abs(v) <= 2**53 - 1)
    assert decode_value(e) == v and type(decode_value(e)) is int


def test_floats_round_trip_through_the_line() -> None:
    rng = random.Random(19)
    specials = [0.0, -0.0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 2.0**53, 0.1 + 0.2, 123456789.125]
    randoms = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(2000)]
    for x in specials + randoms:
        if math.isnan(x):
            continue
        back = decode_value(parse_line(message_line({"v": encode_value(x)}))["v"])
        assert type(back) is float and back == x and math.copysign(1, back) == math.copysign(1, x), x
    assert math.isnan(decode_value(encode_value(float("nan"))))


def test_map_wrapping() -> None:
    assert encode_value({"$a": 1}) == {"$map": {"$a": 1}}
    assert encode_value({"$a": 1, "b": 2}) == {"$a": 1, "b": 2}
    assert decode_value({"$map": {"$map": {}}}) == {"$map": {}}
    # Shapes are never wrapped nor read as tags.
    assert codec.encode_map({"$where": 1}) == {"$where": 1}
    assert codec.decode_map({"$where": 1}) == {"$where": 1}
    assert codec.decode_map({"$int": "5"}) == {"$int": "5"}
    assert codec.decode_map(None) == {} and codec.encode_map(None) == {}


@pytest.mark.parametrize("w", [{"$x": 1}, {"$int": "1e3"}, {"$bytes": "a"}, {"$float": "+1"}, {"$map": []}, "\ud800"])
def test_malformed_encodings_are_bad_requests(w: object) -> None:
    with pytest.raises(BadRequest):
        decode_value(w)


def test_bytes() -> None:
    assert encode_value(b"\x00\xff") == {"$bytes": "AP8="}
    assert encode_value(bytearray(b"ab")) == {"$bytes": "YWI="}
    assert decode_value({"$bytes": "AP8="}) == b"\x00\xff"


def test_configs() -> None:
    assert shapes.config_from_wire({"thread_id": "t", "checkpoint_ns": "n", "checkpoint_id": ""}) == {
        "configurable": {"thread_id": "t", "checkpoint_ns": "n"}
    }
    assert shapes.config_from_wire({"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c"})["configurable"]["checkpoint_id"] == "c"
    assert shapes.config_to_wire(None) == {"thread_id": "", "checkpoint_ns": "", "checkpoint_id": ""}
    assert shapes.config_to_wire({"configurable": {"thread_id": 7, "thread_ts": "old"}}) == {
        "thread_id": "7", "checkpoint_ns": "", "checkpoint_id": "old"}
    with pytest.raises(codec.InvalidConfig):
        shapes.config_to_wire({"configurable": {"thread_id": 1.5}})
    with pytest.raises(BadRequest):
        shapes.config_from_wire({"thread_id": 1})


def test_versions() -> None:
    assert shapes.versions_to_wire({"a": 3, "b": "00001.5", "c": 2.5}) == {"a": "3", "b": "00001.5", "c": "2.5"}
    # On the server, wire versions stay strings; numeric=True gives ints back.
    assert shapes.versions_from_wire({"a": "3"}) == {"a": "3"}
    assert shapes.versions_from_wire({"a": "3", "b": "03", "c": "1.5"}, numeric=True) == {"a": 3, "b": "03", "c": "1.5"}
    with pytest.raises(codec.InvalidArgument):
        shapes.versions_to_wire({"a": None})


def test_checkpoint_members_a_saver_drops_are_absent() -> None:
    assert shapes.checkpoint_to_wire({"id": "1", "channel_values": {"x": 1}}) == {
        "id": "1", "channel_values": {"x": 1}, "updated_channels": None}
    full = {"v": 4, "id": "1", "ts": "t", "channel_values": {}, "channel_versions": {"x": "1"},
            "versions_seen": {"n": {"x": "1"}}, "updated_channels": ["x"]}
    assert shapes.checkpoint_to_wire(shapes.checkpoint_from_wire(full)) == full
    assert shapes.checkpoint_from_wire({**full, "updated_channels": None})["updated_channels"] is None


def test_non_utf8_ts() -> None:
    ts = shapes.ts_from_wire({"$bytes": "MjAyNv8="})
    assert ts == "2026\udcff"
    assert shapes.ts_to_wire(ts) == {"$bytes": "MjAyNv8="}
    assert shapes.ts_to_wire("plain") == "plain"


def test_tuples() -> None:
    t = CheckpointTuple(
        {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "2"}},
        {"v": 4, "id": "2", "ts": "x", "channel_values": {"a": [1]}, "channel_versions": {}, "versions_seen": {},
         "updated_channels": None},
        {"step": 1},
        {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}},
        [("task", "a", {"$k": b"\x01"})],
    )
    w = shapes.tuple_to_wire(t)
    assert w["pending_writes"] == [["task", "a", {"$map": {"$k": {"$bytes": "AQ=="}}}]]
    assert w["parent_config"]["checkpoint_id"] == "1"
    back = shapes.tuple_from_wire(w)
    assert back.pending_writes == [("task", "a", {"$k": b"\x01"})] and back.metadata == {"step": 1}
    assert shapes.tuple_from_wire({**w, "parent_config": None}).parent_config is None
    with pytest.raises(UnsupportedValue, match="pending_writes"):
        shapes.tuple_to_wire(t._replace(pending_writes=[("task", "a", (1,))]))


def test_writes() -> None:
    assert shapes.encode_writes([("a", 1), ("b", None)]) == [["a", 1], ["b", None]]
    assert shapes.decode_writes([["a", {"$float": "1"}]]) == [("a", 1.0)]
    with pytest.raises(BadRequest):
        shapes.decode_writes([["a"]])


def test_wire_lines() -> None:
    assert message_line({"id": 1, "error": {"message": "q\"\n", "code": "x"}}) == (
        b'{"error":{"code":"x","message":"q\\"\\n"},"id":1}\n')
    assert dumps({"s": "\u2028\x7f\x00"}) == '{"s":"\\u2028\x7f\\u0000"}'
    for bad in [b"[1]", b"{", b'{"a":NaN}', b"\xff", b"null"]:
        with pytest.raises(BadRequest):
            parse_line(bad)
    with pytest.raises(ValueError):
        dumps({"f": float("inf")})
