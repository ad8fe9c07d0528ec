"""ENGINE-INPUT-1: greenplum differs from checkpointkit's contract at call 5 (List), exit status 1 while it does.
5 calls, shrunk from 19 recorded by checkpointkit's ci/cmd/repro."""

import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
v1 = saver.get_next_version(None, None)
v2 = saver.get_next_version(v1, None)
saver.put({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": "", "checkpoint_id": "1f1e95e0-e915-6af5-bfff-a6bf40f4853c"}}, {"v": 4, "id": "1f1e95e0-e91a-616d-8000-164c6e7d8380", "ts": "2026-11-26T05:56:00.5818733Z", "channel_values": {"branch:to:a": None, "log": []}, "channel_versions": {"__start__": v2, "branch:to:a": v2, "log": v2}, "versions_seen": {"__input__": {}, "__start__": {"__start__": v1}}, "updated_channels": ["branch:to:a", "log"]}, {"parents": {}, "source": "loop", "step": 0}, {"__start__": v2, "branch:to:a": v2, "log": v2})
saver.put_writes({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": "", "checkpoint_id": "1f1e95e0-e91a-616d-8000-164c6e7d8380"}}, [("log", ["a"]), ("branch:to:b", None)], "f871ccc6-c61f-0bf4-4586-d01ec5219716", task_path="~__pregel_pull, a")

expected = ["1f1e95e0-e91a-616d-8000-164c6e7d8380"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": ""}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
