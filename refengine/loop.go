package refengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/spec"
)

// runOpts is the part of a run's configuration nested loops inherit.
type runOpts struct {
	thread         string
	durability     Durability
	deterministic  bool
	recursionLimit int
	// resuming is LangGraph's __pregel_resuming: nil when absent.
	resuming  *bool
	resumeMap map[string]any
	newID     func(step int) string
	metadata  spec.Metadata // extra keys for every checkpoint's metadata
	// nestedQuirk makes nested loops start with isReplaying set.
	nestedQuirk bool
	// replay is LangGraph's ReplayState, set while the root time travels.
	replay *replayState
}

// replayState lets subgraphs find their state as of the checkpoint the root
// replays from: on the first visit of a (recast) namespace a nested loop
// lists the newest checkpoint created before that ID.
type replayState struct {
	id      string
	mu      sync.Mutex
	visited map[string]bool
}

// firstVisit reports whether ns is visited for the first time.
func (r *replayState) firstVisit(ns string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := spec.RecastNamespace(ns)
	if r.visited[key] {
		return false
	}
	r.visited[key] = true
	return true
}

// loop runs one graph in one namespace: LangGraph's PregelLoop.
type loop struct {
	g        *Graph
	saver    spec.Saver
	ns       string
	nested   bool
	parents  map[string]string // checkpoint map: ancestor ns -> checkpoint ID
	opts     runOpts
	parentSP *scratchpad // the scratchpad of the task running this subgraph
	exec     *executor
	loadID   string // checkpoint to load; "" = latest
	// sctx is the context of saver calls: the root run's, so that a task
	// cancelled because a sibling failed still saves its outcome, and so
	// do the subgraphs it runs.
	sctx context.Context

	mu      sync.Mutex // guards pending
	pending []spec.PendingWrite

	cp             spec.Checkpoint // working checkpoint; cp.ID names it
	chans          map[string]channel
	checkpointID   string // last checkpoint put or loaded; "" on a fresh thread
	loadedID       string
	loadedVersions spec.Versions
	loadedSource   string
	loadedParent   string
	prevVersions   spec.Versions
	lastCp         *spec.Checkpoint
	lastMeta       spec.Metadata
	// meta is the metadata of the checkpoint last loaded or put, whose
	// delta counters the next checkpoint advances.
	meta spec.Metadata
	// forced names the delta channels the next stored checkpoint must
	// snapshot whatever their counters say.
	forced map[string]bool
	// exitDeltas keeps the run's delta writes under exit durability.
	exitDeltas  *exitDeltas
	step, stop  int
	isReplaying bool
	// superseded reports that the checkpoint the run addressed by ID is
	// not the thread's latest.
	superseded bool
	tasks      []*task
}

func newLoop(g *Graph, saver spec.Saver, ns string, opts runOpts) *loop {
	return &loop{g: g, saver: saver, ns: ns, opts: opts, parents: map[string]string{},
		exec: &executor{deterministic: opts.deterministic, durability: opts.durability}}
}

func (l *loop) config(id string) spec.Config {
	return spec.Config{ThreadID: l.opts.thread, Namespace: l.ns, CheckpointID: id}
}

func (l *loop) nextVersion(cur spec.Version) spec.Version {
	if vg, ok := l.saver.(spec.VersionGenerator); ok {
		return vg.NextVersion(cur)
	}
	return spec.NextVersion(cur)
}

// run executes the graph to completion, interruption or failure, then
// finishes the saver traffic. It returns the final values of the state keys.
func (l *loop) run(ctx context.Context, input any) (State, error) {
	if l.sctx == nil {
		l.sctx = ctx
	}
	err := l.load(l.sctx)
	if err == nil {
		err = l.first(l.sctx, input)
	}
	for err == nil {
		var more bool
		if more, err = l.tick(ctx); err != nil || !more {
			break
		}
		if err = l.runTasks(ctx); err != nil {
			break
		}
		err = l.afterTick(l.sctx)
	}
	if serr := l.finish(l.sctx, err); serr != nil {
		return nil, serr
	}
	if l.chans == nil {
		return nil, err
	}
	return l.g.readState(l.chans), err
}

