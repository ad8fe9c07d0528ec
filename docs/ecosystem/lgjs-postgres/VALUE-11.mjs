// VALUE-11: lgjs-postgres differs from checkpointkit's contract at call 1 (Put), exit status 1 while it does.
// 1 call, shrunk from 1 recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.
import { isDeepStrictEqual } from "node:util";
import pg from "pg";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

// A new schema of the database CHECKPOINTKIT_POSTGRES_DSN names.
const pool = new pg.Pool({ connectionString: process.env.CHECKPOINTKIT_POSTGRES_DSN });
const schema = "repro_" + Date.now().toString(36);
const saver = new PostgresSaver(pool, undefined, { schema });
await saver.setup();

const expected = "c1";
console.log("expected:", expected);
const got = (await saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, {"v": 4, "id": "c1", "ts": "2029-06-17T10:05:49.547328Z", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": null}, {"big": 9007199254740992, "neg": -1, "source": "loop", "step": 3, "zero": 0}, {})).configurable.checkpoint_id;
console.log("got:     ", got);
process.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;
await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await pool.end();
