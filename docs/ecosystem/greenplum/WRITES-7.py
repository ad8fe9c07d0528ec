"""WRITES-7: greenplum differs from checkpointkit's contract at call 3 (GetTuple), exit status 1 while it does.
3 calls, shrunk from 4 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "sub:1", "checkpoint_id": "later"}}, [("ch", "early")], "task", task_path="task-path")
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "sub:1"}}, {"v": 4, "id": "later", "ts": "2029-10-12T08:41:05.432896Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {}, {})

expected = "later"
print(f"expected: {expected!r}")
t = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "sub:1", "checkpoint_id": "later"}})
got = t and t.config["configurable"].get("checkpoint_id")
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
