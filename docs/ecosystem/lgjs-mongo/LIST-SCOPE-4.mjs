// LIST-SCOPE-4: lgjs-mongo differs from checkpointkit's contract at call 2 (List), exit status 1 while it does.
// 2 calls, shrunk from 9 recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.
import { isDeepStrictEqual } from "node:util";
import { MongoClient } from "mongodb";
import { MongoDBSaver } from "@langchain/langgraph-checkpoint-mongodb";

// A new database of the server CHECKPOINTKIT_MONGO_URI names.
const client = new MongoClient(process.env.CHECKPOINTKIT_MONGO_URI);
await client.connect();
const dbName = "repro_" + Date.now().toString(36);
const saver = new MongoDBSaver({ client, dbName });
await saver.setup();
await saver.put({"configurable": {"thread_id": "a", "checkpoint_ns": "s:1"}}, {"v": 4, "id": "02", "ts": "2027-09-07T10:52:31.498048Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": null}, {"key": "a/s:1/02"}, {});

const expected = [];
console.log("expected:", expected);
const ts = [];
for await (const t of saver.list({ configurable: { thread_id: "a", checkpoint_id: "03" } }, {  })) ts.push(t);
const got = ts.map((t) => t.config.configurable.checkpoint_id ?? null);
console.log("got:     ", got);
process.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;
await client.db(dbName).dropDatabase();
await client.close();
