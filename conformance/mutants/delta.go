package mutants

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of delta channels: the history walk (DELTA-1, DELTA-3, DELTA-4),
// maintenance that breaks a chain (DELTA-11 to DELTA-13) and a value layer
// that loses snapshots (VALUE-12). The walk mutants transform the memory
// adapter's correct history; the maintenance mutants misbehave only on
// threads whose metadata names delta channels, so the rules of plain
// threads (COPY-*, PRUNE-*, RUNS-*) still hold.

// deltaWrapper is a Wrapper that also implements [spec.DeltaHistoryReader]:
// OnDeltaHistory when set, else the history of the saver it wraps (read
// through spec.ReadDeltaHistory, so a base without the reader is walked).
type deltaWrapper struct {
	*Wrapper
	OnDeltaHistory func(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error)
}

var _ spec.DeltaHistoryReader = (*deltaWrapper)(nil)

// DeltaHistory implements [spec.DeltaHistoryReader].
func (d *deltaWrapper) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	if d.OnDeltaHistory != nil {
		return d.OnDeltaHistory(ctx, cfg, channels)
	}
	return spec.ReadDeltaHistory(ctx, d.Inner, cfg, channels)
}

// wrapDelta returns a deltaWrapper over the base of the mutant being built.
func wrapDelta() *deltaWrapper { return &deltaWrapper{Wrapper: wrap()} }

// historyBlocks rewrites the history of every channel with f, which gets the
// channel's writes split per ancestor, oldest ancestor first, and the key of
// each ancestor. It finds the ancestors by walking GetTuple on inner.
func historyBlocks(ctx context.Context, inner Base, cfg spec.Config, channels []string,
	f func(ch string, h *spec.DeltaHistory, blocks [][]spec.PendingWrite, keys []ckey)) (map[string]spec.DeltaHistory, error) {
	out, err := spec.ReadDeltaHistory(ctx, inner, cfg, channels)
	if err != nil {
		return nil, err
	}
	for ch, h := range out {
		sizes, keys, err := ancestorWrites(ctx, inner, cfg, ch)
		if err != nil {
			return nil, err
		}
		var blocks [][]spec.PendingWrite
		rest := h.Writes
		for i := len(sizes) - 1; i >= 0; i-- {
			if sizes[i] > len(rest) {
				return nil, fmt.Errorf("mutant: %d writes of %q do not split into %v", len(h.Writes), ch, sizes)
			}
			blocks = append(blocks, rest[:sizes[i]])
			rest = rest[sizes[i]:]
		}
		slices.Reverse(keys)
		f(ch, &h, blocks, keys)
		out[ch] = h
	}
	return out, nil
}

