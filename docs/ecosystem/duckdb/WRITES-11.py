"""WRITES-11: duckdb differs from checkpointkit's contract at call 1 (PutWrites), exit status 1 while it does.
1 call, shrunk from 2 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.duckdb_saver import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))

print("expected: no exception")
saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}, [], "task", task_path="task-path")
print("got:      no exception")
