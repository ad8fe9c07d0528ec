// Runs one of refengine/enginetest's scenarios on LangGraph.js, with a
// RecordingSaver around LangGraph.js's MemorySaver, and writes the saver
// traffic to stdout as a refengine/trace JSON document:
//
//	node scenarios/run.js <name>
//
// Each scenario mirrors the Go scenario of the same name (same graph, thread
// ID, inputs and calls); TestAgainstLangGraphJS in refengine/enginetest
// compares the two traces in canonical form (trace.Canonical).
import { MemorySaver } from "@langchain/langgraph";
import { RecordingSaver } from "../recorder.js";
import { scenarios } from "./scenarios.js";

const name = process.argv[2];
const run = scenarios[name];
if (!run) {
  console.error(`unknown scenario ${JSON.stringify(name)}; known: ${Object.keys(scenarios).join(", ")}`);
  process.exit(2);
}
const saver = new RecordingSaver(new MemorySaver());
await run(saver);
process.stdout.write(JSON.stringify(saver.trace(), null, 2) + "\n");
