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
//     [Ephemeral], [Topic], [AccumulatingTopic]), "__start__",
//     "branch:to:X", "join:A+B:X" (from [StateGraph.AddJoin]) and the
//     "__pregel_tasks" topic for [Send]. [CompileOptions] give it a saver
//     and static interrupts.
//   - [Graph.Invoke] runs supersteps on an [Input]: a [State] (new input),
//     a [Command] or nil (continue). It writes an input checkpoint (source
//     "input", step -1 on a fresh thread), one "loop" checkpoint per
//     superstep, the writes of every task saved with PutWrites as it
//     finishes and applied in task-path order, versions minted by the
//     saver's NextVersion when it implements spec.VersionGenerator (else
//     spec.NextVersion), and deterministic task IDs computed as LangGraph
//     computes them (xxh3-128 of the checkpoint ID, namespace, step, node
//     and triggers). The root graph always runs in namespace "".
//   - A failing task saves "__error__" and cancels the context of its
//     running siblings (cause [ErrSiblingFailed]; in deterministic mode the
//     tasks after it run with that context): a sibling that finished, or
//     finishes anyway, keeps its writes, one that returns an error saves
//     it. Invoke returns the first failure as a [*TaskError]; resuming
//     (Invoke with nil) restores the tasks whose writes are saved and
//     re-runs only the others.
//   - [Interrupt] pauses a node for input ("__interrupt__"); a [Command]
//     resumes it ("__resume__" under the null task ID, or a resume map by
//     interrupt ID). A node that drops the error of Interrupt fails with
//     [ErrInterruptSwallowed]. CompileOptions.InterruptBefore and
//     InterruptAfter stop around named nodes.
//   - A node added with [StateGraph.AddCommandNode] returns a [Command]:
//     its update, then its gotos and Sends (written as a conditional
//     edge's routes).
//   - A compiled graph added with [StateGraph.AddSubgraph], or invoked by
//     a node function with [Graph.InvokeFromNode], runs in the namespace
//     spec.ChildNamespace(parent, node, taskID) on the parent's saver, with
//     "parents" metadata; a second or third call in one task runs in
//     "…|1", "…|2", each a lineage of its own. Its interrupts bubble up and
//     resume. A subgraph compiled with CompileOptions.Stateful runs in the
//     recast namespace (spec.RecastNamespace; "…|1" after it for a second
//     call) and keeps its state across runs.
//   - [Graph.GetState], [Graph.History], [Graph.UpdateState] and
//     [Graph.BulkUpdateState] read and rewrite history, of the root or
//     (with RunConfig.Namespace) of a subgraph; a copy superstep followed
//     by update supersteps forks a checkpoint and updates the fork
//     (LangGraph's copy-and-update). Invoke with RunConfig.CheckpointID
//     replays from an older checkpoint through a "fork" checkpoint.
//   - Durability: [DurabilitySync], [DurabilityAsync] (background saver
//     calls: chained Puts, concurrent PutWrites) and [DurabilityExit] (one
//     Put at the end of each invocation).
//
// For exact, reproducible call sequences, set RunConfig.Deterministic (tasks
// run one at a time, saver calls on the caller's goroutine) and, for
// byte-identical traces, RunConfig.NewCheckpointID = trace.SequentialIDs(t).
// Package refengine/trace records every saver call of a run, writes it as
// JSON and replays it against another saver; package refengine/enginetest
// holds ready-made scenarios built on all of this, which the conformance
// suite runs against every adapter, and the golden traces it replays: the
// saver traffic LangGraph.js itself produced on the same scenarios (as the
// contract reads it), and refengine's own traffic for the two scenarios
// that have no LangGraph.js counterpart.
//
// Deliberate differences from LangGraph, none of which changes what a
// saver must support: Invoke rejects a non-empty RunConfig.Namespace
// (LangGraph silently runs the root in "" instead); a node that swallows the
// error of Interrupt fails instead of finishing as if it had not asked; a
// Command's resume write is placed after its update writes (so a re-sent
// null-task batch keeps its write indices instead of storing an update
// twice); GetState does not count a task's saved "__resume__" list as a
// result (LangGraph drops such a task from Next); nested loops attach their
// saved writes on the first tick unless RunConfig.NestedReplayQuirk asks
// for LangGraph's behaviour (finished siblings of an interrupted subgraph
// task run again); node update keys are applied in sorted order, static
// edges in sorted target order; GetState, History and UpdateState address
// (through RunConfig.Namespace, and GetState's Subgraphs option reads) only
// subgraphs added with AddSubgraph, while LangGraph also finds a compiled
// graph that a node function refers to by inspecting the function.
//
// State values follow the plain-value model of spec.Normalize (nil, bool,
// int64, float64, string, []byte, []any, map[string]any). Sends are stored as
// {"node", "arg"} maps, interrupts as lists of {"value", "id"} maps and
// errors as their message. What refengine leaves out, because savers see
// nothing new in it: the functional API, node caches and retry policies,
// delta channels, deferred nodes, stream modes, Command(graph=PARENT), and
// time travel addressed through a subgraph snapshot's checkpoint map.
// Stateful subgraphs and the parent-replay lookup are included.
//
// # Differences from LangGraph.js
//
// TestAgainstLangGraphJS (package refengine/enginetest) runs scenarios on
// refengine and on LangGraph.js 1.7.3 (with its own
// @langchain/langgraph-checkpoint 1.2.2 MemorySaver, recorded by
// bridge/js/recorder.js) and compares their saver traffic in the canonical
// form of trace.Canonical. refengine follows Python's LangGraph, as
// described in pregel-semantics.md; where LangGraph.js differs from Python,
// refengine keeps Python's behaviour and the test undoes the difference
// before comparing:
//
//   - Channels stored in a checkpoint: LangGraph.js stores every channel
//     that is available, versioned or not, so a reducer key's default
//     ("log": [] before anything was written) and an empty
//     "__pregel_tasks" topic appear in every checkpoint; Python stores only
//     channels that have an entry in channel_versions (§1.2).
//   - updated_channels: LangGraph.js leaves it unset in every checkpoint;
//     Python stores the sorted set of channels updated by the step (§1.1,
//     §2.6 item 10, §2.7).
//   - Versions: LangGraph.js's channel versions are integers, Python's
//     in-memory saver mints "<counter>.<random>" strings (§1.3); the
//     canonical form compares their order only.
//   - Task IDs: LangGraph.js derives them with its own hash, Python with
//     xxh3 over the task's identity (§3.1); the canonical form names a task
//     by its namespace, step and task path.
//   - Interrupt IDs: LangGraph.js gives the n-th interrupt of a task
//     (n > 0) the ID XXH3(ns + "|" + n); Python, and refengine, give every
//     interrupt of a task XXH3(ns) (§3.3), so a node that interrupts twice
//     stores the same ID twice.
//   - Explicit checkpoints: when a run or an update addresses a checkpoint
//     by ID, LangGraph.js also reads the thread's latest checkpoint; Python
//     reads only the one addressed (§6.2 item 1, §6.3 item 1).
//   - UpdateState as a node: Python puts the update's writes against the
//     updated checkpoint, as that node's task writes, before the update
//     checkpoint (§6.2 item 3); LangGraph.js puts only the checkpoint when
//     the updated checkpoint is not the thread's latest, and otherwise
//     gives the writes the task path "~__interrupt__, <index>" where
//     Python gives none.
//   - A Command without resume (goto, update) on a thread: Python treats
//     any Command as resuming, so its writes go under the null task ID and
//     no input checkpoint is put (§2.3 items 2 and 4); LangGraph.js puts
//     an input checkpoint after them.
//   - Continuing from an update checkpoint that is not the thread's
//     latest: LangGraph.js puts a fork checkpoint first; Python never forks
//     from an update or fork checkpoint (§2.3 item 4, §6.2, "Continuing
//     after an update").
//   - Resuming a subgraph: LangGraph.js copies the parent task's resume
//     value into every subgraph the task runs, as a null-task __resume__
//     write in the subgraph's namespace; Python writes nothing there, the
//     subgraph's interrupt takes the value from the parent task's
//     scratchpad (§2.9 item 3, §5.4).
//   - A resume map (Command.ResumeMap): Python writes nothing for it, the
//     map travels with the run (§2.3 item 2); LangGraph.js saves a
//     __resume__ write for each resumed interrupt, filed under the
//     interrupt's ID as if it were a task ID.
//   - A plain Command(resume) while two interrupts are pending: Python
//     refuses it before any write (§2.3 item 2), and so does refengine
//     (ErrMultipleInterrupts); LangGraph.js accepts it.
//   - Versions within a step: Python mints one version per application of
//     writes and gives it to every consumed and updated channel (§1.3,
//     §2.6 items 4-5); LangGraph.js gives consumed trigger channels (a join
//     barrier) one version and the updated channels the next.
//   - Conditional edges: the branch:to:X write carries None in Python
//     (§4.8), the source node's name in LangGraph.js.
//   - Errors: a failed task's __error__ write holds the exception as the
//     serde stores it (§2.10); LangGraph.js stores {"message", "name"},
//     refengine the message.
//   - A failing task's running siblings: both engines cancel them, but
//     LangGraph.js checks its abort signal after the sibling's node
//     returned, so a sibling that finishes saves an __error__ ("This
//     operation was aborted") together with its writes; Python saves a
//     finished sibling's writes as they are (sync threads cannot be
//     stopped; an async task commits an error only when cancelled while
//     running, §2.5) and restores them on retry (§2.10), and so does
//     refengine. The retry is the same: regular writes are restored even
//     next to an error.
//   - With async durability (§7) the order of a background Put relative to
//     the next step's writes, and the order in which concurrent tasks
//     commit (§2.5), are up to the scheduler in both engines; such
//     scenarios are compared as multisets of calls, and pending writes
//     read back are compared by task.
package refengine
