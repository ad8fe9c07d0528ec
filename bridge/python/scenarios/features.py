"""The scenarios of bridge/js/scenarios/features.js, for LangGraph Python:
nodes returning a Command, bulk updates after a __copy__, subgraphs invoked
from inside a node function and parallel interrupts resumed by ID."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send, StateUpdate, interrupt

from checkpointkit_bridge.recorder import RecordingSaver

from .builders import asking_child, linear_history, one_node, send_root
from .common import LogState, Scenario, at, history, invoke, log_node, thread


def caller_graph(saver: RecordingSaver, first: Any, second: Any) -> Any:
    """START -> caller -> after, where caller invokes first and then second
    (compiled subgraphs) from its node function, with the node's config,
    and logs what they logged."""

    def caller(_s: Any, config: RunnableConfig) -> dict[str, Any]:
        a = first.invoke({"log": [], "q": "first"}, config)
        b = second.invoke({"log": [], "q": "second"}, config)
        return {"log": a["log"] + b["log"]}

    return (
        StateGraph(LogState)
        .add_node("caller", caller)
        .add_node("after", log_node("after"))
        .add_edge(START, "caller")
        .add_edge("caller", "after")
        .compile(checkpointer=saver)
    )


def inner_graph() -> Any:
    """START -> inner, logging "inner:<q>"."""
    return one_node(LogState, "inner", lambda s: {"log": [f"inner:{s['q']}"]})


def asking_graph() -> Any:
    """START -> ask, logging "ask:<q>:<answer>" after interrupt("?")."""
    return one_node(LogState, "ask", lambda s: {"log": [f"ask:{s['q']}:{interrupt('?')}"]})


def command_node(saver: RecordingSaver) -> None:
    def router(s: Any) -> Command:
        return Command(goto="left" if s["q"] == "L" else "right", update={"log": ["router"], "q": f"routed:{s['q']}"})

    g = (
        StateGraph(LogState)
        .add_node("router", router, destinations=("left", "right"))
        .add_node("left", log_node("left"))
        .add_node("right", log_node("right"))
        .add_edge(START, "router")
        .compile(checkpointer=saver)
    )
    for q in ("L", "R"):
        invoke(g, {"log": [], "q": q}, thread("engine-command-node"))


def command_send(saver: RecordingSaver) -> None:
    g = (
        StateGraph(LogState)
        .add_node(
            "router",
            lambda _s: Command(goto=[Send("w", {"item": "x"}), Send("w", {"item": "y"})], update={"log": ["router"]}),
            destinations=("w",),
        )
        .add_node("w", lambda s: {"log": [f"w:{s['item']}"]})
        .add_edge(START, "router")
        .compile(checkpointer=saver)
    )
    invoke(g, {"log": [], "q": "hi"}, thread("engine-command-send"))


def update_copy_bulk(saver: RecordingSaver) -> None:
    g, _, hist = linear_history(saver, "engine-copy-bulk")
    out = g.bulk_update_state(
        hist[-2].config, [[StateUpdate(None, "__copy__")], [StateUpdate({"log": ["a*"]}, "a")]]
    )
    invoke(g, None, at("engine-copy-bulk", out["configurable"]["checkpoint_id"]))


def parallel_resume(saver: RecordingSaver) -> None:
    def ask(name: str) -> Any:
        return lambda _s: {"log": [f"{name}:{interrupt('question for ' + name)}"]}

    g = (
        StateGraph(LogState)
        .add_node("a", ask("a"))
        .add_node("b", ask("b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-parallel-resume")
    res = invoke(g, {"log": [], "q": "hi"}, cfg)
    ids = {i.value: i.id for i in res["__interrupt__"]}
    invoke(g, Command(resume={ids["question for a"]: "x"}), cfg)
    invoke(g, Command(resume={ids["question for b"]: "y"}), cfg)


def parallel_subgraph_resume(saver: RecordingSaver) -> None:
    root = send_root(saver, asking_child())
    cfg = thread("engine-parallel-subgraph-resume")
    res = invoke(root, {"answers": []}, cfg)
    ids = {i.value: i.id for i in res["__interrupt__"]}
    invoke(root, Command(resume={ids["question for A"]: "a"}), cfg)
    invoke(root, Command(resume={ids["question for B"]: "b"}), cfg)


def subgraph_in_node(saver: RecordingSaver) -> None:
    inner = inner_graph()
    g = caller_graph(saver, inner, inner)
    for _ in range(2):
        invoke(g, {"log": [], "q": "hi"}, thread("engine-subgraph-in-node"))


class SeenState(TypedDict, total=False):
    q: Any
    seen: Annotated[list, operator.add]
    log: Annotated[list, operator.add]


def subgraph_in_node_stateful(saver: RecordingSaver) -> None:
    counter = one_node(
        SeenState,
        "count",
        lambda s: {"seen": [s["q"]], "log": [f"count:{len(s.get('seen', [])) + 1}"]},
        checkpointer=True,
    )
    g = caller_graph(saver, counter, counter)
    for _ in range(2):
        invoke(g, {"log": [], "q": "hi"}, thread("engine-subgraph-in-node-stateful"))


def subgraph_in_node_resume(saver: RecordingSaver) -> None:
    g = caller_graph(saver, inner_graph(), asking_graph())
    tid = "engine-subgraph-in-node-resume"
    invoke(g, {"log": [], "q": "hi"}, thread(tid))
    invoke(g, Command(resume="ok"), thread(tid))
    hs = history(saver, tid)
    invoke(g, None, at(tid, hs[1].checkpoint["id"]))
    invoke(g, Command(resume="again"), thread(tid))


SCENARIOS: dict[str, Scenario] = {
    f.__name__: f
    for f in (
        command_node,
        command_send,
        update_copy_bulk,
        parallel_resume,
        parallel_subgraph_resume,
        subgraph_in_node,
        subgraph_in_node_stateful,
        subgraph_in_node_resume,
    )
}
