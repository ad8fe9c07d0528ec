"""langgraph-checkpoint-mysql's AIOMySQLSaver (async API) on a new MariaDB
database per call, as AIOMySQLSaver.from_conn_string connects."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ._storage import mysql_database, mysql_params


@asynccontextmanager
async def fresh() -> AsyncIterator[Any]:
    """A set-up AIOMySQLSaver over an empty database."""
    import aiomysql
    from langgraph.checkpoint.mysql.aio import AIOMySQLSaver

    with mysql_database() as db:
        p = mysql_params(db)
        conn = await aiomysql.connect(
            host=p["host"], port=p["port"], user=p["user"], password=p["password"], db=db, autocommit=True
        )
        try:
            saver = AIOMySQLSaver(conn)
            await saver.setup()
            yield saver
        finally:
            conn.close()
