// Delta channels on the bridge: DeltaSnapshot as {"$delta": ...} in codec.js,
// and delta_history from BridgeSaver through server.js to LangGraph.js's
// MemorySaver, compared with asking a MemorySaver holding the same data
// directly.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

import { DeltaSnapshot, MemorySaver } from "@langchain/langgraph-checkpoint";

import { BridgeProcess } from "../client.js";
import { decodeValue, encodeValue, historiesFromWire, historiesToWire } from "../codec.js";
import { BridgeSaver } from "../saver.js";
import { canonicalJSON } from "../wire.js";

const SERVER = fileURLToPath(new URL("../server.js", import.meta.url));

test("a DeltaSnapshot encodes as $delta and decodes back to one", () => {
  const v = { m: new DeltaSnapshot([1, { $k: new Uint8Array([0, 1]) }]), n: [new DeltaSnapshot(null)] };
  const w = encodeValue(v);
  assert.equal(canonicalJSON(w), '{"m":{"$delta":[1,{"$map":{"$k":{"$bytes":"AAE="}}}]},"n":[{"$delta":null}]}');
  const back = decodeValue(w);
  assert.ok(back.m instanceof DeltaSnapshot && back.n[0] instanceof DeltaSnapshot);
  assert.deepStrictEqual(back, v);
});

test("a plain object shaped like a snapshot stays a plain map", () => {
  const look = { lg_name: "DeltaSnapshot", value: [1] };
  const back = decodeValue(encodeValue(look));
  assert.ok(!(back instanceof DeltaSnapshot));
  assert.deepStrictEqual(back, look);
});

test("a malformed $delta payload is bad_request", () => {
  assert.throws(() => decodeValue({ $delta: { $nope: 1 } }), { code: "bad_request" });
});

test("histories keep an absent seed absent and a null seed null", () => {
  const h = { a: { seed: new DeltaSnapshot(["x"]), writes: [["t1", "a", 1]] }, b: { writes: [] }, c: { seed: null, writes: [] } };
  const w = historiesToWire(h);
  assert.equal(canonicalJSON(w), '{"histories":{"a":{"seed":{"$delta":["x"]},"writes":[["t1","a",1]]},"b":{"writes":[]},"c":{"seed":null,"writes":[]}}}');
  assert.deepStrictEqual(historiesFromWire(w), h);
});

const config = (thread_id, checkpoint_id) => ({ configurable: { thread_id, checkpoint_ns: "", ...(checkpoint_id ? { checkpoint_id } : {}) } });

// fill stores four checkpoints on thread t: a snapshot of m at the second,
// and against every checkpoint two tasks' writes to m, stored out of order.
async function fill(saver) {
  let parent = config("t");
  for (let i = 0; i < 4; i++) {
    const values = i === 1 ? { m: new DeltaSnapshot(["s", 1.5]) } : {};
    const versions = i === 1 ? { m: 2 } : {};
    const cp = { v: 4, id: `1f0${i}`, ts: "2026-01-01T00:00:00.000Z", channel_values: values, channel_versions: versions, versions_seen: {} };
    parent = await saver.put(parent, cp, { source: "loop", step: i, parents: {} }, versions);
    for (const task of ["tb", "ta"]) await saver.putWrites(parent, [["m", `${cp.id}-${task}`]], task, `~${task}`);
  }
}

let proc;
let bridged;
before(async () => {
  proc = await BridgeProcess.start({ command: process.execPath, args: [SERVER, "--saver", "memory"], name: "lgjs memory server" });
  bridged = await BridgeSaver.open(proc);
});
after(async () => {
  await bridged.close();
  await proc.close();
});

test("the server advertises delta_history", () => {
  assert.ok(proc.capabilities.has("delta_history"));
});

test("getDeltaChannelHistory through the bridge equals MemorySaver's own", async () => {
  const direct = new MemorySaver();
  await fill(direct);
  await fill(bridged);
  for (const cfg of [config("t"), config("t", "1f03"), config("t", "1f02"), config("t", "1f00"), config("nobody")]) {
    const options = { config: cfg, channels: ["m", "other"] };
    assert.deepStrictEqual(await bridged.getDeltaChannelHistory(options), await direct.getDeltaChannelHistory(options), JSON.stringify(cfg));
  }
  const h = await bridged.getDeltaChannelHistory({ config: config("t"), channels: ["m"] });
  assert.ok(h.m.seed instanceof DeltaSnapshot);
  assert.deepStrictEqual(h.m.seed.value, ["s", 1.5]);
  assert.deepStrictEqual(
    h.m.writes.map(([task, , v]) => [task, v]),
    [["ta", "1f01-ta"], ["tb", "1f01-tb"], ["ta", "1f02-ta"], ["tb", "1f02-tb"]],
  );
  assert.deepStrictEqual(await bridged.getDeltaChannelHistory({ config: config("t"), channels: [] }), {});
});
