package refengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/spec"
)

// UpdateState writes values as if node asNode had produced them, on top of
// the checkpoint cfg names (the latest when cfg.CheckpointID is empty), and
// stores the result as a new checkpoint with source "update" whose parent is
// that checkpoint; updating an older checkpoint therefore starts a branch.
// The writes are also saved as pending writes of the updated checkpoint
// under the ID of the task asNode would have run as, unless cfg addresses
// a checkpoint the thread has moved past (found out by reading the latest
// checkpoint, as LangGraph Python does). An empty asNode means
// the node that ran last; [CopyNode] forks the checkpoint unchanged (source
// "fork", values must be nil; see BulkUpdateState to update the copy);
// [InputTask] applies values as new graph input (source "input"); [End]
// (values nil) finishes the pending tasks without running them, so nothing
// is left to run. It returns the new checkpoint's config.
func (g *Graph) UpdateState(ctx context.Context, cfg RunConfig, values Update, asNode string) (spec.Config, error) {
	return g.BulkUpdateState(ctx, cfg, []StateUpdate{{Values: values, AsNode: asNode}})
}

// StateUpdate is one update of a [Graph.BulkUpdateState] superstep: Values
// written as if node AsNode had produced them, AsNode as in UpdateState.
type StateUpdate struct {
	Values Update
	AsNode string
}

// BulkUpdateState applies supersteps of updates, as LangGraph's
// bulk_update_state (pregel-semantics §6.2): the first superstep updates
// the checkpoint cfg names, each later one the checkpoint the previous one
// stored (read back by ID). A superstep stores one checkpoint: its updates
// are applied together, each saving its writes under the ID of a task of
// its node (several updates need every AsNode); [CopyNode], [InputTask] and
// [End] must be alone in their superstep. A copy followed by update
// supersteps is LangGraph's copy-and-update: a "fork" sibling of the
// checkpoint, then "update" checkpoints on top of the fork (§6.2 item 5).
// It returns the last checkpoint's config.
func (g *Graph) BulkUpdateState(ctx context.Context, cfg RunConfig, supersteps ...[]StateUpdate) (spec.Config, error) {
	opts, err := g.runOptions(cfg)
	if err != nil {
		return spec.Config{}, err
	}
	sub, err := g.graphAt(cfg.Namespace)
	if err != nil {
		return spec.Config{}, err
	}
	if len(supersteps) == 0 {
		return spec.Config{}, fmt.Errorf("refengine: %w: no supersteps to apply", spec.ErrInvalidArgument)
	}
	for _, ups := range supersteps {
		if err := checkSuperstep(ups); err != nil {
			return spec.Config{}, err
		}
	}
	var out spec.Config
	for i, ups := range supersteps {
		if out, err = sub.updateSuperstep(ctx, g.saver, opts, cfg, ups, i == 0); err != nil {
			return spec.Config{}, err
		}
		cfg.CheckpointID = out.CheckpointID
	}
	return out, nil
}

// checkSuperstep refuses a superstep without updates, and one of several
// updates where one has no node or a special one (copy, input, end).
func checkSuperstep(ups []StateUpdate) error {
	if len(ups) == 0 {
		return fmt.Errorf("refengine: %w: a superstep without updates", spec.ErrInvalidArgument)
	}
	if len(ups) == 1 {
		return nil
	}
	for _, u := range ups {
		switch u.AsNode {
		case "":
			return fmt.Errorf("refengine: %w: each of several updates needs its node", spec.ErrInvalidArgument)
		case CopyNode, InputTask, End:
			return fmt.Errorf("refengine: %w: update as %q must be alone in its superstep", spec.ErrInvalidArgument, u.AsNode)
		}
	}
	return nil
}