// load reads the checkpoint to start from: exactly one saver read.
func (l *loop) load(ctx context.Context) error {
	var tup *spec.Tuple
	var err error
	latest := l.loadID == ""
	if l.nested && l.loadID == "" && l.opts.replay != nil && l.opts.replay.firstVisit(l.ns) {
		latest = false
		tup, err = l.replayLookup(ctx)
		l.opts.resuming = nil // the subgraph re-applies its input
	} else {
		tup, err = l.saver.GetTuple(ctx, l.config(l.loadID))
	}
	switch {
	case errors.Is(err, spec.ErrNotFound) && l.loadID == "":
		tup = &spec.Tuple{Checkpoint: spec.Checkpoint{V: 4, ID: l.opts.newID(-2)}, Metadata: spec.Metadata{"step": int64(-2)}}
	case err != nil:
		return fmt.Errorf("refengine: load checkpoint of thread %q ns %q: %w", l.opts.thread, l.ns, err)
	default:
		l.checkpointID = tup.Config.CheckpointID
	}
	l.cp = copyCheckpoint(tup.Checkpoint)
	l.loadedID = l.checkpointID
	l.loadedVersions = maps.Clone(l.cp.ChannelVersions)
	l.prevVersions = maps.Clone(l.cp.ChannelVersions)
	l.loadedSource, _ = tup.Metadata["source"].(string)
	if tup.Parent != nil {
		l.loadedParent = tup.Parent.CheckpointID
	}
	step, ok := metadataStep(tup.Metadata)
	if !ok {
		return fmt.Errorf("refengine: checkpoint %s has no integer step in its metadata", tup.Checkpoint.ID)
	}
	l.step = step + 1
	limit := l.opts.recursionLimit
	if limit <= 0 {
		limit = defaultRecursionLimit
	}
	l.stop = l.step + limit + 1
	l.pending = slices.Clone(tup.PendingWrites)
	l.meta = tup.Metadata
	l.forced = map[string]bool{}
	l.initExitDeltas(latest)
	l.isReplaying = l.loadID != "" || (l.nested && l.opts.nestedQuirk)
	if l.loadID != "" {
		// An explicit checkpoint: has the thread moved past it?
		// (langgraph/pregel/_loop.py:1857)
		latest, err := notSuperseded(ctx, l.saver, l.config(""), tup)
		if err != nil {
			return err
		}
		l.superseded = !latest
	}
	// Delta channels are rebuilt last, as LangGraph reads their history
	// after the checkpoint (and the latest one) are loaded.
	if l.chans, err = l.g.restoreChannels(ctx, l.saver, tup.Config, &l.cp); err != nil {
		return err
	}
	return nil
}

// replayLookup loads the newest checkpoint of the loop's namespace created
// before the checkpoint the root replays from (a List with Before and
// Limit 1: the one place where IDs are compared across namespaces).
func (l *loop) replayLookup(ctx context.Context) (*spec.Tuple, error) {
	opts := spec.ListOptions{ThreadID: l.opts.thread, Namespace: l.ns, Before: l.opts.replay.id, Limit: 1}
	for tup, err := range l.saver.List(ctx, opts) {
		if err != nil {
			return nil, err
		}
		return tup, nil
	}
	return nil, spec.ErrNotFound
}

// defaultRecursionLimit is the superstep limit of a run, as in LangGraph.
const defaultRecursionLimit = 10007

// tick prepares the next superstep. It returns false when nothing is left
// to run.
func (l *loop) tick(ctx context.Context) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	if err := l.exec.failed(); err != nil {
		return false, err
	}
	if l.step > l.stop {
		return false, fmt.Errorf("%w (step %d)", ErrRecursionLimit, l.step)
	}
	tasks, err := l.g.prepareTasks(&l.cp, l.chans, l.ns, l.step)
	if err != nil || len(tasks) == 0 {
		return false, err
	}
	byID := make(map[string]*task, len(tasks))
	for _, t := range tasks {
		byID[t.id] = t
	}
	l.mu.Lock()
	for _, w := range l.pending {
		t := byID[w.TaskID]
		if t == nil {
			continue
		}
		switch w.Channel {
		case spec.ErrorChannel, spec.InterruptChannel, "__error_source_node__":
		case spec.ResumeChannel:
			if t.resume == nil {
				if l, ok := w.Value.([]any); ok {
					t.resume = slices.Clone(l)
				} else {
					t.resume = []any{w.Value}
				}
			}
		default:
			if !l.isReplaying {
				t.writes = append(t.writes, spec.Write{Channel: w.Channel, Value: w.Value})
				t.done = true
			}
		}
	}
	l.mu.Unlock()
	for _, t := range tasks {
		// The answer to the task's next interrupt, or (IDs of older
		// LangGraph versions) to its first (langgraph/pregel/_algo.py:1325).
		if v, ok := l.opts.resumeMap[ids.InterruptAt(t.ns, len(t.resume))]; ok {
			t.resume = append(t.resume, v)
		} else if v, ok := l.opts.resumeMap[ids.Interrupt(t.ns)]; ok {
			t.resume = append(t.resume, v)
		}
	}
	l.tasks = tasks
	if l.shouldInterrupt(l.g.interruptBefore) {
		return false, &graphInterrupt{}
	}
	return true, nil
}

