#!/usr/bin/env node
// server.js: serves one of LangGraph.js's checkpoint savers over the
// checkpointkit bridge protocol (bridge/PROTOCOL.md) on stdin/stdout, so
// that checkpointkit's conformance suite can judge it.
//
//   node bridge/js/server.js --saver memory|sqlite|postgres|mongo
//
// Every `open` gives a saver over fresh, isolated storage: a new MemorySaver;
// a SqliteSaver on a new temporary file; a PostgresSaver on a new schema of
// CHECKPOINTKIT_POSTGRES_DSN; a MongoDBSaver on a new database of
// CHECKPOINTKIT_MONGO_URI. `close` (and the end of the session) removes that
// storage again.
//
// The server only translates: what the saver stores, returns or throws is
// reported as it is. It adds no locking of its own: requests reach the saver
// concurrently. Errors map to codes by their type, never by message text:
//
//   BridgeError (the bridge's own checks)   its code
//   a network or connection error           unavailable (see codec.js unavailable())
//   a value the encoding cannot carry       unsupported_value
//   anything else a saver throws            internal (LangGraph.js's savers
//                                           throw plain Errors, with no type to tell
//                                           bad input from a failure)
//
// Logs go to stderr only.

import { mkdtempSync, rmSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

import {
  BridgeError,
  Codes,
  checkpointFromWire,
  configToWire,
  decodeMap,
  decodeWrites,
  historiesToWire,
  tupleToWire,
  unavailable,
  versionFromWire,
  versionToWire,
  versionsFromWire,
} from "./codec.js";
import { messageLine, readMessages } from "./wire.js";

// Nothing but protocol messages may reach stdout.
for (const k of ["log", "info", "debug", "dir", "table"]) console[k] = console.error.bind(console);

const PROTOCOL = "checkpointkit-bridge";
const VERSION = 1;

function log(...args) {
  console.error("lgjs-server:", ...args);
}

function packageVersion(pkg) {
  try {
    const url = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
    return JSON.parse(readFileSync(url, "utf8")).version;
  } catch {
    return "?";
  }
}

function requireEnv(name) {
  const v = process.env[name];
  if (!v) throw new BridgeError(Codes.UNSUPPORTED, `${name} is not set: this saver needs a server`);
  return v;
}

let storageSeq = 0;
function storageName() {
  storageSeq += 1;
  return `lgjs_${process.pid}_${Date.now().toString(36)}_${storageSeq}`;
}

// Each kind opens savers over fresh storage; shared clients (a pg pool, a
// MongoClient) are created on first use and ended by shutdown().
const kinds = {
  memory: {
    name: "MemorySaver",
    pkg: "@langchain/langgraph-checkpoint",
    async open() {
      const { MemorySaver } = await import("@langchain/langgraph-checkpoint");
      return { saver: new MemorySaver(), async close() {} };
    },
  },
  sqlite: {
    name: "SqliteSaver",
    pkg: "@langchain/langgraph-checkpoint-sqlite",
    async open() {
      const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
      const dir = mkdtempSync(join(tmpdir(), "lgjs-sqlite-"));
      const saver = SqliteSaver.fromConnString(join(dir, "checkpoints.db"));
      return {
        saver,
        async close() {
          try {
            saver.db.close();
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        },
      };
    },
  },
  postgres: {
    name: "PostgresSaver",
    pkg: "@langchain/langgraph-checkpoint-postgres",
    pool: null,
    async open() {
      const dsn = requireEnv("CHECKPOINTKIT_POSTGRES_DSN");
      const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
      if (!this.pool) {
        const { default: pg } = await import("pg");
        this.pool = new pg.Pool({ connectionString: dsn });
        this.pool.on("error", (err) => log("postgres pool:", err.message));
      }
      const pool = this.pool;
      const schema = storageName();
      const saver = new PostgresSaver(pool, undefined, { schema });
      await saver.setup();
      return {
        saver,
        async close() {
          await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        },
      };
    },
    async shutdown() {
      await this.pool?.end();
    },
  },
  mongo: {
    name: "MongoDBSaver",
    pkg: "@langchain/langgraph-checkpoint-mongodb",
    client: null,
    async open() {
      const uri = requireEnv("CHECKPOINTKIT_MONGO_URI");
      const { MongoDBSaver } = await import("@langchain/langgraph-checkpoint-mongodb");
      if (!this.client) {
        const { MongoClient } = await import("mongodb");
        this.client = new MongoClient(uri);
        await this.client.connect();
      }
      const client = this.client;
      const dbName = storageName();
      const saver = new MongoDBSaver({ client, dbName });
      for (const err of await saver.setup()) log(`mongo setup of ${dbName}:`, err?.message ?? err);
      return {
        saver,
        async close() {
          await client.db(dbName).dropDatabase();
        },
      };
    },
    async shutdown() {
      await this.client?.close();
    },
  },
};

// --- session state ---------------------------------------------------------

const savers = new Map(); // saver id -> {saver, close}
const inflight = new Map(); // request id -> {ac, credit, wake}
let saverSeq = 0;
let kind;
let shuttingDown = false;

function send(msg) {
  process.stdout.write(messageLine(msg));
}

function sendError(id, err) {
  const code = err instanceof BridgeError ? err.code : Codes.INTERNAL;
  send({ id, error: { code, message: String(err?.message ?? err) } });
}

// A write (put, put_writes, delete_thread) is awaited to its end, also when
// its request is cancelled or passes its deadline meanwhile: LangGraph.js's
// savers take no AbortSignal, so once the saver call has begun only its
// outcome says whether the write landed, and that outcome is the answer
// (PROTOCOL.md, "Deadlines and cancellation"; SPEC.md CTX-5). A request
// that is already aborted when it starts never reaches the saver.

// abortable settles like p, or rejects with signal.reason once the signal
// aborts: for reads, which change nothing. The saver call behind p may go
// on; its outcome is then ignored.
function abortable(p, signal) {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    Promise.resolve(p).then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

function wantObject(v, what) {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new BridgeError(Codes.BAD_REQUEST, `${what}: want an object`);
  }
  return v;
}

function wantString(v, what) {
  if (typeof v !== "string") throw new BridgeError(Codes.BAD_REQUEST, `${what}: want a string`);
  return v;
}

// encodeTuple encodes a tuple returned by the saver. A value the encoding
// cannot carry (a Map, a Date, a class instance) is unsupported_value naming
// its type, never converted lossily; any other failure is internal.
function encodeTuple(t, method) {
  try {
    return tupleToWire(t);
  } catch (err) {
    const code = err instanceof BridgeError && err.code === Codes.UNSUPPORTED_VALUE ? err.code : Codes.INTERNAL;
    throw new BridgeError(code, `${kind.name}.${method} returned a tuple the bridge cannot encode: ${err.message}`);
  }
}

// jsConfig turns a wire config into the RunnableConfig LangGraph.js savers
// take: an empty checkpoint_id is left out ("latest", or "no parent").
function jsConfig(w) {
  wantObject(w, "config");
  const configurable = {
    thread_id: wantString(w.thread_id ?? "", "config.thread_id"),
    checkpoint_ns: wantString(w.checkpoint_ns ?? "", "config.checkpoint_ns"),
  };
  const id = wantString(w.checkpoint_id ?? "", "config.checkpoint_id");
  if (id !== "") configurable.checkpoint_id = id;
  return { configurable };
}

function saverFor(msg) {
  const entry = savers.get(msg.saver);
  if (!entry) throw new BridgeError(Codes.BAD_REQUEST, `unknown saver ${JSON.stringify(msg.saver)}`);
  return entry.saver;
}

// --- methods ---------------------------------------------------------------

const methods = {
  async hello(params) {
    if (params.version !== VERSION) log(`client speaks protocol version ${params.version}; this server speaks ${VERSION}`);
    return {
      protocol: PROTOCOL,
      version: VERSION,
      name: `LangGraph.js ${kind.name} (${kind.pkg}@${packageVersion(kind.pkg)})`,
      // delta_history always: BaseCheckpointSaver.getDeltaChannelHistory
      // gives every saver the method (PROTOCOL.md, "delta_history").
      capabilities: ["open", "next_version", "delta_history"],
    };
  },

  async open(_params, _msg, signal) {
    const opened = await abortable(kind.open(), signal);
    saverSeq += 1;
    const id = `s${saverSeq}`;
    savers.set(id, opened);
    return { saver: id };
  },

  async close(_params, msg) {
    const entry = savers.get(msg.saver);
    if (!entry) throw new BridgeError(Codes.BAD_REQUEST, `unknown saver ${JSON.stringify(msg.saver)}`);
    savers.delete(msg.saver);
    await entry.close();
    return null;
  },

  async put(params, msg) {
    const saver = saverFor(msg);
    const config = jsConfig(params.config);
    const checkpoint = checkpointFromWire(wantObject(params.checkpoint, "checkpoint"));
    const metadata = decodeMap(params.metadata, "metadata");
    const newVersions = versionsFromWire(params.new_versions, "new_versions");
    const out = await saver.put(config, checkpoint, metadata, newVersions);
    return { config: configToWire(out) };
  },

  async put_writes(params, msg) {
    const saver = saverFor(msg);
    const config = jsConfig(params.config);
    const writes = decodeWrites(params.writes);
    const taskId = wantString(params.task_id ?? "", "task_id");
    // putWrites takes the task path since @langchain/langgraph-checkpoint
    // 1.2 (savers that predate it ignore it).
    const taskPath = wantString(params.task_path ?? "", "task_path");
    await saver.putWrites(config, writes, taskId, taskPath);
    return null;
  },

  async get_tuple(params, msg, signal) {
    const saver = saverFor(msg);
    const t = await abortable(saver.getTuple(jsConfig(params.config)), signal);
    return t ? encodeTuple(t, "getTuple") : null;
  },

  async list(params, msg, signal, entry) {
    const saver = saverFor(msg);
    const configurable = {};
    const threadId = wantString(params.thread_id ?? "", "thread_id");
    if (threadId !== "") configurable.thread_id = threadId;
    if (!params.all_namespaces) configurable.checkpoint_ns = wantString(params.checkpoint_ns ?? "", "checkpoint_ns");
    const checkpointId = wantString(params.checkpoint_id ?? "", "checkpoint_id");
    if (checkpointId !== "") configurable.checkpoint_id = checkpointId;
    const options = {};
    const filter = decodeMap(params.filter, "filter");
    if (Object.keys(filter).length > 0) options.filter = filter;
    const before = wantString(params.before ?? "", "before");
    if (before !== "") options.before = { configurable: { checkpoint_id: before } };
    const limit = params.limit ?? 0;
    if (!Number.isInteger(limit)) throw new BridgeError(Codes.BAD_REQUEST, "limit: want an integer");
    if (limit !== 0) options.limit = limit;
    entry.credit = Number.isInteger(params.credit) && params.credit >= 0 ? params.credit : Infinity;

    const it = saver.list({ configurable }, options);
    try {
      for (;;) {
        const r = await abortable(it.next(), signal);
        if (r.done) return null;
        const item = encodeTuple(r.value, "list");
        while (entry.credit <= 0) {
          await abortable(new Promise((resolve) => (entry.wake = resolve)), signal);
        }
        entry.credit -= 1;
        send({ id: msg.id, item });
      }
    } finally {
      // Stop the saver's generator (queued behind a pending next(), if any).
      Promise.resolve(it.return?.()).catch((err) => log(`list ${msg.id}: closing the iterator:`, err?.message ?? err));
    }
  },

  async delete_thread(params, msg) {
    const saver = saverFor(msg);
    await saver.deleteThread(wantString(params.thread_id ?? "", "thread_id"));
    return null;
  },

  async delta_history(params, msg, signal) {
    const saver = saverFor(msg);
    const config = jsConfig(params.config);
    if (!Array.isArray(params.channels) || params.channels.some((ch) => typeof ch !== "string")) {
      throw new BridgeError(Codes.BAD_REQUEST, "channels: want a list of strings");
    }
    const histories = await abortable(saver.getDeltaChannelHistory({ config, channels: params.channels }), signal);
    try {
      return historiesToWire(histories);
    } catch (err) {
      if (err instanceof BridgeError && err.code === Codes.UNSUPPORTED_VALUE) {
        throw new BridgeError(Codes.UNSUPPORTED_VALUE, `getDeltaChannelHistory answered with a value the bridge cannot carry: ${err.message}`);
      }
      throw err;
    }
  },

  async next_version(params, msg) {
    const saver = saverFor(msg);
    const current = wantString(params.current ?? "", "current");
    const next = saver.getNextVersion(current === "" ? undefined : versionFromWire(current, "current"));
    return { version: versionToWire(next, "next version") };
  },
};

// Optional methods no LangGraph.js saver has.
for (const m of ["copy_thread", "delete_for_runs", "prune"]) {
  methods[m] = async () => {
    throw new BridgeError(Codes.UNSUPPORTED, `${m}: LangGraph.js's ${kind.name} has no such method`);
  };
}

// --- dispatch --------------------------------------------------------------

function threadOf(params) {
  return params?.config?.thread_id ?? params?.thread_id ?? params?.src;
}

async function handle(msg) {
  const { id } = msg;
  const method = methods[msg.method];
  if (!method || !Object.hasOwn(methods, msg.method)) {
    sendError(id, new BridgeError(Codes.BAD_REQUEST, `unknown method ${JSON.stringify(msg.method)}`));
    return;
  }
  const ac = new AbortController();
  const entry = { ac, credit: Infinity, wake: null };
  inflight.set(id, entry);
  let timer;
  if (typeof msg.timeout_ms === "number") {
    const expire = () =>
      ac.abort(new BridgeError(Codes.DEADLINE_EXCEEDED, `${msg.method}: deadline exceeded (timeout_ms ${msg.timeout_ms})`));
    if (msg.timeout_ms <= 0) expire();
    else timer = setTimeout(expire, msg.timeout_ms);
  }
  try {
    if (ac.signal.aborted) throw ac.signal.reason;
    const params = msg.params === undefined ? {} : wantObject(msg.params, "params");
    // A method that returns has done its work: its result is the answer,
    // even when the request was cancelled meanwhile; so is a saver's error.
    const result = await method(params, msg, ac.signal, entry);
    send({ id, result });
  } catch (err) {
    if (ac.signal.aborted && err === ac.signal.reason) {
      // A read stopped, or a request aborted before it began: nothing changed.
      sendError(id, err);
    } else if (err instanceof BridgeError) {
      sendError(id, err);
    } else {
      const thread = threadOf(msg.params);
      const where = thread === undefined ? msg.method : `${msg.method} (thread ${JSON.stringify(thread)})`;
      const code = unavailable(err) ? Codes.UNAVAILABLE : Codes.INTERNAL;
      sendError(id, new BridgeError(code, `${kind.name}.${where}: ${err?.message ?? err}`));
    }
  } finally {
    clearTimeout(timer);
    inflight.delete(id);
  }
}

function onMessage(msg) {
  const { id } = msg;
  if (!Number.isInteger(id) || id <= 0) {
    log("ignoring a message without a positive integer id:", JSON.stringify(msg).slice(0, 200));
    return;
  }
  if (msg.cancel === true) {
    inflight.get(id)?.ac.abort(new BridgeError(Codes.CANCELED, `request ${id} canceled`));
    return;
  }
  if (msg.credit !== undefined && msg.method === undefined) {
    const entry = inflight.get(id);
    if (entry && Number.isInteger(msg.credit) && msg.credit > 0) {
      entry.credit += msg.credit;
      entry.wake?.();
      entry.wake = null;
    }
    return;
  }
  if (typeof msg.method !== "string") {
    sendError(id, new BridgeError(Codes.BAD_REQUEST, "message has no method"));
    return;
  }
  if (inflight.has(id)) {
    sendError(id, new BridgeError(Codes.BAD_REQUEST, `request id ${id} is already open`));
    return;
  }
  if (shuttingDown) {
    sendError(id, new BridgeError(Codes.CANCELED, "the server is shutting down"));
    return;
  }
  handle(msg);
}

async function shutdown(status) {
  if (shuttingDown) return;
  shuttingDown = true;
  for (const entry of inflight.values()) entry.ac.abort(new BridgeError(Codes.CANCELED, "session ended"));
  const open = [...savers.entries()];
  savers.clear();
  const results = await Promise.allSettled(open.map(([, e]) => e.close()));
  results.forEach((r, i) => {
    if (r.status === "rejected") log(`closing saver ${open[i][0]}:`, r.reason?.message ?? r.reason);
  });
  try {
    await kind.shutdown?.();
  } catch (err) {
    log("shutdown:", err?.message ?? err);
  }
  process.exit(status);
}

function main() {
  let values;
  try {
    ({ values } = parseArgs({ options: { saver: { type: "string", default: "memory" } } }));
  } catch (err) {
    console.error(`usage: node server.js --saver memory|sqlite|postgres|mongo\n${err.message}`);
    process.exit(2);
  }
  kind = Object.hasOwn(kinds, values.saver) ? kinds[values.saver] : undefined;
  if (!kind) {
    console.error(`server.js: unknown saver ${JSON.stringify(values.saver)} (want memory, sqlite, postgres or mongo)`);
    process.exit(2);
  }
  process.stdout.on("error", (err) => {
    log("stdout:", err.message);
    shutdown(1);
  });
  process.on("SIGTERM", () => shutdown(0));
  process.on("SIGINT", () => shutdown(0));
  readMessages(process.stdin, {
    onMessage,
    onBadLine: (line, err) => log(`ignoring a line that is not a JSON object (${err.message}): ${line.slice(0, 200)}`),
    onEnd: () => shutdown(0),
  });
}

main();

