"""Real LangGraph Python graphs with a DeltaChannel on BridgeSaver over each
of checkpointkit's Go adapters, compared with the same runs on LangGraph's
InMemorySaver: get_state, get_state_history and the channel's delta history
(get_delta_channel_history) must agree at every checkpoint.

The graph appends to a DeltaChannel list (snapshot every 3 updates) from an
input, two parallel nodes in one superstep, and a gate that interrupts when
asked. The run has 9 turns, an interrupt and resume, an update_state, and a
fork from an older checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Annotated, Any, TypedDict

import pytest
from ckbackends import ADAPTERS, require_adapter, saver_bin
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from test_graphs import Trace, _results

from checkpointkit_bridge.client import BridgeProcess, start_saver_process
from checkpointkit_bridge.saver import BridgeSaver

CHANNEL = "log"


def append(state: list[Any], writes: Sequence[Any]) -> list[Any]:
    """The channel's reducer: each write is a list of entries, appended."""
    out = list(state)
    for w in writes:
        out.extend(w)
    return out


class LogState(TypedDict, total=False):
    log: Annotated[list, DeltaChannel(append, snapshot_frequency=3)]
    turn: int
    ask: bool
    answer: str


def log_graph() -> StateGraph:
    """plan -> (left, right in parallel) -> gate (interrupts when ask)."""

    def plan(state: LogState) -> LogState:
        return {"log": [f"plan {state['turn']}"]}

    def left(state: LogState) -> LogState:
        return {"log": [f"left {state['turn']} after {len(state['log'])}"]}

    def right(state: LogState) -> LogState:
        return {"log": [f"right {state['turn']}"]}

    def gate(state: LogState) -> LogState:
        if not state.get("ask"):
            return {"log": ["gate"]}
        answer = interrupt({"question": "go on?", "seen": len(state["log"])})
        return {"log": [f"gate {answer}"], "answer": answer}

    g = StateGraph(LogState)
    for name, fn in (("plan", plan), ("left", left), ("right", right), ("gate", gate)):
        g.add_node(name, fn)
    g.add_edge(START, "plan")
    g.add_edge("plan", "left")
    g.add_edge("plan", "right")
    g.add_edge(["left", "right"], "gate")
    g.add_edge("gate", END)
    return g


def scenario(saver: BaseCheckpointSaver) -> tuple[list[Any], list[Any]]:
    """Run the turns on saver; return the relabelled trace and, for every
    checkpoint of the thread (newest first), the channel's delta history with
    task IDs left out (they derive from random checkpoint IDs)."""
    tr = Trace(saver)
    graph = log_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "delta"}}
    for turn in range(1, 10):
        ask = turn == 4
        tr.record(f"turn {turn}", _results(graph.invoke({"turn": turn, "ask": ask, "log": [f"in {turn}"]}, config)))
        if ask:
            tr.state(graph, config)
            tr.record("resume", _results(graph.invoke(Command(resume="yes"), config)))
        tr.state(graph, config)
        if turn == 6:
            tr.record("update", tr.config(graph.update_state(config, {"log": ["by hand"]}, as_node="gate")))
            tr.state(graph, config)
    history = list(graph.get_state_history(config))
    older = history[len(history) // 2]
    forked = graph.update_state(older.config, {"log": ["forked"]}, as_node="gate")
    tr.record("fork", tr.config(forked))
    tr.record("fork run", _results(graph.invoke({"turn": 99, "ask": False, "log": ["in fork"]}, forked)))
    tr.state(graph, forked)
    tr.state(graph, config)
    histories = []
    for s in graph.get_state_history(config):
        h = saver.get_delta_channel_history(config=s.config, channels=[CHANNEL, "turn"])
        histories.append(_plain(h))
    tr.relabel()
    return tr.events, histories


def _plain(histories: Any) -> Any:
    """A history without task IDs; a snapshot seed marked as one."""
    out = {}
    for ch, h in histories.items():
        entry: dict[str, Any] = {"writes": [(ch_, v) for _, ch_, v in h["writes"]]}
        if "seed" in h:
            seed = h["seed"]
            entry["seed"] = ("snapshot", seed.value) if isinstance(seed, _DeltaSnapshot) else ("plain", seed)
        out[ch] = entry
    return out


_reference: list[Any] = []


def reference() -> tuple[list[Any], list[Any]]:
    if not _reference:
        _reference.append(scenario(InMemorySaver()))
    return _reference[0]


@pytest.fixture(scope="module", params=ADAPTERS)
def proc(request: pytest.FixtureRequest) -> Iterator[BridgeProcess]:
    require_adapter(request.param)
    p = start_saver_process(request.param, bin=saver_bin())
    yield p
    p.close()


def test_delta_graph_agrees_with_in_memory_saver(proc: BridgeProcess) -> None:
    # The Go adapter must answer delta_history itself (one request per
    # call), not leave BridgeSaver to walk get_tuple.
    assert "delta_history" in proc.capabilities, f"{proc.name} lacks delta_history"
    with BridgeSaver.open(proc, timeout=60) as saver:
        events, histories = scenario(saver)
        want_events, want_histories = reference()
        assert len(events) == len(want_events)
        for (what, g), (_, w) in zip(events, want_events):
            assert g == w, f"{what} differs"
        assert len(histories) == len(want_histories)
        for i, (g, w) in enumerate(zip(histories, want_histories)):
            assert g == w, f"delta history at checkpoint {i} (newest first) differs"


def test_reference_run_uses_the_delta_channel() -> None:
    """The run really snapshots, replays writes, interrupts, updates and forks."""
    events, histories = reference()
    seeds = [h[CHANNEL].get("seed", ("none",))[0] for h in histories]
    assert "snapshot" in seeds and "none" in seeds
    assert max(len(h[CHANNEL]["writes"]) for h in histories) >= 3
    assert histories[0]["turn"]["writes"] == [] or "seed" in histories[0]["turn"]
    # the fan-out's two writes of one superstep come back in task path order
    firsts = [[v[0].split()[0] for _, v in h[CHANNEL]["writes"]] for h in histories]
    assert any(["left", "right"] == f[i : i + 2] for f in firsts for i in range(len(f)))
    whats = [w for w, _ in events]
    assert "resume" in whats and "update" in whats and "fork run" in whats
    states = [v["values"][CHANNEL] for w, v in events if w == "get_state"]
    assert any("by hand" in s and "gate yes" in s for s in states)
    assert "forked" in states[-1] and "in fork" in states[-1]
