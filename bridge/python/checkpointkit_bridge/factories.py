"""Factories for LangGraph Python's own savers, each over fresh, isolated
storage, for `python -m checkpointkit_bridge serve checkpointkit_bridge.factories:NAME`.

memory        InMemorySaver
sqlite        SqliteSaver on a new temporary file
postgres      PostgresSaver on a new schema of CHECKPOINTKIT_POSTGRES_DSN (dropped on close)
mongo         MongoDBSaver on a new database of CHECKPOINTKIT_MONGO_URI (dropped on close)
async_sqlite  AsyncSqliteSaver on a new temporary file (async API)
async_postgres AsyncPostgresSaver on a new schema (async API)
"""

from __future__ import annotations

import itertools
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

_seq = itertools.count(1)


def _storage_name() -> str:
    """A name for new storage that no other open, process or run uses."""
    return f"lgpy_{os.getpid()}_{int(time.time() * 1000):x}_{next(_seq)}"


def _env(name: str) -> str:
    v = os.environ.get(name, "")
    if not v:
        raise NotImplementedError(f"{name} is not set: this saver needs a server")
    return v


def memory() -> InMemorySaver:
    """A new InMemorySaver."""
    return InMemorySaver()


@contextmanager
def sqlite() -> Iterator[Any]:
    """A SqliteSaver on a new temporary file, removed on close."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    d = tempfile.mkdtemp(prefix="lgpy-sqlite-")
    conn = sqlite3.connect(os.path.join(d, "checkpoints.db"), check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()
        shutil.rmtree(d, ignore_errors=True)


@contextmanager
def _pg_schema() -> Iterator[tuple[str, str]]:
    import psycopg

    dsn = _env("CHECKPOINTKIT_POSTGRES_DSN")
    schema = _storage_name()
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield dsn, schema
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@contextmanager
def postgres() -> Iterator[Any]:
    """A PostgresSaver (one connection, as from_conn_string makes it) on a new schema."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    with _pg_schema() as (dsn, schema):
        with Connection.connect(
            dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row, options=f"-c search_path={schema}"
        ) as conn:
            saver = PostgresSaver(conn)
            saver.setup()
            yield saver


_mongo_lock = threading.Lock()
_mongo_client: Any = None


def _mongo() -> Any:
    global _mongo_client
    with _mongo_lock:
        if _mongo_client is None:
            from pymongo import MongoClient

            _mongo_client = MongoClient(_env("CHECKPOINTKIT_MONGO_URI"))
        return _mongo_client


@contextmanager
def mongo() -> Iterator[Any]:
    """A MongoDBSaver on a new database of one shared client, dropped on close."""
    from langgraph.checkpoint.mongodb import MongoDBSaver

    client = _mongo()
    name = _storage_name()
    try:
        yield MongoDBSaver(client, db_name=name)
    finally:
        client.drop_database(name)


@asynccontextmanager
async def async_sqlite() -> AsyncIterator[Any]:
    """An AsyncSqliteSaver on a new temporary file, removed on close."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    d = tempfile.mkdtemp(prefix="lgpy-asqlite-")
    try:
        async with AsyncSqliteSaver.from_conn_string(os.path.join(d, "checkpoints.db")) as saver:
            yield saver
    finally:
        shutil.rmtree(d, ignore_errors=True)


@asynccontextmanager
async def async_postgres() -> AsyncIterator[Any]:
    """An AsyncPostgresSaver (one connection) on a new schema."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg.rows import dict_row

    with _pg_schema() as (dsn, schema):
        conn = await AsyncConnection.connect(
            dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row, options=f"-c search_path={schema}"
        )
        try:
            saver = AsyncPostgresSaver(conn)
            await saver.setup()
            yield saver
        finally:
            await conn.close()
