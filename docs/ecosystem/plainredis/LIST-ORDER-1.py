"""LIST-ORDER-1: plainredis differs from checkpointkit's contract at call 3 (List), exit status 1 while it does.
3 calls, shrunk from 9 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.plainredis import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "a", "checkpoint_ns": ""}}, {"v": 4, "id": "05", "ts": "2027-09-07T14:27:16.399936Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {"key": "a//05"}, {})
saver.put({"configurable": {"thread_id": "a", "checkpoint_ns": ""}}, {"v": 4, "id": "03", "ts": "2027-09-07T12:04:06.465344Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {"key": "a//03"}, {})

expected = ["05", "03"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "a", "checkpoint_ns": ""}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
