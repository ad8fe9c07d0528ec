// codec.js: the value, version and shape encodings of the checkpointkit
// bridge protocol (bridge/PROTOCOL.md), shared by server.js and saver.js.
//
// JavaScript has one number type, so: a number that is an integer within
// ±(2^53−1) travels as a JSON integer, any other finite number as a float
// (a JSON number with a fraction or exponent, or {"$float": "..."} when it is
// integral, -0, NaN or infinite); a BigInt travels as an integer. Decoding
// gives numbers, and BigInts for integers beyond 2^53−1. A delta channel's
// snapshot (LangGraph.js's DeltaSnapshot) travels as {"$delta": value}.

import { DeltaSnapshot } from "@langchain/langgraph-checkpoint";

/** Error codes of the protocol. */
export const Codes = Object.freeze({
  NOT_FOUND: "not_found",
  INVALID_CONFIG: "invalid_config",
  INVALID_ARGUMENT: "invalid_argument",
  UNSUPPORTED_VALUE: "unsupported_value",
  CANCELED: "canceled",
  DEADLINE_EXCEEDED: "deadline_exceeded",
  UNAVAILABLE: "unavailable",
  UNSUPPORTED: "unsupported",
  BAD_REQUEST: "bad_request",
  INTERNAL: "internal",
});

/** An error with a protocol error code. */
export class BridgeError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = "BridgeError";
    this.code = code;
  }
}

// Node's error codes for a peer that cannot be reached or went away.
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
// The MongoDB driver's error classes for the same.
const NETWORK_NAMES = new Set(["MongoNetworkError", "MongoNetworkTimeoutError", "MongoServerSelectionError", "MongoTopologyClosedError"]);

// unavailable reports whether a saver's error means its backend could not
// be reached or the connection was lost (protocol code `unavailable`): a
// network error of Node, the MongoDB driver's network and server
// selection errors, PostgreSQL's connection exceptions (SQLSTATE class 08)
// and shutdown codes (57P01-57P03), or such an error as a cause.
export function unavailable(err) {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 8; e = e.cause, depth++) {
    if (NETWORK_CODES.has(e.code) || NETWORK_NAMES.has(e.name)) return true;
    if (typeof e.code === "string" && /^(08[0-9A-Z]{3}|57P0[123])$/.test(e.code)) return true;
    if (e.message === "Connection terminated unexpectedly") return true; // node-postgres
  }
  return false;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT_RE = /^-?\d+$/;
const FLOAT_RE = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

function unsupported(path, why) {
  return new BridgeError(Codes.UNSUPPORTED_VALUE, `value at ${path}: ${why}`);
}

function badRequest(path, why) {
  return new BridgeError(Codes.BAD_REQUEST, `value at ${path}: ${why}`);
}

