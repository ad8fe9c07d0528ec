"""Times LangGraph Python's savers on the workload of ci/bench-peers.

Prints one JSON result on stdout, in the shape of ci/cmd/benchpeers's Go
side (without allocations)::

    python bridge/python/bench/peers.py --saver memory|sqlite|postgres|mongo \\
        [--async] [--iters N] [--depths 10,2000] [--as NAME]
    python bridge/python/bench/peers.py --saver mongo --commands [--depths 10] [--iters N]

The workload is conformance/benchmarks' Peer: "put" is one put of a
checkpoint holding a 1 KB string plus one put_writes of two writes (that
string and the step number); the reads are get_tuple of the latest
checkpoint and list with limit 10 (benchmarks.PeerListLimit) on a thread
whose history is as deep as each of --depths, every history in storage of
its own, the depths timed alternately in one loop. Each figure is the median
of its --iters calls.

--async uses the saver's async API (aput, aget_tuple, alist ...):
AsyncSqliteSaver and AsyncPostgresSaver, and the a-methods of InMemorySaver
and MongoDBSaver. SQLite files get WAL (the saver's setup sets it) and
synchronous=NORMAL, as the Go and JS sides do; PostgreSQL and MongoDB come
from CHECKPOINTKIT_POSTGRES_DSN and CHECKPOINTKIT_MONGO_URI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime, timezone
from typing import Any

from langgraph.checkpoint.base.id import uuid6

PAYLOAD_SIZE = 1024
LIST_LIMIT = 10  # benchmarks.PeerListLimit
DEFAULT_ITERS = {"memory": 2000, "sqlite": 500, "postgres": 300, "mongo": 20}
NAMES = {
    "memory": "InMemorySaver",
    "sqlite": "SqliteSaver",
    "postgres": "PostgresSaver",
    "mongo": "MongoDBSaver",
}
ASYNC_NAMES = {
    "memory": "InMemorySaver (async)",
    "sqlite": "AsyncSqliteSaver",
    "postgres": "AsyncPostgresSaver",
    "mongo": "MongoDBSaver (async)",
}

_seq = 0


def _storage_name() -> str:
    global _seq
    _seq += 1
    return f"lgpy_peers_{os.getpid()}_{_seq}"


def _env(name: str) -> str:
    v = os.environ.get(name, "")
    if not v:
        raise SystemExit(f"peers.py: {name} is not set")
    return v


@asynccontextmanager
async def open_saver(name: str, use_async: bool) -> AsyncIterator[Any]:
    """A saver of kind name over fresh, isolated storage, closed on exit."""
    if name == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif name == "sqlite":
        d = tempfile.mkdtemp(prefix="lgpy-peers-")
        path = os.path.join(d, "checkpoints.db")
        try:
            if use_async:
                import aiosqlite
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                async with aiosqlite.connect(path) as conn:
                    saver = AsyncSqliteSaver(conn)
                    await saver.setup()
                    await conn.execute("PRAGMA synchronous=NORMAL")
                    yield saver
            else:
                from langgraph.checkpoint.sqlite import SqliteSaver

                conn = sqlite3.connect(path, check_same_thread=False)
                try:
                    saver = SqliteSaver(conn)
                    saver.setup()
                    conn.execute("PRAGMA synchronous=NORMAL")
                    yield saver
                finally:
                    conn.close()
        finally:
            shutil.rmtree(d, ignore_errors=True)
    elif name == "postgres":
        import psycopg
        from psycopg.rows import dict_row

        dsn = _env("CHECKPOINTKIT_POSTGRES_DSN")
        schema = _storage_name()
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'CREATE SCHEMA "{schema}"')
        opts: dict[str, Any] = {
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "options": f"-c search_path={schema}",
        }
        try:
            if use_async:
                from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

                aconn = await psycopg.AsyncConnection.connect(dsn, **opts)
                try:
                    asaver = AsyncPostgresSaver(aconn)
                    await asaver.setup()
                    yield asaver
                finally:
                    await aconn.close()
            else:
                from langgraph.checkpoint.postgres import PostgresSaver

                with psycopg.Connection.connect(dsn, **opts) as conn:
                    saver = PostgresSaver(conn)
                    saver.setup()
                    yield saver
        finally:
            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    elif name == "mongo":
        from langgraph.checkpoint.mongodb import MongoDBSaver
        from pymongo import MongoClient

        client: Any = MongoClient(_env("CHECKPOINTKIT_MONGO_URI"))
        db = _storage_name()
        try:
            yield MongoDBSaver(client, db_name=db)
        finally:
            client.drop_database(db)
            client.close()
    else:
        raise SystemExit(f"peers.py: unknown saver {name!r}")


class Workload:
    """Writes and reads one thread the way conformance/benchmarks' Peer does."""

    def __init__(self, saver: Any, thread: str, use_async: bool) -> None:
        self.saver = saver
        self.thread = thread
        self.use_async = use_async
        self.parent: str | None = None
        self.version: Any = None
        self.step = 0
        self.payload = "x" * PAYLOAD_SIZE

    async def put(self) -> None:
        s = self.saver
        self.version = s.get_next_version(self.version, None)
        versions = {"messages": self.version}
        checkpoint: Any = {
            "v": 4,
            "id": str(uuid6(clock_seq=self.step)),
            "ts": datetime.now(timezone.utc).isoformat(),
            "channel_values": {"messages": self.payload},
            "channel_versions": versions,
            "versions_seen": {},
            "pending_sends": [],
        }
        configurable: dict[str, Any] = {"thread_id": self.thread, "checkpoint_ns": ""}
        if self.parent:
            configurable["checkpoint_id"] = self.parent
        metadata: Any = {"source": "loop", "step": self.step, "parents": {}}
        writes = [("messages", self.payload), ("step", self.step)]
        task = f"task-{self.step}"
        if self.use_async:
            cfg = await s.aput({"configurable": configurable}, checkpoint, metadata, versions)
            await s.aput_writes(cfg, writes, task)
        else:
            cfg = s.put({"configurable": configurable}, checkpoint, metadata, versions)
            s.put_writes(cfg, writes, task)
        self.parent = cfg["configurable"]["checkpoint_id"]
        self.step += 1

    def _config(self) -> Any:
        return {"configurable": {"thread_id": self.thread, "checkpoint_ns": ""}}

    async def get(self) -> None:
        if self.use_async:
            t = await self.saver.aget_tuple(self._config())
        else:
            t = self.saver.get_tuple(self._config())
        if t is None or t.checkpoint["id"] != self.parent:
            got = None if t is None else t.checkpoint["id"]
            raise RuntimeError(f"get_tuple returned {got}, want the latest {self.parent}")

    async def list(self) -> None:
        n = 0
        if self.use_async:
            async for _ in self.saver.alist(self._config(), limit=LIST_LIMIT):
                n += 1
        else:
            for _ in self.saver.list(self._config(), limit=LIST_LIMIT):
                n += 1
        if n != LIST_LIMIT:
            raise RuntimeError(f"list returned {n} tuples, want {LIST_LIMIT}")


