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


SCENARIOS: dict[str, Scenario] = {
    "delta_messages": delta_messages,
    "delta_fanout": delta_fanout,
    "delta_fork": delta_fork,
    "delta_update": delta_update,
    "delta_interrupt": delta_interrupt,
}
