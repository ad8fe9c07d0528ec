"""ENGINE-SUBGRAPH-2: greenplum differs from checkpointkit's contract at call 4 (List), exit status 1 while it does.
4 calls, shrunk from 37 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
v1 = saver.get_next_version(None, None)
saver.put({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": ""}}, {"v": 4, "id": "1f1e9645-c9f2-6b7e-bfff-59078a3f90a5", "ts": "2026-11-26T06:41:08.513267Z", "channel_values": {"__start__": {"question": "q1"}}, "channel_versions": {"__start__": v1}, "versions_seen": {"__input__": {}}, "updated_channels": ["__start__"]}, {"parents": {}, "source": "input", "step": -1}, {"__start__": v1})
saver.put_writes({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": "", "checkpoint_id": "1f1e9645-c9f2-6b7e-bfff-59078a3f90a5"}}, [("question", "q1"), ("branch:to:inner", None)], "a549f63b-2ea2-721a-d626-230c8c7b93c7", task_path="~__pregel_pull, __start__")

expected = ["1f1e9645-c9f2-6b7e-bfff-59078a3f90a5"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": ""}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
