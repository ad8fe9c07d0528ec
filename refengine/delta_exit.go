package refengine

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Delta channels under exit durability (LangGraph's exit-mode accumulator,
// langgraph/pregel/_loop.py:232 and _put_exit_delta_writes, :1422). A run
// that stores one checkpoint at its end would lose the writes its earlier
// supersteps made to a delta channel, which its checkpoints never store. So
// the loop keeps every delta write of the run, and at the end stores those
// of the channels the final checkpoint does not snapshot on the checkpoint
// the run started from (on a new thread, on a stub checkpoint it puts
// first), which becomes the final checkpoint's parent; the history walk
// then finds them. Each superstep's writes keep their order under task IDs
// of their own ([exitDeltaTaskID], [exitDeltaLateTaskID]).

// exitDeltas is what a loop under exit durability keeps of its delta
// writes.
type exitDeltas struct {
	// stored holds the (task ID, channel) pairs of the delta writes loaded
	// with the checkpoint, which are stored on it already.
	stored map[[2]string]bool
	// command holds the delta writes of this run's Command.
	command []spec.Write
	// writes holds every delta write of the run, oldest first.
	writes []exitWrite
	// firstStep is the superstep of the first tick (-1 before it).
	firstStep int
	// persisted reports that the run loaded a stored checkpoint; latest
	// that it was the thread's latest (no checkpoint ID addressed it).
	persisted, latest bool
	// stubID is the ID of the loaded checkpoint (on a new thread, of the
	// empty checkpoint the loop made up, which the stub is stored as).
	stubID string
}

// exitWrite is one delta write of the run: its superstep, task and path.
type exitWrite struct {
	step                  int
	taskID, path, channel string
	value                 any
}

// initExitDeltas starts the exit-mode accumulator after load, when the run
// stores its checkpoint at exit and the graph has delta channels. latest
// reports that load read the thread's latest checkpoint.
func (l *loop) initExitDeltas(latest bool) {
	l.exitDeltas = nil
	if l.opts.durability != DurabilityExit || len(l.g.deltaKeys()) == 0 {
		return
	}
	e := &exitDeltas{stored: map[[2]string]bool{}, firstStep: -1,
		persisted: l.checkpointID != "", latest: latest, stubID: l.cp.ID}
	for _, w := range l.pending {
		if w.TaskID != spec.NullTaskID && l.isDelta(w.Channel) {
			e.stored[[2]string{w.TaskID, w.Channel}] = true
		}
	}
	l.exitDeltas = e
}

func (l *loop) isDelta(name string) bool {
	c, ok := l.g.channels[name]
	return ok && c.kind == kindDelta
}

// noteCommandDeltas keeps the delta writes of the run's Command (null-task
// writes put against the loaded checkpoint). Callers hold l.mu.
func (l *loop) noteCommandDeltas(writes []spec.Write) {
	if l.exitDeltas == nil {
		return
	}
	for _, w := range writes {
		if l.isDelta(w.Channel) {
			l.exitDeltas.command = append(l.exitDeltas.command, w)
		}
	}
}

// captureExitDeltas keeps the delta writes of the superstep that just
// finished, before the pending writes are cleared. On the first tick they
// still hold the writes loaded with the checkpoint, which are left out;
// the Command's writes come first.
func (l *loop) captureExitDeltas() {
	e := l.exitDeltas
	if e == nil {
		return
	}
	first := e.firstStep < 0
	if first {
		e.firstStep = l.step
		for _, w := range e.command {
			e.writes = append(e.writes, exitWrite{step: l.step, taskID: spec.NullTaskID, channel: w.Channel, value: w.Value})
		}
	}
	paths := map[string]string{}
	for _, t := range l.tasks {
		paths[t.id] = t.path
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.pending {
		if !l.isDelta(w.Channel) {
			continue
		}
		if first && (w.TaskID == spec.NullTaskID || e.stored[[2]string{w.TaskID, w.Channel}]) {
			continue
		}
		e.writes = append(e.writes, exitWrite{step: l.step, taskID: w.TaskID, path: paths[w.TaskID], channel: w.Channel, value: w.Value})
	}
}

// exitDeltaTaskID is the task ID of exit-mode delta writes of the anchor's
// own superstep (and of null-task writes): the superstep in the first
// group of taskID, never the null task ID (LangGraph's exit_delta_task_id,
// langgraph/pregel/_checkpoint.py:65).
func exitDeltaTaskID(step int, taskID string) string {
	parts := strings.SplitN(strings.ToLower(taskID), "-", 2)
	rest := "0000-0000-0000-000000000000"
	if len(parts) == 2 {
		rest = parts[1]
	}
	id := fmt.Sprintf("%08d-%s", step, rest)
	if id == spec.NullTaskID {
		return fmt.Sprintf("%08d-0000-0000-0000-000000000001", step)
	}
	return id
}

// exitDeltaLateTaskID is the task ID of exit-mode delta writes of a later
// superstep: after every real task ID, in superstep order (LangGraph's
// exit_delta_late_task_id, langgraph/pregel/_checkpoint.py:80).
func exitDeltaLateTaskID(step int, taskID string) string {
	parts := strings.Split(strings.ToLower(taskID), "-")
	tail := "0000-000000000000"
	if len(parts) == 5 {
		tail = parts[3] + "-" + parts[4]
	}
	return fmt.Sprintf("ffffffff-%04x-%04x-%s", step>>16, step&0xFFFF, tail)
}

// exitWriteGroup is the writes stored under one synthetic task.
type exitWriteGroup struct {
	taskID, path string
	writes       []spec.Write
}

// groups decides the exit-mode delta writes to store: those of
// the channels the final checkpoint does not snapshot (snap), grouped by
// synthetic task in the order they were made.
func (e *exitDeltas) groups(snap map[string]bool) []exitWriteGroup {
	var out []exitWriteGroup
	at := map[[2]string]int{}
	for _, w := range e.writes {
		if snap[w.channel] {
			continue
		}
		var key [2]string
		switch {
		case w.taskID == spec.NullTaskID:
			key = [2]string{exitDeltaTaskID(w.step, w.taskID), ""}
		case w.step == e.firstStep:
			key = [2]string{exitDeltaTaskID(w.step, w.taskID), w.path}
		default:
			key = [2]string{exitDeltaLateTaskID(w.step, w.taskID), fmt.Sprintf("~~%010d%s", w.step, w.path)}
		}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, exitWriteGroup{taskID: key[0], path: key[1]})
		}
		out[i].writes = append(out[i].writes, spec.Write{Channel: w.channel, Value: w.value})
	}
	return out
}