// ancestorWrites walks the ancestors of cfg's checkpoint, nearest first, up
// to the first that holds ch, and returns how many writes to ch each has,
// and their keys.
func ancestorWrites(ctx context.Context, inner Base, cfg spec.Config, ch string) ([]int, []ckey, error) {
	t, err := inner.GetTuple(ctx, cfg)
	if errors.Is(err, spec.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var (
		sizes []int
		keys  []ckey
	)
	for p := t.Parent; p != nil; {
		a, err := inner.GetTuple(ctx, *p)
		if errors.Is(err, spec.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		n := 0
		for _, w := range a.PendingWrites {
			if w.Channel == ch {
				n++
			}
		}
		sizes, keys = append(sizes, n), append(keys, keyOf(a))
		if _, ok := a.Checkpoint.ChannelValues[ch]; ok {
			break
		}
		p = a.Parent
	}
	return sizes, keys, nil
}

// joined concatenates blocks into a non-nil slice.
func joined(blocks [][]spec.PendingWrite) []spec.PendingWrite {
	out := []spec.PendingWrite{}
	for _, b := range blocks {
		out = append(out, b...)
	}
	return out
}

// hasDeltaChannels reports whether a checkpoint of ts names delta channels
// in its metadata.
func hasDeltaChannels(ts []*spec.Tuple) bool {
	return slices.ContainsFunc(ts, func(t *spec.Tuple) bool { return len(spec.DeltaChannels(t.Metadata)) > 0 })
}

// latestPerNamespace returns the latest checkpoint of each namespace of ts
// (listed latest first).
func latestPerNamespace(ts []*spec.Tuple) []*spec.Tuple {
	seen := map[string]bool{}
	var out []*spec.Tuple
	for _, t := range ts {
		if !seen[t.Config.Namespace] {
			seen[t.Config.Namespace] = true
			out = append(out, t)
		}
	}
	return out
}

// taskOrder records, per checkpoint, the order in which tasks first wrote
// to it.
type taskOrder struct {
	mu  sync.Mutex
	seq map[ckey]map[string]int
	n   int
}

func (o *taskOrder) record(cfg spec.Config, task string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := ckey{cfg.ThreadID, cfg.Namespace, cfg.CheckpointID}
	if o.seq[k] == nil {
		o.seq[k] = map[string]int{}
	}
	if _, ok := o.seq[k][task]; !ok {
		o.n++
		o.seq[k][task] = o.n
	}
}

func (o *taskOrder) of(k ckey, task string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seq[k][task]
}

// deltaHistoryOf reads every history at each cfg through
// spec.ReadDeltaHistory, for witnesses.
func deltaHistoryOf(ctx context.Context, s spec.Saver, chs []string, cfgs ...spec.Config) []string {
	var out []string
	for _, cfg := range cfgs {
		h, err := spec.ReadDeltaHistory(ctx, s, cfg, chs)
		if err != nil {
			out = append(out, errKind(err))
			continue
		}
		for _, ch := range chs {
			out = append(out, fmt.Sprintf("%s/%s %s: seed %v %s, writes %v", cfg.Namespace, cfg.CheckpointID, ch, h[ch].HasSeed, typed(h[ch].Seed), h[ch].Writes))
		}
	}
	return out
}

// deltaChain puts, in thread t, a snapshot of m at a, writes of one task
// each at a, b and c, and d, every checkpoint naming m as a delta channel
// (with run "r1" for a and b, "r2" for c and d).
func deltaChain(ctx context.Context, s spec.Saver) {
	md := func(run string) spec.Metadata {
		return spec.Metadata{spec.DeltaCountersKey: map[string]any{"m": []any{int64(1), int64(1)}}, "run_id": run}
	}
	_ = putCP(ctx, s, "t", "", "a", "", md("r1"), map[string]any{"m": spec.DeltaSnapshot{Value: "seed"}})
	_ = putCP(ctx, s, "t", "", "b", "a", md("r1"), nil)
	_ = putCP(ctx, s, "t", "", "c", "b", md("r2"), nil)
	_ = putCP(ctx, s, "t", "", "d", "c", md("r2"), nil)
	for _, id := range []string{"a", "b", "c"} {
		_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: id}, []spec.Write{wr("m", "w-"+id)}, "task-"+id, "")
	}
}

// chainHistories reads the history of m at every checkpoint of deltaChain.
func chainHistories(ctx context.Context, s spec.Saver) []string {
	var cfgs []spec.Config
	for _, id := range []string{"b", "c", "d"} {
		cfgs = append(cfgs, spec.Config{ThreadID: "t", CheckpointID: id})
	}
	return deltaHistoryOf(ctx, s, []string{"m"}, cfgs...)
}

