"""langgraph-checkpoint-plainredis's RedisSaver (sync) on
CHECKPOINTKIT_REDIS_URL with a new key prefix per call, its keys deleted
on close."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import env, redis_delete_prefix, storage_name


@contextmanager
def fresh() -> Iterator[Any]:
    """A RedisSaver whose keys no other saver shares."""
    from langgraph_checkpoint_plainredis import RedisSaver

    url = env("CHECKPOINTKIT_REDIS_URL")
    prefix = storage_name("plainredis")
    saver = RedisSaver(url=url, prefix=prefix)
    try:
        yield saver
    finally:
        saver.client.close()
        redis_delete_prefix(url, prefix + ":")
