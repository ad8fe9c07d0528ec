"""Graph and node builders that several scenario modules share, each the
Python side of a Go builder in refengine/enginetest (lg_graphs_test.go)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph
from langgraph.types import Send, interrupt

from checkpointkit_bridge.recorder import RecordingSaver

from .common import LogState, invoke, linear_graph, log_node, thread


class WhoState(TypedDict, total=False):
    """who (last value) and answers (append reducer): a Send's subgraph."""

    who: Any
    answers: Annotated[list, operator.add]


class AnswersState(TypedDict, total=False):
    """answers (append reducer): the root of a Send to a subgraph."""

    answers: Annotated[list, operator.add]


def one_node(state: type, name: str, node: Any, **compile_options: Any) -> Any:
    """START -> name, the graph of one node over state, compiled with
    compile_options (no checkpointer by default: a subgraph)."""
    return StateGraph(state).add_node(name, node).add_edge(START, name).compile(**compile_options)


def asking_child() -> Any:
    """START -> ask, answering "<who>:<answer>" after interrupt."""
    return one_node(WhoState, "ask", lambda s: {"answers": [f"{s['who']}:{interrupt('question for ' + s['who'])}"]})


def send_root(saver: RecordingSaver, child: Any) -> Any:
    """START -> plan, which sends {who: A} and {who: B} to the subgraph node
    sub running child."""
    return (
        StateGraph(AnswersState)
        .add_node("plan", lambda _s: {})
        .add_node("sub", child)
        .add_edge(START, "plan")
        .add_conditional_edges("plan", lambda _s: [Send("sub", {"who": "A"}), Send("sub", {"who": "B"})])
        .compile(checkpointer=saver)
    )


def subgraph_then_after(saver: RecordingSaver, child: Any) -> Any:
    """START -> sub -> after over LogState, sub the subgraph node running
    child."""
    return (
        StateGraph(LogState)
        .add_node("sub", child)
        .add_node("after", log_node("after"))
        .add_edge(START, "sub")
        .add_edge("sub", "after")
        .compile(checkpointer=saver)
    )


def linear_history(saver: RecordingSaver, thread_id: str) -> tuple[Any, RunnableConfig, list[Any]]:
    """Runs the linear graph once on thread_id and returns it, the run's
    config and the thread's state history, newest first."""
    g = linear_graph(saver)
    cfg = thread(thread_id)
    invoke(g, {"log": [], "q": "hi"}, cfg)
    return g, cfg, list(g.get_state_history(cfg))
