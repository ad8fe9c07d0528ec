"""Real LangGraph Python graphs on BridgeSaver over each of checkpointkit's Go
adapters, compared with the same graphs on LangGraph's InMemorySaver.

Every scenario runs a graph (interrupts and resume, a subgraph, Send
fan-out, update_state, forks and time travel, the three durability modes,
sync and async) and records a trace: every result, and get_state and
get_state_history after each step, with checkpoint IDs replaced by their
place in the thread's history (they are random; the links between them are
not). The trace on every adapter must equal InMemorySaver's.
"""

from __future__ import annotations

import asyncio
import datetime
import operator
import uuid
from collections.abc import Callable, Iterator
from typing import Annotated, Any, TypedDict

import pytest
from ckbackends import ADAPTERS, require_adapter, saver_bin
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, StateSnapshot, interrupt

from checkpointkit_bridge.client import BridgeProcess, start_saver_process
from checkpointkit_bridge.saver import BridgeSaver

WHEN = datetime.datetime(2026, 11, 25, 12, 0, tzinfo=datetime.timezone.utc)
TICKET = uuid.UUID(int=0xC0FFEE)


class DraftState(TypedDict, total=False):
    topic: str
    draft: str
    approved: str
    when: datetime.datetime
    ticket: uuid.UUID
    notes: Annotated[list[str], operator.add]
    messages: Annotated[list[AnyMessage], add_messages]


def review_graph() -> StateGraph:
    """draft -> review (interrupts for approval) -> publish."""

    def draft(state: DraftState) -> DraftState:
        return {
            "draft": f"about {state['topic']}",
            "when": WHEN,
            "ticket": TICKET,
            "notes": ["drafted"],
            "messages": [AIMessage(content=f"draft on {state['topic']}", id=f"ai-{state['topic']}")],
        }

    def review(state: DraftState) -> DraftState:
        answer = interrupt({"question": "approve?", "draft": state["draft"]})
        return {"approved": answer, "notes": [f"reviewed: {answer}"]}

    def publish(state: DraftState) -> DraftState:
        return {"notes": ["published"], "messages": [HumanMessage(content="thanks", id="h-thanks")]}

    g = StateGraph(DraftState)
    g.add_node("draft", draft)
    g.add_node("review", review)
    g.add_node("publish", publish)
    g.add_edge(START, "draft")
    g.add_edge("draft", "review")
    g.add_edge("review", "publish")
    g.add_edge("publish", END)
    return g


class FanState(TypedDict, total=False):
    items: list[int]
    results: Annotated[list[int], operator.add]
    total: int


class WorkState(TypedDict):
    item: int


def fanout_graph() -> StateGraph:
    """split sends one work task per item; gather sums their results."""

    def split(state: FanState) -> FanState:
        return {}

    def route(state: FanState) -> list[Send]:
        return [Send("work", {"item": i}) for i in state["items"]]

    def work(state: WorkState) -> FanState:
        return {"results": [state["item"] * 10]}

    def gather(state: FanState) -> FanState:
        return {"total": sum(state["results"])}

    g = StateGraph(FanState)
    g.add_node("split", split)
    g.add_node("work", work)
    g.add_node("gather", gather)
    g.add_edge(START, "split")
    g.add_conditional_edges("split", route, ["work"])
    g.add_edge("work", "gather")
    g.add_edge("gather", END)
    return g


class OuterState(TypedDict, total=False):
    question: str
    answer: str
    log: Annotated[list[str], operator.add]


def subgraph_graph() -> StateGraph:
    """An outer graph whose middle node is a subgraph that interrupts."""

    def ask(state: OuterState) -> OuterState:
        return {"log": ["inner asks"]}

    def decide(state: OuterState) -> OuterState:
        reply = interrupt(f"answer {state['question']}?")
        return {"answer": reply, "log": [f"inner got {reply}"]}

    inner = StateGraph(OuterState)
    inner.add_node("ask", ask)
    inner.add_node("decide", decide)
    inner.add_edge(START, "ask")
    inner.add_edge("ask", "decide")
    inner.add_edge("decide", END)

    def before(state: OuterState) -> OuterState:
        return {"log": ["outer before"]}

    def after(state: OuterState) -> OuterState:
        return {"log": [f"outer after {state['answer']}"]}

    g = StateGraph(OuterState)
    g.add_node("before", before)
    g.add_node("inner", inner.compile())
    g.add_node("after", after)
    g.add_edge(START, "before")
    g.add_edge("before", "inner")
    g.add_edge("inner", "after")
    g.add_edge("after", END)
    return g


