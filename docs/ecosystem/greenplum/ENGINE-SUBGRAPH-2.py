"""ENGINE-SUBGRAPH-2: greenplum differs from checkpointkit's contract at call 4 (List), exit status 1 while it does.
4 calls, shrunk from 37 recorded by checkpointkit's ci/cmd/repro."""

import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
v1 = saver.get_next_version(None, None)
saver.put({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": ""}}, {"v": 4, "id": "1f1e95e0-ea1d-609e-bfff-36e9ea3e95be", "ts": "2026-11-26T05:56:00.687939Z", "channel_values": {"__start__": {"question": "q1"}}, "channel_versions": {"__start__": v1}, "versions_seen": {"__input__": {}}, "updated_channels": ["__start__"]}, {"parents": {}, "source": "input", "step": -1}, {"__start__": v1})
saver.put_writes({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": "", "checkpoint_id": "1f1e95e0-ea1d-609e-bfff-36e9ea3e95be"}}, [("question", "q1"), ("branch:to:inner", None)], "b8582b1c-5f90-980b-7f5e-2e6dbb32b12c", task_path="~__pregel_pull, __start__")

expected = ["1f1e95e0-ea1d-609e-bfff-36e9ea3e95be"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": ""}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