// updateSuperstep applies one superstep of updates to the checkpoint cfg
// names (LangGraph's perform_superstep); g is the graph of cfg.Namespace.
// first marks the first superstep of a bulk update.
func (g *Graph) updateSuperstep(ctx context.Context, saver spec.Saver, opts runOpts, cfg RunConfig, ups []StateUpdate, first bool) (spec.Config, error) {
	loc := spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cfg.CheckpointID}
	saved, err := saver.GetTuple(ctx, loc)
	switch {
	case errors.Is(err, spec.ErrNotFound) && cfg.CheckpointID == "":
		saved = nil
	case err != nil:
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	ups = slices.Clone(ups)
	l := newLoop(g, saver, cfg.Namespace, opts)
	values, asNode := ups[0].Values, ups[0].AsNode
	if asNode == CopyNode {
		return l.copyFork(ctx, saved, values)
	}
	step := -1
	cp := spec.Checkpoint{V: 4, ID: opts.newID(-2), ChannelVersions: spec.Versions{}, VersionsSeen: map[string]spec.Versions{}, ChannelValues: map[string]any{}}
	parents := map[string]any{}
	if saved != nil {
		cp = copyCheckpoint(saved.Checkpoint)
		step, _ = metadataStep(saved.Metadata)
		if p, ok := saved.Metadata["parents"].(map[string]any); ok {
			parents = p
		}
	}
	chans := g.loadChannels(&cp)
	// Delta channels that must snapshot in the update's checkpoint: those
	// the saved checkpoint's pending writes touch (a first superstep only).
	fork := map[string]bool{}
	if saved != nil {
		if chans, err = g.restoreChannels(ctx, saver, saved.Config, &cp); err != nil {
			return spec.Config{}, err
		}
		if first {
			fork = g.deltaWrites(saved.PendingWrites)
		}
	}
	prev := maps.Clone(cp.ChannelVersions) // new versions are relative to saved
	var tasks []*task
	if saved != nil {
		// The saved writes of tasks that already finished are not applied:
		// LangGraph Python 1.2 builds the update on the checkpoint's
		// channels alone (only an update as End applies them, below).
		if tasks, err = g.prepareTasks(&cp, chans, cfg.Namespace, step+1); err != nil {
			return spec.Config{}, err
		}
	}
	// The writes go on the updated checkpoint, unless the thread has moved
	// past it (its other children would read them): a first superstep
	// addressed by ID reads the latest checkpoint to tell
	// (langgraph/pregel/main.py:4327, _checkpoint.py:174).
	storeWrites := func() (bool, error) {
		if saved == nil {
			return false, nil
		}
		if first && cfg.CheckpointID != "" {
			return notSuperseded(ctx, saver, loc, saved)
		}
		return true, nil
	}
	switch asNode {
	case InputTask:
		store, err := storeWrites()
		if err != nil {
			return spec.Config{}, err
		}
		return l.updateAsInput(ctx, saved, &cp, chans, prev, step, parents, values, store, fork)
	case End:
		return l.updateAsEnd(ctx, saved, &cp, chans, prev, step, parents, tasks, values, fork)
	case "":
		if ups[0].AsNode, err = g.lastNode(&cp); err != nil {
			return spec.Config{}, err
		}
	}
	// Every update's writes first (LangGraph runs all the writers), then
	// their PutWrites, each under a task of its node, consumed in order.
	aw := make([]appliedWrites, 0, len(ups))
	for _, u := range ups {
		n := g.byName[u.AsNode]
		if n == nil {
			return spec.Config{}, fmt.Errorf("refengine: %w: update as unknown node %q", spec.ErrInvalidArgument, u.AsNode)
		}
		writes, err := g.nodeWrites(ctx, n, chans, u.Values, Route{})
		if err != nil {
			return spec.Config{}, err
		}
		aw = append(aw, appliedWrites{name: u.AsNode, triggers: []string{spec.InterruptChannel}, writes: writes})
	}
	store, err := storeWrites()
	if err != nil {
		return spec.Config{}, err
	}
	for _, a := range aw {
		maps.Copy(fork, g.deltaOverwrites(a.writes))
		if saved != nil && !store {
			// The writes cannot go on a checkpoint other children read:
			// the update snapshots the delta channels they touch instead.
			for _, w := range a.writes {
				if g.deltaWrites([]spec.PendingWrite{{Channel: w.Channel}})[w.Channel] {
					fork[w.Channel] = true
				}
			}
		}
	}
	used := map[*task]bool{}
	for i, a := range aw {
		if !store || len(a.writes) == 0 {
			continue
		}
		taskID := ""
		for _, t := range tasks {
			if t.node.name == a.name && !used[t] {
				used[t], taskID = true, t.id
				break
			}
		}
		if taskID == "" {
			// The i-th update without a task to reuse
			// (langgraph/pregel/main.py:4379).
			name := spec.InterruptChannel
			if i > 0 {
				name = fmt.Sprintf("%s:%d", spec.InterruptChannel, i)
			}
			if taskID, err = ids.UUID5(saved.Config.CheckpointID, name); err != nil {
				return spec.Config{}, err
			}
		}
		// The update task's path, (__interrupt__, i) (main.py:2025, 4295).
		path := fmt.Sprintf("~%s, %010d", spec.InterruptChannel, i)
		if err := saver.PutWrites(ctx, saved.Config, a.writes, taskID, path); err != nil {
			return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
		}
	}
	if _, err := g.applyWrites(&cp, chans, aw, l.nextVersion); err != nil {
		return spec.Config{}, err
	}
	next, err := newCheckpoint(&cp, chans, opts.newID(step+1), nil)
	if err != nil {
		return spec.Config{}, err
	}
	parentCfg := spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace}
	if saved != nil {
		parentCfg = saved.Config
	}
	md := opts.withExtras(spec.Metadata{"source": "update", "step": int64(step + 1), "parents": parents})
	if err := g.planUpdateSnapshots(&next, md, saved, chans, writtenChannels(aw), fork, prev, l.nextVersion); err != nil {
		return spec.Config{}, err
	}
	out, err := saver.Put(ctx, parentCfg, next, md, newVersions(prev, next.ChannelVersions))
	if err != nil {
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	return out, nil
}

