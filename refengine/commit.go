package refengine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The saver side of the loop: how writes and checkpoints are batched and
// submitted (LangGraph's put_writes, _put_checkpoint and exit handling).

// putWrites records writes in memory and submits them to the saver against
// the current checkpoint, with LangGraph's batching rules.
func (l *loop) putWrites(ctx context.Context, taskID string, writes []spec.Write, path string) {
	if len(writes) == 0 {
		return
	}
	if allSpecial(writes) {
		writes = dedupeByChannel(writes)
	}
	l.mu.Lock()
	var batch []spec.Write
	if taskID == spec.NullTaskID {
		l.pending = slices.DeleteFunc(l.pending, func(w spec.PendingWrite) bool {
			return w.TaskID == spec.NullTaskID && spec.IsSpecialChannel(w.Channel)
		})
		for _, w := range l.pending {
			if w.TaskID == spec.NullTaskID {
				batch = append(batch, spec.Write{Channel: w.Channel, Value: w.Value})
			}
		}
		batch = append(batch, writes...)
		path = ""
	} else {
		l.pending = slices.DeleteFunc(l.pending, func(w spec.PendingWrite) bool { return w.TaskID == taskID })
		batch = writes
	}
	for _, w := range writes {
		l.pending = append(l.pending, spec.PendingWrite{TaskID: taskID, Channel: w.Channel, Value: w.Value})
	}
	cfg := l.config(l.checkpointID)
	if taskID == spec.NullTaskID {
		l.noteCommandDeltas(writes)
	}
	l.mu.Unlock()
	if l.opts.durability == DurabilityExit {
		return
	}
	l.exec.putWrites(func() error {
		if err := l.saver.PutWrites(ctx, cfg, batch, taskID, path); err != nil {
			return fmt.Errorf("refengine: put writes of task %s: %w", taskID, err)
		}
		return nil
	})
}

func allSpecial(ws []spec.Write) bool {
	for _, w := range ws {
		if !spec.IsSpecialChannel(w.Channel) {
			return false
		}
	}
	return true
}

// dedupeByChannel keeps one write per channel: the last value, at the
// position of the first occurrence.
func dedupeByChannel(ws []spec.Write) []spec.Write {
	idx := map[string]int{}
	var out []spec.Write
	for _, w := range ws {
		if i, ok := idx[w.Channel]; ok {
			out[i] = w
			continue
		}
		idx[w.Channel] = len(out)
		out = append(out, w)
	}
	return out
}

// consumeNullResume removes and returns the first null-task resume value.
func (l *loop) consumeNullResume() (any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, w := range l.pending {
		if w.TaskID == spec.NullTaskID && w.Channel == spec.ResumeChannel {
			l.pending = slices.Delete(l.pending, i, i+1)
			return w.Value, true
		}
	}
	return nil, false
}

// withExtras adds the run's extra metadata keys that md does not have.
func (o *runOpts) withExtras(md spec.Metadata) spec.Metadata {
	for k, v := range o.metadata {
		if _, ok := md[k]; !ok {
			md[k] = v
		}
	}
	return md
}

// putCheckpoint stores the working checkpoint as a new one (LangGraph's
// _put_checkpoint) and advances the step.
func (l *loop) putCheckpoint(ctx context.Context, source string, updated []string) (wait func() error, err error) {
	parents := map[string]any{}
	for k, v := range l.parents {
		parents[k] = v
	}
	md := l.opts.withExtras(spec.Metadata{"source": source, "step": int64(l.step), "parents": parents})
	cp, err := newCheckpoint(&l.cp, l.chans, l.opts.newID(l.step), updated)
	if err != nil {
		return nil, err
	}
	if err := l.deltaSnapshots(&cp, md, updated); err != nil {
		return nil, err
	}
	wait = func() error { return nil }
	if l.opts.durability != DurabilityExit {
		nv := newVersions(l.prevVersions, cp.ChannelVersions)
		cfg := l.config(l.checkpointID)
		wait = l.exec.put(func() error {
			if _, err := l.saver.Put(ctx, cfg, cp, md, nv); err != nil {
				return fmt.Errorf("refengine: put checkpoint %s: %w", cp.ID, err)
			}
			return nil
		})
		l.prevVersions = maps.Clone(cp.ChannelVersions)
	}
	l.cp.ID, l.cp.TS = cp.ID, cp.TS
	l.checkpointID = cp.ID
	l.lastCp, l.lastMeta, l.meta = &cp, md, md
	l.step++
	return wait, nil
}

// finish performs the exit-durability save and waits for every saver call.
// A saver failure takes precedence over err.
func (l *loop) finish(ctx context.Context, err error) error {
	save := !l.nested || err != nil || !strings.Contains(l.ns, spec.NSEnd) // NSEnd only in task-ID levels
	if l.opts.durability == DurabilityExit && save && l.lastCp != nil && l.checkpointID != l.loadedID {
		if perr := l.putExitCheckpoint(ctx); perr != nil {
			l.exec.record(perr)
		}
	}
	if l.opts.durability == DurabilityExit && save && l.chans != nil {
		l.flushPending(ctx)
	}
	return l.exec.drain()
}

// flushPending writes every in-memory pending write, grouped by task ID,
// against the current checkpoint (exit durability).
func (l *loop) flushPending(ctx context.Context) {
	l.mu.Lock()
	groups := map[string][]spec.Write{}
	for _, w := range l.pending {
		groups[w.TaskID] = append(groups[w.TaskID], spec.Write{Channel: w.Channel, Value: w.Value})
	}
	l.mu.Unlock()
	if l.checkpointID == "" {
		return
	}
	paths := map[string]string{}
	for _, t := range l.tasks {
		paths[t.id] = t.path
	}
	cfg := l.config(l.checkpointID)
	for _, id := range slices.Sorted(maps.Keys(groups)) {
		ws, path := groups[id], paths[id]
		l.exec.putWrites(func() error {
			if err := l.saver.PutWrites(ctx, cfg, ws, id, path); err != nil {
				return fmt.Errorf("refengine: put writes of task %s: %w", id, err)
			}
			return nil
		})
	}
}
