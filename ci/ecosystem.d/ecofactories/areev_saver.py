"""areev-langgraph's AreevCheckpointSaver on a new root folder (one Areev
memory file per thread) per call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import temp_dir


@contextmanager
def fresh() -> Iterator[Any]:
    """An AreevCheckpointSaver over an empty folder."""
    from areev_langgraph import AreevCheckpointSaver

    with temp_dir("areev") as d:
        saver = AreevCheckpointSaver(d)
        try:
            yield saver
        finally:
            close = getattr(saver, "close", None)
            if callable(close):
                close()
