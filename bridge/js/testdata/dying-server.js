// A server that answers hello and open, then dies on the next request
// after writing to stderr: for the client's crash reporting.
import { readMessages, messageLine } from "../wire.js";

const mode = process.argv[2] ?? "die-on-request";
if (mode === "die-at-start") {
  console.error("dying-server: cannot start: no such adapter");
  process.exit(3);
}
readMessages(process.stdin, {
  onMessage(msg) {
    if (msg.method === "hello") {
      process.stdout.write(messageLine({ id: msg.id, result: { protocol: "checkpointkit-bridge", version: 1, name: "dying", capabilities: ["open"] } }));
    } else if (msg.method === "open") {
      process.stdout.write(messageLine({ id: msg.id, result: { saver: "s1" } }));
    } else {
      console.error(`dying-server: panic while serving ${msg.method}`);
      process.exit(7);
    }
  },
});
