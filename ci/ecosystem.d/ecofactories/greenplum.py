"""langgraph-checkpoint-greenplum's GreenplumSaver (a PostgresSaver with
CTE-based list queries) on a new PostgreSQL schema per call, connected as
PostgresSaver.from_conn_string connects."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import pg_schema


@contextmanager
def fresh() -> Iterator[Any]:
    """A set-up GreenplumSaver over an empty schema."""
    from langgraph.checkpoint.greenplum.saver import GreenplumSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    with pg_schema() as (dsn, schema):
        with Connection.connect(
            dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row, options=f"-c search_path={schema}"
        ) as conn:
            saver = GreenplumSaver(conn)
            saver.setup()
            yield saver
