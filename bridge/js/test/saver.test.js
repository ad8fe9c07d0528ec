// Tests of BridgeSaver and the client, against server.js (LangGraph.js's
// MemorySaver across the bridge) so that they need no Go binary.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

import { BridgeProcess } from "../client.js";
import { BridgeSaver } from "../saver.js";

const SERVER = fileURLToPath(new URL("../server.js", import.meta.url));
const DYING = fileURLToPath(new URL("../testdata/dying-server.js", import.meta.url));

const startServer = () => BridgeProcess.start({ command: process.execPath, args: [SERVER, "--saver", "memory"], name: "lgjs memory server" });

const config = (thread_id, checkpoint_id, checkpoint_ns = "") => ({ configurable: { thread_id, checkpoint_ns, checkpoint_id } });
const checkpoint = (id, channel_values = {}, channel_versions = {}) => ({
  v: 4,
  id,
  ts: "2026-01-01T00:00:00.000Z",
  channel_values,
  channel_versions,
  versions_seen: { node: { a: 1 } },
});

let proc;
let saver;
before(async () => {
  proc = await startServer();
  saver = await BridgeSaver.open(proc);
});
after(async () => {
  await saver.close();
  await proc.close();
  assert.notEqual(proc.child.exitCode ?? proc.child.signalCode, null, "the server process is gone");
});

test("put and getTuple give values and versions back exactly", async () => {
  const values = { n: 3, f: 2.5, s: "s", t: true, z: null, list: [1, [2, { x: "y" }]], obj: { $k: { a: 1 } }, bytes: new Uint8Array([0, 255]) };
  const versions = Object.fromEntries(Object.keys(values).map((k, i) => [k, i + 1]));
  const cp = checkpoint("0001", values, versions);
  const metadata = { source: "input", step: -1, parents: {} };
  const out = await saver.put(config("values"), cp, metadata, versions);
  assert.deepStrictEqual(out, config("values", "0001"));
  await saver.putWrites(out, [["ch", { a: [1] }], ["__error__", "boom"]], "task-1");
  const t = await saver.getTuple({ configurable: { thread_id: "values" } });
  assert.deepStrictEqual(t.checkpoint, cp);
  assert.deepStrictEqual(t.metadata, metadata);
  assert.deepStrictEqual(t.config, config("values", "0001"));
  assert.equal(t.parentConfig, undefined);
  // MemorySaver (since @langchain/langgraph-checkpoint 1.2) returns writes
  // in (task path, task ID, index) order, where __error__'s index is -1.
  assert.deepStrictEqual(t.pendingWrites, [
    ["task-1", "__error__", "boom"],
    ["task-1", "ch", { a: [1] }],
  ]);
  assert.equal(typeof t.checkpoint.channel_versions.n, "number");
});

test("getTuple of a missing checkpoint is undefined", async () => {
  assert.equal(await saver.getTuple(config("missing", "x")), undefined);
});

test("list maps thread, namespace, before, limit and filter", async () => {
  for (const [ns, id, step] of [["", "a1", 1], ["", "a2", 2], ["sub", "a3", 3], ["", "a4", 2]]) {
    await saver.put(config("listed", undefined, ns), checkpoint(id), { step }, {});
  }
  const ids = async (cfg, opts) => {
    const out = [];
    for await (const t of saver.list(cfg, opts)) out.push(t.checkpoint.id);
    return out;
  };
  // MemorySaver lists one namespace after another: compare as sets here.
  assert.deepEqual((await ids({ configurable: { thread_id: "listed" } })).sort(), ["a1", "a2", "a3", "a4"]);
  assert.deepEqual(await ids({ configurable: { thread_id: "listed", checkpoint_ns: "" } }), ["a4", "a2", "a1"]);
  assert.deepEqual(await ids({ configurable: { thread_id: "listed", checkpoint_ns: "sub" } }), ["a3"]);
  assert.deepEqual(await ids({ configurable: { thread_id: "listed" } }, { before: config("x", "a3"), limit: 1 }), ["a2"]);
  assert.deepEqual(await ids({ configurable: { thread_id: "listed", checkpoint_ns: "" } }, { before: config("x", "a4") }), ["a2", "a1"]);
  assert.deepEqual(await ids({ configurable: { thread_id: "listed" } }, { filter: { step: 2 } }), ["a4", "a2"]);
  assert.deepEqual(await ids({ configurable: { thread_id: "listed" } }, { limit: 0 }), []);
  const everywhere = await ids({ configurable: {} });
  assert.ok(everywhere.includes("a1") && everywhere.includes("0001"), "no thread_id lists every thread");
});

test("stopping a list early cancels it and the saver goes on", async () => {
  for (let i = 0; i < 200; i++) await saver.put(config("long"), checkpoint(String(i).padStart(4, "0")), {}, {});
  let seen = 0;
  for await (const _ of saver.list({ configurable: { thread_id: "long" } })) {
    if (++seen === 3) break;
  }
  assert.equal(seen, 3);
  let all = 0;
  for await (const _ of saver.list({ configurable: { thread_id: "long" } })) all++;
  assert.equal(all, 200, "a full listing goes past the first credit window");
  assert.equal((await saver.getTuple(config("long"))).checkpoint.id, "0199");
});

test("an aborted signal cancels a call", async () => {
  const ac = new AbortController();
  ac.abort(new Error("stop now"));
  await assert.rejects(saver.getTuple({ configurable: { thread_id: "values" }, signal: ac.signal }), /stop now/);
});

test("deleteThread removes a thread", async () => {
  await saver.put(config("gone"), checkpoint("g1"), {}, {});
  await saver.deleteThread("gone");
  assert.equal(await saver.getTuple(config("gone")), undefined);
});

test("getNextVersion is LangGraph.js's numeric default", () => {
  assert.equal(saver.getNextVersion(undefined), 1);
  assert.equal(saver.getNextVersion(41), 42);
});

test("values outside the model are refused before they are sent", async () => {
  await assert.rejects(saver.put(config("bad"), checkpoint("b1", { m: new Map() }, { m: 1 }), {}, { m: 1 }), /unsupported|Map/);
});

test("savers opened on one process are isolated", async () => {
  const other = await BridgeSaver.open(proc);
  try {
    assert.equal(await other.getTuple(config("values")), undefined);
  } finally {
    await other.close();
  }
});

test("a server that dies at start is reported with its stderr", async () => {
  await assert.rejects(
    BridgeProcess.start({ command: process.execPath, args: [DYING, "die-at-start"], name: "dying server" }),
    (err) => /dying server \(pid \d+\) exited with status 3/.test(err.message) && /cannot start: no such adapter/.test(err.message),
  );
});

test("a server that dies mid-request fails that request and every later one", async () => {
  const p = await BridgeProcess.start({ command: process.execPath, args: [DYING], name: "dying server" });
  const s = await BridgeSaver.open(p);
  await assert.rejects(s.getTuple(config("t")), (err) => /exited with status 7/.test(err.message) && /panic while serving get_tuple/.test(err.message));
  await assert.rejects(s.put(config("t"), checkpoint("x"), {}, {}), /exited with status 7/);
  await p.close();
});

test("a missing binary is reported", async () => {
  await assert.rejects(BridgeProcess.start({ command: "/nonexistent/checkpointkit-saver", name: "missing" }), /missing: cannot start/);
});
