"""LIST-SCOPE-4: lgpy-mongo differs from checkpointkit's contract at call 2 (List), exit status 1 while it does.
2 calls, shrunk from 9 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from checkpointkit_bridge.factories import mongo as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "a", "checkpoint_ns": "s:1"}}, {"v": 4, "id": "02", "ts": "2027-09-07T10:52:31.498048Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {"key": "a/s:1/02"}, {})

expected = []
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "a", "checkpoint_id": "03"}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
