// The LangGraph.js checkpoint validation suite
// (@langchain/langgraph-checkpoint-validation) run against one of
// checkpointkit's Go adapters through BridgeSaver: one
// cmd/checkpointkit-saver process (CHECKPOINTKIT_SAVER_BIN) for the whole
// file, one fresh saver (`open`) per test group. Besides the default suite
// (validate) it runs the opt-in getDeltaChannelHistory group.
//
//   CHECKPOINTKIT_ADAPTER=memory|sqlite|postgres|mongo
//   CHECKPOINTKIT_SAVER_BIN=/path/to/checkpointkit-saver
//
// Tests listed in expected-skips.json for this adapter are skipped at run
// time, each with the rule of spec/SPEC.md that makes checkpointkit differ;
// CHECKPOINTKIT_RUN_EXPECTED_SKIPS=1 runs them anyway.
import { readFileSync } from "node:fs";
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { BridgeSaver, startSaverProcess } from "../saver.js";

const adapter = process.env.CHECKPOINTKIT_ADAPTER || "memory";

const skips = new Map();
if (!process.env.CHECKPOINTKIT_RUN_EXPECTED_SKIPS) {
  const list = JSON.parse(readFileSync(new URL("./expected-skips.json", import.meta.url), "utf8"));
  for (const s of list) {
    if (!s.adapters || s.adapters.includes(adapter)) skips.set(s.test, `${s.rule}: ${s.reason}`);
  }
}

// A test's name with its suites, as expected-skips.json spells it:
// "suite > suite > test" (vitest's fullTestName).
beforeEach((ctx) => {
  const reason = skips.get(ctx.task.fullTestName);
  if (reason !== undefined) ctx.skip(`expected skip (${reason})`);
});

let proc;

const initializer = {
  checkpointerName: "checkpointkit",
  beforeAllTimeout: 120_000,
  async beforeAll() {
    proc = await startSaverProcess({ adapter });
  },
  async afterAll() {
    await proc?.close();
  },
  async createCheckpointer() {
    return BridgeSaver.open(proc);
  },
  async destroyCheckpointer(saver) {
    await saver.close();
  },
};

validate(initializer);
// The opt-in group of the package (specTest leaves it out): delta channel
// history, answered by the adapter's delta_history through BridgeSaver. Its
// hooks run under validate's file-level beforeAll, which starts the server.
deltaChannelHistoryTests(initializer);