# --- traces -------------------------------------------------------------


class Trace:
    """What a scenario observed, with checkpoint IDs replaced by labels."""

    def __init__(self, saver: BaseCheckpointSaver) -> None:
        self.saver = saver
        self.events: list[Any] = []
        self._ids: set[str] = set()

    def label(self, checkpoint_id: str | None) -> str | None:
        if checkpoint_id is not None:
            self._ids.add(checkpoint_id)
        return checkpoint_id

    def relabel(self) -> None:
        """Replace every checkpoint ID seen by its rank among them ("#0" the oldest): IDs are random, their order is not."""
        ranks = {cid: f"#{n}" for n, cid in enumerate(sorted(self._ids))}
        self.events = _replace(self.events, ranks)

    def config(self, config: dict[str, Any] | None) -> Any:
        if not config:
            return None
        c = config["configurable"]
        # A subgraph's namespace "node:<task id>" holds a task ID derived from a random checkpoint ID.
        ns = "|".join(part.split(":")[0] for part in c.get("checkpoint_ns", "").split("|"))
        return (c.get("thread_id"), ns, self.label(c.get("checkpoint_id")))

    def snapshot(self, s: StateSnapshot) -> Any:
        md = dict(s.metadata or {})
        md.pop("run_id", None)
        if "parents" in md:
            md["parents"] = {ns: self.label(cid) for ns, cid in md["parents"].items()}
        return {
            "values": s.values,
            "next": s.next,
            "config": self.config(s.config),
            "parent": self.config(s.parent_config),
            "metadata": md,
            "tasks": [
                (
                    t.name,
                    t.path,
                    repr(t.error) if t.error else None,
                    [i.value for i in t.interrupts],
                    self.snapshot(t.state) if isinstance(t.state, StateSnapshot) else t.state is not None,
                    t.result,
                )
                for t in s.tasks
            ],
            "interrupts": [i.value for i in s.interrupts],
        }

    def record(self, what: str, value: Any) -> None:
        self.events.append((what, value))

    def state(self, graph: Any, config: dict[str, Any], *, subgraphs: bool = False) -> None:
        self.record("get_state", self.snapshot(graph.get_state(config, subgraphs=subgraphs)))
        self.record("history", [self.snapshot(s) for s in graph.get_state_history(config)])

    async def astate(self, graph: Any, config: dict[str, Any]) -> None:
        self.record("aget_state", self.snapshot(await graph.aget_state(config)))
        self.record("ahistory", [self.snapshot(s) async for s in graph.aget_state_history(config)])


def _replace(v: Any, labels: dict[str, str]) -> Any:
    if isinstance(v, str):
        return labels.get(v, v)
    if isinstance(v, tuple):
        return tuple(_replace(e, labels) for e in v)
    if isinstance(v, list):
        return [_replace(e, labels) for e in v]
    if isinstance(v, dict):
        return {k: _replace(e, labels) for k, e in v.items()}
    return v


def _results(chunks: Any) -> Any:
    """Interrupt IDs in invoke results are random: keep their values."""
    if isinstance(chunks, dict) and "__interrupt__" in chunks:
        return {**chunks, "__interrupt__": [i.value for i in chunks["__interrupt__"]]}
    return chunks


# --- scenarios ------------------------------------------------------------


def scenario_interrupt_resume(saver: BaseCheckpointSaver, durability: str) -> Trace:
    tr = Trace(saver)
    graph = review_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"review-{durability}"}}
    tr.record("first", _results(graph.invoke({"topic": "go"}, config, durability=durability)))
    tr.state(graph, config)
    tr.record("resume", _results(graph.invoke(Command(resume="yes"), config, durability=durability)))
    tr.state(graph, config)
    return tr


def scenario_async_interrupt_resume(saver: BaseCheckpointSaver, durability: str) -> Trace:
    tr = Trace(saver)
    graph = review_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"areview-{durability}"}}

    async def run() -> None:
        tr.record("first", _results(await graph.ainvoke({"topic": "py"}, config, durability=durability)))
        await tr.astate(graph, config)
        tr.record("resume", _results(await graph.ainvoke(Command(resume="later"), config, durability=durability)))
        await tr.astate(graph, config)

    asyncio.run(run())
    return tr


def scenario_subgraph(saver: BaseCheckpointSaver, durability: str) -> Trace:
    tr = Trace(saver)
    graph = subgraph_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "sub"}}
    tr.record("first", _results(graph.invoke({"question": "q1"}, config, durability=durability)))
    tr.state(graph, config, subgraphs=True)
    tr.record("resume", _results(graph.invoke(Command(resume="a1"), config, durability=durability)))
    tr.state(graph, config, subgraphs=True)
    return tr


