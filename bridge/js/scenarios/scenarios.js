// The scenarios of refengine/enginetest, written for LangGraph.js. Each
// takes the (recording) checkpointer and drives the same graph with the
// same thread ID, inputs and calls as the Go scenario of the same name.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const append = (a, b) => a.concat(b);

// LogState is q (last value) and log (append reducer).
const LogState = Annotation.Root({
  q: Annotation(),
  log: Annotation({ reducer: append, default: () => [] }),
});

const logNode = (name) => () => ({ log: [name] });

// Inputs list their keys in sorted order, as refengine writes a map's keys.
const thread = (id, durability = "sync") => ({ configurable: { thread_id: id }, durability });

function linearGraph(checkpointer) {
  return new StateGraph(LogState)
    .addNode("a", logNode("a"))
    .addNode("b", logNode("b"))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", END)
    .compile({ checkpointer });
}

/** @type {Record<string, (saver: import("@langchain/langgraph").BaseCheckpointSaver) => Promise<void>>} */
export const scenarios = {
  async linear(saver) {
    await linearGraph(saver).invoke({ log: [], q: "hi" }, thread("engine-linear"));
  },
};
