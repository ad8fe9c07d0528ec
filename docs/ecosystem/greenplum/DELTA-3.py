"""DELTA-3: greenplum differs from checkpointkit's contract at call 3 (GetTuple), exit status 1 while it does.
3 calls, shrunk from 13 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, {"v": 4, "id": "01", "ts": "2027-09-07T09:40:56.530752Z", "channel_values": {"m": _DeltaSnapshot("s")}, "channel_versions": {"m": "01"}, "versions_seen": {}, "updated_channels": None}, {}, {"m": "01"})
saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "01"}}, [("m", "1a")], "task-a", task_path="task-path")

expected = "01"
print(f"expected: {expected!r}")
t = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "01"}})
got = t and t.config["configurable"].get("checkpoint_id")
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
