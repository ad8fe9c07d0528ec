// Package enginetest holds end-to-end scenarios that drive a spec.Saver
// through refengine the way LangGraph's runtime drives its savers: pending
// writes replayed on resume, interrupts, subgraph namespaces, time travel,
// writes racing checkpoints. Each scenario builds a small graph, runs it
// against the saver, and checks the final state, how often each node ran,
// what the saver stored (through List and GetTuple) and the recorded call
// sequence. Scenarios return an error describing the first mismatch, so any
// test framework can run them: package conformance wraps them as Ginkgo
// specs, this package's own tests run them on the in-memory adapter.
//
// The package also embeds golden traces ([GoldenTraces]), which the
// conformance suite replays against every adapter: LangGraph.js's saver
// traffic for every scenario written for LangGraph.js (see golden_lgjs.go
// and [NormalizeLangGraphJS]), refengine's for the deterministic scenarios
// without a LangGraph.js counterpart. Only tests should import it.
package enginetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Env is what a scenario runs against.
type Env struct {
	// Saver is the saver under test. Scenarios use thread IDs starting
	// with "engine-".
	Saver spec.Saver
	// NewID mints checkpoint IDs; nil means spec.NewCheckpointID. Golden
	// trace tests pass trace.SequentialIDs.
	NewID func(step int) string
	// Calls receives the engine's saver traffic (not the scenario's own
	// verification reads) when the scenario returns.
	Calls []trace.Call

	rec *trace.Recorder
}

// Scenario is one engine-driven check.
type Scenario struct {
	// Name is a short identifier, also the golden trace's file name.
	Name string
	// Rule is the ENGINE-* rule of spec/SPEC.md the scenario checks.
	Rule string
	// Doc says what is checked.
	Doc string
	// Run runs the scenario; nil means it passed.
	Run func(ctx context.Context, env *Env) error
}

// All returns every scenario, in a stable order.
func All() []Scenario {
	return []Scenario{
		linear, linearAsync, linearConcurrent, interruptResume, interruptTwice, fanoutFailure,
		staticInterrupts, interruptBefore, sendMapReduce, subgraphInterrupt, updateFork,
		replayHistory, exitDurability, parallelInterrupts, statefulSubgraph,
		newInputDiscards, commandGoto, siblingForks, updateFinishedTask,
	}
}

// recorder wraps env.Saver once.
func (e *Env) recorder() *trace.Recorder {
	if e.rec == nil {
		e.rec = trace.Record(e.Saver)
	}
	return e.rec
}

func (e *Env) done() { e.Calls = e.recorder().Calls() }

// mark returns the number of calls recorded so far.
func (e *Env) mark() int { return len(e.recorder().Calls()) }

// since returns the calls recorded after mark.
func (e *Env) since(mark int) []trace.Call { return e.recorder().Calls()[mark:] }

// run is the RunConfig of a scenario thread.
func (e *Env) run(thread string, d refengine.Durability, deterministic bool) refengine.RunConfig {
	return refengine.RunConfig{ThreadID: thread, Durability: d, Deterministic: deterministic, NewCheckpointID: e.NewID}
}

// checker collects the first failure of a scenario.
type checker struct {
	name string
	err  error
}

func (c *checker) failf(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(c.name+": "+format, args...)
	}
}

func (c *checker) ok() bool { return c.err == nil }

// noErr records err and reports whether there was none.
func (c *checker) noErr(what string, err error) bool {
	if err != nil {
		c.failf("%s: unexpected error: %v", what, err)
		return false
	}
	return true
}

// equal compares plain values with spec.Equal (numbers by value), other
// values with reflect.DeepEqual.
func (c *checker) equal(what string, got, want any) bool {
	ng, err1 := spec.Normalize(plain(got))
	nw, err2 := spec.Normalize(plain(want))
	if err1 == nil && err2 == nil {
		if !spec.Equal(ng, nw) {
			c.failf("%s = %#v, want %#v", what, got, want)
			return false
		}
		return true
	}
	if !reflect.DeepEqual(got, want) {
		c.failf("%s = %#v, want %#v", what, got, want)
		return false
	}
	return true
}

