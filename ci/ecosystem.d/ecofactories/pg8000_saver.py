"""langgraph-checkpoint-postgres-pg8000's Pg8000Saver on a new PostgreSQL
schema per call: a SQLAlchemy engine (postgresql+pg8000, as its README
shows) whose connections use that schema."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import pg_schema


def _sqlalchemy_url(dsn: str) -> str:
    u = urllib.parse.urlparse(dsn)
    return urllib.parse.urlunparse(u._replace(scheme="postgresql+pg8000", query=""))


@contextmanager
def fresh() -> Iterator[Any]:
    """A Pg8000Saver (it creates its tables when made) over an empty schema."""
    from langgraph_checkpoint_postgres_pg8000.pg8000_saver import Pg8000Saver
    from sqlalchemy import create_engine, event

    with pg_schema() as (dsn, schema):
        engine = create_engine(_sqlalchemy_url(dsn))

        @event.listens_for(engine, "connect")
        def _search_path(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute(f'SET search_path TO "{schema}"')
            cur.close()
            dbapi_conn.commit()

        try:
            yield Pg8000Saver(engine)
        finally:
            engine.dispose()
