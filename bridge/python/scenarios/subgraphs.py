"""Scenarios on subgraphs: Command(graph=PARENT), the state APIs on
subgraphs (added as nodes and called from node functions), Send to
subgraphs, resume maps and forks from the middle of a subgraph's history."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send, interrupt

from checkpointkit_bridge.recorder import RecordingSaver

from .common import LogState, Scenario, bare, invoke, log_node, thread
from .ported import AnswersState, WhoState, asking_child


def jumping_child() -> Any:
    """START -> inner, which returns Command(graph=PARENT) going to the
    parent's "after" with an update of the parent's log."""
    return (
        StateGraph(LogState)
        .add_node("inner", lambda _s: Command(graph=Command.PARENT, goto="after", update={"log": ["jump"]}))
        .add_edge(START, "inner")
        .compile()
    )


def parent_of(saver: RecordingSaver, child: Any) -> Any:
    """START -> child (a subgraph node) ; after and other are reachable by
    Command only."""
    return (
        StateGraph(LogState)
        .add_node("child", child, destinations=("after", "other"))
        .add_node("after", log_node("after"))
        .add_node("other", log_node("other"))
        .add_edge(START, "child")
        .compile(checkpointer=saver)
    )


def command_parent(saver: RecordingSaver) -> None:
    """A subgraph node's node returns Command(graph=PARENT, goto, update)."""
    invoke(parent_of(saver, jumping_child()), {"log": [], "q": "hi"}, thread("engine-command-parent"))


def command_parent_in_node(saver: RecordingSaver) -> None:
    """The same Command(graph=PARENT) from a subgraph a node function calls."""
    child = jumping_child()

    def caller(_s: Any, config: RunnableConfig) -> dict[str, Any]:
        child.invoke({"log": [], "q": "x"}, config)
        return {"log": ["unreachable"]}

    g = (
        StateGraph(LogState)
        .add_node("caller", caller, destinations=("after",))
        .add_node("after", log_node("after"))
        .add_edge(START, "caller")
        .compile(checkpointer=saver)
    )
    invoke(g, {"log": [], "q": "hi"}, thread("engine-command-parent-in-node"))


def three_step_child() -> Any:
    """START -> s1 -> s2 -> ask (interrupt), logging each."""
    return (
        StateGraph(LogState)
        .add_node("s1", log_node("s1"))
        .add_node("s2", log_node("s2"))
        .add_node("ask", lambda _s: {"log": [f"ask:{interrupt('?')}"]})
        .add_edge(START, "s1")
        .add_edge("s1", "s2")
        .add_edge("s2", "ask")
        .compile()
    )


def node_caller(saver: RecordingSaver, child: Any) -> Any:
    """START -> caller, a node function invoking child with its config."""

    def caller(_s: Any, config: RunnableConfig) -> dict[str, Any]:
        out = child.invoke({"log": [], "q": "in"}, config)
        return {"log": out["log"]}

    return StateGraph(LogState).add_node("caller", caller).add_edge(START, "caller").compile(checkpointer=saver)


def lineage(cfg: RunnableConfig) -> RunnableConfig:
    """A snapshot's config without its checkpoint: the whole lineage."""
    conf = cfg["configurable"]
    return {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": conf["checkpoint_ns"]}}


def subgraph_state_in_node(saver: RecordingSaver) -> None:
    """get_state(subgraphs=True) and get_state_history of a subgraph a node
    function calls, while it is interrupted."""
    g = node_caller(saver, three_step_child())
    cfg = thread("engine-subgraph-state-in-node")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    snap = g.get_state(bare(cfg), subgraphs=True)
    list(g.get_state_history(lineage(snap.tasks[0].state.config)))
    invoke(g, Command(resume="ok"), cfg)


def subgraph_update_in_node(saver: RecordingSaver) -> None:
    """update_state on the interrupted subgraph a node function calls, as
    its node s2, then a resume."""
    g = node_caller(saver, three_step_child())
    cfg = thread("engine-subgraph-update-in-node")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    snap = g.get_state(bare(cfg), subgraphs=True)
    g.update_state(snap.tasks[0].state.config, {"log": ["patched"]}, as_node="s2")
    invoke(g, Command(resume="ok"), cfg)


def subgraph_node_of(saver: RecordingSaver, child: Any) -> Any:
    """START -> sub (child added as a node)."""
    return StateGraph(LogState).add_node("sub", child).add_edge(START, "sub").compile(checkpointer=saver)


def subgraph_update(saver: RecordingSaver) -> None:
    """update_state on an interrupted subgraph added as a node, then a
    resume."""
    g = subgraph_node_of(saver, three_step_child())
    cfg = thread("engine-subgraph-update")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    snap = g.get_state(bare(cfg), subgraphs=True)
    g.update_state(snap.tasks[0].state.config, {"log": ["patched"]}, as_node="s2")
    invoke(g, Command(resume="ok"), cfg)


def subgraph_fork(saver: RecordingSaver) -> None:
    """A fork from the middle of an interrupted subgraph's history: an
    update of the child's checkpoint after s1, as s1."""
    g = subgraph_node_of(saver, three_step_child())
    cfg = thread("engine-subgraph-fork")
    invoke(g, {"log": [], "q": "hi"}, cfg)
    snap = g.get_state(bare(cfg), subgraphs=True)
    hist = list(g.get_state_history(lineage(snap.tasks[0].state.config)))
    mid = next(h for h in hist if h.next == ("s2",))
    g.update_state(mid.config, {"log": ["forked"]}, as_node="s1")
    list(g.get_state_history(lineage(snap.tasks[0].state.config)))


def send_subgraph(saver: RecordingSaver) -> None:
    """Sends to a subgraph node, one subgraph run per Send."""
    child = (
        StateGraph(WhoState)
        .add_node("greet", lambda s: {"answers": [f"hi {s['who']}"]})
        .add_edge(START, "greet")
        .compile()
    )
    g = (
        StateGraph(AnswersState)
        .add_node("plan", lambda _s: {})
        .add_node("sub", child)
        .add_edge(START, "plan")
        .add_conditional_edges("plan", lambda _s: [Send("sub", {"who": "A"}), Send("sub", {"who": "B"})])
        .compile(checkpointer=saver)
    )
    invoke(g, {"answers": []}, thread("engine-send-subgraph"))


def parallel_resume_all(saver: RecordingSaver) -> None:
    """Two Send tasks' subgraphs interrupt; one resume map answers both."""
    root = (
        StateGraph(AnswersState)
        .add_node("plan", lambda _s: {})
        .add_node("sub", asking_child())
        .add_edge(START, "plan")
        .add_conditional_edges("plan", lambda _s: [Send("sub", {"who": "A"}), Send("sub", {"who": "B"})])
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-parallel-resume-all")
    res = invoke(root, {"answers": []}, cfg)
    invoke(root, Command(resume={i.id: f"ans-{i.value[-1]}" for i in res["__interrupt__"]}), cfg)


SCENARIOS: dict[str, Scenario] = {
    f.__name__: f
    for f in (
        command_parent,
        command_parent_in_node,
        subgraph_state_in_node,
        subgraph_update_in_node,
        subgraph_update,
        subgraph_fork,
        send_subgraph,
        parallel_resume_all,
    )
}
