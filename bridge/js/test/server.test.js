// Tests of server.js over the wire: the protocol behaviour of the server,
// with LangGraph.js's MemorySaver behind it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

import { messageLine, readMessages } from "../wire.js";

const SERVER = fileURLToPath(new URL("../server.js", import.meta.url));

// A raw connection to a server, to see every message it sends.
class Conn {
  constructor(args = ["--saver", "memory"]) {
    this.child = spawn(process.execPath, [SERVER, ...args], { stdio: ["pipe", "pipe", "pipe"] });
    this.messages = [];
    this.waiters = [];
    this.stderr = "";
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    readMessages(this.child.stdout, {
      onMessage: (m) => {
        this.messages.push(m);
        for (const w of [...this.waiters]) w();
      },
      onBadLine: (line) => this.messages.push({ badLine: line }),
    });
    this.nextId = 1;
  }
  send(msg) {
    this.child.stdin.write(messageLine(msg));
  }
  // until waits for a message matching pred and returns it.
  until(pred) {
    return new Promise((resolve) => {
      const check = () => {
        const m = this.messages.find(pred);
        if (!m) return false;
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve(m);
        return true;
      };
      if (!check()) this.waiters.push(check);
    });
  }
  // request sends a request and waits for its final answer.
  async request(method, params = {}, extra = {}) {
    const id = this.nextId++;
    this.send({ id, method, params, ...extra });
    return this.until((m) => m.id === id && ("result" in m || "error" in m));
  }
  itemsOf(id) {
    return this.messages.filter((m) => m.id === id && "item" in m).map((m) => m.item);
  }
  async close() {
    this.child.stdin.end();
    return this.exited;
  }
}

const cfg = (thread_id, checkpoint_id = "", checkpoint_ns = "") => ({ thread_id, checkpoint_ns, checkpoint_id });
const checkpoint = (id, values = {}) => ({
  v: 4,
  id,
  ts: "2026-01-01T00:00:00Z",
  channel_values: values,
  channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, "1"])),
  versions_seen: {},
  updated_channels: null,
});

let c;
let saver;
before(async () => {
  c = new Conn();
  const hello = await c.request("hello", { version: 1 });
  assert.equal(hello.result.protocol, "checkpointkit-bridge");
  assert.equal(hello.result.version, 1);
  assert.match(hello.result.name, /MemorySaver/);
  assert.deepEqual(hello.result.capabilities, ["open", "next_version", "delta_history"]);
  saver = (await c.request("open")).result.saver;
  for (let i = 1; i <= 5; i++) {
    const r = await c.request("put", { config: cfg("t"), checkpoint: checkpoint(`c${i}`), metadata: { step: i }, new_versions: {} }, { saver });
    assert.deepEqual(r.result, { config: cfg("t", `c${i}`) });
  }
});
after(async () => {
  assert.equal(await c.close(), 0, "the server exits with status 0 when its stdin closes");
  assert.deepEqual(c.messages.filter((m) => m.badLine), [], "nothing but messages on stdout");
});

test("values and versions round trip through MemorySaver", async () => {
  const values = { i: 1, f: 0.5, s: "x\ny", n: null, b: { $bytes: "AAE=" }, m: { $map: { $k: [1, { a: true }] } } };
  const cp = { ...checkpoint("v1", values), channel_versions: { i: "1", f: "2", s: "00000000000000000000000000000003.5", n: "1", b: "1", m: "1" } };
  await c.request("put", { config: cfg("values"), checkpoint: cp, metadata: { $x: "y", step: -1 }, new_versions: cp.channel_versions }, { saver });
  await c.request("put_writes", { config: cfg("values", "v1"), writes: [["w", -2.5]], task_id: "task", task_path: "" }, { saver });
  const { result } = await c.request("get_tuple", { config: cfg("values") }, { saver });
  assert.deepEqual(result.config, cfg("values", "v1"));
  assert.deepEqual(result.checkpoint.channel_values, values);
  assert.deepEqual(result.checkpoint.channel_versions, cp.channel_versions);
  assert.deepEqual(result.metadata, { $x: "y", step: -1 });
  assert.deepEqual(result.pending_writes, [["task", "w", -2.5]]);
  assert.equal(result.parent_config, null);
});

test("get_tuple of a missing checkpoint is null", async () => {
  const r = await c.request("get_tuple", { config: cfg("nope", "x") }, { saver });
  assert.equal(r.result, null);
});

test("list streams items newest first and ends with a null result", async () => {
  const id = c.nextId;
  const r = await c.request("list", { thread_id: "t", checkpoint_ns: "", all_namespaces: false, filter: {}, before: "c5", limit: 3, credit: 64 }, { saver });
  assert.equal(r.result, null);
  assert.deepEqual(c.itemsOf(id).map((t) => t.checkpoint.id), ["c4", "c3", "c2"]);
});

