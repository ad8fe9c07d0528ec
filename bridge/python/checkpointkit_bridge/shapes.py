"""The shapes of the checkpointkit bridge protocol (../../PROTOCOL.md,
"Shapes"): configs, versions, checkpoints, tuples and writes, between their
wire form and LangGraph Python's types, built on codec.py's values. Shared
by the server and BridgeSaver, as Go's bridge/shapes.go and JS's codec.js.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointTuple

from .codec import (
    BadRequest,
    InvalidArgument,
    InvalidConfig,
    UnsupportedValue,
    decode_map,
    decode_value,
    encode_map,
    encode_value,
    member_path,
    type_name,
    valid_utf8,
)

def id_to_wire(v: Any, what: str = "identifier") -> str:
    """An identifier's wire form: None is "", an int or a UUID its string."""
    if v is None:
        return ""
    if type(v) is str:
        if not valid_utf8(v):
            raise InvalidConfig(f"{what} {v!r} holds a lone surrogate (not valid UTF-8)")
        return v
    if type(v) is int or type_name(v) == "uuid.UUID":
        return str(v)
    raise InvalidConfig(f"{what}: want a string, got {type_name(v)}")


def _wire_str(w: Mapping[str, Any], name: str, where: str) -> str:
    v = w.get(name)
    if v is None:
        return ""
    if type(v) is not str:
        raise BadRequest(f"{where}.{name}: want a string, got {type_name(v)}")
    return v


def config_to_wire(cfg: RunnableConfig | Mapping[str, Any] | None) -> dict[str, str]:
    """The wire config of a RunnableConfig: missing members become ""."""
    c = (cfg or {}).get("configurable") or {}
    cid = c.get("checkpoint_id")
    if cid is None:
        cid = c.get("thread_ts")
    return {
        "thread_id": id_to_wire(c.get("thread_id"), "thread_id"),
        "checkpoint_ns": id_to_wire(c.get("checkpoint_ns"), "checkpoint_ns"),
        "checkpoint_id": id_to_wire(cid, "checkpoint_id"),
    }


def config_from_wire(w: Any, where: str = "config") -> RunnableConfig:
    """The RunnableConfig of a wire config; an empty checkpoint_id is left out
    ("latest" in reads, "no parent" in put)."""
    if type(w) is not dict:
        raise BadRequest(f"{where}: want an object, got {type_name(w)}")
    configurable: dict[str, Any] = {
        "thread_id": _wire_str(w, "thread_id", where),
        "checkpoint_ns": _wire_str(w, "checkpoint_ns", where),
    }
    cid = _wire_str(w, "checkpoint_id", where)
    if cid != "":
        configurable["checkpoint_id"] = cid
    return RunnableConfig(configurable=configurable)


# --- versions ---------------------------------------------------------------

_DECIMAL_INT_RE = re.compile(r"-?(0|[1-9][0-9]*)\Z")


def version_to_wire(v: Any, path: str = "version") -> str:
    """A channel version's wire form: a str unchanged, an int or a finite
    float its decimal string."""
    t = type(v)
    if t is str:
        if not valid_utf8(v):
            raise InvalidArgument(f"{path}: version holds a lone surrogate (not valid UTF-8)")
        return v
    if t is int:
        return str(v)
    if t is float and math.isfinite(v):
        return repr(v)
    raise InvalidArgument(f"{path}: a version must be a str, an int or a finite float, got {type_name(v)}")


def version_from_wire(s: Any, path: str = "version", numeric: bool = False) -> str | int:
    """A wire version as Python: the string itself, or with numeric=True an
    int when the string is exactly an integer's decimal form ("3")."""
    if type(s) is not str:
        raise BadRequest(f"{path}: want a string, got {type_name(s)}")
    if numeric and _DECIMAL_INT_RE.match(s):
        return int(s)
    return s


def versions_to_wire(vs: Mapping[str, Any] | None, path: str = "versions") -> dict[str, str]:
    """version_to_wire over a mapping of versions; None gives {}."""
    out: dict[str, str] = {}
    for k, v in (vs or {}).items():
        if type(k) is not str:
            raise InvalidArgument(f"{path}: channel {k!r} of type {type_name(k)} is not a string")
        out[k] = version_to_wire(v, member_path(path, k))
    return out


def versions_from_wire(w: Any, path: str = "versions", numeric: bool = False) -> dict[str, Any]:
    """version_from_wire over a wire object of versions; None gives {}."""
    if w is None:
        return {}
    if type(w) is not dict:
        raise BadRequest(f"{path}: want an object, got {type_name(w)}")
    return {k: version_from_wire(v, member_path(path, k), numeric) for k, v in w.items()}


# --- checkpoints and tuples --------------------------------------------------


