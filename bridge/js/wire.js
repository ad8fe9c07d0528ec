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

/** messageLine gives the wire line of a message (JSON escapes every newline). */
export function messageLine(msg) {
  return JSON.stringify(msg) + "\n";
}