def scenario_fanout(saver: BaseCheckpointSaver, durability: str) -> Trace:
    tr = Trace(saver)
    graph = fanout_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "fan"}}
    tr.record("run", graph.invoke({"items": [3, 1, 2]}, config, durability=durability))
    tr.state(graph, config)
    tr.record("again", graph.invoke({"items": [5]}, config, durability=durability))
    tr.state(graph, config)
    return tr


def scenario_update_fork_time_travel(saver: BaseCheckpointSaver, durability: str) -> Trace:
    tr = Trace(saver)
    graph = review_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "travel"}}
    graph.invoke({"topic": "t"}, config, durability=durability)
    # update_state while interrupted: answer the review as if the node ran.
    tr.record("update", tr.config(graph.update_state(config, {"approved": "edited", "notes": ["by hand"]}, as_node="review")))
    tr.record("continue", _results(graph.invoke(None, config, durability=durability)))
    tr.state(graph, config)
    history = list(graph.get_state_history(config))
    # Time travel: replay from the checkpoint before "review" ran.
    before_review = next(s for s in history if s.next == ("review",))
    tr.record("replay", _results(graph.invoke(None, before_review.config, durability=durability)))
    tr.state(graph, config)
    # Fork: change an old checkpoint's state and run from there.
    forked = graph.update_state(before_review.config, {"draft": "forked draft"})
    tr.record("fork", tr.config(forked))
    tr.record("fork run", _results(graph.invoke(None, forked, durability=durability)))
    tr.record("fork resume", _results(graph.invoke(Command(resume="fork ok"), config, durability=durability)))
    tr.state(graph, config)
    return tr


SCENARIOS: dict[str, Callable[[BaseCheckpointSaver, str], Trace]] = {
    "interrupt_resume": scenario_interrupt_resume,
    "async_interrupt_resume": scenario_async_interrupt_resume,
    "subgraph": scenario_subgraph,
    "fanout": scenario_fanout,
    "update_fork_time_travel": scenario_update_fork_time_travel,
}
DURABILITIES = ("sync", "async", "exit")
CASES = [(name, d) for name in SCENARIOS for d in DURABILITIES]

_reference: dict[tuple[str, str], list[Any]] = {}


def run_case(saver: BaseCheckpointSaver, name: str, durability: str) -> list[Any]:
    tr = SCENARIOS[name](saver, durability)
    tr.relabel()
    return tr.events


def reference(name: str, durability: str) -> list[Any]:
    """The trace on LangGraph's InMemorySaver (computed once)."""
    key = (name, durability)
    if key not in _reference:
        _reference[key] = run_case(InMemorySaver(), name, durability)
    return _reference[key]


@pytest.fixture(scope="module", params=ADAPTERS)
def proc(request: pytest.FixtureRequest) -> Iterator[BridgeProcess]:
    require_adapter(request.param)
    p = start_saver_process(request.param, bin=saver_bin())
    yield p
    p.close()


@pytest.mark.parametrize(("name", "durability"), CASES)
def test_graph_agrees_with_in_memory_saver(proc: BridgeProcess, name: str, durability: str) -> None:
    with BridgeSaver.open(proc, timeout=60) as saver:
        got = run_case(saver, name, durability)
    want = reference(name, durability)
    assert len(got) == len(want)
    for (what, g), (_, w) in zip(got, want):
        assert g == w, f"{name}/{durability}: {what} differs"


def test_reference_traces_are_not_trivial() -> None:
    """The scenarios really interrupt, fan out, nest and fork (so agreement means something)."""

    def first(events: list[Any], what: str) -> Any:
        return next(v for w, v in events if w == what)

    state = first(reference("interrupt_resume", "sync"), "get_state")
    assert state["next"] == ("review",)
    assert state["interrupts"] == [{"question": "approve?", "draft": "about go"}]
    assert first(reference("fanout", "sync"), "run")["total"] == 60
    sub = first(reference("subgraph", "sync"), "get_state")
    assert sub["tasks"][0][0] == "inner" and isinstance(sub["tasks"][0][4], dict)
    assert sub["tasks"][0][4]["config"][1] == "inner"
    travel = reference("update_fork_time_travel", "sync")
    assert first(travel, "fork run") is not None
    sources = {h["metadata"]["source"] for h in [v for w, v in travel if w == "history"][-1]}
    assert sources >= {"input", "loop", "update", "fork"}
