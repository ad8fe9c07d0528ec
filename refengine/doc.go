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
//     call) and keeps its state across runs. A subgraph's node steers the
//     calling graph by returning [ToParent] (LangGraph's
//     Command(graph=Command.PARENT)): the calling task finishes with the
//     Command's writes.
//   - [Graph.GetState], [Graph.History], [Graph.UpdateState] and
//     [Graph.BulkUpdateState] read and rewrite history, of the root or
//     (with RunConfig.Namespace) of a subgraph, added with AddSubgraph or
//     called by a node added with [StateGraph.AddNodeCalling]; a copy
//     superstep followed by update supersteps forks a checkpoint and
//     updates the fork (LangGraph's copy-and-update). Invoke with
//     RunConfig.CheckpointID replays from an older checkpoint through a
//     "fork" checkpoint. A run or update addressed by checkpoint ID also
//     reads the latest checkpoint, to tell whether the thread has moved
//     past the one addressed: an update then stores no writes on it, and a
//     run continuing from an update or fork checkpoint forks it.
//   - Durability: [DurabilitySync], [DurabilityAsync] (background saver
//     calls: chained Puts, concurrent PutWrites) and [DurabilityExit] (one
//     Put at the end of each invocation; with delta channels, the run's
//     delta writes that no final snapshot covers are first stored on the
//     checkpoint the run started from, or on a new thread on a stub
//     checkpoint of step -2 with no parent, under task IDs derived from
//     the superstep, as LangGraph Python does).
//
// For exact, reproducible call sequences, set RunConfig.Deterministic (tasks
// run one at a time, saver calls on the caller's goroutine) and, for
// byte-identical traces, RunConfig.NewCheckpointID = trace.SequentialIDs(t).
// Package refengine/trace records every saver call of a run, writes it as
// JSON and replays it against another saver; package refengine/enginetest
// holds ready-made scenarios built on all of this, which the conformance
// suite runs against every adapter, and the golden traces it replays: the
// saver traffic LangGraph Python itself produced on the same scenarios (as
// the contract reads it), LangGraph.js's where only LangGraph.js has a
// scenario, and refengine's own traffic where neither has (today every
// deterministic scenario has a LangGraph Python trace).
//
// Deliberate differences from LangGraph, none of which changes what a
// saver must support: Invoke rejects a non-empty RunConfig.Namespace
// (LangGraph silently runs the root in "" instead); a node that swallows the
// error of Interrupt fails instead of finishing as if it had not asked;
// GetState does not count a task's saved "__resume__" list as a result
// (LangGraph drops such a task from Next); nested loops attach their saved
// writes on the first tick unless RunConfig.NestedReplayQuirk asks for
// LangGraph's behaviour (finished siblings of an interrupted subgraph task
// run again); node update keys are applied in sorted order, static edges
// in sorted target order; the state APIs find a subgraph that a node
// function calls only when the node names it (AddNodeCalling), where
// LangGraph inspects the function.
//
// State values follow the plain-value model of spec.Normalize (nil, bool,
// int64, float64, string, []byte, []any, map[string]any). Sends are stored as
// {"node", "arg"} maps, interrupts as lists of {"value", "id"} maps and
// errors as their message. What refengine leaves out, because savers see
// nothing new in it: the functional API, node caches and retry policies
// (LangGraph saves a cache hit's writes and a retried task's last attempt
// as a task's writes, which is what running the node saves), delta
// channels, deferred nodes, stream modes, and time travel addressed through
// a subgraph snapshot's checkpoint map. Stateful subgraphs and the
// parent-replay lookup are included.
//
// # Checked against LangGraph Python
//
// LangGraph Python is the reference runtime. TestAgainstLangGraphPython
// (package refengine/enginetest) runs 57 scenarios on refengine and on
// LangGraph Python 1.2.24 (langgraph-checkpoint 4.3.2, its InMemorySaver
// recorded by bridge/python/checkpointkit_bridge/recorder.py; the graphs
// are in bridge/python/scenarios) and compares their saver traffic in the
// canonical form of trace.Canonical; every scenario agrees. To re-run the
// check, create the pinned virtualenv (source ci/lib/backends.bash;
// ck_install_lgpy) and run
//
//	go test ./refengine/enginetest -run 'TestAgainstLangGraphPython|TestLangGraphPythonGoldenTraces'
//
// (CHECKPOINTKIT_PYTHON names another interpreter by absolute path; the
// test skips without one, and fails when CI is set). With -update,
// TestLangGraphPythonGoldenTraces rewrites the Python golden traces that
// the conformance suite replays (enginetest.GoldenTraces).
//
// The comparison leaves out what no engine can match and undoes one
// difference: scenarios with concurrent tasks or background Puts (async
// durability) compare their calls as multisets, ordered by namespace; the
// writes of one PutWrites are compared by channel (refengine sorts a
// node's update keys); a failed task's __error__ value, which LangGraph's
// serde stores as the exception's repr (ValueError('boom'),
// langgraph/pregel/_runner.py:591), is compared by its message, which
// refengine stores. Retry policies and node caches have no refengine
// counterpart: their scenarios retry inside the node or run it again,
// which saves what LangGraph saves (only the attempt that counted,
// langgraph/pregel/_retry.py:593; a cache hit's writes saved as the task's
// own, _loop.py:1784).
//
// What checking against 1.2.24 changed in refengine, with the Python
// source (site-packages/langgraph/...):
//
//   - Interrupt IDs: a task's interrupt after n answered ones has the ID
//     XXH3(ns + "|" + n), the first XXH3(ns) (types.py:583); a resume map
//     answers a task's next interrupt by that ID, or by the first ID as
//     older versions saved it (pregel/_algo.py:1325). A re-answered
//     interrupt saves the answers up to it (types.py:1037).
//   - Explicit checkpoints: a run addressed by ID reads the latest
//     checkpoint after the one addressed (pregel/_loop.py:1857,
//     pregel/_checkpoint.py:174); when the thread has moved past it, the
//     run replays finished tasks (_loop.py:990) and forks even from an
//     update or fork checkpoint (_loop.py:1003-1010).
//   - UpdateState builds the update on the checkpoint's channels alone: the
//     saved writes of tasks that already finished are applied only by an
//     update as End (checked against LangGraph Python 1.2.24 by the
//     update_finished_task scenario; older runtimes applied them).
//   - UpdateState addressed by ID reads the latest checkpoint too and stores
//     the update's writes on the updated checkpoint only when it is the
//     latest (pregel/main.py:4327); the writes carry the task path
//     "~__interrupt__, <i>" (main.py:2025, 4295), and an update without a
//     task to reuse takes the ID uuid5(checkpoint, "__interrupt__[:i]")
//     (main.py:4379).
//   - UpdateState as InputTask saves the input write on the updated
//     checkpoint (under uuid5(its ID, "__input__"), on the same terms as a
//     node's update) before putting the input checkpoint; a fresh thread
//     gets the checkpoint only (pregel/main.py:1803-1830, 4325).
//   - A Command (update, goto) sent to an older checkpoint: the fork
//     carries its writes, none is stored on the checkpoint addressed
//     (pregel/_loop.py:1085-1088).
//   - Command(graph=PARENT) ([ToParent], pregel/_retry.py:638) and the
//     state APIs on subgraphs that node functions call (AddNodeCalling,
//     main.py:886, 1154).
//
// # Differences from LangGraph.js
//
// TestAgainstLangGraphJS (package refengine/enginetest) runs 29 scenarios
// on refengine and on LangGraph.js 1.7.3 (with its own
// @langchain/langgraph-checkpoint 1.2.2 MemorySaver, recorded by
// bridge/js/recorder.js) and compares their saver traffic in the canonical
// form of trace.Canonical. Where LangGraph.js differs from LangGraph
// Python, refengine keeps Python's behaviour and the test undoes the
// difference before comparing (or, for command_goto and fanout_fanin,
// checks that the traces agree up to the documented divergence); the
// LangGraph.js golden traces name these behaviours in their Notes
// ("LangGraph.js: ..."). Sources are cited from LangGraph.js's dist/
// folder and LangGraph Python's site-packages/langgraph/:
//
//   - Channels stored in a checkpoint: LangGraph.js stores every available
//     channel, versioned or not (a reducer key's default "log": [], an
//     empty "__pregel_tasks"; channels/base.js:166); Python only channels
//     with a version (pregel/_checkpoint.py:268).
//   - updated_channels: LangGraph.js never sets it; Python stores the
//     channels the step updated (pregel/_checkpoint.py:268).
//   - Versions: LangGraph.js's are integers
//     (langgraph-checkpoint/dist/base.js:121), Python's InMemorySaver
//     mints "<counter>.<random>" (checkpoint/memory/__init__.py:622); the
//     canonical form compares counters.
//   - Task IDs: each runtime hashes a task's identity its own way; the
//     canonical form names a task by namespace, step and task path.
//   - A Command without resume (goto, update) on a thread: Python treats
//     any Command as resuming, so its writes go under the null task ID and
//     no input checkpoint is put (pregel/_loop.py:941-956, 1114);
//     LangGraph.js puts an input checkpoint after them
//     (pregel/loop.js:906-908).
//   - Resuming a subgraph: LangGraph.js copies the parent task's resume
//     value into every nested loop as a null-task __resume__ write in the
//     subgraph's namespace (pregel/loop.js:888-889); Python writes nothing
//     there, the subgraph's interrupt finds the value through the parent
//     task's scratchpad (pregel/_algo.py:1338).
//   - A resume map: Python writes nothing for it, the map travels with the
//     run (pregel/_loop.py:1080); LangGraph.js saves a __resume__ write per
//     resumed interrupt, filed under the interrupt's ID as if it were a
//     task ID (pregel/io.js:48).
//   - A plain Command(resume) while two interrupts are pending: Python
//     refuses it before any write (pregel/_loop.py:1067-1075), and so does
//     refengine (ErrMultipleInterrupts); LangGraph.js refuses it only in
//     strict resume mode (pregel/loop.js:1221).
//   - Versions within a step: Python mints one version per application of
//     writes and gives it to every consumed and updated channel
//     (pregel/_algo.py:276); LangGraph.js gives consumed trigger channels (a
//     join barrier) one version and the updated channels the next
//     (pregel/algo.js:131).
//   - Conditional edges: the branch:to:X write carries None in Python
//     (graph/state.py:1590), the source node's name in LangGraph.js
//     (graph/state.js:697).
//   - Errors: a failed task's __error__ write holds the exception, which
//     Python's serde stores as its repr (pregel/_runner.py:591);
//     LangGraph.js stores {"message", "name"} (pregel/runner.js:202),
//     refengine the message.
//   - A failing task's running siblings: LangGraph.js checks its abort
//     signal after a sibling's node returned (pregel/retry.js:43), so a
//     sibling that finishes saves an __error__ ("This operation was
//     aborted") together with its writes; Python saves a finished
//     sibling's writes as they are and restores them on retry, and so does
//     refengine.
//   - With async durability the order of a background Put relative to the
//     next step's writes, and the order in which concurrent tasks commit,
//     are up to the scheduler in every engine; such scenarios are compared
//     as multisets of calls, and pending writes read back by task.
//
// LangGraph Python 1.2.24 agrees with LangGraph.js where older Python
// releases (and pregel-semantics.md) did not, and refengine follows: later
// interrupt IDs of a task (types.py:583, interrupt.js:96); the read of the
// latest checkpoint after one addressed by ID (pregel/_checkpoint.py:174);
// no update writes on a checkpoint the thread moved past, and the
// "~__interrupt__, <i>" task path of update writes (pregel/main.py:4327,
// 4295); a fork when continuing from an update checkpoint the thread moved
// past (pregel/_loop.py:1003-1010, pregel/loop.js:902); the resume write
// of a Command after its update (pregel/_loop.py:490-496).
package refengine
