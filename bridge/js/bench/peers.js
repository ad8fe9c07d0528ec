// peers.js times LangGraph.js's savers on the workload of ci/bench-peers and
// prints one JSON result on stdout, in the shape of ci/cmd/benchpeers's
// Go side (without allocations).
//
//   node bridge/js/bench/peers.js --saver memory|sqlite|postgres|mongo \
//     [--iters N] [--depths 10,2000] [--as NAME]
//   node bridge/js/bench/peers.js --saver mongo --commands [--depths 10] [--iters N]
//
// --commands prints, instead of timings, the MongoDB commands (by command
// and collection) and the documents their replies carry per getTuple and
// per list on a history of the first depth: the counterpart of the Go
// adapter's BenchmarkPeersCommands.
//
// "put" is one put of a checkpoint holding a 1 KB value plus one putWrites
// of two writes (that value and a small integer). The reads are getTuple of
// the latest checkpoint and list with limit 10 on a thread whose history is
// as deep as each of --depths, every history in storage of its own, timed
// alternately in one loop. Each figure is the median of its --iters calls.
// The savers are built as server.js builds them; SqliteSaver gets
// synchronous=NORMAL, as the Go side does. PostgreSQL and MongoDB come from
// CHECKPOINTKIT_POSTGRES_DSN and CHECKPOINTKIT_MONGO_URI.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { uuid6 } from "@langchain/langgraph-checkpoint";

const PAYLOAD_SIZE = 1024;
const LIST_LIMIT = 10;
const defaultIters = { memory: 2000, sqlite: 500, postgres: 300, mongo: 20 };
const names = {
  memory: "LangGraph.js MemorySaver",
  sqlite: "LangGraph.js SqliteSaver",
  postgres: "LangGraph.js PostgresSaver",
  mongo: "LangGraph.js MongoDBSaver",
  "mongo-pg": "LangGraph.js MongoDBSaver (FerretDB on PostgreSQL)",
};

function requireEnv(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

let seq = 0;
function storageName() {
  seq += 1;
  return `lgjs_peers_${process.pid}_${seq}`;
}

// openers[saver]() gives {saver, close} over fresh, isolated storage.
const shared = { pool: null, client: null, dirs: [] };
const openers = {
  async memory() {
    const { MemorySaver } = await import("@langchain/langgraph-checkpoint");
    return { saver: new MemorySaver(), async close() {} };
  },
  async sqlite() {
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const dir = mkdtempSync(join(tmpdir(), "lgjs-peers-"));
    shared.dirs.push(dir);
    const saver = SqliteSaver.fromConnString(join(dir, "checkpoints.db"));
    saver.db.pragma("synchronous = NORMAL");
    return { saver, async close() { saver.db.close(); } };
  },
  async postgres() {
    const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
    if (!shared.pool) {
      const { default: pg } = await import("pg");
      shared.pool = new pg.Pool({ connectionString: requireEnv("CHECKPOINTKIT_POSTGRES_DSN") });
    }
    const pool = shared.pool;
    const schema = storageName();
    const saver = new PostgresSaver(pool, undefined, { schema });
    await saver.setup();
    return { saver, async close() { await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); } };
  },
  async mongo() {
    const { MongoDBSaver } = await import("@langchain/langgraph-checkpoint-mongodb");
    if (!shared.client) {
      const { MongoClient } = await import("mongodb");
      shared.client = new MongoClient(requireEnv("CHECKPOINTKIT_MONGO_URI"));
      await shared.client.connect();
    }
    const client = shared.client;
    const dbName = storageName();
    const saver = new MongoDBSaver({ client, dbName });
    await saver.setup?.();
    return { saver, async close() { await client.db(dbName).dropDatabase(); } };
  },
};

// Workload writes and reads one thread the way the benchmark does.
class Workload {
  constructor(saver, thread) {
    this.saver = saver;
    this.thread = thread;
    this.parent = undefined;
    this.version = undefined;
    this.step = 0;
    this.payload = "x".repeat(PAYLOAD_SIZE);
  }

  async put() {
    this.version = this.saver.getNextVersion(this.version);
    const versions = { messages: this.version };
    const checkpoint = {
      v: 4,
      id: uuid6(this.step),
      ts: new Date().toISOString(),
      channel_values: { messages: this.payload },
      channel_versions: versions,
      versions_seen: {},
    };
    const configurable = { thread_id: this.thread, checkpoint_ns: "" };
    if (this.parent) configurable.checkpoint_id = this.parent;
    const cfg = await this.saver.put({ configurable }, checkpoint, { source: "loop", step: this.step, parents: {} }, versions);
    await this.saver.putWrites(cfg, [["messages", this.payload], ["step", this.step]], `task-${this.step}`);
    this.parent = cfg.configurable.checkpoint_id;
    this.step += 1;
  }

  async get() {
    const t = await this.saver.getTuple({ configurable: { thread_id: this.thread, checkpoint_ns: "" } });
    if (t?.checkpoint.id !== this.parent) throw new Error(`getTuple returned ${t?.checkpoint.id}, want the latest ${this.parent}`);
  }