// putExitCheckpoint stores the run's final checkpoint under exit
// durability: first the delta writes no snapshot covers, on the loaded
// checkpoint or on a stub put for them, then the checkpoint, with the
// snapshots due by the counters of its metadata or forced (LangGraph's
// _put_checkpoint at exit, which counts no further superstep). The
// snapshot of a channel whose version has not moved since the loaded
// checkpoint bumps it.
func (l *loop) putExitCheckpoint(ctx context.Context) error {
	cp, md := copyCheckpoint(*l.lastCp), maps.Clone(l.lastMeta)
	parent := l.loadedID
	var snap map[string]bool
	var pre func() error
	if len(l.g.deltaKeys()) > 0 {
		e := l.exitDeltas
		if e != nil && len(e.writes) > 0 && e.persisted && !e.latest {
			// The addressed checkpoint may have children that would read
			// writes stored on it: the channels written snapshot instead.
			for _, w := range e.writes {
				l.forced[w.channel] = true
			}
		}
		counters := readCounters(md)
		snap = l.g.dueSnapshots(counters, cp.ChannelVersions)
		maps.Copy(snap, l.forced)
		if e != nil {
			if groups := e.groups(snap); len(groups) > 0 {
				pre, parent = l.exitDeltaPuts(ctx, e, groups)
			}
		}
		if err := l.g.snapshotDeltas(&cp, l.chans, snap, l.loadedVersions, l.nextVersion); err != nil {
			return err
		}
		storeCounters(md, counters, snap)
	}
	if pre != nil {
		l.exec.put(pre)
	}
	nv := newVersions(l.loadedVersions, cp.ChannelVersions)
	cfg := l.config(parent)
	l.exec.put(func() error {
		if _, err := l.saver.Put(ctx, cfg, cp, md, nv); err != nil {
			return fmt.Errorf("refengine: put checkpoint %s: %w", cp.ID, err)
		}
		return nil
	})
	return nil
}

// exitDeltaPuts returns the saver calls storing groups before the final
// checkpoint, and the ID of the checkpoint they are stored on, which is the
// final checkpoint's parent: the loaded one, or on a new thread a stub (an
// empty checkpoint with step -2 and no parent) put first.
func (l *loop) exitDeltaPuts(ctx context.Context, e *exitDeltas, groups []exitWriteGroup) (func() error, string) {
	anchor := l.loadedID
	var stub *spec.Checkpoint
	if !e.persisted {
		anchor = e.stubID
		empty, _ := newCheckpoint(&spec.Checkpoint{ChannelVersions: spec.Versions{}}, nil, anchor, nil)
		stub = &empty
	}
	cfg := l.config(anchor)
	return func() error {
		if stub != nil {
			if _, err := l.saver.Put(ctx, l.config(""), *stub, spec.Metadata{"step": int64(-2)}, spec.Versions{}); err != nil {
				return fmt.Errorf("refengine: put exit stub checkpoint %s: %w", stub.ID, err)
			}
		}
		for _, g := range groups {
			if err := l.saver.PutWrites(ctx, cfg, g.writes, g.taskID, g.path); err != nil {
				return fmt.Errorf("refengine: put exit delta writes of task %s: %w", g.taskID, err)
			}
		}
		return nil
	}, anchor
}
