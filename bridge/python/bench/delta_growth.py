"""Storage growth and read cost of a message-append thread on LangGraph
Python's savers, with the messages in a plain list channel or in a
DeltaChannel; the Python side of ci/bench-delta (the Go side is
ci/cmd/deltagrowth, whose JSON lines this prints)::

    python bridge/python/bench/delta_growth.py --saver memory|sqlite|postgres|mongo \\
        [--steps 10,100,1000] [--iters N] [--modes list,delta100,delta50] [--msg 500]

Per mode, one StateGraph on a thread of its own in storage of its own:
"messages" (``Annotated[list, operator.add]`` for list,
``Annotated[list, DeltaChannel(append, snapshot_frequency=F)]`` for deltaF)
and "turn"; each step is one invoke with input {"turn": i} whose node
appends one message of --msg random base-64 characters. At each of --steps
it records the bytes stored and the median of --iters reads, a read being
what LangGraph's get_state does to load the channel: get_tuple of the
latest checkpoint, then, when "messages" has no stored value there,
get_delta_channel_history from it and the fold of seed and writes. One
extra read, untimed, counts the statements (SQLite, PostgreSQL) or
commands (MongoDB) a read sends.

Bytes stored: InMemorySaver, the serialised bytes in its storage, writes
and blobs; SQLite, the pages in use; PostgreSQL, pg_total_relation_size of
the schema's tables; MongoDB, the BSON size of every document read back.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

NAMES = {
    "memory": "InMemorySaver",
    "sqlite": "SqliteSaver",
    "postgres": "PostgresSaver",
    "mongo": "MongoDBSaver",
}
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
THREAD = "growth"


@dataclass
class Store:
    """A saver over fresh storage, how to measure its bytes, and a counter
    of the queries it sends while counting is on."""

    saver: Any
    size: Callable[[], int]
    counting: list[bool] = field(default_factory=lambda: [False])
    queries: list[int] = field(default_factory=lambda: [0])

    def count(self) -> None:
        if self.counting[0]:
            self.queries[0] += 1


def _env(name: str) -> str:
    v = os.environ.get(name, "")
    if not v:
        raise SystemExit(f"delta_growth.py: {name} is not set")
    return v


def _bytes_in(obj: Any) -> int:
    """The total length of the bytes objects nested in obj."""
    if isinstance(obj, (bytes, bytearray)):
        return len(obj)
    if isinstance(obj, dict):
        return sum(_bytes_in(v) for v in obj.values())
    if isinstance(obj, (tuple, list)):
        return sum(_bytes_in(v) for v in obj)
    return 0


@contextmanager
def open_store(name: str, storage: str) -> Iterator[Store]:
    """A Store of kind name over fresh storage named storage."""
    if name == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        mem = InMemorySaver()
        yield Store(mem, lambda: _bytes_in([mem.storage, mem.writes, mem.blobs]))
    elif name == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        d = tempfile.mkdtemp(prefix="lgpy-delta-")
        conn = sqlite3.connect(os.path.join(d, "checkpoints.db"), check_same_thread=False)
        try:
            saver = SqliteSaver(conn)
            saver.setup()
            conn.execute("PRAGMA synchronous=NORMAL")

            def size() -> int:
                pages = conn.execute("PRAGMA page_count").fetchone()[0]
                free = conn.execute("PRAGMA freelist_count").fetchone()[0]
                return (pages - free) * conn.execute("PRAGMA page_size").fetchone()[0]

            st = Store(saver, size)
            conn.set_trace_callback(lambda _sql: st.count())
            yield st
        finally:
            conn.close()
            shutil.rmtree(d, ignore_errors=True)
    elif name == "postgres":
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        dsn = _env("CHECKPOINTKIT_POSTGRES_DSN")
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'CREATE SCHEMA "{storage}"')
            try:
                holder: list[Store] = []

                class CountingCursor(psycopg.Cursor):  # type: ignore[type-arg]
                    def execute(self, *args: Any, **kwargs: Any) -> Any:
                        if holder:
                            holder[0].count()
                        return super().execute(*args, **kwargs)

                with psycopg.Connection.connect(
                    dsn,
                    autocommit=True,
                    prepare_threshold=0,
                    row_factory=dict_row,
                    options=f"-c search_path={storage}",
                ) as conn:
                    conn.cursor_factory = CountingCursor
                    saver = PostgresSaver(conn)
                    saver.setup()

                    def size() -> int:
                        row = admin.execute(
                            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint"
                            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                            " WHERE n.nspname = %s AND c.relkind = 'r'",
                            (storage,),
                        ).fetchone()
                        return int(row[0]) if row else 0

                    holder.append(Store(saver, size))
                    yield holder[0]
            finally:
                admin.execute(f'DROP SCHEMA IF EXISTS "{storage}" CASCADE')
    elif name == "mongo":
        from bson.codec_options import CodecOptions
        from bson.raw_bson import RawBSONDocument
        from langgraph.checkpoint.mongodb import MongoDBSaver
        from pymongo import MongoClient, monitoring

        holder2: list[Store] = []

        class Listener(monitoring.CommandListener):
            def started(self, event: monitoring.CommandStartedEvent) -> None:
                if holder2:
                    holder2[0].count()

            def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
                pass

            def failed(self, event: monitoring.CommandFailedEvent) -> None:
                pass

        client: Any = MongoClient(_env("CHECKPOINTKIT_MONGO_URI"), event_listeners=[Listener()])
        try:
            saver = MongoDBSaver(client, db_name=storage)
            raw = CodecOptions(document_class=RawBSONDocument)

            def size() -> int:
                db = client[storage]
                return sum(
                    len(doc.raw)
                    for coll in db.list_collection_names()
                    for doc in db.get_collection(coll, codec_options=raw).find({})
                )

            holder2.append(Store(saver, size))
            yield holder2[0]
        finally:
            client.drop_database(storage)
            client.close()
    else:
        raise SystemExit(f"delta_growth.py: unknown saver {name!r}")


def append_batch(state: list[Any], writes: Sequence[Any]) -> list[Any]:
    """The delta reducer: appends every written list (or value) in order."""
    out = list(state or [])
    for w in writes:
        if isinstance(w, list):
            out.extend(w)
        else:
            out.append(w)
    return out


def build_graph(mode: str, saver: Any, msg_size: int) -> Any:
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph import START, StateGraph

    if mode == "list":
        messages_type: Any = Annotated[list, operator.add]
    elif mode.startswith("delta"):
        freq = int(mode.removeprefix("delta"))
        messages_type = Annotated[list, DeltaChannel(append_batch, snapshot_frequency=freq)]
    else:
        raise SystemExit(f"delta_growth.py: unknown mode {mode!r}")

    State = TypedDict("State", {"messages": messages_type, "turn": int})  # type: ignore[misc]
    rng = random.Random(12)

    def bot(state: Any) -> dict[str, Any]:
        return {"messages": ["".join(rng.choices(ALPHABET, k=msg_size))]}

    builder = StateGraph(State)
    builder.add_node("bot", bot)
    builder.add_edge(START, "bot")
    return builder.compile(checkpointer=saver)


def read(saver: Any) -> tuple[int, int, bool]:
    """Loads the messages of the latest checkpoint as get_state does; returns
    how many there are, the writes replayed and whether the history was read."""
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    t = saver.get_tuple({"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}})
    values = t.checkpoint["channel_values"]
    if "messages" in values:
        v = values["messages"]
        if isinstance(v, _DeltaSnapshot):
            v = v.value
        return len(v), 0, False
    h = saver.get_delta_channel_history(config=t.config, channels=["messages"])["messages"]
    seed = h.get("seed", [])
    if isinstance(seed, _DeltaSnapshot):
        seed = seed.value
    writes = h["writes"]
    return len(append_batch(seed, [w[2] for w in writes])), len(writes), True


def measure(st: Store, mode: str, step: int, iters: int) -> dict[str, Any]:
    st.counting[0], st.queries[0] = True, 0
    read(st.saver)
    st.counting[0] = False
    queries = st.queries[0] if st.queries[0] > 0 else -1
    lat: list[float] = []
    replayed, history = 0, False
    for _ in range(iters):
        t0 = time.perf_counter()
        n, replayed, history = read(st.saver)
        lat.append(time.perf_counter() - t0)
        if n != step:
            raise SystemExit(f"delta_growth.py: {mode} read {n} messages at step {step}")
    return {
        "mode": mode,
        "step": step,
        "iters": iters,
        "bytes": st.size(),
        "read_ms": statistics.median(lat) * 1e3,
        "replayed": replayed,
        "history": history,
        "queries": queries,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--saver", required=True, choices=sorted(NAMES))
    ap.add_argument("--steps", default="10,100,1000")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--modes", default="list,delta100,delta50")
    ap.add_argument("--msg", type=int, default=500)
    args = ap.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    if steps != sorted(set(steps)) or steps[0] < 1:
        raise SystemExit("delta_growth.py: --steps must be ascending positive integers")
    for i, mode in enumerate(args.modes.split(",")):
        storage = f"lgpy_delta_{os.getpid()}_{i}"
        with open_store(args.saver, storage) as st:
            graph = build_graph(mode, st.saver, args.msg)
            cfg = {"configurable": {"thread_id": THREAD}}
            done = 0
            for target in steps:
                while done < target:
                    done += 1
                    graph.invoke({"turn": done}, cfg)
                point = measure(st, mode, target, args.iters)
                point.update(side="py", saver=args.saver, name=NAMES[args.saver])
                print(json.dumps(point), flush=True)


if __name__ == "__main__":
    main()
