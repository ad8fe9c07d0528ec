import { test } from "node:test";
import assert from "node:assert/strict";

import {
  BridgeError,
  Codes,
  checkpointFromWire,
  checkpointToWire,
  configToWire,
  decodeValue,
  encodeMap,
  encodeValue,
  tupleFromWire,
  tupleToWire,
  unavailable,
  versionFromWire,
  versionToWire,
  versionsFromWire,
} from "../codec.js";

// wire gives what a value looks like on the wire, as JSON text.
const wire = (v) => JSON.stringify(encodeValue(v));

test("integers travel as JSON integers, other numbers as floats", () => {
  assert.equal(wire(0), "0");
  assert.equal(wire(-7), "-7");
  assert.equal(wire(Number.MAX_SAFE_INTEGER), "9007199254740991");
  assert.equal(wire(0.5), "0.5");
  assert.equal(wire(1e-7), "1e-7");
  assert.equal(wire(1e300), '{"$float":"1e+300"}');
  assert.equal(wire(2 ** 53), '{"$float":"9007199254740992"}');
  assert.equal(wire(-0), '{"$float":"-0"}');
  assert.equal(wire(NaN), '{"$float":"NaN"}');
  assert.equal(wire(Infinity), '{"$float":"Infinity"}');
  assert.equal(wire(-Infinity), '{"$float":"-Infinity"}');
});

test("BigInts travel as integers and must fit in int64", () => {
  assert.equal(wire(5n), "5");
  assert.equal(wire(2n ** 63n - 1n), '{"$int":"9223372036854775807"}');
  assert.equal(wire(-(2n ** 63n)), '{"$int":"-9223372036854775808"}');
  assert.throws(() => encodeValue(2n ** 63n), (e) => e instanceof BridgeError && e.code === Codes.UNSUPPORTED_VALUE);
});

test("bytes, maps with one $ key, and undefined", () => {
  assert.equal(wire(new Uint8Array([0, 1, 255])), '{"$bytes":"AAH/"}');
  assert.equal(wire(Buffer.from("hi")), '{"$bytes":"aGk="}');
  assert.equal(wire(new Uint8Array(0)), '{"$bytes":""}');
  assert.equal(wire({ $int: "1" }), '{"$map":{"$int":"1"}}');
  assert.equal(wire({ $a: 1, b: 2 }), '{"$a":1,"b":2}');
  assert.equal(wire({ a: { $b: [] } }), '{"a":{"$map":{"$b":[]}}}');
  assert.equal(wire({ a: undefined, $b: 1 }), '{"$map":{"$b":1}}');
  assert.equal(wire([undefined, 1]), "[null,1]");
  assert.equal(wire(undefined), "null");
});

test("values outside the model are refused with their path", () => {
  for (const v of [new Map(), new Set(), new Date(0), () => 1, Symbol("s"), new (class X {})(), new Uint16Array(1)]) {
    assert.throws(
      () => encodeValue({ a: [v] }),
      (e) => e instanceof BridgeError && e.code === Codes.UNSUPPORTED_VALUE && e.message.includes('$["a"][0]'),
      String(v?.constructor?.name ?? typeof v),
    );
  }
});

test("decoding reverses encoding", () => {
  const values = [
    null,
    true,
    false,
    "",
    "ünïcode\u0000nul\n",
    0,
    -12,
    3.25,
    -0,
    NaN,
    Infinity,
    -Infinity,
    1e300,
    5e-324,
    Number.MAX_SAFE_INTEGER,
    2n ** 63n - 1n,
    -(2n ** 63n),
    new Uint8Array([1, 2, 3]),
    [],
    {},
    [[[]], { x: [1, 2.5, "s"] }],
    { $int: "x", $float: 1 },
    { $int: "not a tag" },
    { $map: { $map: 1 } },
    { "a.b": { "": null } },
  ];
  for (const v of values) {
    const back = decodeValue(JSON.parse(JSON.stringify(encodeValue(v))));
    assert.deepStrictEqual(back, v, `round trip of ${wire(v)}`);
  }
});

