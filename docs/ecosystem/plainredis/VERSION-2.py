"""VERSION-2: plainredis differs from checkpointkit's contract at call 6 (GetTuple), exit status 1 while it does.
6 calls, shrunk from 7 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.plainredis import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
v1 = saver.get_next_version(None, None)
v2 = saver.get_next_version(v1, None)
v3 = saver.get_next_version(v1, None)
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}, {"v": 4, "id": "2a", "ts": "2027-10-05T05:47:18.216512Z", "channel_values": {"a": "fork A"}, "channel_versions": {"a": v2}, "versions_seen": {}, "updated_channels": None}, {}, {"a": v2})
saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}, {"v": 4, "id": "2b", "ts": "2027-10-05T06:58:53.183808Z", "channel_values": {"a": "fork B"}, "channel_versions": {"a": v3}, "versions_seen": {}, "updated_channels": None}, {}, {"a": v3})

expected = {"a": "fork A"}
print(f"expected: {expected!r}")
t = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "2a"}})
got = t.checkpoint.get("channel_values")
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
