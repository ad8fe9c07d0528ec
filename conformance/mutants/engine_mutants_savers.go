package mutants

// The savers behind the engine mutants of engine_mutants_paths.go that a
// wrapper around one call cannot express: they keep state across calls.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// onlyMarkers reports whether a batch holds only __no_writes__ markers.
func onlyMarkers(writes []spec.Write) bool {
	return len(writes) > 0 && !slices.ContainsFunc(writes, func(x spec.Write) bool { return x.Channel != noWritesChannel })
}

// hashOf hashes a value's printed form.
func hashOf(v any) uint32 {
	h := fnv.New32a()
	fmt.Fprint(h, v)
	return h.Sum32()
}

// parked is a PutWrites call held back until its checkpoint is put.
type parked struct {
	cfg              spec.Config
	writes           []spec.Write
	taskID, taskPath string
}

// newOneThreadParking builds engine-early-writes-one-thread.
func newOneThreadParking() spec.Saver {
	w := wrap()
	var (
		mu     sync.Mutex
		thread string // the thread whose writes are parked
		held   []parked
	)
	w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
		mu.Lock()
		defer mu.Unlock()
		if enginePath(taskPath) && cfg.CheckpointID != "" {
			if _, err := w.Inner.GetTuple(ctx, cfg); errors.Is(err, spec.ErrNotFound) {
				if thread != cfg.ThreadID {
					held, thread = nil, cfg.ThreadID
				}
				held = append(held, parked{cfg, slices.Clone(writes), taskID, taskPath})
				return nil
			}
		}
		return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
	}
	w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
		if err != nil {
			return out, err
		}
		keep := held[:0]
		for _, p := range held {
			if p.cfg == out {
				if err := w.Inner.PutWrites(ctx, p.cfg, p.writes, p.taskID, p.taskPath); err != nil {
					return out, err
				}
				continue
			}
			keep = append(keep, p)
		}
		held = keep
		return out, nil
	}
	return w
}

// isUpdatePath reports whether a task path is one UpdateState writes under:
// "~__interrupt__, <i>" since LangGraph Python 1.2 (pregel/main.py:2025,
// 4295), none in older runtimes and LangGraph.js.
func isUpdatePath(p string) bool {
	return p == "" || strings.HasPrefix(p, "~"+spec.InterruptChannel+",")
}

// newUpdateRewrites builds engine-update-rewrites-task-writes: the memory
// adapter keeps the original rows, an overlay holds the replacing batches
// and reads show them instead.
func newUpdateRewrites() spec.Saver {
	w := wrap()
	type tkey struct {
		ckey
		task string
	}
	var mu sync.Mutex
	over := map[tkey][]spec.Write{}
	w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
		if isUpdatePath(taskPath) && taskID != spec.NullTaskID {
			if t, err := w.Inner.GetTuple(ctx, cfg); err == nil && slices.ContainsFunc(t.PendingWrites, func(pw spec.PendingWrite) bool { return pw.TaskID == taskID }) {
				if err := w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath); err != nil {
					return err
				}
				var regular []spec.Write
				for _, x := range writes {
					if !spec.IsSpecialChannel(x.Channel) {
						v, _ := spec.Normalize(x.Value)
						regular = append(regular, spec.Write{Channel: x.Channel, Value: v})
					}
				}
				mu.Lock()
				over[tkey{ckey{cfg.ThreadID, cfg.Namespace, cfg.CheckpointID}, taskID}] = regular
				mu.Unlock()
				return nil
			}
		}
		return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
	}
	w.MapTuple = func(t *spec.Tuple) {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]int{}
		for i, pw := range t.PendingWrites {
			batch, ok := over[tkey{keyOf(t), pw.TaskID}]
			if !ok || spec.IsSpecialChannel(pw.Channel) {
				continue
			}
			if j := seen[pw.TaskID]; j < len(batch) {
				t.PendingWrites[i].Channel, t.PendingWrites[i].Value = batch[j].Channel, deepCopy(batch[j].Value)
			}
			seen[pw.TaskID]++
		}
	}
	return w
}

// newSiblingCollapse builds engine-sibling-updates-collapse.
func newSiblingCollapse() spec.Saver {
	w := wrap()
	var mu sync.Mutex
	groups := map[string][]string{}     // group key -> update checkpoint IDs in put order
	member := map[ckey]string{}         // update checkpoint -> its group key
	values := map[ckey]map[string]any{} // update checkpoint -> its values
	w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
		out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
		if err != nil || md["source"] != "update" || cfg.CheckpointID == "" || !engineCP(&cp) {
			return out, err
		}
		g := fmt.Sprintf("%q %q %q %v", cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, md["step"])
		k := ckey{out.ThreadID, out.Namespace, out.CheckpointID}
		mu.Lock()
		defer mu.Unlock()
		if _, ok := member[k]; !ok {
			groups[g] = append(groups[g], out.CheckpointID)
			member[k] = g
		}
		values[k] = deepCopy(map[string]any(cp.ChannelValues)).(map[string]any)
		return out, nil
	}
	w.MapTuple = func(t *spec.Tuple) {
		mu.Lock()
		defer mu.Unlock()
		g, ok := member[keyOf(t)]
		if !ok {
			return
		}
		ids := groups[g]
		last := ckey{t.Config.ThreadID, t.Config.Namespace, ids[len(ids)-1]}
		if v, ok := values[last]; ok && last != keyOf(t) {
			t.Checkpoint.ChannelValues = deepCopy(v).(map[string]any)
		}
	}
	return w
}
