// RecordingSaver logs LangGraph.js's saver traffic in refengine/trace's
// JSON shape and forwards every call unchanged.
import { test } from "node:test";
import assert from "node:assert/strict";

import { Annotation, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { RecordingSaver } from "../recorder.js";

const State = Annotation.Root({ log: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });

test("a linear run is recorded call by call", async () => {
  const saver = new RecordingSaver(new MemorySaver());
  const g = new StateGraph(State)
    .addNode("a", () => ({ log: ["a"] }))
    .addEdge(START, "a")
    .compile({ checkpointer: saver });
  const cfg = { configurable: { thread_id: "t" } };
  const out = await g.invoke({ log: [] }, cfg);
  assert.deepEqual(out.log, ["a"]);
  const calls = saver.trace().calls;
  assert.deepEqual(
    calls.map((c) => c.method),
    ["GetTuple", "Put", "PutWrites", "Put", "PutWrites", "Put"],
  );
  assert.equal(calls[0].not_found, true);
  const [put, writes] = [calls[3], calls[4]];
  assert.deepEqual(put.metadata, { source: "loop", step: 0, parents: {} });
  assert.equal(typeof put.new_versions["branch:to:a"], "string", "versions are recorded as strings");
  assert.equal(put.result.checkpoint_id, put.checkpoint.id);
  assert.equal(writes.config.checkpoint_id, put.checkpoint.id);
  assert.equal(writes.task_path, "~__pregel_pull, a");
  assert.deepEqual(writes.writes, [{ channel: "log", value: ["a"] }]);
  // Reads record what they returned.
  await g.getState(cfg);
  const read = saver.trace().calls.at(-1);
  assert.equal(read.method, "GetTuple");
  assert.deepEqual(read.tuple.checkpoint.channel_values.log, ["a"]);
  assert.equal(read.tuple.parent.checkpoint_id, put.checkpoint.id);
});

test("a list stopped early is marked stopped", async () => {
  const saver = new RecordingSaver(new MemorySaver());
  const g = new StateGraph(State).addNode("a", () => ({ log: ["a"] })).addEdge(START, "a").compile({ checkpointer: saver });
  const cfg = { configurable: { thread_id: "t" } };
  await g.invoke({ log: [] }, cfg);
  for await (const _ of saver.list(cfg)) break;
  const list = saver.trace().calls.at(-1);
  assert.equal(list.method, "List");
  assert.equal(list.stopped, true);
  assert.equal(list.tuples.length, 1);
});
