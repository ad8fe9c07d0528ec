// The scenarios of refengine/enginetest, written for LangGraph.js. Each
// takes the (recording) checkpointer and drives the same graph with the
// same thread ID, inputs and calls as the Go scenario of the same name.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";

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
  async interrupt_before(saver) {
    const g = chainGraph(saver, { interruptBefore: ["s2"] });
    const cfg = thread("engine-before", "async");
    await g.invoke({ x: 1 }, cfg);
    await g.invoke(null, cfg);
  },
};
