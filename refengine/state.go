package refengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Snapshot is the state of a thread at a checkpoint, as LangGraph's
// StateSnapshot.
type Snapshot struct {
	// Values are the state keys with a value.
	Values State
	// Next names the tasks still to run.
	Next []string
	// Config addresses the checkpoint; empty ID when the thread has none.
	Config       spec.Config
	Metadata     spec.Metadata
	CreatedAt    string
	ParentConfig *spec.Config
	// Tasks are the tasks of the next superstep, with what they saved.
	Tasks []SnapshotTask
	// Interrupts are all pending interrupts of Tasks.
	Interrupts []PendingInterrupt
}

// SnapshotTask is a task of the next superstep of a snapshot.
type SnapshotTask struct {
	ID   string
	Name string
	Path string
	// Error is the saved error of a failed attempt, or "".
	Error string
	// Interrupts are the task's saved interrupts.
	Interrupts []PendingInterrupt
	// Result holds the task's saved writes to state keys, or nil.
	Result map[string]any
	// Namespace is the checkpoint namespace a subgraph run by this task
	// uses (set for subgraph nodes).
	Namespace string
	// State is the subgraph's snapshot when GetState was asked for
	// subgraphs.
	State *Snapshot
}

// StateOptions configure GetState.
type StateOptions struct {
	// Subgraphs reads the state of every pending subgraph task too
	// (recursively) into SnapshotTask.State, as LangGraph's
	// get_state(subgraphs=True) does: one more GetTuple per subgraph.
	Subgraphs bool
}

// HistoryOptions filter History.
type HistoryOptions struct {
	// Filter keeps checkpoints whose metadata matches every key.
	Filter spec.Metadata
	// Before keeps checkpoints with an ID less than it.
	Before string
	// Limit caps the number of snapshots; 0 means no limit.
	Limit int
}

// graphAt returns the (sub)graph that runs in namespace ns, found through
// the node names of the recast namespace.
func (g *Graph) graphAt(ns string) (*Graph, error) {
	cur := g
	var last *node
	for _, name := range spec.SplitNamespace(spec.RecastNamespace(ns)) {
		// A numeric level is the k-th subgraph call of the task above.
		if k, err := strconv.Atoi(name); err == nil && last != nil && k > 0 && k < len(last.calls) {
			cur = last.calls[k]
			continue
		}
		n := cur.byName[name]
		if n == nil || n.stateGraph() == nil {
			return nil, fmt.Errorf("refengine: %w: namespace %q: no subgraph %q", spec.ErrInvalidConfig, ns, name)
		}
		last, cur = n, n.stateGraph()
	}
	return cur, nil
}

// GetState returns the snapshot of the checkpoint cfg names (the latest of
// cfg.Namespace when cfg.CheckpointID is empty). For the latest checkpoint
// the saved writes of finished tasks are applied and those tasks leave
// Next; for an explicit checkpoint only null-task writes are. With
// opts.Subgraphs, the state of every pending subgraph task is read too.
func (g *Graph) GetState(ctx context.Context, cfg RunConfig, opts StateOptions) (*Snapshot, error) {
	if _, err := g.runOptions(cfg); err != nil {
		return nil, err
	}
	sub, err := g.graphAt(cfg.Namespace)
	if err != nil {
		return nil, err
	}
	return sub.snapshot(ctx, g.saver, spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cfg.CheckpointID}, opts.Subgraphs)
}

