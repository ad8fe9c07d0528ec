// CONC-3: lgjs-memory and checkpointkit's contract: a race, exit status 1 when it shows.
// Expected: a reader alongside a writer sees each checkpoint whole or not at all. Written by checkpointkit's ci/cmd/repro; run with node from bridge/js.
import { MemorySaver } from "@langchain/langgraph-checkpoint";

const saver = new MemorySaver();
const ROUNDS = 200, WRITERS = 1, BIG = "x".repeat(100_000);
const broken = [];

async function writer(w) {
  let cfg = { configurable: { thread_id: "race", checkpoint_ns: "" } }, version;
  const done = [];
  for (let i = 0; i < ROUNDS; i++) {
    const id = `1ef00000-0000-6000-8${String(w).padStart(3, "0")}-${String(i).padStart(12, "0")}`;
    version = saver.getNextVersion(version);
    const cp = { v: 4, id, ts: "2026-01-01T00:00:00+00:00", channel_values: { big: id + BIG, id },
      channel_versions: { big: version, id: version }, versions_seen: {} };
    try {
      cfg = await saver.put(cfg, cp, { step: i, writer: w }, { big: version, id: version });
      await saver.putWrites(cfg, [["w", id]], `task-${w}`);
    } catch (err) {
      broken.push(`writer ${w} threw ${err}`);
      break;
    }
    done.push([cfg, id]);
  }
  return done;
}

function whole(t, id = t.checkpoint.id) {
  const vals = t.checkpoint.channel_values;
  if (vals.id !== id || vals.big !== id + BIG || t.metadata?.step === undefined) {
    return `${id}: channel values ${Object.keys(vals).sort()}, metadata ${Object.keys(t.metadata ?? {}).sort()}`;
  }
  return null;
}

let stop = false;
async function reader() {
  const cfg = { configurable: { thread_id: "race", checkpoint_ns: "" } };
  while (!stop && broken.length === 0) {
    let t;
    try {
      t = await saver.getTuple(cfg);
    } catch (err) {
      broken.push(`getTuple threw ${err}`);
      return;
    }
    const why = t && whole(t);
    if (why) broken.push(why);
  }
}

const read = reader();
const done = await writer(0);
stop = true;
await read;
for (const [cfg, id] of done) {
  const t = await saver.getTuple(cfg);
  let why = t ? whole(t, id) : "lost";
  if (!why && JSON.stringify(t.pendingWrites.map((w) => w[2])) !== JSON.stringify([id])) why = `${id}: writes ${JSON.stringify(t.pendingWrites)}`;
  if (why) {
    broken.push(why);
    break;
  }
}
console.log("expected: a reader alongside a writer sees each checkpoint whole or not at all");
console.log("got:     ", broken[0] ?? "it held");
process.exitCode = broken.length ? 1 : 0;
