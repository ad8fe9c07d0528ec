"""langgraph-checkpoint-mysql's PyMySQLSaver (sync) on a new MariaDB
database per call, as PyMySQLSaver.from_conn_string connects (one
autocommit connection)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import mysql_database, mysql_params


@contextmanager
def fresh() -> Iterator[Any]:
    """A set-up PyMySQLSaver over an empty database."""
    import pymysql
    from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver

    with mysql_database() as db:
        with pymysql.connect(**mysql_params(db), autocommit=True) as conn:
            saver = PyMySQLSaver(conn)
            saver.setup()
            yield saver
