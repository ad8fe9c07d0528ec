// The shared protocol vectors of bridge/testdata/vectors (see its
// README.md), which the Go and Python implementations check too: every
// value and message must encode to exactly the vector's text and decode to
// exactly the described value.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { DeltaSnapshot } from "@langchain/langgraph-checkpoint";

import {
  checkpointFromWire,
  checkpointToWire,
  configFromWire,
  configToWire,
  decodeMap,
  decodeValue,
  decodeWrites,
  encodeMap,
  encodeValue,
  encodeWrites,
  historiesFromWire,
  historiesToWire,
  idToWire,
  tupleFromWire,
  tupleToWire,
  versionsFromWire,
  versionsToWire,
} from "../codec.js";
import { canonicalJSON, compareCodePoints, messageLine } from "../wire.js";

function load(name) {
  return JSON.parse(readFileSync(new URL(`../../testdata/vectors/${name}`, import.meta.url), "utf8"));
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

// build gives the JavaScript value of a neutral value description: ints
// within ±(2^53−1) as numbers, beyond as BigInts; floats as numbers.
function build(d) {
  switch (d.type) {
    case "null":
      return null;
    case "bool":
      return d.value;
    case "int": {
      const n = BigInt(d.value);
      return n >= -MAX_SAFE && n <= MAX_SAFE ? Number(n) : n;
    }
    case "float":
      return Number(d.value); // "NaN", "Infinity", "-Infinity" and "-0" included
    case "string":
      return d.value;
    case "bytes":
      return new Uint8Array(Buffer.from(d.base64, "base64"));
    case "list":
      return d.items.map(build);
    case "map": {
      const out = {};
      for (const [k, v] of d.entries) Object.defineProperty(out, k, { value: build(v), enumerable: true, writable: true, configurable: true });
      return out;
    }
    case "delta":
      return new DeltaSnapshot(build(d.value));
  }
  throw new Error(`unknown value description ${JSON.stringify(d)}`);
}

// same compares decoded values: numbers by Object.is (NaN equals NaN, -0
// differs from 0), except where an int is described, since JSON.parse
// reads "-0" as -0.
function same(got, want, d) {
  if (d?.type === "int") return typeof want === "bigint" ? got === want : typeof got === "number" && got === want;
  if (typeof want === "number") return Object.is(got, want);
  if (want instanceof Uint8Array) return got instanceof Uint8Array && Buffer.from(got).equals(Buffer.from(want));
  if (want instanceof DeltaSnapshot) return got instanceof DeltaSnapshot && same(got.value, want.value, d?.value);
  if (Array.isArray(want)) {
    return Array.isArray(got) && got.length === want.length && want.every((w, i) => same(got[i], w, d?.items?.[i]));
  }
  if (want !== null && typeof want === "object") {
    if (got === null || typeof got !== "object" || Array.isArray(got)) return false;
    const keys = Object.keys(want);
    if (Object.keys(got).length !== keys.length) return false;
    const descs = new Map(d?.entries ?? []);
    return keys.every((k) => Object.hasOwn(got, k) && same(got[k], want[k], descs.get(k)));
  }
  return got === want;
}

const values = load("values.json");
const invalid = load("invalid.json").invalid;
const messages = load("messages.json").messages;

test("the vectors files are not empty", () => {
  assert.ok(values.encode.length > 40 && values.decode.length > 5 && values.refuse.length > 0);
  assert.ok(invalid.length > 10);
  assert.ok(messages.length > 20);
});

test("values encode to their canonical text", () => {
  for (const v of values.encode) {
    if (v.js === "number") continue; // an integral float: JavaScript cannot build one (decode is checked below)
    assert.equal(canonicalJSON(encodeValue(build(v.value))), v.json, v.name);
  }
});

test("values decode to the described value", () => {
  for (const v of [...values.encode, ...values.decode]) {
    const got = decodeValue(JSON.parse(v.json));
    const want = build(v.value);
    assert.ok(same(got, want, v.value), `${v.name}: decode ${v.json} gave ${String(got)}, want ${String(want)}`);
  }
});

test("values the encoding cannot carry are refused, never approximated", () => {
  for (const v of values.refuse) {
    assert.throws(() => encodeValue(build(v.value)), { code: v.code }, v.name);
  }
});

test("invalid encodings are rejected", () => {
  for (const v of invalid) {
    assert.throws(() => decodeValue(JSON.parse(v.json)), { code: v.code }, v.name);
  }
});

test("keys sort by code point, not by UTF-16 code unit", () => {
  assert.ok(compareCodePoints("\uff21", "\u{1f600}") < 0);
  assert.ok("\uff21" > "\u{1f600}"); // what < alone would say
  assert.ok(compareCodePoints("a", "ab") < 0 && compareCodePoints("b", "a") > 0 && compareCodePoints("x", "x") === 0);
});

// --- messages: built as LangGraph.js objects and sent as saver.js (requests)
// and server.js (answers) send them.

const jsConfig = (w) => ({ configurable: { ...w } });
const buildValues = (o) => Object.fromEntries(Object.entries(o).map(([k, d]) => [k, build(d)]));
const numberVersions = (vs) => versionsFromWire(vs); // LangGraph.js's own form: "1" is the number 1

function jsCheckpoint(d) {
  const cp = {
    v: d.v,
    id: d.id,
    ts: d.ts,
    channel_values: buildValues(d.channel_values),
    channel_versions: numberVersions(d.channel_versions),
    versions_seen: Object.fromEntries(Object.entries(d.versions_seen).map(([n, vs]) => [n, numberVersions(vs)])),
  };
  if (d.updated_channels !== undefined) cp.updated_channels = d.updated_channels;
  return cp;
}

function jsTuple(d) {
  const t = {
    config: jsConfig(d.config),
    checkpoint: jsCheckpoint(d.checkpoint),
    metadata: buildValues(d.metadata),
    pendingWrites: d.pending_writes.map(([task, channel, v]) => [task, channel, build(v)]),
  };
  if (d.parent_config) t.parentConfig = jsConfig(d.parent_config);
  return t;
}

// wireParams gives the params saver.js sends for a method.
function wireParams(method, p) {
  switch (method) {
    case "put":
      return {
        config: configToWire(jsConfig(p.config)),
        checkpoint: checkpointToWire(jsCheckpoint(p.checkpoint)),
        metadata: encodeMap(buildValues(p.metadata), "metadata"),
        new_versions: versionsToWire(numberVersions(p.new_versions), "new_versions"),
      };
    case "put_writes":
      return {
        config: configToWire(jsConfig(p.config)),
        writes: encodeWrites(p.writes.map(([c, v]) => [c, build(v)])),
        task_id: idToWire(p.task_id),
        task_path: idToWire(p.task_path),
      };
    case "get_tuple":
      return { config: configToWire(jsConfig(p.config)) };
    case "list":
      return { ...p, filter: encodeMap(buildValues(p.filter), "filter") };
    default: // params of strings and numbers only
      return p;
  }
}

function encodeMessage(d) {
  if ("method" in d) {
    const msg = { id: d.id, method: d.method, params: wireParams(d.method, d.params) };
    if (d.saver !== undefined) msg.saver = d.saver;
    if (d.timeout_ms !== undefined) msg.timeout_ms = d.timeout_ms;
    return messageLine(msg);
  }
  if ("item" in d) return messageLine({ id: d.id, item: tupleToWire(jsTuple(d.item)) });
  if ("result" in d && d.result?.checkpoint) return messageLine({ id: d.id, result: tupleToWire(jsTuple(d.result)) });
  if ("result" in d && d.result?.histories) return messageLine({ id: d.id, result: historiesToWire(jsHistories(d.result)) });
  return messageLine(d); // plain JSON: hello, open, null results, errors, cancel, credit
}

// decodeParams decodes params as server.js does, to LangGraph.js values.
function decodeParams(method, p) {
  switch (method) {
    case "put":
      return [configFromWire(p.config), checkpointFromWire(p.checkpoint), decodeMap(p.metadata), versionsFromWire(p.new_versions)];
    case "put_writes":
      return [configFromWire(p.config), decodeWrites(p.writes), p.task_id, p.task_path];
    case "list":
      return { ...p, filter: decodeMap(p.filter) };
    default:
      return p;
  }
}

function expectedParams(method, p) {
  switch (method) {
    case "put":
      return [configFromWire(p.config), jsCheckpointRead(p.checkpoint), buildValues(p.metadata), numberVersions(p.new_versions)];
    case "put_writes":
      return [configFromWire(p.config), p.writes.map(([c, v]) => [c, build(v)]), p.task_id, p.task_path];
    case "list":
      return { ...p, filter: buildValues(p.filter) };
    default:
      return p;
  }
}

// jsCheckpointRead is a checkpoint as checkpointFromWire gives it:
// updated_channels only when it is a list.
function jsCheckpointRead(d) {
  const cp = jsCheckpoint(d);
  if (!Array.isArray(cp.updated_channels)) delete cp.updated_channels;
  return cp;
}

// jsHistories is getDeltaChannelHistory's answer for a delta_history result.
function jsHistories(d) {
  const out = {};
  for (const [ch, h] of Object.entries(d.histories)) {
    out[ch] = { writes: h.writes.map(([task, channel, v]) => [task, channel, build(v)]) };
    if ("seed" in h) out[ch].seed = build(h.seed);
  }
  return out;
}

function jsTupleRead(d) {
  const t = jsTuple(d);
  t.config = configFromWire(d.config);
  t.checkpoint = jsCheckpointRead(d.checkpoint);
  if (d.parent_config) t.parentConfig = configFromWire(d.parent_config);
  return t;
}

for (const v of messages) {
  test(`message: ${v.name}`, () => {
    const d = v.message;
    if (v.js === "unsupported_value") {
      const msg = JSON.parse(v.line);
      assert.throws(() => decodeParams(msg.method, msg.params), { code: "unsupported_value" });
      return;
    }
    assert.equal(encodeMessage(d), `${v.line}\n`, "encode");
    const msg = JSON.parse(v.line);
    if ("method" in d) {
      assert.deepStrictEqual({ ...msg, params: undefined }, { ...d, params: undefined });
      assert.deepStrictEqual(decodeParams(d.method, msg.params), expectedParams(d.method, d.params));
    } else if ("item" in d) {
      assert.deepStrictEqual(tupleFromWire(msg.item), jsTupleRead(d.item));
    } else if (d.result?.checkpoint) {
      assert.deepStrictEqual(tupleFromWire(msg.result), jsTupleRead(d.result));
    } else if (d.result?.histories) {
      assert.deepStrictEqual(historiesFromWire(msg.result), jsHistories(d.result));
    } else {
      assert.deepStrictEqual(msg, d);
    }
  });
}
