"""LIST-SCOPE-5: greenplum differs from checkpointkit's contract at call 3 (List), exit status 1 while it does.
3 calls, shrunk from 5 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "s:1"}}, {"v": 4, "id": "1", "ts": "2027-09-17T16:38:34.761024Z", "channel_values": {"a": "x", "b": []}, "channel_versions": {"a": "1", "b": "1"}, "versions_seen": {}, "updated_channels": None}, {"source": "input"}, {"a": "1", "b": "1"})
saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "s:1", "checkpoint_id": "1"}}, [("w", 1), ("__interrupt__", {"q": "?"})], "task", task_path="task-path")

expected = ["1"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "t", "checkpoint_ns": "s:1"}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
