package refengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Input is what Invoke runs a graph on: a [State] (new input) or a
// [Command] (resume or steer a thread; a *Command works too). A nil Input
// continues the thread: it resumes after an interrupt or a failure, or
// replays from RunConfig.CheckpointID.
type Input interface {
	isInput()
}

func (State) isInput()   {}
func (Command) isInput() {}

// Command resumes or steers a thread instead of giving it new input; a
// node added with StateGraph.AddCommandNode returns one (Update, Goto and
// Sends only) to steer the graph from inside.
type Command struct {
	// Resume is the value the pending Interrupt call returns. nil means no
	// resume value. It is an error while several interrupts are pending.
	Resume any
	// ResumeMap resumes interrupts by ID (see PendingInterrupt.ID); no
	// resume write is stored for it, the values travel with the run.
	ResumeMap map[string]any
	// Update writes values to state keys before the run continues.
	Update map[string]any
	// Goto schedules nodes to run next.
	Goto []string
	// Sends schedule PUSH tasks, each running its node on its own argument
	// (LangGraph's Command(goto=Send(...))); they are written after Goto.
	Sends []Send
}

// RunConfig addresses a thread and controls a run. Every Graph method
// reads ThreadID, Namespace and CheckpointID; the other fields control what
// Invoke (and, for Metadata and NewCheckpointID, UpdateState) writes.
type RunConfig struct {
	// ThreadID names the thread; required.
	ThreadID string
	// Namespace addresses a subgraph's checkpoints for GetState, History
	// and UpdateState (found through its recast namespace, as LangGraph
	// does). Invoke runs the root graph, which always lives in namespace
	// "": LangGraph replaces a non-empty namespace by "" and drops the
	// checkpoint ID, so rather than run somewhere the caller did not ask
	// for, Invoke rejects a non-empty Namespace with an error wrapping
	// spec.ErrInvalidConfig.
	Namespace string
	// CheckpointID, when set, makes Invoke time-travel from (or resume)
	// that checkpoint, GetState and UpdateState read it instead of the
	// latest, and History list only it.
	CheckpointID string
	// Durability defaults to DurabilityAsync.
	Durability Durability
	// Deterministic runs tasks one at a time in task order and performs
	// saver calls on the calling goroutine, so call sequences are exactly
	// reproducible. The tasks after a failed one run with their context
	// cancelled, as running siblings are in a concurrent run. With async durability each Put is issued after the
	// writes of the following superstep.
	Deterministic bool
	// RecursionLimit caps the supersteps of a run (default 10007, as in
	// LangGraph).
	RecursionLimit int
	// NestedReplayQuirk reproduces a LangGraph quirk: nested graphs start
	// as if replaying, so on their first superstep they do not restore the
	// saved writes of finished tasks, and every task of an interrupted
	// subgraph superstep runs again on resume. Off by default.
	NestedReplayQuirk bool
	// Metadata holds extra keys stored in the metadata of every checkpoint
	// the run writes, subgraphs included (LangGraph copies run_id and the
	// caller's configurable keys this way). The engine's own keys (source,
	// step, parents) take precedence. Values must be JSON-like.
	Metadata spec.Metadata
	// NewCheckpointID mints checkpoint IDs (default spec.NewCheckpointID).
	// For reproducible traces use trace.SequentialIDs.
	NewCheckpointID func(step int) string
}

// Result is the outcome of an Invoke that did not fail.
type Result struct {
	// Values are the state keys that have a value.
	Values State
	// Interrupted reports that the run stopped on an interrupt (static or
	// dynamic) and can be resumed.
	Interrupted bool
	// Interrupts are the dynamic interrupts raised, in task order.
	Interrupts []PendingInterrupt
}

var interruptIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func (g *Graph) runOptions(cfg RunConfig) (runOpts, error) {
	if g.saver == nil {
		return runOpts{}, ErrNoSaver
	}
	if cfg.ThreadID == "" {
		return runOpts{}, fmt.Errorf("refengine: %w: empty thread ID", spec.ErrInvalidConfig)
	}
	d := cfg.Durability
	switch d {
	case "":
		d = DurabilityAsync
	case DurabilityAsync, DurabilitySync, DurabilityExit:
	default:
		return runOpts{}, fmt.Errorf("refengine: %w: unknown durability %q", spec.ErrInvalidArgument, d)
	}
	newID := cfg.NewCheckpointID
	if newID == nil {
		newID = spec.NewCheckpointID
	}
	md, err := spec.NormalizeMetadata(cfg.Metadata)
	if err != nil {
		return runOpts{}, fmt.Errorf("refengine: run metadata: %w", err)
	}
	return runOpts{thread: cfg.ThreadID, durability: d, deterministic: cfg.Deterministic,
		recursionLimit: cfg.RecursionLimit, newID: newID, metadata: md, nestedQuirk: cfg.NestedReplayQuirk}, nil
}

