"""The scenarios of bridge/js/scenarios/scenarios.js, for LangGraph Python.

Each drives the same graph with the same thread ID, inputs and calls as
the Go scenario of the same name in refengine/enginetest.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send, interrupt

from checkpointkit_bridge.recorder import RecordingSaver

# AnswersState and WhoState are imported for subgraphs.py, which imports
# them from this module.
from .builders import AnswersState, WhoState, asking_child, linear_history, one_node, send_root, subgraph_then_after
from .common import (
    LogState,
    Scenario,
    adder_graph,
    ask_graph,
    at,
    bare,
    chain_graph,
    expect_failure,
    history,
    human_graph,
    invoke,
    linear_graph,
    log_node,
    thread,
)


def linear(saver: RecordingSaver) -> None:
    invoke(linear_graph(saver), {"log": [], "q": "hi"}, thread("engine-linear"))


def linear_async(saver: RecordingSaver) -> None:
    invoke(linear_graph(saver), {"log": [], "q": "hi"}, thread("engine-linear-async", "async"))


def interrupt_resume(saver: RecordingSaver) -> None:
    g = ask_graph(saver)
    cfg = thread("engine-interrupt")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    g.get_state(cfg)
    invoke(g, Command(resume="ok"), cfg)


class AnswerState(TypedDict, total=False):
    answer: Any


def interrupt_twice(saver: RecordingSaver) -> None:
    def ask(_s: Any) -> dict[str, Any]:
        first = interrupt("first?")
        second = interrupt("second?")
        return {"answer": f"{first}+{second}"}

    g = one_node(AnswerState, "ask", ask, checkpointer=saver)
    cfg = thread("engine-interrupt-twice", "async")
    invoke(g, {"answer": ""}, cfg)
    invoke(g, Command(resume="x"), cfg)
    invoke(g, Command(resume="y"), cfg)


def static_interrupts(saver: RecordingSaver) -> None:
    g = chain_graph(saver, interrupt_after="*")
    cfg = thread("engine-static")
    for run in range(3):
        invoke(g, {"x": 1} if run == 0 else None, cfg)
        g.get_state(cfg)


class OnlyLog(TypedDict, total=False):
    log: Annotated[list, operator.add]


def new_input_discards(saver: RecordingSaver) -> None:
    g = (
        StateGraph(OnlyLog)
        .add_node("a", log_node("a"))
        .add_node("b", log_node("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver, interrupt_before=["b"])
    )
    cfg = thread("engine-new-input")
    for _ in range(2):
        invoke(g, {"log": []}, cfg)


def command_goto(saver: RecordingSaver) -> None:
    g = linear_graph(saver)
    cfg = thread("engine-command")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    invoke(g, Command(goto=["b"], update={"q": "again"}), cfg)


def update_fork(saver: RecordingSaver) -> None:
    g = adder_graph(saver)
    tid = "engine-update"
    invoke(g, {"value": 1}, thread(tid))
    hs = history(saver, tid)
    u = g.update_state(bare(at(tid, hs[1].checkpoint["id"])), {"value": 20}, as_node="node_a")
    invoke(g, None, at(tid, u["configurable"]["checkpoint_id"]))


def sibling_forks(saver: RecordingSaver) -> None:
    g = adder_graph(saver)
    tid = "engine-siblings"
    invoke(g, {"value": 1}, thread(tid))
    hs = history(saver, tid)
    forks = [g.update_state(bare(at(tid, hs[1].checkpoint["id"])), {"value": v}, as_node="node_a") for v in (20, 30)]
    for f in forks:
        invoke(g, None, at(tid, f["configurable"]["checkpoint_id"]))


def replay_history(saver: RecordingSaver) -> None:
    g = human_graph(saver)
    tid = "engine-replay"
    invoke(g, {"log": []}, thread(tid, "async"))
    invoke(g, Command(resume="old"), thread(tid, "async"))
    hs = history(saver, tid)
    invoke(g, None, at(tid, hs[2].checkpoint["id"], "async"))
    invoke(g, Command(resume="new"), thread(tid, "async"))


class SendState(TypedDict, total=False):
    items: Any
    item: Any
    results: Annotated[list, operator.add]


def send_map_reduce(saver: RecordingSaver) -> None:
    g = (
        StateGraph(SendState)
        .add_node("plan", lambda _s: {})
        .add_node("w", lambda s: {"results": [f"r{s['item']}"]})
        .add_edge(START, "plan")
        .add_conditional_edges("plan", lambda s: [Send("w", {"item": i}) for i in s["items"]])
        .compile(checkpointer=saver)
    )
    invoke(g, {"items": [0, 1, 2, 3, 4]}, thread("engine-send", "async"))


def parallel_interrupts(saver: RecordingSaver) -> None:
    root = send_root(saver, asking_child())
    cfg = thread("engine-parallel-interrupts")
    res = invoke(root, {"answers": []}, cfg)
    ids = [i.id for i in res["__interrupt__"]]
    expect_failure(root, Command(resume="x"), cfg)  # two interrupts pending
    invoke(root, Command(resume={ids[0]: "a"}), cfg)
    invoke(root, Command(resume={ids[1]: "b"}), cfg)


class CounterState(TypedDict, total=False):
    question: Any
    seen: Annotated[list, operator.add]
    count: Any


class QuestionState(TypedDict, total=False):
    question: Any
    count: Any


def stateful_subgraph(saver: RecordingSaver) -> None:
    child = one_node(
        CounterState,
        "remember",
        lambda s: {"seen": [s["question"]], "count": len(s.get("seen", [])) + 1},
        checkpointer=True,
    )
    root = one_node(QuestionState, "inner", child, checkpointer=saver)
    tid = "engine-stateful"
    for q in ("q1", "q2"):
        invoke(root, {"question": q}, thread(tid))
    hs = history(saver, tid)
    invoke(root, None, at(tid, hs[4].checkpoint["id"]))


def conditional(saver: RecordingSaver) -> None:
    g = (
        StateGraph(LogState)
        .add_node("route", log_node("route"))
        .add_node("left", log_node("left"))
        .add_node("right", log_node("right"))
        .add_edge(START, "route")
        .add_conditional_edges("route", lambda s: "left" if s["q"] == "L" else "right", ["left", "right"])
        .compile(checkpointer=saver)
    )
    for q in ("L", "R"):
        invoke(g, {"log": [], "q": q}, thread("engine-cond"))


def fanout_fanin(saver: RecordingSaver) -> None:
    g = (
        StateGraph(LogState)
        .add_node("a", log_node("a"))
        .add_node("b", log_node("b"))
        .add_node("c", log_node("c"))
        .add_node("d", log_node("d"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], "d")
        .compile(checkpointer=saver)
    )
    invoke(g, {"log": [], "q": "hi"}, thread("engine-fan"))


def exit_linear(saver: RecordingSaver) -> None:
    g = linear_graph(saver)
    for _ in range(2):
        invoke(g, {"log": [], "q": "hi"}, thread("engine-exit-linear", "exit"))


def state_history(saver: RecordingSaver) -> None:
    g, cfg, _ = linear_history(saver, "engine-history")
    list(g.get_state_history(cfg, filter={"source": "loop"}, limit=2))


def failing_once(name: str) -> Any:
    """A node that raises on its first run and logs its name afterwards."""
    failed: list[bool] = []

    def node(_s: Any) -> dict[str, Any]:
        if not failed:
            failed.append(True)
            raise ValueError("boom")
        return {"log": [name]}

    return node


def failure_retry(saver: RecordingSaver) -> None:
    g = (
        StateGraph(LogState)
        .add_node("a", log_node("a"))
        .add_node("b", failing_once("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-retry")
    expect_failure(g, {"log": [], "q": "hi"}, cfg)
    invoke(g, None, cfg)


def failure_siblings(saver: RecordingSaver) -> None:
    g = (
        StateGraph(LogState)
        .add_node("two", failing_once("two"))
        .add_node("one", log_node("one"))
        .add_edge(START, "one")
        .add_edge(START, "two")
        .compile(checkpointer=saver)
    )
    # Not serial: the sibling runs on a thread of its own while two fails.
    cfg = thread("engine-siblings-fail", serial=False)
    expect_failure(g, {"log": [], "q": "hi"}, cfg)
    invoke(g, None, cfg)


def subgraph_node(saver: RecordingSaver) -> None:
    g = subgraph_then_after(saver, one_node(LogState, "inner", log_node("inner")))
    for _ in range(2):
        invoke(g, {"log": [], "q": "hi"}, thread("engine-subgraph-node"))


def update_copy(saver: RecordingSaver) -> None:
    g, _, hist = linear_history(saver, "engine-copy")
    cp = g.update_state(hist[-2].config, None, as_node="__copy__")
    invoke(g, None, at("engine-copy", cp["configurable"]["checkpoint_id"]))


def interrupt_before(saver: RecordingSaver) -> None:
    g = chain_graph(saver, interrupt_before=["s2"])
    cfg = thread("engine-before", "async")
    invoke(g, {"x": 1}, cfg)
    invoke(g, None, cfg)


SCENARIOS: dict[str, Scenario] = {
    f.__name__: f
    for f in (
        linear,
        linear_async,
        interrupt_resume,
        interrupt_twice,
        static_interrupts,
        new_input_discards,
        command_goto,
        update_fork,
        sibling_forks,
        replay_history,
        send_map_reduce,
        parallel_interrupts,
        stateful_subgraph,
        conditional,
        fanout_fanin,
        exit_linear,
        state_history,
        failure_retry,
        failure_siblings,
        subgraph_node,
        update_copy,
        interrupt_before,
    )
}
