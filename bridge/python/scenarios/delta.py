"""Scenarios on delta channels (LangGraph 1.2's DeltaChannel, issue #21).

Each graph keeps a message list in a DeltaChannel whose reducer appends a
batch of writes; the checkpoints store it only as a snapshot every few
updates, and every load rebuilds it from get_delta_channel_history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

from langgraph.channels.delta import DeltaChannel
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt

from checkpointkit_bridge.recorder import RecordingSaver

from .common import Scenario, at, bare, invoke, thread


def append_batch(state: Sequence[Any], writes: Sequence[Any]) -> list[Any]:
    """The delta reducer: append every write (a list element-wise)."""
    out = list(state)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


class Every3(TypedDict, total=False):
    """messages: a delta channel snapshotted every 3 updates."""

    messages: Annotated[list, DeltaChannel(append_batch, snapshot_frequency=3)]


class Every2(TypedDict, total=False):
    """messages: a delta channel snapshotted every 2 updates."""

    messages: Annotated[list, DeltaChannel(append_batch, snapshot_frequency=2)]


class Every5(TypedDict, total=False):
    """messages: a delta channel snapshotted every 5 updates."""

    messages: Annotated[list, DeltaChannel(append_batch, snapshot_frequency=5)]


class NotedEvery3(TypedDict, total=False):
    """messages: a delta channel snapshotted every 3 updates; note: a
    plain last value."""

    messages: Annotated[list, DeltaChannel(append_batch, snapshot_frequency=3)]
    note: Any


def reply(state: dict[str, Any]) -> dict[str, Any]:
    """The bot answers with the number of messages it saw."""
    return {"messages": [f"a{len(state.get('messages', []))}"]}


def chat(saver: RecordingSaver, state: type) -> Any:
    """START -> bot."""
    return StateGraph(state).add_node("bot", reply).add_edge(START, "bot").compile(checkpointer=saver)


def delta_messages(saver: RecordingSaver) -> None:
    """Seven turns of a chat: snapshots every three updates, the channel
    rebuilt from its history at every turn's load; then get_state."""
    g = chat(saver, Every3)
    cfg = thread("engine-delta-messages")
    for i in range(7):
        invoke(g, {"messages": [f"u{i}"]}, cfg)
    g.get_state(bare(cfg))


