"""LangGraph's typed Python values on the bridge, for BridgeSaver.

The bridge's value model (see codec.py) holds None, bool, int64, float, str,
bytes, list and dict with str keys. LangGraph's channel values, pending
writes and metadata hold much more: Send, Interrupt, Command, datetimes,
UUIDs, pydantic models and dataclasses, LangChain messages, tuples, sets,
enums, integers beyond 64 bits, dicts with non-str keys, ...

`lower` turns such a value into one of the model, `lift` reverses it:

- a value of the model stays itself, recursively: plain lists and
  dicts (and their plain members) reach the Go store as real values, so a
  metadata filter on them works and a human can read them;
- LangGraph's _DeltaSnapshot stays a snapshot (codec.py's $delta), its
  value lowered in turn;
- a tuple becomes the marker {"$lg": {"type": "tuple", "data": [items]}},
  its items lowered in turn;
- an int beyond int64 becomes {"$lg": {"type": "int", "data": "<decimal>"}};
- anything else goes through the saver's serde as a whole:
  `serde.dumps_typed(v)` gives (type, bytes), carried as
  {"$lg": {"type": type, "data": bytes}} and read back with
  `serde.loads_typed`, so it comes back as LangGraph's own savers give it;
- a user dict that is itself shaped like a marker (its only key "$lg") also
  goes through the serde, so it can never be mistaken for one;
- with a serde that must see every value (EncryptedSerializer, or any serde
  other than LangGraph's default JsonPlusSerializer), BridgeSaver sends every
  channel and write value through it, plain ones included (lower_opaque);
- metadata keeps to JSON (the Go contract refuses bytes, NaN and infinities
  there): a tuple there becomes a list, as in LangGraph's own savers, and
  bytes and non-finite floats go through the serde, and every serde payload in
  metadata travels as base64 text, {"$lg": {"type": type, "b64": "..."}}.

On the wire the marker, a map whose only key starts with "$", is wrapped as
{"$map": ...} by codec.encode_value. A marker whose data is bytes is always
a serde payload; "tuple" with a list and "int" with a str are this module's
own, whatever the serde calls its types.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.checkpoint.base import Checkpoint, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol
from .snapshot import DeltaSnapshot as _DeltaSnapshot

from . import codec, shapes

MARKER = "$lg"

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def _marker(type_: str, data: Any) -> dict[str, Any]:
    return {MARKER: {"type": type_, "data": data}}


def _utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lower(serde: SerializerProtocol, v: Any, json_only: bool = False) -> Any:
    """The bridge-model form of a LangGraph value (see the module doc).

    json_only (for metadata, which the Go contract keeps to JSON: no bytes,
    NaN or infinities) sends bytes and non-finite floats through the serde
    too, and carries serde payloads as base64 text ("b64" instead of "data").
    """
    t = type(v)
    if v is None or t is bool:
        return v
    if t is float:
        return v if not json_only or math.isfinite(v) else _serde(serde, v, json_only)
    if t is bytes:
        return v if not json_only else _serde(serde, v, json_only)
    if t is str:
        return v if _utf8(v) else _serde(serde, v, json_only)
    if t is int:
        return v if _INT64_MIN <= v <= _INT64_MAX else _marker("int", str(v))
    if t is list:
        return [lower(serde, e, json_only) for e in v]
    if t is tuple:
        if json_only:
            # Metadata is JSON in every LangGraph saver, so a tuple there
            # reads back as a list (the engine's own
            # counters_since_delta_snapshot pairs are tuples).
            return [lower(serde, e, json_only) for e in v]
        return _marker("tuple", [lower(serde, e, json_only) for e in v])
    if t is _DeltaSnapshot:
        # A delta channel's snapshot stays a snapshot ($delta), so that the
        # Go saver sees it as one (SPEC.md VALUE-12); its value is lowered.
        return _DeltaSnapshot(lower(serde, v.value, json_only))
    if t is dict and not (len(v) == 1 and MARKER in v) and all(type(k) is str and _utf8(k) for k in v):
        return {k: lower(serde, e, json_only) for k, e in v.items()}
    return _serde(serde, v, json_only)


def _serde(serde: SerializerProtocol, v: Any, json_only: bool) -> dict[str, Any]:
    type_, data = serde.dumps_typed(v)
    if json_only:
        return {MARKER: {"type": type_, "b64": base64.b64encode(data).decode("ascii")}}
    return _marker(type_, bytes(data))


def lift(serde: SerializerProtocol, w: Any) -> Any:
    """The LangGraph value of a decoded bridge-model value (the reverse of lower)."""
    t = type(w)
    if t is list:
        return [lift(serde, e) for e in w]
    if t is _DeltaSnapshot:
        return _DeltaSnapshot(lift(serde, w.value))
    if t is not dict:
        return w
    if len(w) == 1 and MARKER in w:
        m = w[MARKER]
        if type(m) is dict and type(m.get("type")) is str:
            type_ = m["type"]
            data = m.get("data")
            if type(data) is bytes:
                return serde.loads_typed((type_, data))
            if type(m.get("b64")) is str:
                return serde.loads_typed((type_, base64.b64decode(m["b64"])))
            if type_ == "tuple" and type(data) is list:
                return tuple(lift(serde, e) for e in data)
            if type_ == "int" and type(data) is str:
                return int(data)
        raise codec.BadRequest(f"malformed {MARKER} marker: {w!r:.200}")
    return {k: lift(serde, e) for k, e in w.items()}


def value_to_wire(serde: SerializerProtocol, v: Any, path: str = "$") -> Any:
    """The wire form of a LangGraph value."""
    return codec.encode_value(lower(serde, v), path)


def value_from_wire(serde: SerializerProtocol, w: Any, path: str = "$") -> Any:
    """The LangGraph value of a wire value."""
    return lift(serde, codec.decode_value(w, path))


def metadata_to_wire(serde: SerializerProtocol, m: Mapping[str, Any] | None, path: str = "metadata") -> dict[str, Any]:
    """The wire form of metadata or a metadata filter (JSON values only, see lower); its own keys stay as they are."""
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise codec.UnsupportedValue(f"{path}: want a mapping, got {codec.type_name(m)}")
    return codec.encode_map({k: lower(serde, v, json_only=True) for k, v in m.items()}, path)


def metadata_from_wire(serde: SerializerProtocol, w: Any, path: str = "metadata") -> dict[str, Any]:
    """The LangGraph metadata of a wire object."""
    return {k: lift(serde, v) for k, v in codec.decode_map(w, path).items()}


def lower_opaque(serde: SerializerProtocol, v: Any, opaque: bool) -> Any:
    """lower, or with opaque the whole value through the serde, plain or not
    (for a serde such as EncryptedSerializer, whose every value must pass it)."""
    return _serde(serde, v, False) if opaque else lower(serde, v)


def checkpoint_to_wire(serde: SerializerProtocol, cp: Checkpoint, opaque: bool = False) -> dict[str, Any]:
    """The wire form of a checkpoint, its channel values lowered (see lower_opaque)."""
    lowered = dict(cp)
    values = cp.get("channel_values")
    if isinstance(values, Mapping):
        lowered["channel_values"] = {k: lower_opaque(serde, v, opaque) for k, v in values.items()}
    return shapes.checkpoint_to_wire(lowered)


def writes_to_wire(
    serde: SerializerProtocol, writes: Iterable[tuple[str, Any]], opaque: bool = False
) -> list[list[Any]]:
    """The wire form of put_writes' (channel, value) pairs (see lower_opaque)."""
    return shapes.encode_writes((channel, lower_opaque(serde, value, opaque)) for channel, value in writes)


def tuple_from_wire(serde: SerializerProtocol, w: Any) -> CheckpointTuple:
    """The CheckpointTuple of a wire tuple, its values lifted.

    Versions that are exactly an integer's decimal form come back as ints
    (LangGraph's default get_next_version and most tests use ints; the
    string versions of LangGraph's own savers never look like that).
    """
    t = shapes.tuple_from_wire(w, numeric_versions=True)
    cp = t.checkpoint
    cp["channel_values"] = {k: lift(serde, v) for k, v in cp["channel_values"].items()}
    return CheckpointTuple(
        config=t.config,
        checkpoint=cp,
        metadata={k: lift(serde, v) for k, v in t.metadata.items()},
        parent_config=t.parent_config,
        pending_writes=[(task, channel, lift(serde, value)) for task, channel, value in t.pending_writes or ()],
    )