def ms(ns: int) -> float:
    return ns / 1e6


async def alternate(hs: list[Workload], iters: int, op: Callable[[Workload], Awaitable[None]]) -> list[float]:
    """Times op on every history in turn, rotating which goes first; the
    median latency per history in milliseconds."""
    lat: list[list[int]] = [[] for _ in hs]
    for h in hs:  # warm up
        await op(h)
    for i in range(iters):
        for k in range(len(hs)):
            j = (i + k) % len(hs)
            t0 = time.perf_counter_ns()
            await op(hs[j])
            lat[j].append(time.perf_counter_ns() - t0)
    return [ms(int(statistics.median_low(x))) for x in lat]


async def measure(name: str, use_async: bool, iters: int, depths: list[int]) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        w = Workload(await stack.enter_async_context(open_saver(name, use_async)), "put", use_async)
        lat: list[int] = []
        for _ in range(iters):
            t0 = time.perf_counter_ns()
            await w.put()
            lat.append(time.perf_counter_ns() - t0)
        hs: list[Workload] = []
        for d in depths:
            h = Workload(await stack.enter_async_context(open_saver(name, use_async)), f"history-{d}", use_async)
            for _ in range(d):
                await h.put()
            hs.append(h)
        label = ASYNC_NAMES[name] if use_async else NAMES[name]
        return {
            "side": "py-async" if use_async else "py",
            "saver": name,
            "name": f"LangGraph Python {label}",
            "iters": iters,
            "depths": depths,
            "put_ms": ms(int(statistics.median_low(lat))),
            "get_ms": await alternate(hs, iters, Workload.get),
            "list_ms": await alternate(hs, iters, Workload.list),
        }


