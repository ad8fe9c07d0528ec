"""langgraph-checkpoint-duckdb's DuckDBSaver on a new database file per
call."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import temp_dir


@contextmanager
def fresh() -> Iterator[Any]:
    """A set-up DuckDBSaver over an empty file."""
    import duckdb
    from langgraph.checkpoint.duckdb import DuckDBSaver

    with temp_dir("duckdb") as d:
        conn = duckdb.connect(os.path.join(d, "checkpoints.duckdb"))
        try:
            saver = DuckDBSaver(conn)
            saver.setup()
            yield saver
        finally:
            conn.close()