  async list() {
    let n = 0;
    for await (const _ of this.saver.list({ configurable: { thread_id: this.thread, checkpoint_ns: "" } }, { limit: LIST_LIMIT })) n += 1;
    if (n !== LIST_LIMIT) throw new Error(`list returned ${n} tuples, want ${LIST_LIMIT}`);
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// alternate times op on every history in turn, rotating which goes first,
// and returns the median latency per history in milliseconds.
async function alternate(hs, iters, op) {
  const lat = hs.map(() => []);
  for (const h of hs) await op(h); // warm up
  for (let i = 0; i < iters; i++) {
    for (let k = 0; k < hs.length; k++) {
      const j = (i + k) % hs.length;
      const t0 = performance.now();
      await op(hs[j]);
      lat[j].push(performance.now() - t0);
    }
  }
  return lat.map(median);
}

async function measure(name, iters, depths) {
  const open = openers[name];
  const opened = [];
  try {
    const first = await open();
    opened.push(first);
    const w = new Workload(first.saver, "put");
    const lat = [];
    for (let i = 0; i < iters; i++) {
      const t0 = performance.now();
      await w.put();
      lat.push(performance.now() - t0);
    }
    const hs = [];
    for (const d of depths) {
      const o = await open();
      opened.push(o);
      const h = new Workload(o.saver, `history-${d}`);
      for (let i = 0; i < d; i++) await h.put();
      hs.push(h);
    }
    return {
      side: "js",
      saver: name,
      name: names[name],
      iters,
      depths,
      put_ms: median(lat),
      get_ms: await alternate(hs, iters, (h) => h.get()),
      list_ms: await alternate(hs, iters, (h) => h.list()),
    };
  } finally {
    for (const o of opened.reverse()) await o.close().catch(() => {});
    await shared.pool?.end();
    await shared.client?.close();
    for (const d of shared.dirs) rmSync(d, { recursive: true, force: true });
  }
}

// countCommands measures MongoDBSaver's commands and documents per read.
async function countCommands(depth, calls) {
  const { MongoDBSaver } = await import("@langchain/langgraph-checkpoint-mongodb");
  const { MongoClient } = await import("mongodb");
  const client = new MongoClient(requireEnv("CHECKPOINTKIT_MONGO_URI"), { monitorCommands: true });
  let commands = {};
  let documents = 0;
  client.on("commandStarted", (e) => {
    const coll = e.command[e.commandName];
    const key = typeof coll === "string" ? `${e.commandName} ${coll}` : e.commandName;
    commands[key] = (commands[key] ?? 0) + 1;
  });
  client.on("commandSucceeded", (e) => {
    const c = e.reply?.cursor;
    if (c) documents += (c.firstBatch ?? c.nextBatch ?? []).length;
  });
  await client.connect();
  const dbName = storageName();
  try {
    const h = new Workload(new MongoDBSaver({ client, dbName }), `history-${depth}`);
    for (let i = 0; i < depth; i++) await h.put();
    const out = { saver: "LangGraph.js MongoDBSaver", depth, calls };
    for (const [name, op] of [["get", () => h.get()], ["list", () => h.list()]]) {
      await op();
      commands = {};
      documents = 0;
      for (let i = 0; i < calls; i++) await op();
      const per = {};
      for (const k of Object.keys(commands).sort()) per[k] = commands[k] / calls;
      out[name] = { commands: per, documents: documents / calls };
    }
    return out;
  } finally {
    await client.db(dbName).dropDatabase().catch(() => {});
    await client.close();
  }
}

const { values } = parseArgs({
  options: {
    commands: { type: "boolean", default: false },
    saver: { type: "string" },
    iters: { type: "string", default: "0" },
    depths: { type: "string", default: "10,2000" },
    as: { type: "string" },
  },
});
if (!(values.saver in openers)) {
  console.error("usage: node bench/peers.js --saver memory|sqlite|postgres|mongo [--iters N] [--depths 10,2000]");
  process.exit(2);
}
const iters = Number(values.iters) || defaultIters[values.saver];
const depths = values.depths.split(",").map(Number);
if (depths.some((d) => !Number.isInteger(d) || d < LIST_LIMIT)) {
  console.error(`peers.js: bad --depths ${values.depths}: want integers of at least ${LIST_LIMIT}`);
  process.exit(2);
}
if (values.commands) {
  if (values.saver !== "mongo") {
    console.error("peers.js: --commands is for --saver mongo");
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(await countCommands(depths[0], iters))}\n`);
  process.exit(0);
}
const result = await measure(values.saver, iters, depths);
if (values.as) {
  // Reported under another name, e.g. mongo-pg: the mongo saver on a
  // FerretDB served from PostgreSQL.
  result.saver = values.as;
  result.name = names[values.as] ?? result.name;
}
process.stdout.write(`${JSON.stringify(result)}\n`);