// updateAsEnd finishes the pending tasks of saved without running them
// (UpdateState with End, pregel-semantics §6.2 item 6): the null writes and
// the writes of tasks that already finished are applied, every pending
// task's triggers are consumed, and an "update" checkpoint (ID clock
// sequence = step, metadata step+1) is put, with nothing left to run.
func (l *loop) updateAsEnd(ctx context.Context, saved *spec.Tuple, cp *spec.Checkpoint, chans map[string]channel, prev spec.Versions, step int, parents map[string]any, tasks []*task, values Update, fork map[string]bool) (spec.Config, error) {
	if values != nil {
		return spec.Config{}, fmt.Errorf("refengine: %w: update as %q takes no values", spec.ErrInvalidArgument, End)
	}
	if saved == nil {
		return spec.Config{}, fmt.Errorf("refengine: %w: update as %q needs a checkpoint", spec.ErrInvalidArgument, End)
	}
	updated, err := l.g.applySaved(cp, chans, tasks, saved.PendingWrites, l.nextVersion)
	if err != nil {
		return spec.Config{}, err
	}
	aw := make([]appliedWrites, 0, len(tasks))
	for _, t := range tasks {
		aw = append(aw, appliedWrites{name: t.node.name, path: t.path, triggers: t.triggers})
	}
	if len(aw) > 0 {
		up, err := l.g.applyWrites(cp, chans, aw, l.nextVersion)
		if err != nil {
			return spec.Config{}, err
		}
		updated = append(updated, up...)
	}
	next, err := newCheckpoint(cp, chans, l.opts.newID(step), nil)
	if err != nil {
		return spec.Config{}, err
	}
	md := l.opts.withExtras(spec.Metadata{"source": "update", "step": int64(step + 1), "parents": parents})
	if err := l.g.planUpdateSnapshots(&next, md, saved, chans, updated, fork, prev, l.nextVersion); err != nil {
		return spec.Config{}, err
	}
	out, err := l.saver.Put(ctx, saved.Config, next, md, newVersions(prev, next.ChannelVersions))
	if err != nil {
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	return out, nil
}

// updateAsInput applies values as graph input on top of saved (UpdateState
// with InputTask, langgraph/pregel/main.py:1803): the input write saved
// against saved (when store) under the task ID uuid5(saved's ID,
// "__input__"), then an "input" checkpoint.
func (l *loop) updateAsInput(ctx context.Context, saved *spec.Tuple, cp *spec.Checkpoint, chans map[string]channel, prev spec.Versions, step int, parents map[string]any, values Update, store bool, fork map[string]bool) (spec.Config, error) {
	in, err := spec.Normalize(map[string]any(values))
	if err != nil {
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	writes := []spec.Write{{Channel: Start, Value: in}}
	if store {
		taskID, err := ids.UUID5(saved.Config.CheckpointID, InputTask)
		if err != nil {
			return spec.Config{}, err
		}
		if err := l.saver.PutWrites(ctx, saved.Config, writes, taskID, ""); err != nil {
			return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
		}
	}
	updated, err := l.g.applyWrites(cp, chans, []appliedWrites{{name: InputTask, writes: writes}}, l.nextVersion)
	if err != nil {
		return spec.Config{}, err
	}
	next, parentCfg := -1, l.config("")
	if saved != nil {
		next, parentCfg = step+1, saved.Config
	}
	out, err := newCheckpoint(cp, chans, l.opts.newID(next), nil)
	if err != nil {
		return spec.Config{}, err
	}
	md := l.opts.withExtras(spec.Metadata{"source": "input", "step": int64(next), "parents": parents})
	if err := l.g.planUpdateSnapshots(&out, md, saved, chans, updated, fork, prev, l.nextVersion); err != nil {
		return spec.Config{}, err
	}
	cfg, err := l.saver.Put(ctx, parentCfg, out, md, newVersions(prev, out.ChannelVersions))
	if err != nil {
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	return cfg, nil
}

// notSuperseded reads the latest checkpoint of loc's thread and namespace
// and reports whether it is saved, the checkpoint loc addressed (LangGraph's
// checkpoint_superseded, negated; langgraph/pregel/_checkpoint.py:174).
func notSuperseded(ctx context.Context, saver spec.Saver, loc spec.Config, saved *spec.Tuple) (bool, error) {
	loc.CheckpointID = ""
	latest, err := saver.GetTuple(ctx, loc)
	switch {
	case errors.Is(err, spec.ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("refengine: read the latest checkpoint: %w", err)
	}
	return latest.Checkpoint.ID == saved.Checkpoint.ID, nil
}