test("an own __proto__ key survives both ways", () => {
  const v = JSON.parse('{"__proto__": 1, "a": 2}');
  const back = decodeValue(JSON.parse(JSON.stringify(encodeValue(v))));
  assert.deepEqual(Object.keys(back), ["__proto__", "a"]);
  assert.equal(Object.getPrototypeOf(back), Object.prototype);
});

test("decoding tagged values", () => {
  assert.equal(decodeValue({ $int: "42" }), 42);
  assert.equal(decodeValue({ $int: "9007199254740993" }), 9007199254740993n);
  assert.equal(decodeValue({ $float: "2" }), 2);
  assert.ok(Object.is(decodeValue({ $float: "-0" }), -0));
  assert.equal(decodeValue(1.0), 1);
  assert.deepEqual(decodeValue({ $bytes: "AAH/" }), new Uint8Array([0, 1, 255]));
  assert.ok(decodeValue({ $bytes: "" }) instanceof Uint8Array);
  assert.ok(!Buffer.isBuffer(decodeValue({ $bytes: "AA==" })), "a plain Uint8Array, not a Buffer");
});

test("strings that are not valid UTF-8 are refused, not mangled", () => {
  const lone = "a\ud800b";
  assert.throws(() => encodeValue({ s: lone }), (e) => e.code === Codes.UNSUPPORTED_VALUE && e.message.includes('$["s"]'));
  assert.throws(() => encodeValue({ [lone]: 1 }), (e) => e.code === Codes.UNSUPPORTED_VALUE);
  assert.throws(() => encodeMap({ [lone]: 1 }), (e) => e.code === Codes.UNSUPPORTED_VALUE);
  assert.throws(() => configToWire({ configurable: { thread_id: lone } }), (e) => e.code === Codes.INVALID_CONFIG);
  assert.equal(wire("ok \ud83d\ude00"), JSON.stringify("ok \ud83d\ude00"), "a surrogate pair is fine");
});

test("malformed tags are bad requests", () => {
  const bad = [
    { $nope: 1 },
    { $int: 1 },
    { $int: "1.5" },
    { $int: "9223372036854775808" },
    { $float: "abc" },
    { $float: 2 },
    { $bytes: "not base64!" },
    { $bytes: "AAH" },
    { $map: [1] },
    { $map: null },
    [{ ok: { $what: 0 } }],
  ];
  for (const w of bad) {
    assert.throws(() => decodeValue(w), (e) => e instanceof BridgeError && e.code === Codes.BAD_REQUEST, JSON.stringify(w));
  }
});

test("versions: numbers as decimal strings, and back", () => {
  assert.equal(versionToWire(3), "3");
  assert.equal(versionToWire(2.5), "2.5");
  assert.equal(versionToWire("00000000000000000000000000000003.0.36"), "00000000000000000000000000000003.0.36");
  assert.throws(() => versionToWire(NaN), BridgeError);
  assert.throws(() => versionToWire(null), BridgeError);
  assert.equal(versionFromWire("3"), 3);
  assert.equal(versionFromWire("2.5"), 2.5);
  assert.equal(versionFromWire("-1"), -1);
  // Strings that are not exactly a number's decimal form stay strings, so
  // versionToWire(versionFromWire(s)) === s for every s.
  for (const s of ["", "03", "3.0", "1e3", "+1", " 1", "00000000000000000000000000000003.0.36", "abc", "99999999999999999999"]) {
    assert.equal(typeof versionFromWire(s), "string", s);
    assert.equal(versionToWire(versionFromWire(s)), s);
  }
  assert.deepEqual(versionsFromWire({ a: "1", b: "x" }), { a: 1, b: "x" });
  assert.deepEqual(versionsFromWire(null), {});
  assert.throws(() => versionFromWire(1), (e) => e.code === Codes.BAD_REQUEST);
});

