"""langgraph-checkpoint-lmdb's LMDBSaver on a new LMDB environment (a
temporary folder) per call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import temp_dir


@contextmanager
def fresh() -> Iterator[Any]:
    """An LMDBSaver over an empty environment."""
    import lmdb
    from langgraph_checkpoint_lmdb import LMDBSaver

    with temp_dir("lmdb") as d:
        env = lmdb.open(d, max_dbs=4, map_size=1 << 30)
        try:
            yield LMDBSaver(env)
        finally:
            env.close()