def ts_to_wire(ts: Any) -> Any:
    """A checkpoint ts's wire form: a str that is valid UTF-8 as it is; one
    holding surrogate escapes (bytes that were not UTF-8), or bytes, as
    {"$bytes": base64} of the original bytes."""
    if type(ts) is str:
        if valid_utf8(ts):
            return ts
        try:
            raw = ts.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raise UnsupportedValue(f"checkpoint.ts {ts!r} holds a lone surrogate (not valid UTF-8)") from None
        return {"$bytes": base64.b64encode(raw).decode("ascii")}
    if type(ts) is bytes or type(ts) is bytearray:
        return {"$bytes": base64.b64encode(bytes(ts)).decode("ascii")}
    raise UnsupportedValue(f"checkpoint.ts: want a str, got {type_name(ts)}")


def ts_from_wire(w: Any) -> str:
    """A wire ts as a str: {"$bytes"} bytes that are not UTF-8 become a str
    with surrogate escapes, which ts_to_wire turns back into the same bytes."""
    if w is None:
        return ""
    if type(w) is str:
        return w
    if type(w) is dict and set(w) == {"$bytes"}:
        raw = decode_value(w, "checkpoint.ts")
        return raw.decode("utf-8", "surrogateescape")
    raise BadRequest(f"checkpoint.ts: want a string or {{\"$bytes\":...}}, got {type_name(w)}")


def checkpoint_to_wire(cp: Mapping[str, Any]) -> dict[str, Any]:
    """The wire form of a Checkpoint. Members the checkpoint lacks are left
    out (never invented), except updated_channels, which is null then."""
    if not isinstance(cp, Mapping):
        raise UnsupportedValue(f"checkpoint: want a mapping, got {type_name(cp)}")
    out: dict[str, Any] = {}
    if "v" in cp:
        out["v"] = encode_value(cp["v"], "checkpoint.v")
    if "id" in cp:
        out["id"] = id_to_wire(cp["id"], "checkpoint.id")
    if "ts" in cp:
        out["ts"] = ts_to_wire(cp["ts"])
    if "channel_values" in cp:
        out["channel_values"] = encode_map(cp["channel_values"], "channel_values")
    if "channel_versions" in cp:
        out["channel_versions"] = versions_to_wire(cp["channel_versions"], "channel_versions")
    if "versions_seen" in cp:
        seen = cp["versions_seen"]
        if not isinstance(seen, Mapping):
            raise UnsupportedValue(f"versions_seen: want a mapping, got {type_name(seen)}")
        out["versions_seen"] = {
            node: versions_to_wire(vs, f"versions_seen[{node!r}]") for node, vs in seen.items()
        }
    uc = cp.get("updated_channels")
    if uc is None:
        out["updated_channels"] = None
    elif isinstance(uc, (list, tuple)) and all(type(c) is str for c in uc):
        out["updated_channels"] = list(uc)
    else:
        raise UnsupportedValue(f"updated_channels: want a list of str, got {type_name(uc)}")
    return out


def checkpoint_from_wire(w: Any, numeric_versions: bool = False) -> Checkpoint:
    """The Checkpoint of a wire checkpoint (every member set; updated_channels
    None when null)."""
    if type(w) is not dict:
        raise BadRequest(f"checkpoint: want an object, got {type_name(w)}")
    v = w.get("v")
    if v is not None and type(v) is not int:
        raise BadRequest(f"checkpoint.v: want an integer, got {type_name(v)}")
    seen_w = w.get("versions_seen")
    if seen_w is None:
        seen_w = {}
    if type(seen_w) is not dict:
        raise BadRequest(f"checkpoint.versions_seen: want an object, got {type_name(seen_w)}")
    uc = w.get("updated_channels")
    if uc is not None and (type(uc) is not list or any(type(c) is not str for c in uc)):
        raise BadRequest("checkpoint.updated_channels: want a list of strings or null")
    return Checkpoint(
        v=v if v is not None else 0,
        id=_wire_str(w, "id", "checkpoint"),
        ts=ts_from_wire(w.get("ts")),
        channel_values=decode_map(w.get("channel_values"), "channel_values"),
        channel_versions=versions_from_wire(w.get("channel_versions"), "channel_versions", numeric_versions),
        versions_seen={
            node: versions_from_wire(vs, f"versions_seen[{node!r}]", numeric_versions) for node, vs in seen_w.items()
        },
        updated_channels=list(uc) if uc is not None else None,
    )


def tuple_to_wire(t: CheckpointTuple) -> dict[str, Any]:
    """The wire form of a CheckpointTuple."""
    writes = []
    for i, pw in enumerate(t.pending_writes or ()):
        if len(pw) != 3:
            raise UnsupportedValue(f"pending_writes[{i}]: want (task_id, channel, value), got {len(pw)} items")
        task, channel, value = pw
        writes.append(
            [
                id_to_wire(task, f"pending_writes[{i}] task_id"),
                id_to_wire(channel, f"pending_writes[{i}] channel"),
                encode_value(value, f"pending_writes[{i}]"),
            ]
        )
    return {
        "config": config_to_wire(t.config),
        "checkpoint": checkpoint_to_wire(t.checkpoint),
        "metadata": encode_map(t.metadata, "metadata"),
        "parent_config": config_to_wire(t.parent_config) if t.parent_config else None,
        "pending_writes": writes,
    }


