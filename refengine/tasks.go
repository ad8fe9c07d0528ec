package refengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// execute runs one task and commits its outcome with LangGraph's rules:
// writes (or a no-writes marker) on success; the interrupt plus resume
// writes on an interrupt; writes so far plus an error write on failure.
// The node runs with ctx; the saver calls use the loop's saver context.
func (l *loop) execute(ctx context.Context, t *task) error {
	sp := &scratchpad{loop: l, task: t, parent: l.parentSP, resume: t.resume}
	writes, err := l.runTask(context.WithValue(ctx, scratchKey{}, sp), t, sp)
	var pc *ParentCommand
	if errors.As(err, &pc) {
		if pc, ok := l.parentCommand(err); ok {
			// The subgraph this task ran steered this graph: its Command
			// is the task's result.
			cmd := pc.Command
			writes, err = l.g.nodeWrites(ctx, t.node, l.chans, cmd.Update, Route{Nodes: cmd.Goto, Sends: cmd.Sends})
		} else {
			return err // raised here: nothing is saved, the parent handles it
		}
	}
	sp.mu.Lock()
	emitted := slices.Clone(sp.emitted)
	sp.mu.Unlock()
	var gi *graphInterrupt
	isInterrupt := errors.As(err, &gi)
	if !isInterrupt && sp.interruptRaised() {
		// The node dropped the error of Interrupt: fail the task rather
		// than lose the interrupt.
		if err == nil {
			err = ErrInterruptSwallowed
		} else {
			err = fmt.Errorf("%w; it returned: %w", ErrInterruptSwallowed, err)
		}
	}
	switch {
	case isInterrupt:
		if len(gi.interrupts) > 0 {
			enc, eerr := encodeInterrupts(gi.interrupts)
			if eerr != nil {
				return &TaskError{Node: t.node.name, TaskID: t.id, Err: eerr}
			}
			batch := append([]spec.Write{{Channel: spec.InterruptChannel, Value: enc}}, emitted...)
			l.putWrites(l.sctx, t.id, batch, t.path)
		}
		return gi
	case err != nil:
		l.putWrites(l.sctx, t.id, append(emitted, spec.Write{Channel: spec.ErrorChannel, Value: err.Error()}), t.path)
		var te *TaskError
		if errors.As(err, &te) {
			return err // a subgraph's task failure keeps its origin
		}
		return &TaskError{Node: t.node.name, TaskID: t.id, Err: err}
	}
	all := append(emitted, writes...)
	if len(all) == 0 {
		all = []spec.Write{{Channel: noWritesChannel}}
	}
	t.writes = all
	l.putWrites(l.sctx, t.id, all, t.path)
	return nil
}

// runTask runs the node of t and returns its channel writes. A panicking
// node fails its task like an error would.
func (l *loop) runTask(ctx context.Context, t *task, sp *scratchpad) (writes []spec.Write, err error) {
	defer func() {
		if r := recover(); r != nil {
			writes, err = nil, fmt.Errorf("%w: %v", ErrNodePanic, r)
		}
	}()
	n := t.node
	var upd Update
	var gotos []string
	var sends []Send
	switch {
	case n.start:
		upd = Update(t.input)
	case n.sub != nil:
		upd, err = l.runSubgraph(ctx, t, sp)
	default:
		var in any
		if in, err = spec.Normalize(map[string]any(t.input)); err != nil {
			break
		}
		if n.cmd == nil {
			upd, err = n.fn(ctx, State(in.(map[string]any)))
			break
		}
		var cmd Command
		if cmd, err = n.cmd(ctx, State(in.(map[string]any))); err == nil {
			if cmd.Resume != nil || cmd.ResumeMap != nil {
				err = fmt.Errorf("%w: node %q returned a Command with a resume value", ErrInvalidUpdate, n.name)
			}
			upd, gotos, sends = cmd.Update, cmd.Goto, cmd.Sends
		}
	}
	if err != nil {
		return nil, err
	}
	return l.g.nodeWrites(ctx, n, l.chans, upd, Route{Nodes: gotos, Sends: sends})
}

// nodeWrites turns a node's update into channel writes in LangGraph's
// order: state keys (sorted), the gotos and Sends of a returned Command,
// static edges, join barriers, then the writes of conditional edges
// evaluated on the state with the node's own writes applied. command holds
// the gotos and Sends of a Command the node returned.
func (g *Graph) nodeWrites(ctx context.Context, n *node, chans map[string]channel, upd Update, command Route) ([]spec.Write, error) {
	var writes []spec.Write
	for _, k := range slices.Sorted(maps.Keys(upd)) {
		if !g.isKey(k) {
			continue
		}
		v, err := spec.Normalize(upd[k])
		if err != nil {
			return nil, fmt.Errorf("update of key %q: %w", k, err)
		}
		writes = append(writes, spec.Write{Channel: k, Value: v})
	}
	rw, err := g.routeWrites(n, command)
	if err != nil {
		return nil, err
	}
	writes = append(writes, rw...)
	for _, e := range n.edges {
		writes = append(writes, spec.Write{Channel: branchPrefix + e})
	}
	for _, j := range n.joins {
		writes = append(writes, spec.Write{Channel: j, Value: n.name})
	}
	if len(n.routers) == 0 {
		return writes, nil
	}
	fresh, err := g.freshState(chans, writes)
	if err != nil {
		return nil, err
	}
	for _, r := range n.routers {
		route, err := r(ctx, maps.Clone(fresh))
		if err != nil {
			return nil, err
		}
		rw, err := g.routeWrites(n, route)
		if err != nil {
			return nil, err
		}
		writes = append(writes, rw...)
	}
	return writes, nil
}

// routeWrites are the writes of a route (or a Command's gotos and Sends)
// from node n: branch:to:X (value None) per node but End, then one
// __pregel_tasks write per Send.
func (g *Graph) routeWrites(n *node, r Route) ([]spec.Write, error) {
	var writes []spec.Write
	for _, target := range r.Nodes {
		if target == End {
			continue
		}
		if tn := g.byName[target]; tn == nil || tn.start {
			return nil, fmt.Errorf("%w: route from %q to unknown node %q", ErrInvalidGraph, n.name, target)
		}
		writes = append(writes, spec.Write{Channel: branchPrefix + target})
	}
	for _, s := range r.Sends {
		if tn := g.byName[s.Node]; tn == nil || tn.start {
			return nil, fmt.Errorf("%w: send from %q to unknown node %q", ErrInvalidGraph, n.name, s.Node)
		}
		v, err := sendValue(s)
		if err != nil {
			return nil, err
		}
		writes = append(writes, spec.Write{Channel: tasksChannel, Value: v})
	}
	return writes, nil
}

// freshState is the state as of the start of the superstep with writes
// applied (LangGraph's "fresh" local read for conditional edges).
func (g *Graph) freshState(chans map[string]channel, writes []spec.Write) (State, error) {
	byKey := map[string][]any{}
	for _, w := range writes {
		if g.isKey(w.Channel) {
			byKey[w.Channel] = append(byKey[w.Channel], w.Value)
		}
	}
	st := State{}
	for _, k := range g.keys {
		v, ok := chans[k].checkpoint()
		ch := g.channels[k].newChannel(v, ok)
		if _, err := ch.update(k, byKey[k]); err != nil {
			return nil, err
		}
		if v, ok := ch.get(); ok {
			st[k] = v
		}
	}
	return st, nil
}
