"""Graphs and helpers shared by the scenarios."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from checkpointkit_bridge.recorder import RecordingSaver

Scenario = Callable[[RecordingSaver], None]


class LogState(TypedDict, total=False):
    """q (last value) and log (append reducer)."""

    q: Any
    log: Annotated[list, operator.add]


def log_node(name: str) -> Callable[[Any], dict[str, Any]]:
    """A node appending its name to log."""

    def node(_state: Any) -> dict[str, Any]:
        return {"log": [name]}

    return node


def thread(thread_id: str, durability: str = "sync", serial: bool = True) -> RunnableConfig:
    """A run config for a thread. serial runs the loop's background calls
    (saver calls, parallel tasks) on one worker, in the order they were
    submitted, so that the saver traffic is reproducible."""
    cfg: dict[str, Any] = {"configurable": {"thread_id": thread_id}, "durability": durability}
    if serial:
        cfg["max_concurrency"] = 1
    return cfg  # type: ignore[return-value]


def at(thread_id: str, checkpoint_id: str, durability: str = "sync", ns: str = "") -> RunnableConfig:
    """A run config addressing one checkpoint of a thread (with its
    namespace, as a snapshot's config has it)."""
    cfg = thread(thread_id, durability)
    cfg["configurable"]["checkpoint_id"] = checkpoint_id
    cfg["configurable"]["checkpoint_ns"] = ns
    return cfg


def bare(cfg: RunnableConfig) -> RunnableConfig:
    """cfg without the durability only invoke takes (update_state would
    copy it into the update checkpoint's metadata)."""
    return {k: v for k, v in cfg.items() if k != "durability"}  # type: ignore[return-value]


def invoke(graph: Any, inp: Any, cfg: RunnableConfig) -> Any:
    """graph.invoke with the durability of cfg."""
    cfg = dict(cfg)
    durability = cfg.pop("durability", "sync")
    return graph.invoke(inp, cfg, durability=durability)


def expect_failure(graph: Any, inp: Any, cfg: RunnableConfig) -> None:
    """Invoke, which must raise."""
    try:
        invoke(graph, inp, cfg)
    except Exception:
        return
    raise AssertionError("the run did not fail")


def history(saver: RecordingSaver, thread_id: str, ns: str = "") -> list[Any]:
    """A thread's checkpoints in ns, oldest first, read from the wrapped
    saver (unrecorded, like the Go scenarios' checks)."""
    out = list(saver.inner.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}))
    out.reverse()
    return out


def all_namespaces(saver: RecordingSaver, thread_id: str) -> list[Any]:
    """Every checkpoint of a thread, unrecorded."""
    return list(saver.inner.list({"configurable": {"thread_id": thread_id}}))


def linear_graph(saver: RecordingSaver) -> Any:
    """START -> a -> b -> END over LogState."""
    return (
        StateGraph(LogState)
        .add_node("a", log_node("a"))
        .add_node("b", log_node("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", END)
        .compile(checkpointer=saver)
    )


def ask_graph(saver: RecordingSaver) -> Any:
    """START -> a -> b where b asks interrupt("?") and logs "b:<answer>"."""
    return (
        StateGraph(LogState)
        .add_node("a", log_node("a"))
        .add_node("b", lambda _s: {"log": [f"b:{interrupt('?')}"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )


class XState(TypedDict, total=False):
    x: Any


def chain_graph(saver: RecordingSaver, **options: Any) -> Any:
    """START -> s1 -> s2 -> s3 whose nodes write nothing."""

    def noop(_s: Any) -> dict[str, Any]:
        return {}

    return (
        StateGraph(XState)
        .add_node("s1", noop)
        .add_node("s2", noop)
        .add_node("s3", noop)
        .add_edge(START, "s1")
        .add_edge("s1", "s2")
        .add_edge("s2", "s3")
        .compile(checkpointer=saver, **options)
    )


class ValueState(TypedDict, total=False):
    value: Annotated[int, operator.add]


def adder_graph(saver: RecordingSaver) -> Any:
    """START -> node_a (+10) -> node_b (+100) over a summing key."""
    return (
        StateGraph(ValueState)
        .add_node("node_a", lambda _s: {"value": 10})
        .add_node("node_b", lambda _s: {"value": 100})
        .add_edge(START, "node_a")
        .add_edge("node_a", "node_b")
        .compile(checkpointer=saver)
    )


class HumanState(TypedDict, total=False):
    answer: Any
    log: Annotated[list, operator.add]


def human_graph(saver: RecordingSaver) -> Any:
    """START -> node_a -> ask_human (interrupt) -> node_b."""
    return (
        StateGraph(HumanState)
        .add_node("node_a", log_node("node_a"))
        .add_node("ask_human", lambda _s: {"answer": interrupt("answer?")})
        .add_node("node_b", log_node("node_b"))
        .add_edge(START, "node_a")
        .add_edge("node_a", "ask_human")
        .add_edge("ask_human", "node_b")
        .compile(checkpointer=saver)
    )
