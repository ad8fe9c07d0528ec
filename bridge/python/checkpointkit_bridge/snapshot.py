"""LangGraph's delta-channel snapshot type, or a stand-in where it is absent.

DeltaChannel arrived in langgraph-checkpoint 4.1. Savers pinned to an older
LangGraph (some third-party savers still require langgraph-checkpoint 2.x)
run under the same bridge: there the stand-in class lets a snapshot sent by
the suite be decoded, and the saver's own serde decides whether it can store
it, as it would for any value its LangGraph does not know.
"""

from __future__ import annotations

from typing import Any

try:
    from langgraph.checkpoint.serde.types import _DeltaSnapshot as DeltaSnapshot

    HAS_DELTA_SNAPSHOT = True
except ImportError:  # langgraph-checkpoint < 4.1

    class DeltaSnapshot:  # type: ignore[no-redef]
        """A snapshot value for a LangGraph that has no delta channels."""

        __slots__ = ("value",)

        def __init__(self, value: Any) -> None:
            self.value = value

        def __eq__(self, other: object) -> bool:
            return isinstance(other, DeltaSnapshot) and other.value == self.value

        def __repr__(self) -> str:
            return f"DeltaSnapshot({self.value!r})"

    HAS_DELTA_SNAPSHOT = False

__all__ = ["DeltaSnapshot", "HAS_DELTA_SNAPSHOT"]
