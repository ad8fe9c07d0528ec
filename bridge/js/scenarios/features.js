// Scenarios of the engine features added with issue 13, written for
// LangGraph.js: nodes returning a Command, bulk updates after a __copy__,
// subgraphs invoked from inside a node function and parallel interrupts
// resumed by ID. scenarios.js merges them into its table; each mirrors the
// Go scenario of the same name in refengine/enginetest.
import { Annotation, Command, START, Send, StateGraph, interrupt } from "@langchain/langgraph";

const append = (a, b) => a.concat(b);

const LogState = Annotation.Root({
  q: Annotation(),
  log: Annotation({ reducer: append, default: () => [] }),
});

const logNode = (name) => () => ({ log: [name] });

const thread = (id, durability = "sync") => ({ configurable: { thread_id: id }, durability });

// callerGraph is START -> caller -> after, where caller invokes first and
// then second (compiled subgraphs) from its node function, each with the
// node's config, and logs what they logged.
function callerGraph(checkpointer, first, second) {
  return new StateGraph(LogState)
    .addNode("caller", async (_st, config) => {
      const a = await first.invoke({ log: [], q: "first" }, config);
      const b = await second.invoke({ log: [], q: "second" }, config);
      return { log: [...a.log, ...b.log] };
    })
    .addNode("after", logNode("after"))
    .addEdge(START, "caller")
    .addEdge("caller", "after")
    .compile({ checkpointer });
}

// innerGraph is START -> inner, logging "inner:<q>".
const innerGraph = () =>
  new StateGraph(LogState)
    .addNode("inner", (st) => ({ log: [`inner:${st.q}`] }))
    .addEdge(START, "inner")
    .compile();

// askGraph is START -> ask, logging "ask:<q>:<answer>" after interrupt("?").
const askGraph = () =>
  new StateGraph(LogState)
    .addNode("ask", (st) => ({ log: [`ask:${st.q}:${interrupt("?")}`] }))
    .addEdge(START, "ask")
    .compile();

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
  // router returns Command({goto: two Sends to w, update}); each w logs
  // its item.
  async command_send(saver) {
    const g = new StateGraph(LogState)
      .addNode(
        "router",
        () => new Command({ goto: [new Send("w", { item: "x" }), new Send("w", { item: "y" })], update: { log: ["router"] } }),
        { ends: ["w"] },
      )
      .addNode("w", (st) => ({ log: [`w:${st.item}`] }))
      .addEdge(START, "router")
      .compile({ checkpointer: saver });
    await g.invoke({ log: [], q: "hi" }, thread("engine-command-send"));
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
  // START -> (a, b), both interrupting in one superstep; resumed by
  // interrupt ID: first a alone (b interrupts again), then b.
  async parallel_resume(saver) {
    const ask = (name) => () => ({ log: [`${name}:${interrupt(`question for ${name}`)}`] });
    const g = new StateGraph(LogState)
      .addNode("a", ask("a"))
      .addNode("b", ask("b"))
      .addEdge(START, "a")
      .addEdge(START, "b")
      .compile({ checkpointer: saver });
    const cfg = thread("engine-parallel-resume");
    const res = await g.invoke({ log: [], q: "hi" }, cfg);
    const id = (name) => res.__interrupt__.find((i) => i.value === `question for ${name}`).id;
    await g.invoke(new Command({ resume: { [id("a")]: "x" } }), cfg);
    await g.invoke(new Command({ resume: { [id("b")]: "y" } }), cfg);
  },
  // Two Send tasks each run a subgraph that interrupts; resumed by
  // interrupt ID, one at a time (the resume map reaches the subgraphs'
  // tasks through their namespaces).
  async parallel_subgraph_resume(saver) {
    const child = new StateGraph(Annotation.Root({ who: Annotation(), answers: Annotation({ reducer: append, default: () => [] }) }))
      .addNode("ask", (st) => ({ answers: [`${st.who}:${interrupt(`question for ${st.who}`)}`] }))
      .addEdge(START, "ask")
      .compile();
    const root = new StateGraph(Annotation.Root({ answers: Annotation({ reducer: append, default: () => [] }) }))
      .addNode("plan", () => ({}))
      .addNode("sub", child)
      .addEdge(START, "plan")
      .addConditionalEdges("plan", () => [new Send("sub", { who: "A" }), new Send("sub", { who: "B" })])
      .compile({ checkpointer: saver });
    const cfg = thread("engine-parallel-subgraph-resume");
    const res = await root.invoke({ answers: [] }, cfg);
    const id = (who) => res.__interrupt__.find((i) => i.value === `question for ${who}`).id;
    await root.invoke(new Command({ resume: { [id("A")]: "a" } }), cfg);
    await root.invoke(new Command({ resume: { [id("B")]: "b" } }), cfg);
  },
  // A node invoking a subgraph twice (namespaces caller:<task> and
  // caller:<task>|1), run twice on one thread.
  async subgraph_in_node(saver) {
    const inner = innerGraph();
    const g = callerGraph(saver, inner, inner);
    for (let i = 0; i < 2; i++) await g.invoke({ log: [], q: "hi" }, thread("engine-subgraph-in-node"));
  },
  // A node invoking a stateful subgraph (checkpointer: true) twice per run,
  // run twice: every call continues the one lineage in namespace "caller",
  // the recast of caller:<task> and caller:<task>|1.
  async subgraph_in_node_stateful(saver) {
    const counter = new StateGraph(
      Annotation.Root({ q: Annotation(), seen: Annotation({ reducer: append, default: () => [] }), log: Annotation({ reducer: append, default: () => [] }) }),
    )
      .addNode("count", (st) => ({ seen: [st.q], log: [`count:${st.seen.length + 1}`] }))
      .addEdge(START, "count")
      .compile({ checkpointer: true });
    const g = callerGraph(saver, counter, counter);
    for (let i = 0; i < 2; i++) await g.invoke({ log: [], q: "hi" }, thread("engine-subgraph-in-node-stateful"));
  },
  // The second subgraph call interrupts; the resume re-runs the node: the
  // first call finds its finished lineage, the second resumes in its own.
  // Then a replay from the checkpoint before caller: both calls start
  // over (the first through the replay lookup), the second interrupts
  // again and is resumed.
  async subgraph_in_node_resume(saver) {
    const g = callerGraph(saver, innerGraph(), askGraph());
    const id = "engine-subgraph-in-node-resume";
    await g.invoke({ log: [], q: "hi" }, thread(id));
    await g.invoke(new Command({ resume: "ok" }), thread(id));
    const hs = [];
    for await (const t of saver.inner.list({ configurable: { thread_id: id, checkpoint_ns: "" } })) hs.push(t);
    hs.reverse();
    await g.invoke(null, { configurable: { thread_id: id, checkpoint_id: hs[1].checkpoint.id }, durability: "sync" });
    await g.invoke(new Command({ resume: "again" }), thread(id));
  },
};
