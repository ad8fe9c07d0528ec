"""ENGINE-INPUT-1: greenplum differs from checkpointkit's contract at call 5 (List), exit status 1 while it does.
5 calls, shrunk from 19 recorded by checkpointkit's ci/cmd/repro."""

import atexit
import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))
v1 = saver.get_next_version(None, None)
v2 = saver.get_next_version(v1, None)
saver.put({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": "", "checkpoint_id": "1f1e9645-c98b-6669-bfff-f2a6b7126003"}}, {"v": 4, "id": "1f1e9645-c990-6512-8000-189d0e3c3285", "ts": "2026-11-26T06:41:08.4729618Z", "channel_values": {"branch:to:a": None, "log": []}, "channel_versions": {"__start__": v2, "branch:to:a": v2, "log": v2}, "versions_seen": {"__input__": {}, "__start__": {"__start__": v1}}, "updated_channels": ["branch:to:a", "log"]}, {"parents": {}, "source": "loop", "step": 0}, {"__start__": v2, "branch:to:a": v2, "log": v2})
saver.put_writes({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": "", "checkpoint_id": "1f1e9645-c990-6512-8000-189d0e3c3285"}}, [("log", ["a"]), ("branch:to:b", None)], "06209836-86f8-7d59-c55c-1ef7535407fb", task_path="~__pregel_pull, a")

expected = ["1f1e9645-c990-6512-8000-189d0e3c3285"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "engine-new-input", "checkpoint_ns": ""}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
