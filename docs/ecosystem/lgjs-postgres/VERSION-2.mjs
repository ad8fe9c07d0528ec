// VERSION-2: lgjs-postgres differs from checkpointkit's contract at call 6 (GetTuple), exit status 1 while it does.
// 6 calls, shrunk from 8 recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.
import { isDeepStrictEqual } from "node:util";
import pg from "pg";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

// A new schema of the database CHECKPOINTKIT_POSTGRES_DSN names.
const pool = new pg.Pool({ connectionString: process.env.CHECKPOINTKIT_POSTGRES_DSN });
const schema = "repro_" + Date.now().toString(36);
const saver = new PostgresSaver(pool, undefined, { schema });
await saver.setup();
const v1 = saver.getNextVersion(undefined);
const v2 = saver.getNextVersion(v1);
const v3 = saver.getNextVersion(v1);
await saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}, {"v": 4, "id": "2a", "ts": "2027-10-05T05:47:18.216512Z", "channel_values": {"a": "fork A"}, "channel_versions": {"a": v2}, "versions_seen": {}, "updated_channels": null}, {}, {"a": v2});
await saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}, {"v": 4, "id": "2b", "ts": "2027-10-05T06:58:53.183808Z", "channel_values": {"a": "fork B"}, "channel_versions": {"a": v3}, "versions_seen": {}, "updated_channels": null}, {}, {"a": v3});

const expected = {"a": "fork B"};
console.log("expected:", expected);
const t = await saver.getTuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "2b"}});
const got = t.checkpoint.channel_values ?? null;
console.log("got:     ", got);
process.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;
await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await pool.end();
