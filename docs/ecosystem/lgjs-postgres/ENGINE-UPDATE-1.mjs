// ENGINE-UPDATE-1: lgjs-postgres differs from checkpointkit's contract at call 3 (GetTuple), exit status 1 while it does.
// 3 calls, shrunk from 23 recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.
import { isDeepStrictEqual } from "node:util";
import pg from "pg";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

// A new schema of the database CHECKPOINTKIT_POSTGRES_DSN names.
const pool = new pg.Pool({ connectionString: process.env.CHECKPOINTKIT_POSTGRES_DSN });
const schema = "repro_" + Date.now().toString(36);
const saver = new PostgresSaver(pool, undefined, { schema });
await saver.setup();
await saver.put({"configurable": {"thread_id": "engine-update", "checkpoint_ns": "", "checkpoint_id": "1f1e94cc-56db-6c43-8000-310efc8f25ae"}}, {"v": 4, "id": "1f1e94cc-56e1-6238-8001-45e22df7707c", "ts": "2026-11-26T03:52:16.4307512Z", "channel_values": {"branch:to:node_b": null, "value": 11}, "channel_versions": {"__start__": 2, "branch:to:node_a": 3, "branch:to:node_b": 3, "value": 3}, "versions_seen": {"__input__": {}, "__start__": {"__start__": 1}, "node_a": {"branch:to:node_a": 2}}, "updated_channels": ["branch:to:node_b", "value"]}, {"parents": {}, "source": "loop", "step": 1}, {"branch:to:node_a": 3, "branch:to:node_b": 3, "value": 3});
await saver.put({"configurable": {"thread_id": "engine-update", "checkpoint_ns": "", "checkpoint_id": "1f1e94cc-56db-6c43-8000-310efc8f25ae"}}, {"v": 4, "id": "1f1e94cc-5703-6b9e-8001-bca6c4ac65f6", "ts": "2026-11-26T03:52:16.4449182Z", "channel_values": {"branch:to:node_b": null, "value": 21}, "channel_versions": {"__start__": 2, "branch:to:node_a": 3, "branch:to:node_b": 3, "value": 3}, "versions_seen": {"__input__": {}, "__start__": {"__start__": 1}, "node_a": {}}, "updated_channels": null}, {"parents": {}, "source": "update", "step": 1}, {"branch:to:node_a": 3, "branch:to:node_b": 3, "value": 3});

const expected = {"branch:to:node_b": null, "value": 21};
console.log("expected:", expected);
const t = await saver.getTuple({"configurable": {"thread_id": "engine-update", "checkpoint_ns": "", "checkpoint_id": "1f1e94cc-5703-6b9e-8001-bca6c4ac65f6"}});
const got = t.checkpoint.channel_values ?? null;
console.log("got:     ", got);
process.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;
await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await pool.end();