// shouldInterrupt applies LangGraph's static interrupt rule: some channel
// changed since the last interrupt/resume, and a current task is one of
// nodes ("*": any task but the hidden start node).
func (l *loop) shouldInterrupt(nodes []string) bool {
	if len(nodes) == 0 {
		return false
	}
	seen := l.cp.VersionsSeen[spec.InterruptChannel]
	changed := false
	for c, v := range l.cp.ChannelVersions {
		if spec.CompareVersions(v, seen[c]) > 0 {
			changed = true
			break
		}
	}
	if !changed {
		return false
	}
	for _, t := range l.tasks {
		if (slices.Contains(nodes, "*") && !t.node.start) || slices.Contains(nodes, t.node.name) {
			return true
		}
	}
	return false
}

// runTasks executes the tasks without restored writes, committing each as
// it finishes. The first failure cancels the context of the other tasks
// (with cause ErrSiblingFailed), as LangGraph cancels the running siblings
// of a failed task: a sibling that still finishes saves its writes, one
// that returns an error saves it as its own failure. In deterministic mode
// the tasks after a failed one run with the cancelled context. Failures
// win over interrupts, and the first failure is the one returned;
// interrupts of all tasks are combined.
func (l *loop) runTasks(ctx context.Context) error {
	var todo []*task
	for _, t := range l.tasks {
		if !t.done {
			todo = append(todo, t)
		}
	}
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		failMu sync.Mutex
		failed error
	)
	run := func(t *task) error {
		err := l.execute(tctx, t)
		var gi *graphInterrupt
		if err != nil && !errors.As(err, &gi) {
			failMu.Lock()
			if failed == nil {
				failed = err
				cancel(ErrSiblingFailed)
			}
			failMu.Unlock()
		}
		return err
	}
	errs := make([]error, len(todo))
	if l.opts.deterministic || len(todo) == 1 {
		for i, t := range todo {
			errs[i] = run(t)
		}
	} else {
		var wg sync.WaitGroup
		for i, t := range todo {
			wg.Go(func() { errs[i] = run(t) })
		}
		wg.Wait()
	}
	if failed != nil {
		return failed
	}
	var combined *graphInterrupt
	for _, err := range errs {
		var gi *graphInterrupt
		if errors.As(err, &gi) {
			if combined == nil {
				combined = &graphInterrupt{}
			}
			combined.interrupts = append(combined.interrupts, gi.interrupts...)
		}
	}
	if combined != nil {
		return combined
	}
	return nil
}

// afterTick applies the superstep's writes and puts the loop checkpoint.
func (l *loop) afterTick(ctx context.Context) error {
	aw := make([]appliedWrites, len(l.tasks))
	for i, t := range l.tasks {
		aw[i] = appliedWrites{name: t.node.name, path: t.path, triggers: t.triggers, writes: t.writes}
		// An overwrite of a delta channel snapshots it, so that no
		// reader replays the writes it threw away.
		maps.Copy(l.forced, l.g.deltaOverwrites(t.writes))
	}
	updated, err := l.g.applyWrites(&l.cp, l.chans, aw, l.nextVersion)
	if err != nil {
		return err
	}
	l.captureExitDeltas()
	l.mu.Lock()
	l.pending = nil
	l.mu.Unlock()
	l.isReplaying = false
	wait, err := l.putCheckpoint(ctx, "loop", updated)
	if err != nil {
		return err
	}
	if l.shouldInterrupt(l.g.interruptAfter) {
		return &graphInterrupt{}
	}
	l.opts.resuming = nil
	if l.opts.durability == DurabilitySync {
		return wait()
	}
	return nil
}
