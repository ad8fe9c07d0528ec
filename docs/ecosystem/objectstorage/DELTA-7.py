"""DELTA-7: objectstorage differs from checkpointkit's contract at call 1 (Put), exit status 1 while it does.
1 call, shrunk from 14 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from ecofactories.objectstorage import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))

expected = "015"
print(f"expected: {expected!r}")
got = (saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "sub:1|inner:2"}}, {"v": 4, "id": "015", "ts": "2027-09-07T09:55:45.723200Z", "channel_values": {"m": _DeltaSnapshot("grandchild")}, "channel_versions": {"m": "015"}, "versions_seen": {}, "updated_channels": None}, {}, {"m": "015"}))["configurable"].get("checkpoint_id")
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
