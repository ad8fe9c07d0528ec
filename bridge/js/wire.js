// wire.js: newline-delimited JSON framing of the bridge protocol.

import { createInterface } from "node:readline";

/**
 * readMessages calls onMessage(msg) for every JSON line of stream, or
 * onBadLine(line, err) for a line that is not a JSON object, and onEnd()
 * when the stream ends.
 */
export function readMessages(stream, { onMessage, onBadLine, onEnd }) {
  const rl = createInterface({ input: stream, crlfDelay: Infinity });
  rl.on("line", (line) => {
    if (line.trim() === "") return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (err) {
      onBadLine?.(line, err);
      return;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      onBadLine?.(line, new Error("not a JSON object"));
      return;
    }
    onMessage(msg);
  });
  rl.on("close", () => onEnd?.());
  return rl;
}

/**
 * messageLine gives the wire line of a message in the protocol's canonical
 * form (PROTOCOL.md, "Canonical form"): object members in ascending code
 * point order of their keys, numbers and strings as JSON.stringify writes
 * them, U+2028 and U+2029 escaped, one line ending in a newline.
 */
export function messageLine(msg) {
  return canonicalJSON(msg) + "\n";
}

const LINE_SEPARATORS = /[\u2028\u2029]/g;

function quote(s) {
  const q = JSON.stringify(s);
  return q.replace(LINE_SEPARATORS, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"));
}

/**
 * compareCodePoints orders strings by Unicode code point (the order of
 * their UTF-8 bytes), where < compares UTF-16 code units: the two differ
 * only when a surrogate meets a code unit from U+E000 up.
 */
export function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      // Surrogates (D800-DFFF) stand for code points above FFFF.
      x = x <= 0xdfff ? x + 0x2000 : x - 0x800;
      y = y <= 0xdfff ? y + 0x2000 : y - 0x800;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * canonicalJSON writes a JSON value (plain objects, arrays, strings,
 * finite numbers, booleans, null) in canonical form; undefined members are
 * left out, as JSON.stringify leaves them.
 */
export function canonicalJSON(v) {
  switch (typeof v) {
    case "string":
      return quote(v);
    case "number":
      if (!Number.isFinite(v)) throw new TypeError(`canonicalJSON: ${v} has no JSON form`);
      return JSON.stringify(v);
    case "boolean":
      return v ? "true" : "false";
    case "object":
      if (v === null) return "null";
      if (Array.isArray(v)) return `[${v.map((e) => (e === undefined ? "null" : canonicalJSON(e))).join(",")}]`;
      break;
    default:
      throw new TypeError(`canonicalJSON: a ${typeof v} has no JSON form`);
  }
  const parts = [];
  for (const k of Object.keys(v).sort(compareCodePoints)) {
    if (v[k] === undefined) continue;
    parts.push(`${quote(k)}:${canonicalJSON(v[k])}`);
  }
  return `{${parts.join(",")}}`;
}
