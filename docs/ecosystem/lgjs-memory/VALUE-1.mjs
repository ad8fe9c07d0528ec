// VALUE-1: lgjs-memory differs from checkpointkit's contract at call 3 (GetTuple), exit status 1 while it does.
// 3 calls, shrunk from 14 recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.
import { isDeepStrictEqual } from "node:util";
import { MemorySaver } from "@langchain/langgraph-checkpoint";

const saver = new MemorySaver();
await saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, {"v": 4, "id": "c1", "ts": "2029-06-17T10:05:49.547328Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": null}, {}, {});
await saver.putWrites({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}, [["bytes", new Uint8Array([1, 2])]], "task-bytes", "task-path");

const expected = "c1";
console.log("expected:", expected);
const t = await saver.getTuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}});
const got = t?.config.configurable.checkpoint_id ?? null;
console.log("got:     ", got);
process.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;
