"""ENGINE-INPUT-1: greenplum differs from checkpointkit's contract at call 3 (List), exit status 1 while it does.
3 calls, shrunk from 13 recorded by checkpointkit's ci/cmd/repro."""

import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
saver.put({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": "", "checkpoint_id": "1f1e94cb-20c3-63a2-8002-56fdb55b4550"}}, {"v": 4, "id": "1f1e94cb-20c5-6fda-8003-b87cba7aa604", "ts": "2026-11-26T03:51:43.9137754Z", "channel_values": {"branch:to:a": None, "log": ["a"]}, "channel_versions": {"__start__": "00000000000000000000000000000005.0.09185154731061673", "branch:to:a": "00000000000000000000000000000005.0.09185154731061673", "branch:to:b": "00000000000000000000000000000004.0.4083905448969424", "log": "00000000000000000000000000000005.0.09185154731061673"}, "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000004.0.4083905448969424"}, "a": {"branch:to:a": "00000000000000000000000000000002.0.25527709261379217"}, "b": {"branch:to:b": "00000000000000000000000000000003.0.20603560628277395"}}, "updated_channels": ["branch:to:a", "log"]}, {"parents": {}, "source": "loop", "step": 3}, {"__start__": "00000000000000000000000000000005.0.09185154731061673", "branch:to:a": "00000000000000000000000000000005.0.09185154731061673", "log": "00000000000000000000000000000005.0.09185154731061673"})
saver.put_writes({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": "", "checkpoint_id": "1f1e94cb-20c5-6fda-8003-b87cba7aa604"}}, [("log", ["a"]), ("branch:to:b", None)], "a6630ccf-203b-03c4-a5fc-1764164e0d8a", task_path="~__pregel_pull, a")

expected = ["1f1e94cb-20c5-6fda-8003-b87cba7aa604"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": ""}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
