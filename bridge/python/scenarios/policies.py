"""Scenarios on node policies and durability: retry policies, node caching
where it touches the saver, the three durability modes on interrupts and
subgraphs, and the refengine/enginetest scenarios not written for
LangGraph.js (exit_durability, subgraph_interrupt, fanout_failure)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.cache.memory import InMemoryCache
from langgraph.graph import START, StateGraph
from langgraph.types import CachePolicy, Command, RetryPolicy, interrupt

from checkpointkit_bridge.recorder import RecordingSaver

from .common import (
    LogState,
    Scenario,
    ValueState,
    ask_graph,
    at,
    bare,
    chain_graph,
    expect_failure,
    invoke,
    linear_graph,
    log_node,
    thread,
)

# Retries wait no time, so the scenarios run fast.
NO_WAIT: dict[str, Any] = {"initial_interval": 0.0, "max_interval": 0.0, "jitter": False, "retry_on": ValueError}


def flaky(failures: int, name: str) -> Any:
    """A node that raises ValueError("boom") on its first failures runs,
    then logs name."""
    runs: list[int] = []

    def node(_s: Any) -> dict[str, Any]:
        runs.append(1)
        if len(runs) <= failures:
            raise ValueError("boom")
        return {"log": [name]}

    return node


def retry_graph(saver: RecordingSaver, failures: int, attempts: int) -> Any:
    """START -> a -> b, where b fails failures times under a retry policy
    of attempts attempts."""
    return (
        StateGraph(LogState)
        .add_node("a", log_node("a"))
        .add_node("b", flaky(failures, "b"), retry_policy=RetryPolicy(max_attempts=attempts, **NO_WAIT))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )


def retry_policy(saver: RecordingSaver) -> None:
    """b fails twice and succeeds on its third attempt: the saver sees only
    the attempt that counted."""
    invoke(retry_graph(saver, 2, 3), {"log": [], "q": "hi"}, thread("engine-retry-policy"))


def retry_exhausted(saver: RecordingSaver) -> None:
    """b fails on both of its attempts: one __error__ write, and a later
    run (the policy's attempts start over) succeeds."""
    g = retry_graph(saver, 2, 2)
    cfg = thread("engine-retry-exhausted")
    expect_failure(g, {"log": [], "q": "hi"}, cfg)
    invoke(g, None, cfg)


def cache_hit(saver: RecordingSaver) -> None:
    """A cached node run on two threads with the same input: the second
    run takes its writes from the cache and saves them like its own."""
    g = (
        StateGraph(LogState)
        .add_node("a", log_node("a"), cache_policy=CachePolicy())
        .add_node("b", log_node("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver, cache=InMemoryCache())
    )
    for tid in ("engine-cache-1", "engine-cache-2"):
        invoke(g, {"log": [], "q": "hi"}, thread(tid))


def durability_interrupt(saver: RecordingSaver, durability: str) -> None:
    g = ask_graph(saver)
    cfg = thread(f"engine-durability-{durability}", durability)
    invoke(g, {"log": [], "q": "hi"}, cfg)
    invoke(g, Command(resume="ok"), cfg)


def durability_sync_interrupt(saver: RecordingSaver) -> None:
    durability_interrupt(saver, "sync")


def durability_async_interrupt(saver: RecordingSaver) -> None:
    durability_interrupt(saver, "async")


def durability_exit_interrupt(saver: RecordingSaver) -> None:
    durability_interrupt(saver, "exit")


def subgraph_with_durability(saver: RecordingSaver, durability: str) -> None:
    child = (
        StateGraph(LogState)
        .add_node("x", log_node("x"))
        .add_node("y", log_node("y"))
        .add_edge(START, "x")
        .add_edge("x", "y")
        .compile()
    )
    g = (
        StateGraph(LogState)
        .add_node("sub", child)
        .add_node("after", log_node("after"))
        .add_edge(START, "sub")
        .add_edge("sub", "after")
        .compile(checkpointer=saver)
    )
    invoke(g, {"log": [], "q": "hi"}, thread(f"engine-subgraph-{durability}", durability))


def durability_async_subgraph(saver: RecordingSaver) -> None:
    subgraph_with_durability(saver, "async")


def durability_exit_subgraph(saver: RecordingSaver) -> None:
    subgraph_with_durability(saver, "exit")


def history_before_limit(saver: RecordingSaver) -> None:
    """get_state_history with before and limit, and of one checkpoint."""
    g = linear_graph(saver)
    cfg = thread("engine-history-before")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    hist = list(g.get_state_history(bare(cfg)))
    list(g.get_state_history(bare(cfg), before=hist[1].config, limit=2))
    g.get_state(hist[2].config)


def command_fork(saver: RecordingSaver) -> None:
    """A Command (update and goto) sent to an older checkpoint: the run forks
    it and the fork carries the Command's writes."""
    g = linear_graph(saver)
    cfg = thread("engine-command-fork")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    hist = list(g.get_state_history(bare(cfg)))
    step0 = hist[-2].config["configurable"]["checkpoint_id"]
    invoke(g, Command(update={"q": "again"}, goto=["b"]), at("engine-command-fork", step0))


def fanout_graph(saver: RecordingSaver, failures: int) -> Any:
    """START -> (one, two) over a summing key; two fails failures times."""
    runs: list[int] = []

    def two(_s: Any) -> dict[str, Any]:
        runs.append(1)
        if len(runs) <= failures:
            raise ValueError("boom")
        return {"value": 3}

    return (
        StateGraph(ValueState)
        .add_node("one", lambda _s: {"value": 2})
        .add_node("two", two)
        .add_edge(START, "one")
        .add_edge(START, "two")
        .compile(checkpointer=saver)
    )


def fanout_failure(saver: RecordingSaver) -> None:
    g = fanout_graph(saver, 2)
    cfg = thread("engine-fanout", "async", serial=False)
    expect_failure(g, {"value": 1}, cfg)
    hist = [h for h in saver.inner.list({"configurable": {"thread_id": "engine-fanout", "checkpoint_ns": ""}})]
    g.get_state(bare(cfg))
    g.get_state(hist[0].config)
    expect_failure(g, None, cfg)
    invoke(g, None, cfg)


def exit_durability(saver: RecordingSaver) -> None:
    invoke(linear_graph(saver), {"log": [], "q": "hi"}, thread("engine-exit", "exit"))
    fg = fanout_graph(saver, 1)
    fcfg = thread("engine-exit-fanout", "exit", serial=False)
    expect_failure(fg, {"value": 1}, fcfg)
    invoke(fg, None, fcfg)
    sg = chain_graph(saver.inner, interrupt_after="*")  # unrecorded, as in the Go scenario
    for run in range(3):
        invoke(sg, {"x": 1} if run == 0 else None, thread("engine-exit-static", "exit"))


class OnlyLog(TypedDict, total=False):
    log: Annotated[list, operator.add]


class LastLog(TypedDict, total=False):
    log: Any


def subgraph_interrupt(saver: RecordingSaver) -> None:
    child = (
        StateGraph(OnlyLog)
        .add_node("inner", lambda _s: {"log": [f"inner:{interrupt('inner?')}"]})
        .add_edge(START, "inner")
        .compile()
    )
    root = (
        StateGraph(LastLog)
        .add_node("foo", lambda _s: {"log": ["foo"]})
        .add_node("bar", child)
        .add_edge(START, "foo")
        .add_edge("foo", "bar")
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-subgraph")
    invoke(root, {"log": []}, cfg)
    snap = root.get_state(bare(cfg), subgraphs=True)
    ns = snap.tasks[0].state.config["configurable"]["checkpoint_ns"]
    list(root.get_state_history({"configurable": {"thread_id": "engine-subgraph", "checkpoint_ns": ns}}))
    invoke(root, Command(resume="x"), cfg)


SCENARIOS: dict[str, Scenario] = {
    f.__name__: f
    for f in (
        retry_policy,
        retry_exhausted,
        cache_hit,
        durability_sync_interrupt,
        durability_async_interrupt,
        durability_exit_interrupt,
        durability_async_subgraph,
        durability_exit_subgraph,
        history_before_limit,
        command_fork,
        fanout_failure,
        exit_durability,
        subgraph_interrupt,
    )
}