// Invoke runs the graph on a thread, in the root namespace. input is a
// State (new input), a Command (resume or steer) or nil (continue: resume
// after an interrupt or failure, or replay from cfg.CheckpointID). An
// interrupt is not an error: the Result reports it. A node failure is
// returned as a *TaskError after the successful tasks of the superstep were
// saved. A non-empty cfg.Namespace is rejected (see RunConfig.Namespace).
func (g *Graph) Invoke(ctx context.Context, input Input, cfg RunConfig) (*Result, error) {
	opts, err := g.runOptions(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Namespace != "" {
		return nil, fmt.Errorf("refengine: %w: Invoke runs the root graph in namespace \"\", not %q (Namespace addresses GetState, History and UpdateState)",
			spec.ErrInvalidConfig, cfg.Namespace)
	}
	var in any // nil, Command or map[string]any, as the loop takes it
	switch x := input.(type) {
	case nil:
	case State:
		in = map[string]any(x)
	case Command:
		in = x
	case *Command:
		if x != nil {
			in = *x
		}
	}
	l := newLoop(g, g.saver, "", opts)
	l.loadID = cfg.CheckpointID
	values, err := l.run(ctx, in)
	var gi *graphInterrupt
	if errors.As(err, &gi) {
		return &Result{Values: values, Interrupted: true, Interrupts: gi.interrupts}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Result{Values: values}, nil
}

// first handles the run's input: Command writes, null writes, resume or
// time-travel fork, or the input checkpoint (LangGraph's _first).
func (l *loop) first(ctx context.Context, input any) error {
	cmd, isCmd := input.(Command)
	hasResume := isCmd && (cmd.Resume != nil || cmd.ResumeMap != nil)
	var resuming bool
	if l.opts.resuming != nil {
		resuming = len(l.cp.ChannelVersions) > 0 && *l.opts.resuming
	} else {
		resuming = len(l.cp.ChannelVersions) > 0 && (input == nil || isCmd)
	}
	flagTrue := l.opts.resuming != nil && *l.opts.resuming
	timeTravel := l.isReplaying && !(hasResume || flagTrue)
	if !l.nested {
		// Finished tasks run again on time travel, or on a resume addressed
		// at a checkpoint the thread has moved past (_loop.py:990).
		l.isReplaying = timeTravel || l.superseded
	}
	// A time-travelling run forks the checkpoint it addressed, unless that
	// is an update or fork checkpoint nothing has continued from
	// (_loop.py:1003).
	forks := resuming && timeTravel && (l.superseded || (l.loadedSource != "update" && l.loadedSource != "fork"))

	if timeTravel {
		l.dropPending(spec.ResumeChannel)
	}
	// Unless a resume hands the loaded writes back to their tasks, a new
	// branch starts here: the delta channels those writes touch snapshot
	// in its first checkpoint, so that its history never replays them
	// (_loop.py:1021).
	if !(resuming && !l.isReplaying) {
		l.mu.Lock()
		l.forced = l.g.deltaWrites(l.pending)
		l.mu.Unlock()
	}
	var carried []spec.Write
	if isCmd {
		if l.checkpointID == "" {
			return fmt.Errorf("%w: thread %q has no checkpoint to apply a Command to", ErrEmptyInput, l.opts.thread)
		}
		writes, err := l.commandWrites(cmd)
		if err != nil {
			return err
		}
		if len(writes) == 0 && cmd.ResumeMap == nil {
			return fmt.Errorf("%w: command has nothing to do", ErrEmptyInput)
		}
		if forks {
			// The fork carries the Command's writes: none is stored on the
			// checkpoint addressed, whose other children would replay it
			// (_loop.py:1085-1088).
			carried = writes
			for _, w := range writes {
				maps.Copy(l.forced, l.g.deltaWrites([]spec.PendingWrite{{Channel: w.Channel}}))
			}
		} else {
			l.putWrites(ctx, spec.NullTaskID, writes, "")
		}
	}
	var null []spec.Write
	l.mu.Lock()
	for _, w := range l.pending {
		if w.TaskID == spec.NullTaskID {
			null = append(null, spec.Write{Channel: w.Channel, Value: w.Value})
		}
	}
	l.mu.Unlock()
	null = append(null, carried...)
	if len(null) > 0 {
		if _, err := l.g.applyWrites(&l.cp, l.chans, []appliedWrites{{name: InputTask, writes: null}}, l.nextVersion); err != nil {
			return err
		}
	}
	state, isInput := input.(map[string]any)
	switch {
	case resuming:
		l.cp.VersionsSeen[spec.InterruptChannel] = maps.Clone(l.cp.ChannelVersions)
		if forks {
			l.dropPending(spec.InterruptChannel)
			if _, err := l.putCheckpoint(ctx, "fork", nil); err != nil {
				return err
			}
		}
	case isInput && !isCmd:
		nv, err := spec.Normalize(state)
		if err != nil {
			return fmt.Errorf("refengine: input: %w", err)
		}
		discard, err := l.g.prepareTasks(&l.cp, l.chans, l.ns, l.step)
		if err != nil {
			return err
		}
		aw := []appliedWrites{{name: InputTask, writes: []spec.Write{{Channel: Start, Value: nv}}}}
		for _, t := range discard {
			aw = append(aw, appliedWrites{name: t.node.name, path: t.path, triggers: t.triggers})
		}
		updated, err := l.g.applyWrites(&l.cp, l.chans, aw, l.nextVersion)
		if err != nil {
			return err
		}
		if _, err := l.putCheckpoint(ctx, "input", updated); err != nil {
			return err
		}
	case l.opts.resuming == nil:
		return fmt.Errorf("%w: nothing to resume on thread %q", ErrEmptyInput, l.opts.thread)
	}
	if !l.nested {
		l.opts.resuming = &resuming
		if timeTravel {
			id := l.loadedID
			if l.loadedSource == "update" || l.loadedSource == "fork" {
				id = l.loadedParent
			}
			l.opts.replay = &replayState{id: id, visited: map[string]bool{}}
		}
	}
	return nil
}

// commandWrites maps a Command to null-task writes and installs its resume
// map. LangGraph orders them gotos, resume, update; the resume write comes
// last here so that the regular writes keep their positions (hence their
// write indices) when the growing null-task batch is re-sent on a later
// resume: with the resume first, a re-sent update lands on a new index and
// the saver stores it twice.
func (l *loop) commandWrites(cmd Command) ([]spec.Write, error) {
	var writes []spec.Write
	for _, n := range cmd.Goto {
		nd := l.g.byName[n]
		if nd == nil || nd.start {
			return nil, fmt.Errorf("refengine: %w: goto unknown node %q", spec.ErrInvalidArgument, n)
		}
		writes = append(writes, spec.Write{Channel: branchPrefix + n, Value: Start})
	}
	for _, snd := range cmd.Sends {
		if nd := l.g.byName[snd.Node]; nd == nil || nd.start {
			return nil, fmt.Errorf("refengine: %w: send to unknown node %q", spec.ErrInvalidArgument, snd.Node)
		}
		v, err := sendValue(snd)
		if err != nil {
			return nil, fmt.Errorf("refengine: %w", err)
		}
		writes = append(writes, spec.Write{Channel: tasksChannel, Value: v})
	}
	for _, k := range slices.Sorted(maps.Keys(cmd.Update)) {
		if !l.g.isKey(k) {
			return nil, fmt.Errorf("refengine: %w: update of unknown state key %q", spec.ErrInvalidArgument, k)
		}
		v, err := spec.Normalize(cmd.Update[k])
		if err != nil {
			return nil, fmt.Errorf("refengine: update %q: %w", k, err)
		}
		writes = append(writes, spec.Write{Channel: k, Value: v})
	}
	if cmd.ResumeMap != nil {
		for id := range cmd.ResumeMap {
			if !interruptIDPattern.MatchString(id) {
				return nil, fmt.Errorf("refengine: %w: resume map key %q is not an interrupt ID", spec.ErrInvalidArgument, id)
			}
		}
		m, err := spec.Normalize(cmd.ResumeMap)
		if err != nil {
			return nil, fmt.Errorf("refengine: resume map: %w", err)
		}
		l.opts.resumeMap = m.(map[string]any)
	} else if cmd.Resume != nil {
		if n := len(l.pendingInterrupts()); n > 1 {
			return nil, fmt.Errorf("%w (%d pending)", ErrMultipleInterrupts, n)
		}
		v, err := spec.Normalize(cmd.Resume)
		if err != nil {
			return nil, fmt.Errorf("refengine: resume value: %w", err)
		}
		writes = append(writes, spec.Write{Channel: spec.ResumeChannel, Value: v})
	}
	return writes, nil
}

// pendingInterrupts returns the IDs of interrupts not yet answered by a
// resume write of their task.
func (l *loop) pendingInterrupts() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ints := map[string]string{}
	resumed := map[string]bool{}
	for _, w := range l.pending {
		switch w.Channel {
		case spec.InterruptChannel:
			if ins := decodeInterrupts(w.Value); len(ins) > 0 {
				ints[w.TaskID] = ins[0].ID
			}
		case spec.ResumeChannel:
			resumed[w.TaskID] = true
		}
	}
	done := map[string]bool{}
	for tid := range resumed {
		if id, ok := ints[tid]; ok {
			done[id] = true
		}
	}
	var out []string
	for _, id := range ints {
		if !done[id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func (l *loop) dropPending(channel string) {
	l.mu.Lock()
	l.pending = slices.DeleteFunc(l.pending, func(w spec.PendingWrite) bool { return w.Channel == channel })
	l.mu.Unlock()
}
