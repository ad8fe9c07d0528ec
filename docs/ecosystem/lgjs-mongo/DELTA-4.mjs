// DELTA-4: lgjs-mongo differs from checkpointkit's contract at call 5 (delta_history), exit status 1 while it does.
// 5 calls, shrunk from 10 recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.
import { isDeepStrictEqual } from "node:util";
import { MongoClient } from "mongodb";
import { MongoDBSaver } from "@langchain/langgraph-checkpoint-mongodb";

// A new database of the server CHECKPOINTKIT_MONGO_URI names.
const client = new MongoClient(process.env.CHECKPOINTKIT_MONGO_URI);
await client.connect();
const dbName = "repro_" + Date.now().toString(36);
const saver = new MongoDBSaver({ client, dbName });
await saver.setup();
await saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "01"}}, {"v": 4, "id": "02", "ts": "2027-09-07T10:52:31.498048Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": null}, {}, {});
await saver.putWrites({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "02"}}, [["m", "b0"], ["m", "b1"]], "t-b", "b");
await saver.putWrites({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "02"}}, [["m", "e0"]], "t-e", "");
await saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "02"}}, {"v": 4, "id": "03", "ts": "2027-09-07T12:04:06.465344Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": null}, {}, {});

const expected = [["t-e", "m", "e0"], ["t-b", "m", "b0"], ["t-b", "m", "b1"]];
console.log("expected:", expected);
const h = await saver.getDeltaChannelHistory({ config: {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "03"}}, channels: ["m"] });
const got = h["m"].writes;
console.log("got:     ", got);
process.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;
await client.db(dbName).dropDatabase();
await client.close();
