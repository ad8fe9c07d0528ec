"""ENGINE-SUBGRAPH-2: greenplum differs from checkpointkit's contract at call 3 (List), exit status 1 while it does.
3 calls, shrunk from 25 recorded by checkpointkit's ci/cmd/repro."""

import sys

from langgraph.checkpoint.base import BaseCheckpointSaver

from ecofactories.greenplum import fresh as factory

opened = factory()  # kept: a context manager closes the saver when collected
saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()
saver.put({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": "", "checkpoint_id": "1f1e94cb-2107-6e0d-8001-cf7eebe44f9c"}}, {"v": 4, "id": "1f1e94cb-210b-642c-8002-3195080ab226", "ts": "2026-11-26T03:51:43.9421484Z", "channel_values": {"__start__": {"question": "q2"}, "count": 1, "question": "q1"}, "channel_versions": {"__start__": "00000000000000000000000000000004.0.8011989197471779", "branch:to:inner": "00000000000000000000000000000003.0.47506830989221216", "count": "00000000000000000000000000000003.0.47506830989221216", "question": "00000000000000000000000000000003.0.47506830989221216"}, "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.8385220566700442"}, "inner": {"branch:to:inner": "00000000000000000000000000000002.0.7245084821415301"}}, "updated_channels": ["__start__"]}, {"parents": {}, "source": "input", "step": 2}, {"__start__": "00000000000000000000000000000004.0.8011989197471779"})
saver.put_writes({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": "", "checkpoint_id": "1f1e94cb-210b-642c-8002-3195080ab226"}}, [("question", "q2"), ("branch:to:inner", None)], "b1673fd7-9968-fb9a-81f0-fa7aea174974", task_path="~__pregel_pull, __start__")

expected = ["1f1e94cb-210b-642c-8002-3195080ab226"]
print(f"expected: {expected!r}")
ts = list(saver.list({"configurable": {"thread_id": "engine-stateful", "checkpoint_ns": ""}}))
got = [t.config["configurable"].get("checkpoint_id") for t in ts]
print(f"got:      {got!r}")
sys.exit(0 if got == expected and type(got) is type(expected) else 1)