class CommandCounter:
    """Counts the MongoDB commands a client sends, by command and
    collection, and the documents their replies carry."""

    def __init__(self) -> None:
        self.commands: dict[str, int] = {}
        self.documents = 0

    def started(self, event: Any) -> None:
        name = event.command_name
        coll = event.command.get(name)
        key = f"{name} {coll}" if isinstance(coll, str) else name
        self.commands[key] = self.commands.get(key, 0) + 1

    def succeeded(self, event: Any) -> None:
        cursor = event.reply.get("cursor") if hasattr(event.reply, "get") else None
        if cursor:
            self.documents += len(cursor.get("firstBatch", cursor.get("nextBatch", [])))

    def failed(self, event: Any) -> None:
        pass

    def reset(self) -> None:
        self.commands, self.documents = {}, 0


async def count_commands(depth: int, calls: int) -> dict[str, Any]:
    """Commands and documents per get_tuple and per list(10) of MongoDBSaver
    on a history of depth checkpoints (the counterpart of the Go adapter's
    BenchmarkPeersCommands)."""
    from langgraph.checkpoint.mongodb import MongoDBSaver
    from pymongo import MongoClient, monitoring

    counter = CommandCounter()
    listener = type("Listener", (monitoring.CommandListener,), {
        "started": lambda self, e: counter.started(e),
        "succeeded": lambda self, e: counter.succeeded(e),
        "failed": lambda self, e: counter.failed(e),
    })()
    client: Any = MongoClient(_env("CHECKPOINTKIT_MONGO_URI"), event_listeners=[listener])
    db = _storage_name()
    try:
        h = Workload(MongoDBSaver(client, db_name=db), f"history-{depth}", False)
        for _ in range(depth):
            await h.put()
        out: dict[str, Any] = {"saver": "LangGraph Python MongoDBSaver", "depth": depth, "calls": calls}
        for name, op in (("get", Workload.get), ("list", Workload.list)):
            await op(h)
            counter.reset()
            for _ in range(calls):
                await op(h)
            out[name] = {
                "commands": {k: v / calls for k, v in sorted(counter.commands.items())},
                "documents": counter.documents / calls,
            }
        return out
    finally:
        client.drop_database(db)
        client.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--saver", required=True, choices=sorted(NAMES))
    ap.add_argument("--async", dest="use_async", action="store_true")
    ap.add_argument("--iters", type=int, default=0)
    ap.add_argument("--depths", default="10,2000")
    ap.add_argument("--as", dest="as_name", default="")
    ap.add_argument("--commands", action="store_true",
                    help="mongo only: print the commands and documents per read instead of timings")
    args = ap.parse_args()
    try:
        depths = [int(d) for d in args.depths.split(",")]
    except ValueError:
        depths = []
    if not depths or any(d < LIST_LIMIT for d in depths):
        raise SystemExit(f"peers.py: bad --depths {args.depths}: want integers of at least {LIST_LIMIT}")
    iters = args.iters or DEFAULT_ITERS[args.saver]
    if args.commands:
        if args.saver != "mongo":
            raise SystemExit("peers.py: --commands is for --saver mongo")
        sys.stdout.write(json.dumps(asyncio.run(count_commands(depths[0], iters))) + "\n")
        return
    result = asyncio.run(measure(args.saver, args.use_async, iters, depths))
    if args.as_name:
        # Reported under another name, e.g. mongo-pg: the mongo saver on a
        # FerretDB served from PostgreSQL.
        result["saver"] = args.as_name
        if args.as_name == "mongo-pg":
            result["name"] += " (FerretDB on PostgreSQL)"
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