def tuple_from_wire(w: Any, numeric_versions: bool = False) -> CheckpointTuple:
    """The CheckpointTuple of a wire tuple; the config carries the checkpoint
    ID, parent_config is None when there is no parent."""
    if type(w) is not dict:
        raise BadRequest(f"tuple: want an object, got {type_name(w)}")
    writes = w.get("pending_writes") or []
    if type(writes) is not list:
        raise BadRequest("pending_writes: want a list")
    pending = []
    for i, pw in enumerate(writes):
        if type(pw) is not list or len(pw) != 3 or type(pw[0]) is not str or type(pw[1]) is not str:
            raise BadRequest(f"pending_writes[{i}]: want [task_id, channel, value]")
        pending.append((pw[0], pw[1], decode_value(pw[2], f"pending_writes[{i}]")))
    parent = w.get("parent_config")
    return CheckpointTuple(
        config=config_from_wire(w.get("config"), "config"),
        checkpoint=checkpoint_from_wire(w.get("checkpoint"), numeric_versions),
        metadata=decode_map(w.get("metadata"), "metadata"),
        parent_config=config_from_wire(parent, "parent_config") if parent else None,
        pending_writes=pending,
    )


def encode_writes(writes: Iterable[tuple[str, Any]]) -> list[list[Any]]:
    """The wire form of put_writes' writes ((channel, value) pairs)."""
    out = []
    for i, pair in enumerate(writes):
        channel, value = pair
        out.append([id_to_wire(channel, f"writes[{i}] channel"), encode_value(value, f"writes[{i}]")])
    return out


def decode_writes(w: Any) -> list[tuple[str, Any]]:
    """(channel, value) pairs of wire writes."""
    if type(w) is not list:
        raise BadRequest(f"writes: want a list, got {type_name(w)}")
    out = []
    for i, pw in enumerate(w):
        if type(pw) is not list or len(pw) != 2 or type(pw[0]) is not str:
            raise BadRequest(f"writes[{i}]: want [channel, value]")
        out.append((pw[0], decode_value(pw[1], f"writes[{i}]")))
    return out


def histories_to_wire(histories: Mapping[str, Any]) -> dict[str, Any]:
    """The wire result of delta_history from a saver's
    get_delta_channel_history answer ({channel: {"writes": [(task_id,
    channel, value), ...], "seed"?: value}}); an absent seed stays absent."""
    out: dict[str, Any] = {}
    for ch, h in histories.items():
        where = f"histories[{ch!r}]"
        writes = []
        for i, pw in enumerate(h.get("writes") or ()):
            if len(pw) != 3:
                raise UnsupportedValue(f"{where}.writes[{i}]: want (task_id, channel, value), got {len(pw)} items")
            task, channel, value = pw
            writes.append(
                [
                    id_to_wire(task, f"{where}.writes[{i}] task_id"),
                    id_to_wire(channel, f"{where}.writes[{i}] channel"),
                    encode_value(value, f"{where}.writes[{i}]"),
                ]
            )
        entry: dict[str, Any] = {"writes": writes}
        if "seed" in h:
            entry["seed"] = encode_value(h["seed"], f"{where}.seed")
        out[id_to_wire(ch, "channel")] = entry
    return {"histories": out}


def histories_from_wire(w: Any) -> dict[str, dict[str, Any]]:
    """The get_delta_channel_history answer of a wire delta_history result:
    {channel: {"writes": [(task_id, channel, value), ...], "seed"?: value}}."""
    if type(w) is not dict or type(w.get("histories")) is not dict:
        raise BadRequest("delta_history result: want {\"histories\": {...}}")
    out: dict[str, dict[str, Any]] = {}
    for ch, hw in w["histories"].items():
        where = f"histories[{ch!r}]"
        if type(hw) is not dict:
            raise BadRequest(f"{where}: want an object, got {type_name(hw)}")
        ws = hw.get("writes") or []
        if type(ws) is not list:
            raise BadRequest(f"{where}.writes: want a list")
        writes = []
        for i, pw in enumerate(ws):
            if type(pw) is not list or len(pw) != 3 or type(pw[0]) is not str or type(pw[1]) is not str:
                raise BadRequest(f"{where}.writes[{i}]: want [task_id, channel, value]")
            writes.append((pw[0], pw[1], decode_value(pw[2], f"{where}.writes[{i}]")))
        entry: dict[str, Any] = {"writes": writes}
        if "seed" in hw:
            entry["seed"] = decode_value(hw["seed"], f"{where}.seed")
        out[ch] = entry
    return out
