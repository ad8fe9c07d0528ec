"""DELETE-4: greenplum differs from checkpointkit's contract at call 3 (List), exit status 1 while it does.
3 calls, shrunk from 37 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "sub:1", "checkpoint_id": "2"}}, {"v": 4, "id": "3", "ts": "2027-10-13T03:28:58.016576Z", "channel_values": {"c": "t/sub:1/3", "k": "kept"}, "channel_versions": {"c": "3", "k": "1"}, "versions_seen": {}, "updated_channels": None}, {"run_id": "run-3", "step": 2}, {"c": "3"})
saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "sub:1", "checkpoint_id": "3"}}, [("w", "3"), ("__error__", "e3")], "task", task_path="task-path")

expected = ["3"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "t"}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
