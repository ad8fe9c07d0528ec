"""codec.py and wire.py against the shared protocol test vectors in
bridge/testdata/vectors (see its README.md): both directions, byte for byte."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from checkpointkit_bridge import codec, shapes
from checkpointkit_bridge.wire import dumps, parse_line

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "vectors"
VALUE_TYPES = {"null", "bool", "int", "float", "string", "bytes", "list", "map", "delta"}
DESC_KEYS = {"type", "value", "items", "entries", "base64"}


def load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text())


VALUES = load("values.json")
INVALID = load("invalid.json")["invalid"]
MESSAGES = load("messages.json")["messages"]


def build(d: dict[str, Any]) -> Any:
    """The Python value a neutral description describes."""
    t = d["type"]
    if t == "null":
        return None
    if t == "bool":
        return d["value"]
    if t == "int":
        return int(d["value"])
    if t == "float":
        return float(d["value"].replace("Infinity", "inf"))
    if t == "string":
        return d["value"]
    if t == "bytes":
        return base64.b64decode(d["base64"])
    if t == "list":
        return [build(e) for e in d["items"]]
    if t == "map":
        return {k: build(e) for k, e in d["entries"]}
    if t == "delta":
        return _DeltaSnapshot(build(d["value"]))
    raise AssertionError(f"unknown description type {t}")


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types: an int is not a float, -0.0 is not 0.0, NaN is NaN."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if type(a) is _DeltaSnapshot:
        return same(a.value, b.value)
    return a == b


def is_desc(d: Any) -> bool:
    return type(d) is dict and d.get("type") in VALUE_TYPES and set(d) <= DESC_KEYS


@pytest.mark.parametrize("v", VALUES["encode"], ids=lambda v: v["name"])
def test_encode(v: dict[str, Any]) -> None:
    assert dumps(codec.encode_value(build(v["value"]))) == v["json"]
    assert same(codec.decode_value(parse_line(v["json"]) if v["json"].startswith("{") else json.loads(v["json"])), build(v["value"]))


@pytest.mark.parametrize("v", VALUES["decode"], ids=lambda v: v["name"])
def test_decode(v: dict[str, Any]) -> None:
    tree = json.loads(v["json"])
    assert same(codec.decode_value(tree), build(v["value"]))


@pytest.mark.parametrize("v", VALUES["refuse"], ids=lambda v: v["name"])
def test_refuse(v: dict[str, Any]) -> None:
    with pytest.raises(codec.UnsupportedValue) as err:
        codec.encode_value(build(v["value"]))
    assert err.value.code == v["code"]


@pytest.mark.parametrize("v", INVALID, ids=lambda v: v["name"])
def test_invalid(v: dict[str, Any]) -> None:
    with pytest.raises(codec.BridgeError) as err:
        codec.decode_value(json.loads(v["json"]))
    assert err.value.code == v["code"]


def encode_described(d: Any) -> Any:
    """The wire tree of a message description: every value description encoded."""
    if is_desc(d):
        return codec.encode_value(build(d))
    if type(d) is dict:
        return {k: encode_described(e) for k, e in d.items()}
    if type(d) is list:
        return [encode_described(e) for e in d]
    return d


def check_decoded(d: Any, w: Any, path: str) -> None:
    """The parsed line w means what the description d says."""
    if is_desc(d):
        assert same(codec.decode_value(w, path), build(d)), path
        return
    assert type(d) is type(w), path
    if type(d) is dict:
        assert d.keys() == w.keys(), path
        for k in d:
            check_decoded(d[k], w[k], f"{path}.{k}")
    elif type(d) is list:
        assert len(d) == len(w), path
        for i, (x, y) in enumerate(zip(d, w)):
            check_decoded(x, y, f"{path}[{i}]")
    else:
        assert d == w, path


def shapes_round_trip(msg: dict[str, Any]) -> None:
    """The shapes in a message survive the trip through their Python types."""
    p = msg.get("params") or {}
    if "config" in p:
        assert shapes.config_to_wire(shapes.config_from_wire(p["config"])) == p["config"]
    if "checkpoint" in p:
        assert shapes.checkpoint_to_wire(shapes.checkpoint_from_wire(p["checkpoint"])) == p["checkpoint"]
        assert codec.encode_map(codec.decode_map(p["metadata"])) == p["metadata"]
        assert shapes.versions_to_wire(shapes.versions_from_wire(p["new_versions"])) == p["new_versions"]
    if "writes" in p:
        assert shapes.encode_writes(shapes.decode_writes(p["writes"])) == p["writes"]
    if "filter" in p:
        assert codec.encode_map(codec.decode_map(p["filter"])) == p["filter"]
    for member in ("result", "item"):
        r = msg.get(member)
        if type(r) is dict and "checkpoint" in r:
            assert shapes.tuple_to_wire(shapes.tuple_from_wire(r)) == r
        elif type(r) is dict and set(r) == {"histories"}:
            assert shapes.histories_to_wire(shapes.histories_from_wire(r)) == r
        elif type(r) is dict and set(r) == {"config"}:
            assert shapes.config_to_wire(shapes.config_from_wire(r["config"])) == r["config"]


@pytest.mark.parametrize("v", MESSAGES, ids=lambda v: v["name"])
def test_message(v: dict[str, Any]) -> None:
    # encode: the described message, its values encoded, is the line
    assert dumps(encode_described(v["message"])) == v["line"]
    # decode: the line means the described message
    msg = parse_line(v["line"].encode() + b"\n")
    check_decoded(v["message"], msg, "$")
    shapes_round_trip(msg)
    # a ts that is not UTF-8 becomes a str and back into the same bytes
    cp = (msg.get("params") or {}).get("checkpoint")
    if cp is not None:
        ts = shapes.ts_from_wire(cp["ts"])
        assert type(ts) is str and shapes.ts_to_wire(ts) == cp["ts"]
