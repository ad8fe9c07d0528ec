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
  // The linear graph, then a bulk update of its step-0 checkpoint (next:
  // a): a __copy__ superstep, then a superstep updating the copy as a; the
  // run continues from the update.
  async update_copy_bulk(saver) {
    const g = new StateGraph(LogState)
      .addNode("a", logNode("a"))
      .addNode("b", logNode("b"))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .compile({ checkpointer: saver });
    const cfg = thread("engine-copy-bulk");
    await g.invoke({ log: [], q: "hi" }, cfg);
    const hist = [];
    for await (const s of g.getStateHistory(cfg)) hist.push(s);
    const out = await g.bulkUpdateState(hist[hist.length - 2].config, [
      { updates: [{ values: null, asNode: "__copy__" }] },
      { updates: [{ values: { log: ["a*"] }, asNode: "a" }] },
    ]);
    await g.invoke(null, { ...cfg, configurable: { ...cfg.configurable, checkpoint_id: out.configurable.checkpoint_id } });
  },
};
