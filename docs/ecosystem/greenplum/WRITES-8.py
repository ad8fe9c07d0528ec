"""WRITES-8: greenplum differs from checkpointkit's contract at call 3 (GetTuple), exit status 1 while it does.
3 calls, shrunk from 5 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, {"v": 4, "id": "c1", "ts": "2029-06-17T10:05:49.547328Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {}, {})
saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}, [("a", "one")], "t1", task_path="")

expected = "c1"
print(f"expected: {expected!r}")
t = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}})
got = t and t.config["configurable"].get("checkpoint_id")
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