func (g *Graph) snapshot(ctx context.Context, s spec.Saver, cfg spec.Config, subgraphs bool) (*Snapshot, error) {
	tup, err := s.GetTuple(ctx, cfg)
	if errors.Is(err, spec.ErrNotFound) && cfg.CheckpointID == "" {
		return &Snapshot{Values: State{}, Config: cfg}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("refengine: get state: %w", err)
	}
	snap, err := g.snapshotOf(ctx, s, tup, cfg.CheckpointID == "")
	if err != nil || !subgraphs {
		return snap, err
	}
	for i := range snap.Tasks {
		t := &snap.Tasks[i]
		if t.Namespace == "" {
			continue
		}
		n := g.byName[t.Name]
		sc := spec.Config{ThreadID: cfg.ThreadID, Namespace: t.Namespace}
		if t.State, err = n.stateGraph().snapshot(ctx, s, sc, true); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// snapshotOf builds a snapshot from a stored tuple; the only saver call is
// the delta history of delta channels the checkpoint stores no value for.
func (g *Graph) snapshotOf(ctx context.Context, s spec.Saver, tup *spec.Tuple, applyPending bool) (*Snapshot, error) {
	cp := copyCheckpoint(tup.Checkpoint)
	chans, err := g.restoreChannels(ctx, s, tup.Config, &cp)
	if err != nil {
		return nil, err
	}
	step, _ := metadataStep(tup.Metadata)
	ns := tup.Config.Namespace
	var null []spec.Write
	for _, w := range tup.PendingWrites {
		if w.TaskID == spec.NullTaskID {
			null = append(null, spec.Write{Channel: w.Channel, Value: w.Value})
		}
	}
	if len(null) > 0 {
		if _, err := g.applyWrites(&cp, chans, []appliedWrites{{name: InputTask, writes: null}}, spec.NextVersion); err != nil {
			return nil, err
		}
	}
	tasks, err := g.prepareTasks(&cp, chans, ns, step+1)
	if err != nil {
		return nil, err
	}
	byID := map[string]*task{}
	for _, t := range tasks {
		byID[t.id] = t
	}
	if applyPending {
		var aw []appliedWrites
		for _, w := range tup.PendingWrites {
			if t := byID[w.TaskID]; t != nil && !specialOrMarker(w.Channel) {
				t.writes = append(t.writes, spec.Write{Channel: w.Channel, Value: w.Value})
			}
		}
		for _, t := range tasks {
			if len(t.writes) > 0 {
				aw = append(aw, appliedWrites{name: t.node.name, path: t.path, triggers: t.triggers, writes: t.writes})
			}
		}
		if len(aw) > 0 {
			if _, err := g.applyWrites(&cp, chans, aw, spec.NextVersion); err != nil {
				return nil, err
			}
		}
	}
	snap := &Snapshot{Values: g.readState(chans), Next: []string{}, Config: tup.Config, Metadata: tup.Metadata,
		CreatedAt: tup.Checkpoint.TS, ParentConfig: tup.Parent}
	for _, t := range tasks {
		st := SnapshotTask{ID: t.id, Name: t.node.name, Path: t.path}
		if sub := t.node.stateGraph(); sub != nil {
			st.Namespace = t.ns
			if sub.stateful {
				st.Namespace = spec.RecastNamespace(t.ns)
			}
		}
		for _, w := range tup.PendingWrites {
			if w.TaskID != t.id {
				continue
			}
			switch {
			case w.Channel == spec.ErrorChannel:
				if st.Error == "" {
					st.Error = fmt.Sprint(w.Value)
				}
			case w.Channel == spec.InterruptChannel:
				st.Interrupts = append(st.Interrupts, decodeInterrupts(w.Value)...)
			case g.isKey(w.Channel):
				if st.Result == nil {
					st.Result = map[string]any{}
				}
				st.Result[w.Channel] = w.Value
			}
		}
		snap.Interrupts = append(snap.Interrupts, st.Interrupts...)
		snap.Tasks = append(snap.Tasks, st)
		if len(t.writes) == 0 {
			snap.Next = append(snap.Next, t.node.name)
		}
	}
	return snap, nil
}

// specialOrMarker reports channels whose writes do not make a task done in
// a snapshot.
func specialOrMarker(c string) bool {
	return c == spec.ErrorChannel || c == spec.InterruptChannel || c == spec.ResumeChannel
}

// History lists the snapshots of cfg's namespace (or only cfg.CheckpointID),
// newest first, through the saver's List; pending task writes are not
// applied.
func (g *Graph) History(ctx context.Context, cfg RunConfig, opts HistoryOptions) ([]*Snapshot, error) {
	if _, err := g.runOptions(cfg); err != nil {
		return nil, err
	}
	sub, err := g.graphAt(cfg.Namespace)
	if err != nil {
		return nil, err
	}
	var out []*Snapshot
	lo := spec.ListOptions{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cfg.CheckpointID,
		Filter: opts.Filter, Before: opts.Before, Limit: opts.Limit}
	// The listing is read whole before any snapshot is built: building one
	// may read a delta history, as LangGraph Python does after its List.
	var tups []*spec.Tuple
	for tup, err := range g.saver.List(ctx, lo) {
		if err != nil {
			return nil, fmt.Errorf("refengine: history: %w", err)
		}
		tups = append(tups, tup)
	}
	for _, tup := range tups {
		snap, err := sub.snapshotOf(ctx, g.saver, tup, false)
		if err != nil {
			return nil, err
		}
		out = append(out, snap)
	}
	return out, nil
}

// applySaved applies the null writes and the saved writes of finished tasks
// of a checkpoint, as an UpdateState as End does.
func (g *Graph) applySaved(cp *spec.Checkpoint, chans map[string]channel, tasks []*task, pending []spec.PendingWrite, next func(spec.Version) spec.Version) ([]string, error) {
	var null []spec.Write
	byID := map[string]*task{}
	for _, t := range tasks {
		byID[t.id] = t
	}
	var aw []appliedWrites
	done := map[string][]spec.Write{}
	for _, w := range pending {
		switch {
		case w.TaskID == spec.NullTaskID:
			null = append(null, spec.Write{Channel: w.Channel, Value: w.Value})
		case byID[w.TaskID] != nil && !specialOrMarker(w.Channel):
			done[w.TaskID] = append(done[w.TaskID], spec.Write{Channel: w.Channel, Value: w.Value})
		}
	}
	var updated []string
	if len(null) > 0 {
		up, err := g.applyWrites(cp, chans, []appliedWrites{{name: InputTask, writes: null}}, next)
		if err != nil {
			return nil, err
		}
		updated = up
	}
	for _, t := range tasks {
		if ws := done[t.id]; len(ws) > 0 {
			aw = append(aw, appliedWrites{name: t.node.name, path: t.path, triggers: t.triggers, writes: ws})
		}
	}
	if len(aw) == 0 {
		return updated, nil
	}
	up, err := g.applyWrites(cp, chans, aw, next)
	return append(updated, up...), err
}

// lastNode infers the node an update is attributed to: the one that saw
// the strictly newest version, or the start node on a fresh thread.
func (g *Graph) lastNode(cp *spec.Checkpoint) (string, error) {
	best, bestNode, tie := spec.Version(""), "", false
	// Versions a delta snapshot bumped are not what the nodes saw.
	seen := versionsSeenWithoutBumps(cp.VersionsSeen)
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		if g.byName[name] == nil {
			continue
		}
		for _, v := range seen[name] {
			switch c := spec.CompareVersions(v, best); {
			case c > 0:
				best, bestNode, tie = v, name, false
			case c == 0 && bestNode != "" && name != bestNode:
				tie = true
			}
		}
	}
	switch {
	case bestNode == "":
		return Start, nil
	case tie:
		return "", fmt.Errorf("refengine: %w: ambiguous update, give the node", spec.ErrInvalidArgument)
	}
	return bestNode, nil
}

// copyFork stores a sibling of saved with the same values and versions and
// source "fork" (UpdateState with CopyNode).
func (l *loop) copyFork(ctx context.Context, saved *spec.Tuple, values Update) (spec.Config, error) {
	if saved == nil {
		return spec.Config{}, fmt.Errorf("refengine: %w: nothing to copy", spec.ErrNotFound)
	}
	if len(values) > 0 {
		return spec.Config{}, fmt.Errorf("refengine: %w: a copy takes no values", spec.ErrInvalidArgument)
	}
	step, _ := metadataStep(saved.Metadata)
	cp := copyCheckpoint(saved.Checkpoint)
	chans, err := l.g.restoreChannels(ctx, l.saver, saved.Config, &cp)
	if err != nil {
		return spec.Config{}, err
	}
	next, err := newCheckpoint(&cp, chans, l.opts.newID(step), nil)
	if err != nil {
		return spec.Config{}, err
	}
	parents, _ := saved.Metadata["parents"].(map[string]any)
	if parents == nil {
		parents = map[string]any{}
	}
	parentCfg := spec.Config{ThreadID: saved.Config.ThreadID, Namespace: saved.Config.Namespace}
	if saved.Parent != nil {
		parentCfg = *saved.Parent
	}
	md := l.opts.withExtras(spec.Metadata{"source": "fork", "step": int64(step + 1), "parents": parents})
	return l.saver.Put(ctx, parentCfg, next, md, spec.Versions{})
}
