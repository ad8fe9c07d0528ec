"""LIST-ORDER-3: objectstorage differs from checkpointkit's contract at call 3 (List), exit status 1 while it does.
3 calls, shrunk from 8 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.objectstorage import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, {"v": 4, "id": "1f0c-a", "ts": "2027-09-22T18:33:33.231265Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {}, {})
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, {"v": 4, "id": "1f0c", "ts": "2027-09-22T18:33:33.219648Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {}, {})

expected = ["1f0c-a", "1f0c"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
