// LIST-SCOPE-4: lgjs-sqlite differs from checkpointkit's contract at call 2 (List), exit status 1 while it does.
// 2 calls, shrunk from 9 recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.
import { isDeepStrictEqual } from "node:util";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";

const saver = SqliteSaver.fromConnString(":memory:");
await saver.put({"configurable": {"thread_id": "a", "checkpoint_ns": "s:1"}}, {"v": 4, "id": "02", "ts": "2027-09-07T10:52:31.498048Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": null}, {"key": "a/s:1/02"}, {});

const expected = [];
console.log("expected:", expected);
const ts = [];
for await (const t of saver.list({ configurable: { thread_id: "a", checkpoint_id: "03" } }, {  })) ts.push(t);
const got = ts.map((t) => t.config.configurable.checkpoint_id ?? null);
console.log("got:     ", got);
process.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;
saver.db.close();
