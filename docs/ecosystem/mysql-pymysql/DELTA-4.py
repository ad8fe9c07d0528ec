"""DELTA-4: mysql-pymysql differs from checkpointkit's contract at call 5 (delta_history), exit status 1 while it does.
5 calls, shrunk from 10 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.mysql_pymysql import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "01"}}, {"v": 4, "id": "02", "ts": "2027-09-07T10:52:31.498048Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {}, {})
saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "02"}}, [("m", "b0"), ("m", "b1")], "t-b", task_path="b")
saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "02"}}, [("m", "e0")], "t-e", task_path="")
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "02"}}, {"v": 4, "id": "03", "ts": "2027-09-07T12:04:06.465344Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {}, {})

expected = [("t-e", "m", "e0"), ("t-b", "m", "b0"), ("t-b", "m", "b1")]
print(f"expected: {expected!r}")
h = saver.get_delta_channel_history(config={"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "03"}}, channels=["m"])
got = [tuple(w) for w in h["m"]["writes"]]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