def delta_fanout(saver: RecordingSaver) -> None:
    """START fans out to a and b, which write the delta channel in one
    superstep; the next turn replays both writes in task order."""
    g = (
        StateGraph(Every3)
        .add_node("a", lambda _s: {"messages": ["from-a"]})
        .add_node("b", lambda _s: {"messages": ["from-b"]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-delta-fanout")
    invoke(g, {"messages": ["u0"]}, cfg)
    invoke(g, {"messages": ["u1"]}, cfg)
    g.get_state(bare(cfg))


def delta_fork(saver: RecordingSaver) -> None:
    """Three turns, then new input on the checkpoint of the second turn's
    input: a branch whose history leaves out the third turn."""
    g = chat(saver, Every3)
    cfg = thread("engine-delta-fork")
    for i in range(3):
        invoke(g, {"messages": [f"u{i}"]}, cfg)
    history = list(g.get_state_history(bare(cfg)))
    old = history[3].config["configurable"]
    invoke(g, {"messages": ["fork"]}, at("engine-delta-fork", old["checkpoint_id"]))
    g.get_state(bare(cfg))


def delta_update(saver: RecordingSaver) -> None:
    """update_state on a delta channel (as the bot), then another turn."""
    g = chat(saver, Every2)
    cfg = thread("engine-delta-update")
    invoke(g, {"messages": ["u0"]}, cfg)
    g.update_state(bare(cfg), {"messages": ["edited"]})
    invoke(g, {"messages": ["u1"]}, cfg)
    g.get_state(bare(cfg))


def ask(_s: dict[str, Any]) -> dict[str, Any]:
    """Asks the user, then appends the answer."""
    return {"messages": [f"answer:{interrupt('ok?')}"]}


def delta_interrupt(saver: RecordingSaver) -> None:
    """bot then ask, which interrupts; the resume loads the channel from
    its history and appends the answer."""
    g = (
        StateGraph(Every2)
        .add_node("bot", reply)
        .add_node("ask", ask)
        .add_edge(START, "bot")
        .add_edge("bot", "ask")
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-delta-interrupt")
    invoke(g, {"messages": ["u0"]}, cfg)
    invoke(g, Command(resume="yes"), cfg)
    g.get_state(bare(cfg))


def delta_exit(saver: RecordingSaver) -> None:
    """Four turns under exit durability, snapshots every three updates: a
    turn that does not snapshot stores the channel's writes of every
    superstep on the checkpoint it started from (on a first turn, a stub
    checkpoint it puts for them), under task IDs of their own; then
    get_state and the history rebuild the channel from them."""
    g = chat(saver, Every3)
    cfg = thread("engine-delta-exit", durability="exit")
    for i in range(4):
        invoke(g, {"messages": [f"u{i}"]}, cfg)
    g.get_state(bare(cfg))
    list(g.get_state_history(bare(cfg)))


def ask_unless_skipped(_s: dict[str, Any]) -> dict[str, Any]:
    """Asks the user, then appends the answer unless it is "skip"."""
    answer = interrupt("ok?")
    return {} if answer == "skip" else {"messages": [f"answer:{answer}"]}


def delta_exit_resume(saver: RecordingSaver) -> None:
    """bot then ask under exit durability, snapshots every five updates:
    the interrupted turn stores its writes on a stub; the resume stores the
    answer on the interrupted checkpoint under the resumed task's path; the
    next turn snapshots at exit; and a resume whose Command updates the
    channel (the task writing nothing) stores that update under a task ID
    of its own. Then get_state."""
    g = (
        StateGraph(Every5)
        .add_node("bot", reply)
        .add_node("ask", ask_unless_skipped)
        .add_edge(START, "bot")
        .add_edge("bot", "ask")
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-delta-exit-resume", durability="exit")
    invoke(g, {"messages": ["u0"]}, cfg)
    invoke(g, Command(resume="yes"), cfg)
    invoke(g, {"messages": ["u1"]}, cfg)
    invoke(g, Command(resume="skip", update={"messages": ["note"]}), cfg)
    g.get_state(bare(cfg))


def first_ask(_s: dict[str, Any]) -> dict[str, Any]:
    """Asks first, then notes the answer."""
    return {"note": interrupt("first?")}


def second_ask(_s: dict[str, Any]) -> dict[str, Any]:
    """Asks second, then notes the answer."""
    return {"note": interrupt("second?")}


def delta_bump(saver: RecordingSaver) -> None:
    """Snapshots forced on a channel the checkpoint does not write: w writes
    messages while ask2 interrupts, so update_state snapshots messages,
    first never written (every versions_seen entry takes its new version),
    then at a version only the interrupt had seen (that entry advances, as
    recorded under __snapshot_bumps__); invokes in between rerun w and
    ask2."""
    g = (
        StateGraph(NotedEvery3)
        .add_node("ask1", first_ask)
        .add_node("w", lambda _s: {"messages": ["w"]})
        .add_node("ask2", second_ask)
        .add_edge(START, "ask1")
        .add_edge("ask1", "w")
        .add_edge("ask1", "ask2")
        .compile(checkpointer=saver)
    )
    cfg = thread("engine-delta-bump")
    invoke(g, {"note": "start"}, cfg)
    invoke(g, Command(resume="yes"), cfg)
    g.update_state(bare(cfg), {"note": "edited"}, as_node="ask1")
    invoke(g, None, cfg)
    g.update_state(bare(cfg), {"note": "again"}, as_node="ask1")
    invoke(g, None, cfg)
    g.get_state(bare(cfg))


SCENARIOS: dict[str, Scenario] = {
    "delta_messages": delta_messages,
    "delta_fanout": delta_fanout,
    "delta_fork": delta_fork,
    "delta_update": delta_update,
    "delta_interrupt": delta_interrupt,
    "delta_exit": delta_exit,
    "delta_exit_resume": delta_exit_resume,
    "delta_bump": delta_bump,
}
