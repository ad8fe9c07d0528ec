"""ENGINE-UPDATE-1: lgpy-mongo differs from checkpointkit's contract at call 2 (PutWrites), exit status 1 while it does.
2 calls, shrunk from 11 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from checkpointkit_bridge.factories import mongo as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put_writes({"configurable": {"thread_id": "engine-update-finished-task", "checkpoint_ns": "", "checkpoint_id": "1f1e9647-6f75-684e-8000-0275cce78026"}}, [("log", ["b"])], "9c7668f5-b5c0-3d3b-7b2f-ef5f444c3a68", task_path="~__pregel_pull, b")

print("expected: no exception")
saver.put_writes({"configurable": {"thread_id": "engine-update-finished-task", "checkpoint_ns": "", "checkpoint_id": "1f1e9647-6f75-684e-8000-0275cce78026"}}, [("log", ["u"])], "9c7668f5-b5c0-3d3b-7b2f-ef5f444c3a68", task_path="~__interrupt__, 0000000000")
print("got:      no exception")
