"""langgraph-checkpoint-objectstorage's ObjectStorageSaver on the local
file system (fsspec's LocalFileSystem), a new root folder per call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import temp_dir


@contextmanager
def fresh() -> Iterator[Any]:
    """An ObjectStorageSaver over an empty folder."""
    from fsspec.implementations.local import LocalFileSystem
    from langgraph_checkpoint_objectstorage import ObjectStorageSaver

    with temp_dir("objectstorage") as d:
        yield ObjectStorageSaver(LocalFileSystem(), d)
