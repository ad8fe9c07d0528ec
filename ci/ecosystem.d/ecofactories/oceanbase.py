"""langgraph-checkpoint-oceanbase's PyOceanBaseSaver (its MySQL mode) on a
new MariaDB database per call, connected as its from_conn_string does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import mysql_database, mysql_params


@contextmanager
def fresh() -> Iterator[Any]:
    """A set-up PyOceanBaseSaver over an empty database."""
    import pymysql
    from langgraph.checkpoint.oceanbase.pyoceanbase import PyOceanBaseSaver

    with mysql_database() as db:
        with pymysql.connect(**mysql_params(db), autocommit=True) as conn:
            saver = PyOceanBaseSaver(conn)
            saver.setup()
            yield saver
