package refengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Subgraphs: a compiled graph run by a task, either as the node itself
// (StateGraph.AddSubgraph) or called by a node function
// (Graph.InvokeFromNode). Both run a nested loop on the parent's saver in a
// namespace derived from the task's (pregel-semantics §5.1).

// InvokeFromNode runs g as a subgraph of the node whose context ctx is, as
// calling a compiled graph inside a LangGraph node does, and returns the
// subgraph's final values (all its state keys). The subgraph uses the
// parent's saver and runs in the task's namespace "node:taskID" (nested
// with '|'); a second call in the same task runs in "node:taskID|1", a
// third in "…|2", each its own checkpoint lineage. Its checkpoints carry
// "parents" metadata. A graph compiled with CompileOptions.Stateful runs
// in the recast namespace instead: "node", the calling node's name, then
// "node|1", "node|2" for further calls in the task; each such lineage
// persists across runs. When the subgraph is interrupted,
// InvokeFromNode returns an error matching ErrGraphInterrupt that the node
// must return, as with [Interrupt]; on resume the node runs again from the
// top and its calls resume in the same namespaces. Outside a running node
// it returns ErrNotInTask.
func (g *Graph) InvokeFromNode(ctx context.Context, input State) (State, error) {
	sp, _ := ctx.Value(scratchKey{}).(*scratchpad)
	if sp == nil {
		return nil, ErrNotInTask
	}
	in, err := spec.Normalize(map[string]any(input))
	if err != nil {
		return nil, fmt.Errorf("refengine: subgraph input: %w", err)
	}
	out, err := sp.loop.runChild(ctx, g, sp, in.(map[string]any))
	var gi *graphInterrupt
	if errors.As(err, &gi) {
		sp.mu.Lock()
		sp.raised = true // the node must return it, as Interrupt's error
		sp.mu.Unlock()
	}
	return out, err
}

// runSubgraph runs the compiled subgraph of task t's node and maps its
// final state onto the parent's keys.
func (l *loop) runSubgraph(ctx context.Context, t *task, sp *scratchpad) (Update, error) {
	out, err := l.runChild(ctx, t.node.sub, sp, map[string]any(t.input))
	if err != nil {
		return nil, err
	}
	upd := Update{}
	for k, v := range out {
		if l.g.isKey(k) {
			upd[k] = v
		}
	}
	return upd, nil
}

// runChild runs sub in a nested loop for the task of sp: in the task's
// namespace, recast for a stateful subgraph (LangGraph recasts it when the
// subgraph's run starts), then with the task's subgraph counter as an
// extra level from the second call on (the scratchpad's subgraph_counter,
// which LangGraph's loop adds when it is created, pregel-semantics §2.2);
// with the parent's saver, run options, saver context and checkpoint map.
func (l *loop) runChild(ctx context.Context, sub *Graph, sp *scratchpad, input map[string]any) (State, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err // a cancelled task starts no subgraph
	}
	sp.mu.Lock()
	n := sp.subgraphs
	sp.subgraphs++
	sp.mu.Unlock()
	ns := sp.task.ns
	if sub.stateful {
		ns = spec.RecastNamespace(ns)
	}
	if n > 0 { // after the recast, as LangGraph's loop adds it to its config
		ns += spec.NSSep + strconv.Itoa(n)
	}
	child := newLoop(sub, l.saver, ns, l.opts)
	child.nested = true
	child.sctx = l.sctx
	child.parentSP = sp
	child.parents = maps.Clone(l.parents)
	child.parents[l.ns] = l.checkpointID
	return child.run(ctx, input)
}

// ctxErr is ctx.Err() with its cause, when the cause says more (such as
// ErrSiblingFailed).
func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("%w: %w", err, cause)
	}
	return err
}
