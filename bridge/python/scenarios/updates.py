"""Scenarios on update_state as the graph's input and as END."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from checkpointkit_bridge.recorder import RecordingSaver

from .common import LogState, Scenario, bare, chain_graph, invoke, linear_graph, log_node, thread


def update_as_input(saver: RecordingSaver) -> None:
    """An update as __input__ of a thread stopped before s2: the input write
    is saved on the latest checkpoint, then an input checkpoint is put;
    the run continues from it."""
    g = chain_graph(saver, interrupt_before=["s2"])
    cfg = thread("engine-update-input")
    invoke(g, {"x": 1}, cfg)
    g.update_state(bare(cfg), {"x": 5}, as_node="__input__")
    invoke(g, None, cfg)


def update_as_input_fresh(saver: RecordingSaver) -> None:
    """An update as __input__ of a fresh thread puts only the input
    checkpoint; a run continues from it."""
    g = linear_graph(saver)
    cfg = thread("engine-update-input-fresh")
    g.update_state(bare(cfg), {"log": ["x"], "q": "hi"}, as_node="__input__")
    invoke(g, None, cfg)


def update_as_end(saver: RecordingSaver) -> None:
    """An update as END of a thread stopped before s2 finishes its pending
    tasks without running them."""
    g = chain_graph(saver, interrupt_before=["s2"])
    cfg = thread("engine-update-end")
    invoke(g, {"x": 1}, cfg)
    g.update_state(bare(cfg), None, as_node=END)
    g.get_state(bare(cfg))


def two_questions(_s: Any) -> dict[str, Any]:
    first = interrupt("one?")
    second = interrupt("two?")
    return {"log": [f"{first},{second}"]}


def interrupt_twice_by_id(saver: RecordingSaver) -> None:
    """A node interrupting twice, answered by resume maps keyed by each
    interrupt's own ID."""
    g = StateGraph(LogState).add_node("ask", two_questions).add_edge(START, "ask").compile(checkpointer=saver)
    cfg = thread("engine-interrupt-twice-by-id")
    res = invoke(g, {"log": [], "q": "hi"}, cfg)
    res = invoke(g, Command(resume={res["__interrupt__"][0].id: "A"}), cfg)
    invoke(g, Command(resume={res["__interrupt__"][0].id: "B"}), cfg)


def stateful_subgraph_state(saver: RecordingSaver) -> None:
    """A stateful subgraph node (checkpointer=True) that interrupts: its
    state read through get_state(subgraphs=True), then a resume."""
    child = (
        StateGraph(LogState)
        .add_node("x", log_node("x"))
        .add_node("ask", lambda _s: {"log": [f"ask:{interrupt('?')}"]})
        .add_edge(START, "x")
        .add_edge("x", "ask")
        .compile(checkpointer=True)
    )
    g = StateGraph(LogState).add_node("sub", child).add_edge(START, "sub").compile(checkpointer=saver)
    cfg = thread("engine-stateful-subgraph-state")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    g.get_state(bare(cfg), subgraphs=True)
    invoke(g, Command(resume="ok"), cfg)


def update_finished_task(saver: RecordingSaver) -> None:
    """START fans out to b (logs "b") and ask (interrupts). update_state as
    b on the latest checkpoint reuses b's prepared task ID: its write is
    re-sent under a task ID that already has writes there, and the saver
    keeps b's original rows. get_state of that checkpoint then reports b's
    result from them: {"log": ["b"]}, not the update's ["u"]."""
    g = (
        StateGraph(LogState)
        .add_node("b", log_node("b"))
        .add_node("ask", lambda _s: {"log": [f"ask:{interrupt('?')}"]})
        .add_edge(START, "b")
        .add_edge(START, "ask")
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-update-finished-task")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    stopped = g.get_state(bare(cfg)).config
    g.update_state(bare(cfg), {"log": ["u"]}, as_node="b")
    snap = g.get_state(stopped)
    results = {t.name: t.result for t in snap.tasks}
    if results.get("b") != {"log": ["b"]}:
        raise AssertionError(f"b's result on the updated checkpoint is {results.get('b')!r}")


SCENARIOS: dict[str, Scenario] = {
    f.__name__: f
    for f in (
        update_as_input,
        update_as_input_fresh,
        update_as_end,
        interrupt_twice_by_id,
        stateful_subgraph_state,
        update_finished_task,
    )
}
