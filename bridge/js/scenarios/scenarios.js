// The scenarios of refengine/enginetest, written for LangGraph.js. Each
// takes the (recording) checkpointer and drives the same graph with the
// same thread ID, inputs and calls as the Go scenario of the same name.
import { Annotation, Command, END, START, Send, StateGraph, interrupt } from "@langchain/langgraph";
import { featureScenarios } from "./features.js";

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

// askGraph is START -> a -> b where b asks interrupt("?") and logs "b:<answer>".
function askGraph(checkpointer) {
  return new StateGraph(LogState)
    .addNode("a", logNode("a"))
    .addNode("b", () => ({ log: [`b:${interrupt("?")}`] }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .compile({ checkpointer });
}

// chainGraph is START -> s1 -> s2 -> s3 whose nodes write nothing.
function chainGraph(checkpointer, options) {
  const noop = () => ({});
  return new StateGraph(Annotation.Root({ x: Annotation() }))
    .addNode("s1", noop)
    .addNode("s2", noop)
    .addNode("s3", noop)
    .addEdge(START, "s1")
    .addEdge("s1", "s2")
    .addEdge("s2", "s3")
    .compile({ checkpointer, ...options });
}

// adderGraph is START -> node_a (+10) -> node_b (+100) over a summing key.
function adderGraph(checkpointer) {
  return new StateGraph(Annotation.Root({ value: Annotation({ reducer: (a, b) => a + b }) }))
    .addNode("node_a", () => ({ value: 10 }))
    .addNode("node_b", () => ({ value: 100 }))
    .addEdge(START, "node_a")
    .addEdge("node_a", "node_b")
    .compile({ checkpointer });
}

// humanGraph is START -> node_a -> ask_human (interrupt) -> node_b.
function humanGraph(checkpointer) {
  return new StateGraph(Annotation.Root({ answer: Annotation(), log: Annotation({ reducer: append }) }))
    .addNode("node_a", logNode("node_a"))
    .addNode("ask_human", () => ({ answer: interrupt("answer?") }))
    .addNode("node_b", logNode("node_b"))
    .addEdge(START, "node_a")
    .addEdge("node_a", "ask_human")
    .addEdge("ask_human", "node_b")
    .compile({ checkpointer });
}

// history lists a thread's root checkpoints oldest first, reading the
// wrapped saver directly (like the Go scenarios' unrecorded checks).
async function history(saver, threadId) {
  const out = [];
  for await (const t of saver.inner.list({ configurable: { thread_id: threadId, checkpoint_ns: "" } })) out.push(t);
  return out.reverse();
}

// at is a thread's config addressing one checkpoint.
const at = (threadId, checkpointId, durability = "sync") => ({
  configurable: { thread_id: threadId, checkpoint_id: checkpointId },
  durability,
});

/** @type {Record<string, (saver: import("@langchain/langgraph").BaseCheckpointSaver) => Promise<void>>} */
export const scenarios = {
  async linear(saver) {
    await linearGraph(saver).invoke({ log: [], q: "hi" }, thread("engine-linear"));
  },
  async linear_async(saver) {
    await linearGraph(saver).invoke({ log: [], q: "hi" }, thread("engine-linear-async", "async"));
  },
  async interrupt_resume(saver) {
    const g = askGraph(saver);
    const cfg = thread("engine-interrupt");
    await g.invoke({ log: [], q: "hi" }, cfg);
    await g.getState(cfg);
    await g.invoke(new Command({ resume: "ok" }), cfg);
  },
  async interrupt_twice(saver) {
    const g = new StateGraph(Annotation.Root({ answer: Annotation() }))
      .addNode("ask", () => {
        const first = interrupt("first?");
        const second = interrupt("second?");
        return { answer: `${first}+${second}` };
      })
      .addEdge(START, "ask")
      .compile({ checkpointer: saver });
    const cfg = thread("engine-interrupt-twice", "async");
    await g.invoke({ answer: "" }, cfg);
    await g.invoke(new Command({ resume: "x" }), cfg);
    await g.invoke(new Command({ resume: "y" }), cfg);
  },
  async static_interrupts(saver) {
    const g = chainGraph(saver, { interruptAfter: "*" });
    const cfg = thread("engine-static");
    for (let run = 0; run < 3; run++) {
      await g.invoke(run === 0 ? { x: 1 } : null, cfg);
      await g.getState(cfg);
    }
  },
  async new_input_discards(saver) {
    const g = new StateGraph(Annotation.Root({ log: Annotation({ reducer: append, default: () => [] }) }))
      .addNode("a", logNode("a"))
      .addNode("b", logNode("b"))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .compile({ checkpointer: saver, interruptBefore: ["b"] });
    const cfg = thread("engine-new-input");
    for (let i = 0; i < 2; i++) await g.invoke({ log: [] }, cfg);
  },
  async command_goto(saver) {
    const g = linearGraph(saver);
    const cfg = thread("engine-command");
    await g.invoke({ log: [], q: "hi" }, cfg);
    await g.invoke(new Command({ goto: ["b"], update: { q: "again" } }), cfg);
  },
  async update_fork(saver) {
    const g = adderGraph(saver);
    const id = "engine-update";
    await g.invoke({ value: 1 }, thread(id));
    const hs = await history(saver, id);
    const u = await g.updateState(at(id, hs[1].checkpoint.id), { value: 20 }, "node_a");
    await g.invoke(null, at(id, u.configurable.checkpoint_id));
  },
  async sibling_forks(saver) {
    const g = adderGraph(saver);
    const id = "engine-siblings";
    await g.invoke({ value: 1 }, thread(id));
    const hs = await history(saver, id);
    const forks = [];
    for (const v of [20, 30]) forks.push(await g.updateState(at(id, hs[1].checkpoint.id), { value: v }, "node_a"));
    for (const f of forks) await g.invoke(null, at(id, f.configurable.checkpoint_id));
  },
  async replay_history(saver) {
    const g = humanGraph(saver);
    const id = "engine-replay";
    await g.invoke({ log: [] }, thread(id, "async"));
    await g.invoke(new Command({ resume: "old" }), thread(id, "async"));
    const hs = await history(saver, id);
    await g.invoke(null, at(id, hs[2].checkpoint.id, "async"));
    await g.invoke(new Command({ resume: "new" }), thread(id, "async"));
  },
  async send_map_reduce(saver) {
    const g = new StateGraph(
      Annotation.Root({ items: Annotation(), item: Annotation(), results: Annotation({ reducer: append, default: () => [] }) }),
    )
      .addNode("plan", () => ({}))
      .addNode("w", (st) => ({ results: [`r${st.item}`] }))
      .addEdge(START, "plan")
      .addConditionalEdges("plan", (st) => st.items.map((item) => new Send("w", { item })))
      .compile({ checkpointer: saver });
    await g.invoke({ items: [0, 1, 2, 3, 4] }, thread("engine-send", "async"));
  },
  async parallel_interrupts(saver) {
    const child = new StateGraph(Annotation.Root({ who: Annotation(), answers: Annotation({ reducer: append }) }))
      .addNode("ask", (st) => ({ answers: [`${st.who}:${interrupt(`question for ${st.who}`)}`] }))
      .addEdge(START, "ask")
      .compile();
    const root = new StateGraph(Annotation.Root({ answers: Annotation({ reducer: append }) }))
      .addNode("plan", () => ({}))
      .addNode("sub", child)
      .addEdge(START, "plan")
      .addConditionalEdges("plan", () => [new Send("sub", { who: "A" }), new Send("sub", { who: "B" })])
      .compile({ checkpointer: saver });
    const cfg = thread("engine-parallel-interrupts");
    const res = await root.invoke({ answers: [] }, cfg);
    const [a, b] = res.__interrupt__.map((i) => i.id);
    // Python refuses this (two interrupts pending); LangGraph.js accepts it.
    await root.invoke(new Command({ resume: "x" }), cfg).catch(() => {});
    await root.invoke(new Command({ resume: { [a]: "a" } }), cfg);
    await root.invoke(new Command({ resume: { [b]: "b" } }), cfg);
  },
  async stateful_subgraph(saver) {
    const child = new StateGraph(
      Annotation.Root({ question: Annotation(), seen: Annotation({ reducer: append, default: () => [] }), count: Annotation() }),
    )
      .addNode("remember", (st) => ({ seen: [st.question], count: st.seen.length + 1 }))
      .addEdge(START, "remember")
      .compile({ checkpointer: true });
    const root = new StateGraph(Annotation.Root({ question: Annotation(), count: Annotation() }))
      .addNode("inner", child)
      .addEdge(START, "inner")
      .compile({ checkpointer: saver });
    const id = "engine-stateful";
    for (const q of ["q1", "q2"]) await root.invoke({ question: q }, thread(id));
    const hs = await history(saver, id);
    await root.invoke(null, at(id, hs[4].checkpoint.id));
  },
  async conditional(saver) {
    const g = new StateGraph(LogState)
      .addNode("route", logNode("route"))
      .addNode("left", logNode("left"))
      .addNode("right", logNode("right"))
      .addEdge(START, "route")
      .addConditionalEdges("route", (st) => (st.q === "L" ? "left" : "right"), ["left", "right"])
      .compile({ checkpointer: saver });
    for (const q of ["L", "R"]) await g.invoke({ log: [], q }, thread("engine-cond"));
  },
  async fanout_fanin(saver) {
    const g = new StateGraph(LogState)
      .addNode("a", logNode("a"))
      .addNode("b", logNode("b"))
      .addNode("c", logNode("c"))
      .addNode("d", logNode("d"))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .addEdge("a", "c")
      .addEdge(["b", "c"], "d")
      .compile({ checkpointer: saver });
    await g.invoke({ log: [], q: "hi" }, thread("engine-fan"));
  },
  async exit_linear(saver) {
    const g = linearGraph(saver);
    for (let i = 0; i < 2; i++) await g.invoke({ log: [], q: "hi" }, thread("engine-exit-linear", "exit"));
  },
  async state_history(saver) {
    const g = linearGraph(saver);
    const cfg = thread("engine-history");
    await g.invoke({ log: [], q: "hi" }, cfg);
    for await (const _ of g.getStateHistory(cfg));
    for await (const _ of g.getStateHistory(cfg, { filter: { source: "loop" }, limit: 2 }));
  },
  async failure_retry(saver) {
    let failed = false;
    const g = new StateGraph(LogState)
      .addNode("a", logNode("a"))
      .addNode("b", () => {
        if (!failed) {
          failed = true;
          throw new Error("boom");
        }
        return { log: ["b"] };
      })
      .addEdge(START, "a")
      .addEdge("a", "b")
      .compile({ checkpointer: saver });
    const cfg = thread("engine-retry");
    await g.invoke({ log: [], q: "hi" }, cfg).then(
      () => {
        throw new Error("b did not fail");
      },
      () => {},
    );
    await g.invoke(null, cfg);
  },
  async failure_siblings(saver) {
    let failed = false;
    const g = new StateGraph(LogState)
      .addNode("two", () => {
        if (!failed) {
          failed = true;
          throw new Error("boom");
        }
        return { log: ["two"] };
      })
      .addNode("one", logNode("one"))
      .addEdge(START, "one")
      .addEdge(START, "two")
      .compile({ checkpointer: saver });
    const cfg = thread("engine-siblings-fail");
    await g.invoke({ log: [], q: "hi" }, cfg).then(
      () => {
        throw new Error("two did not fail");
      },
      () => {},
    );
    await g.invoke(null, cfg);
  },
  async subgraph_node(saver) {
    const child = new StateGraph(LogState).addNode("inner", logNode("inner")).addEdge(START, "inner").compile();
    const g = new StateGraph(LogState)
      .addNode("sub", child)
      .addNode("after", logNode("after"))
      .addEdge(START, "sub")
      .addEdge("sub", "after")
      .compile({ checkpointer: saver });
    for (let i = 0; i < 2; i++) await g.invoke({ log: [], q: "hi" }, thread("engine-subgraph-node"));
  },
  async update_copy(saver) {
    const g = linearGraph(saver);
    const cfg = thread("engine-copy");
    await g.invoke({ log: [], q: "hi" }, cfg);
    const hist = [];
    for await (const s of g.getStateHistory(cfg)) hist.push(s);
    const cp = await g.updateState(hist[hist.length - 2].config, null, "__copy__");
    await g.invoke(null, at("engine-copy", cp.configurable.checkpoint_id));
  },
  async interrupt_before(saver) {
    const g = chainGraph(saver, { interruptBefore: ["s2"] });
    const cfg = thread("engine-before", "async");
    await g.invoke({ x: 1 }, cfg);
    await g.invoke(null, cfg);
  },
  ...featureScenarios,
};
