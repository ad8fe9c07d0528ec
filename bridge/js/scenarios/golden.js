// Runs every scenario of scenarios.js on LangGraph.js, each with a fresh
// RecordingSaver around LangGraph.js's MemorySaver, then lists every
// thread the scenario used (all namespaces), so that the trace ends with
// everything the saver stored as LangGraph.js's saver reads it back, and
// writes one JSON object to stdout mapping each scenario's name to its
// saver traffic (a refengine/trace document):
//
//	node scenarios/golden.js [name...]
//
// With names, only those scenarios run. refengine/enginetest turns the
// traces into the golden traces that the conformance suite's engine group
// replays against every saver (go test ./refengine/enginetest -run
// TestLangGraphJSGoldenTraces -update).
import { MemorySaver } from "@langchain/langgraph";
import { RecordingSaver } from "../recorder.js";
import { scenarios } from "./scenarios.js";

const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(scenarios).sort();
const out = {};
for (const name of names) {
  const run = scenarios[name];
  if (!run) {
    console.error(`unknown scenario ${JSON.stringify(name)}; known: ${Object.keys(scenarios).join(", ")}`);
    process.exit(2);
  }
  const saver = new RecordingSaver(new MemorySaver());
  await run(saver);
  const threads = new Set();
  for (const c of saver.calls) {
    const id = c.config?.thread_id ?? c.list?.thread_id ?? c.thread_id;
    if (id) threads.add(id);
  }
  for (const id of [...threads].sort()) {
    for await (const _ of saver.list({ configurable: { thread_id: id } }));
  }
  out[name] = saver.trace();
}
process.stdout.write(JSON.stringify(out) + "\n");
