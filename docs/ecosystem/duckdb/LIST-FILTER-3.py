"""LIST-FILTER-3: duckdb differs from checkpointkit's contract at call 2 (List), exit status 1 while it does.
2 calls, shrunk from 7 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.duckdb_saver import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "f", "checkpoint_ns": ""}}, {"v": 4, "id": "c2", "ts": "2029-06-17T11:17:24.514624Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {"a": {"b": "dot"}, "flag": 1, "nested": {"a": 1}, "score": 1.0, "source": "loop", "step": 2, "str": "hello", "tags": ["y", "x"]}, {})

expected = ["c2"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "f", "checkpoint_ns": ""}}, filter={"score": 1}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