// plain converts the engine and spec types scenarios compare into plain
// values.
func plain(v any) any {
	switch x := v.(type) {
	case []spec.Write:
		out := []any{}
		for _, w := range x {
			out = append(out, []any{w.Channel, plain(w.Value)})
		}
		return out
	case []refengine.PendingInterrupt:
		out := []any{}
		for _, in := range x {
			out = append(out, []any{plain(in.Value), in.ID})
		}
		return out
	case spec.Config:
		return []any{x.ThreadID, x.Namespace, x.CheckpointID}
	case spec.Versions:
		out := map[string]any{}
		for k, v := range x {
			out[k] = string(v)
		}
		return out
	case spec.Metadata:
		return map[string]any(x)
	case refengine.State:
		return map[string]any(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func (c *checker) truef(cond bool, format string, args ...any) bool {
	if !cond {
		c.failf(format, args...)
	}
	return cond
}

// counter counts node executions; safe for concurrent use.
type counter struct {
	mu sync.Mutex
	n  map[string]int64
}

func newCounter() *counter { return &counter{n: map[string]int64{}} }

func (c *counter) hit(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[name]++
	return c.n[name]
}

func (c *counter) get(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// counts returns the executions of names.
func (c *counter) counts(names ...string) []int64 {
	out := make([]int64, len(names))
	for i, n := range names {
		out[i] = c.get(n)
	}
	return out
}

// logNode counts its runs and appends its name to "log".
func (c *counter) logNode(name string) refengine.NodeFunc {
	return func(ctx context.Context, s refengine.State) (refengine.Update, error) {
		c.hit(name)
		return refengine.Update{"log": []any{name}}, nil
	}
}

// history lists the checkpoints of one namespace of a thread, oldest first,
// read directly from the saver.
func history(ctx context.Context, s spec.Saver, thread, ns string) ([]*spec.Tuple, error) {
	var out []*spec.Tuple
	for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: thread, Namespace: ns}) {
		if err != nil {
			return nil, err
		}
		out = append(out, tup)
	}
	slices.Reverse(out)
	return out, nil
}

// allNamespaces lists every checkpoint of a thread, newest first.
func allNamespaces(ctx context.Context, s spec.Saver, thread string) ([]*spec.Tuple, error) {
	var out []*spec.Tuple
	for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: thread, AllNamespaces: true}) {
		if err != nil {
			return nil, err
		}
		out = append(out, tup)
	}
	return out, nil
}

func sources(ts []*spec.Tuple) []any {
	out := []any{}
	for _, t := range ts {
		out = append(out, t.Metadata["source"])
	}
	return out
}

func steps(ts []*spec.Tuple) []any {
	out := []any{}
	for _, t := range ts {
		out = append(out, t.Metadata["step"])
	}
	return out
}

// writesOf renders pending writes as "task-label channel" strings, mapping
// task IDs through labels ("?" for unknown IDs). The writes are ordered by
// task ID first, keeping each task's own order: the contract leaves the
// order across tasks to the saver (SPEC.md WRITES-9, strict; both engines
// sort tasks themselves) but fixes the order within a task (WRITES-13), so
// a scenario compares only what a saver must keep.
func writesOf(ws []spec.PendingWrite, labels map[string]string) []string {
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(a, b spec.PendingWrite) int { return strings.Compare(a.TaskID, b.TaskID) })
	out := []string{}
	for _, w := range ws {
		l, ok := labels[w.TaskID]
		if !ok {
			l = "?" + w.TaskID
		}
		out = append(out, l+" "+w.Channel)
	}
	return out
}

// methods renders a call sequence compactly: "Put", "PutWrites", ...
func methods(calls []trace.Call) string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Method
	}
	return strings.Join(out, ",")
}

// parentChain checks that each checkpoint's parent is the previous one and
// the first has none.
func (c *checker) parentChain(what string, ts []*spec.Tuple) {
	for i, t := range ts {
		switch {
		case i == 0 && t.Parent != nil:
			c.failf("%s: first checkpoint has parent %v", what, t.Parent.CheckpointID)
		case i > 0 && (t.Parent == nil || t.Parent.CheckpointID != ts[i-1].Config.CheckpointID):
			c.failf("%s: checkpoint %d has parent %v, want %s", what, i, t.Parent, ts[i-1].Config.CheckpointID)
		}
	}
}

// pullID is the ID LangGraph gives the PULL task of node prepared from
// checkpoint cp for superstep step, in namespace ns.
func pullID(cp, ns string, step int, node string, triggers ...string) string {
	nodeNS := node
	if ns != "" {
		nodeNS = ns + "|" + node
	}
	parts := append([]string{nodeNS, fmt.Sprint(step), node, ids.Pull}, triggers...)
	id, err := ids.Task(cp, parts...)
	if err != nil {
		return "bad-checkpoint-id:" + cp
	}
	return id
}

func pushID(cp string, step int, node string, idx int) string {
	id, err := ids.Task(cp, node, fmt.Sprint(step), node, ids.Push, fmt.Sprint(idx))
	if err != nil {
		return "bad-checkpoint-id:" + cp
	}
	return id
}

// build compiles a graph or records the failure.
func (c *checker) build(g *refengine.StateGraph, opts refengine.CompileOptions) *refengine.Graph {
	cg, err := g.Compile(opts)
	c.noErr("compile", err)
	return cg
}

// atomicInt is an atomic counter usable by address.
type atomicInt struct{ atomic.Int64 }
