"""ENGINE-UPDATE-1: lgpy-mongo differs from checkpointkit's contract at call 2 (PutWrites), exit status 1 while it does.
2 calls, shrunk from 9 recorded by checkpointkit's ci/cmd/repro."""

import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from checkpointkit_bridge.factories import mongo as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
saver.put_writes({"configurable": {"thread_id": "engine-update-finished-task", "checkpoint_ns": "", "checkpoint_id": "1f1e94cb-f5fe-62f1-8000-04f4606543d6"}}, [("log", ["b"])], "a5079a2c-03e5-3ccb-9399-1b147ad33121", task_path="~__pregel_pull, b")

print("expected: no exception")
saver.put_writes({"configurable": {"thread_id": "engine-update-finished-task", "checkpoint_ns": "", "checkpoint_id": "1f1e94cb-f5fe-62f1-8000-04f4606543d6"}}, [("log", ["u"])], "a5079a2c-03e5-3ccb-9399-1b147ad33121", task_path="~__interrupt__, 0000000000")
print("got:      no exception")
