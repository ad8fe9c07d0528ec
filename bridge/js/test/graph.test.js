// A real LangGraph.js graph (fan-out, interrupt and resume, time travel)
// run on BridgeSaver gives the same results as on LangGraph.js's own
// MemorySaver. The bridge server is server.js (MemorySaver across the
// bridge); with CHECKPOINTKIT_SAVER_BIN set, also checkpointkit's Go memory
// and sqlite adapters.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import { BridgeProcess } from "../client.js";
import { BridgeSaver, startSaverProcess } from "../saver.js";

const SERVER = fileURLToPath(new URL("../server.js", import.meta.url));

const State = Annotation.Root({
  log: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  answer: Annotation(),
  bytes: Annotation(),
});

function buildGraph(checkpointer) {
  return new StateGraph(State)
    .addNode("start", () => ({ log: ["start"], bytes: { raw: new Uint8Array([1, 2, 3]) } }))
    .addNode("left", () => ({ log: ["left"] }))
    .addNode("right", () => ({ log: ["right"] }))
    .addNode("ask", () => ({ answer: interrupt({ question: "ok?", n: 1.5 }), log: ["asked"] }))
    .addEdge(START, "start")
    .addEdge("start", "left")
    .addEdge("start", "right")
    .addEdge(["left", "right"], "ask")
    .addEdge("ask", END)
    .compile({ checkpointer });
}

// run drives a thread through interrupt, resume and a replay from history,
// and returns what a user of the graph sees.
async function run(checkpointer) {
  const app = buildGraph(checkpointer);
  const cfg = { configurable: { thread_id: "thread-1" } };
  const first = await app.invoke({ log: ["in"] }, cfg);
  const paused = await app.getState(cfg);
  const done = await app.invoke(new Command({ resume: "yes" }), cfg);
  const history = [];
  for await (const s of app.getStateHistory(cfg)) history.push(s);
  // Replay from the checkpoint before "ask" ran: it asks again.
  const beforeAsk = history.find((s) => s.next.includes("ask"));
  const replay = await app.invoke(null, beforeAsk.config);
  return {
    first: { log: first.log, interrupts: first.__interrupt__?.map((i) => i.value) },
    paused: { next: paused.next, values: paused.values, tasks: paused.tasks.map((t) => [t.name, t.interrupts.map((i) => i.value)]) },
    done,
    history: history.map((s) => ({ next: s.next, values: s.values, step: s.metadata.step, source: s.metadata.source })),
    replay: { log: replay.log, interrupts: replay.__interrupt__?.map((i) => i.value) },
  };
}

async function compareWithMemorySaver(proc) {
  const want = await run(new MemorySaver());
  assert.deepEqual(want.first.interrupts, [{ question: "ok?", n: 1.5 }], "the reference run interrupts");
  const saver = await BridgeSaver.open(proc);
  try {
    assert.deepStrictEqual(await run(saver), want);
  } finally {
    await saver.close();
  }
}

test("a graph on BridgeSaver (LangGraph.js MemorySaver across the bridge) matches MemorySaver", async () => {
  const proc = await BridgeProcess.start({ command: process.execPath, args: [SERVER, "--saver", "memory"], name: "lgjs memory server" });
  try {
    await compareWithMemorySaver(proc);
  } finally {
    await proc.close();
  }
});

for (const adapter of ["memory", "sqlite"]) {
  test(`a graph on BridgeSaver (checkpointkit's Go ${adapter} adapter) matches MemorySaver`, { skip: !process.env.CHECKPOINTKIT_SAVER_BIN && "CHECKPOINTKIT_SAVER_BIN is not set" }, async () => {
    const proc = await startSaverProcess({ adapter });
    try {
      await compareWithMemorySaver(proc);
    } finally {
      await proc.close();
    }
  });
}