func init() {
	register(Mutant{
		Name: "delta-walk-stops-early", Rule: "DELTA-1",
		Description: "DeltaHistory stops one ancestor short of the seed: it returns no seed and leaves out the seed ancestor's writes.",
		New: func() spec.Saver {
			d := wrapDelta()
			d.OnDeltaHistory = func(ctx context.Context, cfg spec.Config, chs []string) (map[string]spec.DeltaHistory, error) {
				return historyBlocks(ctx, d.Inner, cfg, chs, func(_ string, h *spec.DeltaHistory, blocks [][]spec.PendingWrite, _ []ckey) {
					if !h.HasSeed || len(blocks) == 0 {
						return
					}
					h.Seed, h.HasSeed = nil, false
					h.Writes = joined(blocks[1:])
				})
			}
			return d
		},
		Witness: func(ctx context.Context, s spec.Saver) any { deltaChain(ctx, s); return chainHistories(ctx, s) },
	})
	register(Mutant{
		Name: "delta-writes-newest-first", Rule: "DELTA-3",
		Description: "DeltaHistory returns the ancestors' writes newest ancestor first (each ancestor's own writes in order).",
		New: func() spec.Saver {
			d := wrapDelta()
			d.OnDeltaHistory = func(ctx context.Context, cfg spec.Config, chs []string) (map[string]spec.DeltaHistory, error) {
				return historyBlocks(ctx, d.Inner, cfg, chs, func(_ string, h *spec.DeltaHistory, blocks [][]spec.PendingWrite, _ []ckey) {
					slices.Reverse(blocks)
					h.Writes = joined(blocks)
				})
			}
			return d
		},
		Witness: func(ctx context.Context, s spec.Saver) any { deltaChain(ctx, s); return chainHistories(ctx, s) },
	})
	register(Mutant{
		Name: "delta-writes-as-stored", Rule: "DELTA-4",
		Description: "DeltaHistory returns one ancestor's writes in the order their tasks stored them, not in (task path, task ID, index) order.",
		New: func() spec.Saver {
			d := wrapDelta()
			order := &taskOrder{seq: map[ckey]map[string]int{}}
			d.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				err := d.Inner.PutWrites(ctx, cfg, ws, task, path)
				if err == nil && len(ws) > 0 {
					order.record(cfg, task)
				}
				return err
			}
			d.OnDeltaHistory = func(ctx context.Context, cfg spec.Config, chs []string) (map[string]spec.DeltaHistory, error) {
				return historyBlocks(ctx, d.Inner, cfg, chs, func(_ string, h *spec.DeltaHistory, blocks [][]spec.PendingWrite, keys []ckey) {
					for i, b := range blocks {
						slices.SortStableFunc(b, func(x, y spec.PendingWrite) int {
							return cmp.Compare(order.of(keys[i], x.TaskID), order.of(keys[i], y.TaskID))
						})
					}
					h.Writes = joined(blocks)
				})
			}
			return d
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"m": spec.DeltaSnapshot{Value: "seed"}})
			_ = putCP(ctx, s, "t", "", "b", "a", nil, nil)
			for _, task := range []string{"task-2", "task-1"} {
				_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{wr("m", task)}, task, "p")
			}
			return deltaHistoryOf(ctx, s, []string{"m"}, spec.Config{ThreadID: "t", CheckpointID: "b"})
		},
	})
	register(Mutant{
		Name: "delta-copy-head-only", Rule: "DELTA-11",
		Description: "CopyThread copies only the latest checkpoint of each namespace, with its writes, when the thread uses delta channels.",
		New: func() spec.Saver {
			d := wrapDelta()
			d.OnCopyThread = func(ctx context.Context, src, dst string) error {
				ts, err := threadTuples(ctx, d.Inner, src)
				if err != nil || !hasDeltaChannels(ts) || spec.ValidateThreadID("copy thread", dst) != nil {
					return d.Inner.CopyThread(ctx, src, dst)
				}
				// Decided: from here on the copy runs to its end.
				ctx = context.WithoutCancel(ctx)
				for _, t := range latestPerNamespace(ts) {
					if err := restore(ctx, d.Inner, t, dst, t.Config.CheckpointID, parentID(t), true); err != nil {
						return err
					}
				}
				return nil
			}
			return d
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			deltaChain(ctx, s)
			_ = s.(spec.ThreadCopier).CopyThread(ctx, "t", "t2")
			return deltaHistoryOf(ctx, s, []string{"m"}, spec.Config{ThreadID: "t2", CheckpointID: "d"})
		},
	})
	register(Mutant{
		Name: "delta-prune-head-only", Rule: "DELTA-12",
		Description: "Prune with KeepLatest keeps only the latest checkpoint of each namespace, dropping the ancestors its delta channels need.",
		New: func() spec.Saver {
			d := wrapDelta()
			d.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				if strategy != spec.KeepLatest {
					return d.Inner.Prune(ctx, threads, strategy)
				}
				for _, th := range threads {
					if spec.ValidateThreadID("prune", th) != nil {
						return d.Inner.Prune(ctx, threads, strategy)
					}
				}
				var naive, rest []string
				for _, th := range threads {
					ts, err := threadTuples(ctx, d.Inner, th)
					if err != nil {
						return err
					}
					if hasDeltaChannels(ts) {
						naive = append(naive, th)
					} else {
						rest = append(rest, th)
					}
				}
				if len(naive) == 0 {
					return d.Inner.Prune(ctx, threads, strategy)
				}
				// Decided: from here on the prune runs to its end.
				ctx = context.WithoutCancel(ctx)
				if err := d.Inner.Prune(ctx, rest, strategy); err != nil {
					return err
				}
				return pruneKeeping(ctx, d.Wrapper, naive, strategy, first, true)
			}
			return d
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			deltaChain(ctx, s)
			_ = s.(spec.Pruner).Prune(ctx, []string{"t"}, spec.KeepLatest)
			return deltaHistoryOf(ctx, s, []string{"m"}, spec.Config{ThreadID: "t", CheckpointID: "d"})
		},
	})
	register(Mutant{
		Name: "delta-runs-break-chain", Rule: "DELTA-13",
		Description: "DeleteForRuns removes every checkpoint of the runs, even those a surviving checkpoint's delta channels need.",
		New: func() spec.Saver {
			d := wrapDelta()
			d.OnDeleteForRuns = func(ctx context.Context, runIDs []string) error {
				// Threads with delta channels and checkpoints of the runs:
				// what the adapter keeps there for delta chains goes too.
				all, err := collect(ctx, d.Inner, spec.ListOptions{AllNamespaces: true})
				if err != nil {
					return d.Inner.DeleteForRuns(ctx, runIDs)
				}
				byThread := map[string][]*spec.Tuple{}
				for _, t := range all {
					byThread[t.Config.ThreadID] = append(byThread[t.Config.ThreadID], t)
				}
				doomed := map[string]bool{}
				for _, t := range all {
					if r, ok := runIDOf(t); ok && slices.Contains(runIDs, r) && hasDeltaChannels(byThread[t.Config.ThreadID]) {
						doomed[t.Config.ThreadID] = true
					}
				}
				if err := d.Inner.DeleteForRuns(ctx, runIDs); err != nil || len(doomed) == 0 {
					return err
				}
				// Decided: from here on the deletion runs to its end.
				ctx = context.WithoutCancel(ctx)
				for _, th := range sortedKeys(doomed) {
					ts, err := threadTuples(ctx, d.Inner, th)
					if err != nil {
						return err
					}
					if err := d.Inner.DeleteThread(ctx, th); err != nil {
						return err
					}
					for _, t := range slices.Backward(ts) {
						if r, ok := runIDOf(t); ok && slices.Contains(runIDs, r) {
							continue
						}
						if err := restore(ctx, d.Inner, t, th, t.Config.CheckpointID, parentID(t), true); err != nil {
							return err
						}
					}
				}
				return nil
			}
			return d
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			deltaChain(ctx, s)
			_ = s.(spec.RunDeleter).DeleteForRuns(ctx, []string{"r1"})
			return chainHistories(ctx, s)
		},
	})
	register(Mutant{
		Name: "delta-snapshot-unwrapped", Rule: "VALUE-12",
		Description: "The serde decodes a delta snapshot as its bare value.",
		New: withSerde(func(v any) any {
			if s, ok := v.(spec.DeltaSnapshot); ok {
				return s.Value
			}
			return v
		}),
		Witness: witnessValue(spec.DeltaSnapshot{Value: []any{"m"}}),
	})
}
