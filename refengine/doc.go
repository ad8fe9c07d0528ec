// Package refengine is a small reference Pregel engine that drives any
// spec.Saver exactly the way LangGraph's runtime drives its checkpoint
// savers.
//
// A saver that passes method-by-method checks can still break where an
// engine drives it: pending writes replayed on resume, interrupts, subgraph
// namespaces, time travel, writes that reach the saver before their
// checkpoint. refengine reproduces that traffic so tests can exercise those
// paths end to end, against any adapter, without Python. Its behaviour
// follows LangGraph's Pregel loop (format v4 checkpoints):
//
//   - A [StateGraph] builder compiles state keys and edges into LangGraph's
//     channel layout: one channel per key ([LastValue], [Reducer],
//     [Ephemeral], [Topic], [NamedBarrier]), "__start__", "branch:to:X",
//     "join:A+B:X" and the "__pregel_tasks" topic for [Send].
//   - [Graph.Invoke] runs supersteps: an input checkpoint (source "input",
//     step -1 on a fresh thread), one "loop" checkpoint per superstep, the
//     writes of every task saved with PutWrites as it finishes and applied in
//     task-path order, versions minted by the saver's NextVersion when it
//     implements spec.VersionGenerator (else spec.NextVersion), and
//     deterministic task IDs computed as LangGraph computes them ([TaskID]).
//   - A failing task saves "__error__" while its siblings' writes are kept;
//     resuming (Invoke with nil) restores the tasks whose writes are saved
//     and re-runs only the others.
//   - [Interrupt] pauses a node for input ("__interrupt__"); [Command]
//     resumes it ("__resume__" under the null task ID, or a resume map by
//     interrupt ID). [WithInterruptBefore] and [WithInterruptAfter] stop
//     around named nodes.
//   - A compiled graph added with [StateGraph.AddSubgraph] runs in namespace
//     "node:taskID" (nested with "|") on the parent's saver, with "parents"
//     metadata; its interrupts bubble up and resume.
//   - [Graph.GetState], [Graph.History] and [Graph.UpdateState] read and
//     rewrite history; Invoke with RunConfig.CheckpointID replays from an
//     older checkpoint through a "fork" checkpoint.
//   - Durability: [DurabilitySync], [DurabilityAsync] (background saver
//     calls: chained Puts, concurrent PutWrites) and [DurabilityExit] (one
//     Put at the end of each invocation).
//
// For exact, reproducible call sequences, set RunConfig.Deterministic (tasks
// run one at a time, saver calls on the caller's goroutine) and, for
// byte-identical traces, RunConfig.NewCheckpointID = [SequentialIDs](t).
// [Record] wraps a saver and logs every call with its arguments and
// results; [MarshalTrace] writes the log as JSON and [Replay] runs a trace
// against another saver, checking that every read returns what was
// recorded. Package enginetest holds ready-made scenarios built on all of
// this; the conformance suite runs them against every adapter, and replays
// the golden traces of those scenarios ([GoldenTraces]) against it.
//
// Deliberate differences from LangGraph, none of which changes what a
// saver must support: a Command's resume write is placed after its update
// writes (so a re-sent null-task batch keeps its write indices instead of
// storing an update twice); GetState does not count a task's saved
// "__resume__" list as a result (LangGraph drops such a task from Next);
// nested loops attach their saved writes on the first tick unless
// RunConfig.NestedReplayQuirk asks for LangGraph's behaviour (finished
// siblings of an interrupted subgraph task run again); node update keys are applied in sorted order, static edges
// in sorted target order.
//
// State values follow the plain-value model of spec.Normalize (nil, bool,
// int64, float64, string, []byte, []any, map[string]any). Sends are stored as
// {"node", "arg"} maps, interrupts as lists of {"value", "id"} maps and
// errors as their message. What refengine leaves out, because savers see
// nothing new in it: the functional API, node caches and retry policies,
// delta channels, deferred nodes, stream modes, subgraphs invoked from
// inside a node function (and their "|1" namespace counter), and time travel
// addressed through a subgraph snapshot's checkpoint map. Stateful
// subgraphs ([Stateful]) and the parent-replay lookup are included.
package refengine
