// ENGINE-UPDATE-1: lgjs-postgres differs from checkpointkit's contract at call 7 (GetTuple), exit status 1 while it does.
// 7 calls, shrunk from 29 recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.
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
const v3 = saver.getNextVersion(v2);
await saver.put({"configurable": {"thread_id": "engine-update", "checkpoint_ns": "", "checkpoint_id": "1f1e9648-2ec7-6b01-8000-bcada2669a9c"}}, {"v": 4, "id": "1f1e9648-2ed4-6149-8001-afb709dcf46c", "ts": "2026-11-26T06:42:12.7784265Z", "channel_values": {"branch:to:node_b": null, "value": 11}, "channel_versions": {"__start__": v2, "branch:to:node_a": v3, "branch:to:node_b": v3, "value": v3}, "versions_seen": {"__input__": {}, "__start__": {"__start__": v1}, "node_a": {"branch:to:node_a": v2}}, "updated_channels": ["branch:to:node_b", "value"]}, {"parents": {}, "source": "loop", "step": 1}, {"branch:to:node_a": v3, "branch:to:node_b": v3, "value": v3});
const v4 = saver.getNextVersion(v2);
await saver.put({"configurable": {"thread_id": "engine-update", "checkpoint_ns": "", "checkpoint_id": "1f1e9648-2ec7-6b01-8000-bcada2669a9c"}}, {"v": 4, "id": "1f1e9648-2ee9-6074-8001-a07e2ea494ff", "ts": "2026-11-26T06:42:12.7870068Z", "channel_values": {"branch:to:node_b": null, "value": 21}, "channel_versions": {"__start__": v2, "branch:to:node_a": v4, "branch:to:node_b": v4, "value": v4}, "versions_seen": {"__input__": {}, "__start__": {"__start__": v1}, "node_a": {}}, "updated_channels": null}, {"parents": {}, "source": "update", "step": 1}, {"branch:to:node_a": v4, "branch:to:node_b": v4, "value": v4});

const expected = {"branch:to:node_b": null, "value": 21};
console.log("expected:", expected);
const t = await saver.getTuple({"configurable": {"thread_id": "engine-update", "checkpoint_ns": "", "checkpoint_id": "1f1e9648-2ee9-6074-8001-a07e2ea494ff"}});
const got = t.checkpoint.channel_values ?? null;
console.log("got:     ", got);
process.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;
await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await pool.end();
