"""LIST-FILTER-5: lmdb differs from checkpointkit's contract at call 2 (List), exit status 1 while it does.
2 calls, shrunk from 7 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.lmdb_saver import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "f", "checkpoint_ns": ""}}, {"v": 4, "id": "c4", "ts": "2029-06-17T13:40:34.449216Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {}, {})

expected = []
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "f", "checkpoint_ns": ""}}, filter={"str": "Hello"}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
