"""LIST-FILTER-1: lmdb differs from checkpointkit's contract at call 2 (List), exit status 1 while it does.
2 calls, shrunk from 9 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.lmdb_saver import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
saver.put({"configurable": {"thread_id": "f", "checkpoint_ns": ""}}, {"v": 4, "id": "c5", "ts": "2029-06-17T14:52:09.416512Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": None}, {"flag": 0, "n": "null", "str": "Hell_"}, {})

expected = []
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "f", "checkpoint_ns": ""}}, filter={"source": "loop"}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
