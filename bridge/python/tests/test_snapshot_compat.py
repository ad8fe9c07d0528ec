"""The bridge loads under a LangGraph that predates delta channels."""

from __future__ import annotations

import importlib
import sys
import types

import pytest

from checkpointkit_bridge import codec, snapshot


def test_stand_in_when_langgraph_has_no_snapshot_type(monkeypatch: pytest.MonkeyPatch) -> None:
    old = types.ModuleType("langgraph.checkpoint.serde.types")  # no _DeltaSnapshot
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.serde.types", old)
    try:
        stand_in = importlib.reload(snapshot)
        assert not stand_in.HAS_DELTA_SNAPSHOT
        a, b = stand_in.DeltaSnapshot([1, "x"]), stand_in.DeltaSnapshot([1, "x"])
        assert a == b and a != stand_in.DeltaSnapshot([2])
        assert a.value == [1, "x"]
    finally:
        monkeypatch.undo()
        importlib.reload(snapshot)


def test_real_snapshot_type_round_trips_through_codec() -> None:
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    assert snapshot.HAS_DELTA_SNAPSHOT and snapshot.DeltaSnapshot is _DeltaSnapshot
    back = codec.decode_value(codec.encode_value(_DeltaSnapshot(["m1", {"n": 2}])))
    assert type(back) is _DeltaSnapshot and back.value == ["m1", {"n": 2}]