test("configs: missing fields are empty strings", () => {
  assert.deepEqual(configToWire({}), { thread_id: "", checkpoint_ns: "", checkpoint_id: "" });
  assert.deepEqual(configToWire({ configurable: { thread_id: "t", checkpoint_ns: "n", checkpoint_id: "c", extra: 1 } }), {
    thread_id: "t",
    checkpoint_ns: "n",
    checkpoint_id: "c",
  });
  assert.deepEqual(configToWire({ configurable: { thread_id: 7, thread_ts: "old" } }), {
    thread_id: "7",
    checkpoint_ns: "",
    checkpoint_id: "old",
  });
});

test("members a saver left out stay out on the wire and read back as empty", () => {
  const w = checkpointToWire({ v: 4, id: "1", ts: "x" });
  assert.deepStrictEqual(w, { v: 4, id: "1", ts: "x" });
  assert.equal(checkpointToWire({ v: 4, id: "1", ts: "x", updated_channels: null }).updated_channels, null);
  const back = checkpointFromWire(w);
  assert.deepStrictEqual(back, { v: 4, id: "1", ts: "x", channel_values: {}, channel_versions: {}, versions_seen: {} });
  assert.throws(() => checkpointFromWire({ ...w, ts: { $bytes: "/w==" } }), { code: "unsupported_value" });
});

test("checkpoints and tuples round trip, updated_channels only when known", () => {
  const cp = {
    v: 4,
    id: "1ef",
    ts: "2026-01-01T00:00:00.000Z",
    channel_values: { a: [1, 2.5], b: new Uint8Array([9]), c: null },
    channel_versions: { a: 1, b: 2, c: "00000000000000000000000000000003.123" },
    versions_seen: { "": { someChannel: 1 }, node: { a: 1 } },
  };
  const w = JSON.parse(JSON.stringify(checkpointToWire(cp)));
  assert.ok(!("updated_channels" in w), "LangGraph.js has no updated_channels: it is not invented");
  assert.deepEqual(w.channel_versions, { a: "1", b: "2", c: "00000000000000000000000000000003.123" });
  const back = checkpointFromWire(w);
  assert.deepStrictEqual(back, cp);
  assert.ok(!("updated_channels" in back));
  const withUpdated = checkpointFromWire(checkpointToWire({ ...cp, updated_channels: ["a"] }));
  assert.deepEqual(withUpdated.updated_channels, ["a"]);

  const tuple = {
    config: { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: "1ef" } },
    checkpoint: cp,
    metadata: { source: "loop", step: 0, parents: { "": "1ee" } },
    parentConfig: { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: "1ee" } },
    pendingWrites: [["task", "a", { $x: 1 }]],
  };
  assert.deepStrictEqual(tupleFromWire(JSON.parse(JSON.stringify(tupleToWire(tuple)))), tuple);
  const orphan = tupleFromWire(tupleToWire({ ...tuple, parentConfig: undefined }));
  assert.ok(!("parentConfig" in orphan), "no parent: parentConfig left out");
});

test("encodeMap leaves top-level keys untagged and drops undefined", () => {
  assert.deepEqual(encodeMap({ $only: 1 }), { $only: 1 });
  assert.deepEqual(encodeMap({ a: undefined, b: 1 }), { b: 1 });
  assert.deepEqual(encodeMap(undefined), {});
  assert.throws(() => encodeMap([1]), BridgeError);
});

test("unavailable recognises lost connections and nothing else", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
  assert.equal(unavailable(refused), true);
  assert.equal(unavailable(Object.assign(new Error("server closed"), { name: "MongoNetworkError" })), true);
  assert.equal(unavailable(Object.assign(new Error("admin shutdown"), { code: "57P01" })), true);
  assert.equal(unavailable(Object.assign(new Error("connection failure"), { code: "08006" })), true);
  assert.equal(unavailable(new Error("put failed", { cause: refused })), true);
  assert.equal(unavailable(Object.assign(new Error("duplicate key"), { code: "23505" })), false);
  assert.equal(unavailable(new Error("disk full")), false);
  assert.equal(unavailable(undefined), false);
  assert.equal(Codes.UNAVAILABLE, "unavailable");
});
