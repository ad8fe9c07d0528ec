"""CONC-1: greenplum differs from checkpointkit's contract at call 3 (GetTuple), exit status 1 while it does.
3 calls, shrunk from 193 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "thread-0", "checkpoint_ns": ""}}, {"v": 4, "id": "w00-000", "ts": "2030-02-26T21:31:35.403376Z", "channel_values": {"ch0": "w00-000/ch0", "ch1": "w00-000/ch1", "ch2": "w00-000/ch2", "ch3": "w00-000/ch3"}, "channel_versions": {"ch0": "w00-000", "ch1": "w00-000", "ch2": "w00-000", "ch3": "w00-000"}, "versions_seen": {}, "updated_channels": None}, {"id": "w00-000", "step": 0}, {"ch0": "w00-000", "ch1": "w00-000", "ch2": "w00-000", "ch3": "w00-000"})
saver.put_writes({"configurable": {"thread_id": "thread-0", "checkpoint_ns": "", "checkpoint_id": "w00-000"}}, [("w", "w00-000"), ("__interrupt__", "w00-000")], "task", task_path="task-path")

expected = "w00-000"
print(f"expected: {expected!r}")
t = saver.get_tuple({"configurable": {"thread_id": "thread-0", "checkpoint_ns": "", "checkpoint_id": "w00-000"}})
got = t and t.config["configurable"].get("checkpoint_id")
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
