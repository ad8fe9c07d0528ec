"""NS-4: objectstorage differs from checkpointkit's contract at call 1 (Put), exit status 1 while it does.
1 call, shrunk from 1 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.objectstorage import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))

expected = "c1"
print(f"expected: {expected!r}")
got = (saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "parent:1f2a|child:9b|grand:7"}}, {"v": 4, "id": "c1", "ts": "2029-06-17T10:05:49.547328Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {"parents": {"": "root-id", "parent:1f2a": "p-id", "parent:1f2a|child:9b": "c-id"}, "source": "loop", "step": 1}, {}))["configurable"].get("checkpoint_id")
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