test("list sends no more items than its credit, and more as credit comes", async () => {
  const id = c.nextId++;
  c.send({ id, saver, method: "list", params: { thread_id: "t", checkpoint_ns: "", credit: 1 } });
  for (let n = 1; n <= 5; n++) {
    await c.until(() => c.itemsOf(id).length === n);
    c.send({ id, credit: 1 });
  }
  const end = await c.until((m) => m.id === id && ("result" in m || "error" in m));
  assert.deepEqual(end, { id, result: null });
  assert.equal(c.itemsOf(id).length, 5);
});

test("a list waiting for credit is cancelled", async () => {
  const id = c.nextId++;
  c.send({ id, saver, method: "list", params: { thread_id: "t", checkpoint_ns: "", credit: 1 } });
  await c.until(() => c.itemsOf(id).length === 1);
  c.send({ id, cancel: true });
  const end = await c.until((m) => m.id === id && ("result" in m || "error" in m));
  assert.equal(end.error?.code, "canceled");
  assert.equal(c.itemsOf(id).length, 1, "no item beyond the credit");
  // The saver still serves requests afterwards.
  const r = await c.request("get_tuple", { config: cfg("t") }, { saver });
  assert.equal(r.result.checkpoint.id, "c5");
});

test("a write cancelled while it runs is answered with its outcome", async () => {
  // Each put is cancelled right behind its request. Whatever the answer,
  // it must match what is stored: a result means the checkpoint is there,
  // "canceled" that it is not (all or nothing, SPEC.md CTX-5).
  for (let i = 0; i < 20; i++) {
    const id = c.nextId++;
    const thread = `cancel-put-${i}`;
    c.send({ id, saver, method: "put", params: { config: cfg(thread), checkpoint: checkpoint("k"), metadata: {}, new_versions: {} } });
    c.send({ id, cancel: true });
    const end = await c.until((m) => m.id === id && ("result" in m || "error" in m));
    const r = await c.request("get_tuple", { config: cfg(thread) }, { saver });
    if ("result" in end) {
      assert.equal(r.result?.checkpoint.id, "k", `put ${i} answered a result but stored nothing`);
    } else {
      assert.equal(end.error.code, "canceled");
      assert.equal(r.result, null, `put ${i} answered canceled but stored its checkpoint`);
    }
  }
});

test("an expired deadline is deadline_exceeded", async () => {
  const r = await c.request("get_tuple", { config: cfg("t") }, { saver, timeout_ms: 0 });
  assert.equal(r.error?.code, "deadline_exceeded");
});

test("next_version follows LangGraph.js: numbers from 1", async () => {
  assert.deepEqual((await c.request("next_version", { current: "" }, { saver })).result, { version: "1" });
  assert.deepEqual((await c.request("next_version", { current: "41" }, { saver })).result, { version: "42" });
  // LangGraph.js's default refuses string versions; that is reported as it is.
  assert.equal((await c.request("next_version", { current: "0001.5x" }, { saver })).error?.code, "internal");
});

test("malformed requests are bad_request; missing methods unsupported", async () => {
  assert.equal((await c.request("frobnicate", {}, { saver })).error.code, "bad_request");
  assert.equal((await c.request("get_tuple", { config: cfg("t") }, { saver: "s999" })).error.code, "bad_request");
  assert.equal((await c.request("get_tuple", { config: 7 }, { saver })).error.code, "bad_request");
  const badValue = { config: cfg("t"), writes: [["ch", { $wat: 1 }]], task_id: "x" };
  assert.equal((await c.request("put_writes", badValue, { saver })).error.code, "bad_request");
  assert.equal((await c.request("copy_thread", { src: "a", dst: "b" }, { saver })).error.code, "unsupported");
  assert.equal((await c.request("prune", { thread_ids: [], strategy: "keep_latest" }, { saver })).error.code, "unsupported");
});

test("errors thrown by the saver are internal and name the method and thread", async () => {
  const r = await c.request("put", { config: cfg(""), checkpoint: checkpoint("x"), metadata: {}, new_versions: {} }, { saver });
  assert.equal(r.error.code, "internal");
  assert.match(r.error.message, /put \(thread ""\)/);
});

test("savers are isolated and close releases them", async () => {
  const other = (await c.request("open")).result.saver;
  assert.notEqual(other, saver);
  assert.equal((await c.request("get_tuple", { config: cfg("t") }, { saver: other })).result, null);
  assert.equal((await c.request("close", {}, { saver: other })).result, null);
  assert.equal((await c.request("get_tuple", { config: cfg("t") }, { saver: other })).error.code, "bad_request");
});

test("many requests at once are all answered", async () => {
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      c.request("put", { config: cfg(`many${i % 5}`), checkpoint: checkpoint(`m${i}`), metadata: {}, new_versions: {} }, { saver }),
    ),
  );
  assert.ok(answers.every((a) => a.result?.config));
});

test("an unknown saver kind exits with status 2", async () => {
  const bad = new Conn(["--saver", "redis"]);
  assert.equal(await bad.exited, 2);
  assert.match(bad.stderr, /unknown saver "redis"/);
});