function isPlainObject(v) {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// setKey sets obj[k] as an own data property, also for "__proto__".
function setKey(obj, k, v) {
  if (k === "__proto__") {
    Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
  } else {
    obj[k] = v;
  }
}

function typeName(v) {
  if (v === null) return "null";
  if (typeof v !== "object") return typeof v;
  return v.constructor?.name ?? "object";
}

// describe names v's type for an error message, quoting the start of a string.
function describe(v) {
  return typeof v === "string" ? `string ${JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}...` : v)}` : typeName(v);
}

/**
 * encodeValue turns a JavaScript value into its wire form. Plain objects,
 * arrays, strings, booleans, null, numbers, BigInts (within int64) and
 * Uint8Arrays are encoded, and a DeltaSnapshot as {"$delta": value}; undefined becomes null at the top level and in
 * arrays and is left out of objects, as in JSON. Anything else (Map, Set,
 * Date, class instances, functions, symbols) throws a BridgeError with code
 * unsupported_value naming the path.
 */
export function encodeValue(v, path = "$") {
  switch (typeof v) {
    case "undefined":
      return null;
    case "boolean":
      return v;
    case "string":
      if (!v.isWellFormed()) throw unsupported(path, "string holds a lone surrogate (not valid UTF-8)");
      return v;
    case "number":
      return encodeNumber(v);
    case "bigint":
      if (v < INT64_MIN || v > INT64_MAX) throw unsupported(path, `integer ${v} overflows int64`);
      if (v >= -BigInt(MAX_SAFE) && v <= BigInt(MAX_SAFE)) return Number(v);
      return { $int: v.toString() };
    case "object":
      break;
    default:
      throw unsupported(path, `type ${typeof v}`);
  }
  if (v === null) return null;
  if (v instanceof Uint8Array) {
    return { $bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") };
  }
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = encodeValue(v[i], `${path}[${i}]`);
    return out;
  }
  // The class itself, not its lg_name marker: a plain object that looks
  // like one is a map and must come back as a map.
  if (v instanceof DeltaSnapshot) return { $delta: encodeValue(v.value, `${path}.value`) };
  if (!isPlainObject(v)) throw unsupported(path, `type ${typeName(v)}`);
  const out = {};
  for (const k of Object.keys(v)) {
    if (v[k] === undefined) continue;
    if (!k.isWellFormed()) throw unsupported(path, `key ${JSON.stringify(k)} holds a lone surrogate (not valid UTF-8)`);
    setKey(out, k, encodeValue(v[k], `${path}[${JSON.stringify(k)}]`));
  }
  const keys = Object.keys(out);
  if (keys.length === 1 && keys[0].startsWith("$")) return { $map: out };
  return out;
}

function encodeNumber(v) {
  if (Number.isNaN(v)) return { $float: "NaN" };
  if (v === Infinity) return { $float: "Infinity" };
  if (v === -Infinity) return { $float: "-Infinity" };
  if (Object.is(v, -0)) return { $float: "-0" };
  if (Number.isInteger(v)) {
    // Beyond 2^53−1 a JS number is a float that happens to be integral.
    return Math.abs(v) <= MAX_SAFE ? v : { $float: String(v) };
  }
  return v; // JSON prints a fraction or an exponent
}

/**
 * decodeValue turns a wire value into a JavaScript value: integers and
 * floats become numbers ($int beyond 2^53−1 a BigInt), $bytes a Uint8Array,
 * $map an object, $delta a DeltaSnapshot. A malformed tag throws a BridgeError with code
 * bad_request.
 */
export function decodeValue(w, path = "$") {
  if (w === null || typeof w !== "object") {
    if (w === undefined) throw badRequest(path, "missing");
    return w;
  }
  if (Array.isArray(w)) return w.map((e, i) => decodeValue(e, `${path}[${i}]`));
  const keys = Object.keys(w);
  if (keys.length === 1 && keys[0].startsWith("$")) {
    const tag = keys[0];
    const s = w[tag];
    switch (tag) {
      case "$int": {
        if (typeof s !== "string" || !INT_RE.test(s)) throw badRequest(path, `bad $int ${JSON.stringify(s)}`);
        const n = BigInt(s);
        if (n < INT64_MIN || n > INT64_MAX) throw badRequest(path, `$int ${s} overflows int64`);
        return n >= -BigInt(MAX_SAFE) && n <= BigInt(MAX_SAFE) ? Number(n) : n;
      }
      case "$float":
        if (s === "NaN") return NaN;
        if (s === "Infinity") return Infinity;
        if (s === "-Infinity") return -Infinity;
        if (typeof s !== "string" || !FLOAT_RE.test(s)) throw badRequest(path, `bad $float ${JSON.stringify(s)}`);
        return Number(s);
      case "$bytes":
        if (typeof s !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) {
          throw badRequest(path, "bad $bytes (want padded standard base64)");
        }
        return new Uint8Array(Buffer.from(s, "base64"));
      case "$map":
        if (s === null || typeof s !== "object" || Array.isArray(s)) throw badRequest(path, "$map must hold an object");
        return decodeEntries(s, path);
      case "$delta":
        return new DeltaSnapshot(decodeValue(s, `${path}.value`));
      default:
        throw badRequest(path, `unknown tag ${JSON.stringify(tag)}`);
    }
  }
  return decodeEntries(w, path);
}

function decodeEntries(w, path) {
  const out = {};
  for (const k of Object.keys(w)) setKey(out, k, decodeValue(w[k], `${path}[${JSON.stringify(k)}]`));
  return out;
}

/** encodeMap encodes an object of values (channel values, metadata), undefined or null as {}. */
export function encodeMap(m, path = "$") {
  if (m === undefined || m === null) return {};
  if (!isPlainObject(m)) throw unsupported(path, `want an object, got ${describe(m)}`);
  const out = {};
  for (const k of Object.keys(m)) {
    if (m[k] === undefined) continue;
    if (!k.isWellFormed()) throw unsupported(path, `key ${JSON.stringify(k)} holds a lone surrogate (not valid UTF-8)`);
    setKey(out, k, encodeValue(m[k], `${path}[${JSON.stringify(k)}]`));
  }
  return out;
}

/** decodeMap decodes an object of values; null gives {}. */
export function decodeMap(w, path = "$") {
  if (w === null || w === undefined) return {};
  if (typeof w !== "object" || Array.isArray(w)) throw badRequest(path, "want an object");
  return decodeEntries(w, path);
}

const DECIMAL_RE = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/**
 * versionToWire gives the wire form of a channel version: numbers as their
 * decimal string, strings unchanged.
 */
export function versionToWire(v, path = "version") {
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  throw new BridgeError(Codes.INVALID_ARGUMENT, `${path}: a version must be a finite number or a string, got ${typeName(v)}`);
}

/**
 * versionFromWire turns a wire version back into a LangGraph.js one: a
 * string that is exactly the decimal form of a number ("3", "2.5") becomes
 * that number, any other string stays a string. So versionToWire(
 * versionFromWire(s)) === s for every string s.
 */
export function versionFromWire(s, path = "version") {
  if (typeof s !== "string") throw new BridgeError(Codes.BAD_REQUEST, `${path}: want a string, got ${typeName(s)}`);
  if (DECIMAL_RE.test(s)) {
    const n = Number(s);
    if (String(n) === s) return n;
  }
  return s;
}

/** versionsToWire maps versionToWire over an object of versions. */
export function versionsToWire(vs, path = "versions") {
  const out = {};
  for (const [k, v] of Object.entries(vs ?? {})) setKey(out, k, versionToWire(v, `${path}[${JSON.stringify(k)}]`));
  return out;
}

/** versionsFromWire maps versionFromWire over an object of versions. */
export function versionsFromWire(w, path = "versions") {
  if (w === null || w === undefined) return {};
  if (typeof w !== "object" || Array.isArray(w)) throw new BridgeError(Codes.BAD_REQUEST, `${path}: want an object`);
  const out = {};
  for (const [k, v] of Object.entries(w)) setKey(out, k, versionFromWire(v, `${path}[${JSON.stringify(k)}]`));
  return out;
}

function stringField(w, name, where) {
  const v = w?.[name];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw new BridgeError(Codes.BAD_REQUEST, `${where}.${name}: want a string, got ${typeName(v)}`);
  return v;
}

// idToWire gives an identifier's wire form: missing is "", a number its
// decimal form; a string that is not valid UTF-8 is refused.
export function idToWire(v, what = "identifier") {
  if (v === undefined || v === null) return "";
  if (typeof v === "number") return String(v);
  if (typeof v === "string" && !v.isWellFormed()) {
    throw new BridgeError(Codes.INVALID_CONFIG, `${what} ${JSON.stringify(v)} holds a lone surrogate (not valid UTF-8)`);
  }
  return v;
}

/**
 * configToWire gives the wire config of a LangGraph.js RunnableConfig:
 * missing fields become "".
 */
export function configToWire(config) {
  const c = config?.configurable ?? {};
  return {
    thread_id: idToWire(c.thread_id, "thread_id"),
    checkpoint_ns: idToWire(c.checkpoint_ns, "checkpoint_ns"),
    checkpoint_id: idToWire(c.checkpoint_id ?? c.thread_ts, "checkpoint_id"),
  };
}

/** configFromWire gives the RunnableConfig of a wire config, every field set. */
export function configFromWire(w, where = "config") {
  if (w === null || typeof w !== "object") throw new BridgeError(Codes.BAD_REQUEST, `${where}: want an object`);
  return {
    configurable: {
      thread_id: stringField(w, "thread_id", where),
      checkpoint_ns: stringField(w, "checkpoint_ns", where),
      checkpoint_id: stringField(w, "checkpoint_id", where),
    },
  };
}

/**
 * checkpointToWire encodes a LangGraph.js checkpoint. A member the saver
 * left out (channel_values, channel_versions, versions_seen,
 * updated_channels) is left out on the wire too, never invented
 * (PROTOCOL.md, "Shapes"); LangGraph.js has no updated_channels, so an
 * array there is sent, null as null, anything else not at all.
 */
export function checkpointToWire(cp) {
  if (cp === null || typeof cp !== "object") {
    throw new BridgeError(Codes.INVALID_ARGUMENT, `checkpoint: want an object, got ${describe(cp)}`);
  }
  const w = { v: cp.v, id: idToWire(cp.id), ts: cp.ts ?? "" };
  if (cp.channel_values != null) w.channel_values = encodeMap(cp.channel_values, "channel_values");
  if (cp.channel_versions != null) w.channel_versions = versionsToWire(cp.channel_versions, "channel_versions");
  if (cp.versions_seen != null) {
    const seen = {};
    for (const [node, vs] of Object.entries(cp.versions_seen)) {
      setKey(seen, node, versionsToWire(vs, `versions_seen[${JSON.stringify(node)}]`));
    }
    w.versions_seen = seen;
  }
  if (Array.isArray(cp.updated_channels)) w.updated_channels = [...cp.updated_channels];
  else if (cp.updated_channels === null) w.updated_channels = null;
  return w;
}

/**
 * checkpointFromWire decodes a wire checkpoint into a LangGraph.js one:
 * absent channel_values, channel_versions and versions_seen read as empty;
 * updated_channels is set only when it is a list (absent or null is
 * unknown). A ts that is not UTF-8 (sent as $bytes) has no JavaScript
 * string, so it is unsupported_value.
 */
export function checkpointFromWire(w) {
  if (w === null || typeof w !== "object") throw new BridgeError(Codes.BAD_REQUEST, "checkpoint: want an object");
  if (w.ts !== null && typeof w.ts === "object") {
    throw new BridgeError(Codes.UNSUPPORTED_VALUE, "checkpoint.ts: a timestamp that is not UTF-8 has no JavaScript string");
  }
  const seen = {};
  for (const [node, vs] of Object.entries(w.versions_seen ?? {})) {
    setKey(seen, node, versionsFromWire(vs, `versions_seen[${JSON.stringify(node)}]`));
  }
  const cp = {
    v: w.v,
    id: stringField(w, "id", "checkpoint"),
    ts: stringField(w, "ts", "checkpoint"),
    channel_values: decodeMap(w.channel_values, "channel_values"),
    channel_versions: versionsFromWire(w.channel_versions, "channel_versions"),
    versions_seen: seen,
  };
  if (Array.isArray(w.updated_channels)) cp.updated_channels = [...w.updated_channels];
  return cp;
}

/** tupleToWire encodes a LangGraph.js CheckpointTuple. */
export function tupleToWire(t) {
  return {
    config: configToWire(t.config),
    checkpoint: checkpointToWire(t.checkpoint),
    metadata: encodeMap(t.metadata, "metadata"),
    parent_config: t.parentConfig ? configToWire(t.parentConfig) : null,
    pending_writes: (t.pendingWrites ?? []).map(([task, channel, value], i) => [
      idToWire(task),
      channel,
      encodeValue(value, `pending_writes[${i}]`),
    ]),
  };
}

/**
 * tupleFromWire decodes a wire tuple into a LangGraph.js CheckpointTuple;
 * parentConfig is left out when there is no parent.
 */
export function tupleFromWire(w) {
  if (w === null || typeof w !== "object") throw new BridgeError(Codes.BAD_REQUEST, "tuple: want an object");
  const t = {
    config: configFromWire(w.config, "config"),
    checkpoint: checkpointFromWire(w.checkpoint),
    metadata: decodeMap(w.metadata, "metadata"),
    pendingWrites: (w.pending_writes ?? []).map((pw, i) => {
      if (!Array.isArray(pw) || pw.length !== 3) throw new BridgeError(Codes.BAD_REQUEST, `pending_writes[${i}]: want [task_id, channel, value]`);
      return [pw[0], pw[1], decodeValue(pw[2], `pending_writes[${i}]`)];
    }),
  };
  if (w.parent_config) t.parentConfig = configFromWire(w.parent_config, "parent_config");
  return t;
}

/** encodeWrites encodes LangGraph.js writes ([channel, value] pairs). */
export function encodeWrites(writes) {
  return (writes ?? []).map(([channel, value], i) => [idToWire(channel, `writes[${i}] channel`), encodeValue(value, `writes[${i}]`)]);
}

/** decodeWrites decodes wire writes into [channel, value] pairs. */
export function decodeWrites(w) {
  if (!Array.isArray(w)) throw new BridgeError(Codes.BAD_REQUEST, "writes: want a list");
  return w.map((pw, i) => {
    if (!Array.isArray(pw) || pw.length !== 2 || typeof pw[0] !== "string") {
      throw new BridgeError(Codes.BAD_REQUEST, `writes[${i}]: want [channel, value]`);
    }
    return [pw[0], decodeValue(pw[1], `writes[${i}]`)];
  });
}

/**
 * historiesToWire encodes the answer of getDeltaChannelHistory
 * ({channel: {writes: [[taskId, channel, value], ...], seed?}}) as the
 * result of delta_history; a seed the saver left out stays out.
 */
export function historiesToWire(histories) {
  const out = {};
  for (const [ch, h] of Object.entries(histories ?? {})) {
    const where = `histories[${JSON.stringify(ch)}]`;
    const entry = {
      writes: (h?.writes ?? []).map(([task, channel, value], i) => [
        idToWire(task),
        idToWire(channel),
        encodeValue(value, `${where}.writes[${i}]`),
      ]),
    };
    if (h && Object.prototype.hasOwnProperty.call(h, "seed")) entry.seed = encodeValue(h.seed, `${where}.seed`);
    setKey(out, idToWire(ch, "channel"), entry);
  }
  return { histories: out };
}

/** historiesFromWire decodes a delta_history result into getDeltaChannelHistory's answer. */
export function historiesFromWire(w) {
  if (w === null || typeof w !== "object" || w.histories === null || typeof w.histories !== "object" || Array.isArray(w.histories)) {
    throw new BridgeError(Codes.BAD_REQUEST, 'delta_history result: want {"histories": {...}}');
  }
  const out = {};
  for (const [ch, hw] of Object.entries(w.histories)) {
    const where = `histories[${JSON.stringify(ch)}]`;
    if (hw === null || typeof hw !== "object" || Array.isArray(hw)) throw new BridgeError(Codes.BAD_REQUEST, `${where}: want an object`);
    const ws = hw.writes ?? [];
    if (!Array.isArray(ws)) throw new BridgeError(Codes.BAD_REQUEST, `${where}.writes: want a list`);
    const entry = {
      writes: ws.map((pw, i) => {
        if (!Array.isArray(pw) || pw.length !== 3 || typeof pw[0] !== "string" || typeof pw[1] !== "string") {
          throw new BridgeError(Codes.BAD_REQUEST, `${where}.writes[${i}]: want [task_id, channel, value]`);
        }
        return [pw[0], pw[1], decodeValue(pw[2], `${where}.writes[${i}]`)];
      }),
    };
    if (Object.prototype.hasOwnProperty.call(hw, "seed")) entry.seed = decodeValue(hw.seed, `${where}.seed`);
    setKey(out, ch, entry);
  }
  return out;
}
