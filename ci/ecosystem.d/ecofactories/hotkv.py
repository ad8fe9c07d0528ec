"""langgraph-checkpoint-hotkv's HotKVSaver on CHECKPOINTKIT_REDIS_URL (a
redis-server: HotKV is not packaged, and the saver only sends plain Redis
commands and EVAL), with a new key prefix per call, deleted on close."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import env, redis_delete_prefix, storage_name


@contextmanager
def fresh() -> Iterator[Any]:
    """A HotKVSaver from from_conn_string, with a prefix of its own."""
    from langgraph.checkpoint.hotkv import HotKVSaver

    url = env("CHECKPOINTKIT_REDIS_URL")
    prefix = storage_name("hotkv")
    try:
        with HotKVSaver.from_conn_string(url, prefix=prefix) as saver:
            yield saver
    finally:
        redis_delete_prefix(url, prefix)
