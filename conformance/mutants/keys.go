package mutants

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of identity, latest-checkpoint selection, Before edge cases,
// value bookkeeping and concurrency that the other files do not cover.

// foldKey maps an ID to the key a linguistic collation would sort it by:
// case folded, with accented Latin letters sorted with their base letter.
func foldKey(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case strings.ContainsRune("àáâãäå", r):
			return 'a'
		case strings.ContainsRune("èéêë", r):
			return 'e'
		case strings.ContainsRune("ìíîï", r):
			return 'i'
		case strings.ContainsRune("òóôõö", r):
			return 'o'
		case strings.ContainsRune("ùúûü", r):
			return 'u'
		}
		return r
	}, strings.ToLower(id))
}

// isModel reports whether v is already made of plain-value model types.
func isModel(v any) bool { return isModelAt(v, 0) }

// isModelAt is isModel for a value inside depth lists and maps. It stops
// looking below spec.MaxValueDepth, so that it ends on a value that contains
// itself (which the memory adapter rejects).
func isModelAt(v any, depth int) bool {
	if depth > spec.MaxValueDepth {
		return true
	}
	switch x := v.(type) {
	case nil, bool, int64, float64, string, []byte:
		return true
	case []any:
		return !slices.ContainsFunc(x, func(e any) bool { return !isModelAt(e, depth+1) })
	case map[string]any:
		for _, e := range x {
			if !isModelAt(e, depth+1) {
				return false
			}
		}
		return true
	case spec.DeltaSnapshot:
		return isModelAt(x.Value, depth+1)
	}
	return false
}

func init() {
	register(Mutant{
		Name: "checkpoint-id-invented", Rule: "ID-3",
		Description: "The returned Checkpoint.ID is one the saver made up (a prefixed copy of the key), not cp.ID.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) { t.Checkpoint.ID = "ckpt-" + t.Config.CheckpointID }
			return w
		},
		Witness: witnessMeta(nil),
	})
	register(Mutant{
		Name: "latest-by-collation", Rule: "ID-4",
		Description: "GetTuple picks the latest checkpoint under a linguistic collation (case and accents folded) instead of byte order.",
		New: func() spec.Saver {
			w := wrap()
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				if cfg.CheckpointID != "" || cfg.ThreadID == "" {
					return w.Inner.GetTuple(ctx, cfg)
				}
				ts, err := collect(ctx, w.Inner, spec.ListOptions{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace})
				if err != nil || len(ts) == 0 {
					return w.Inner.GetTuple(ctx, cfg)
				}
				return slices.MaxFunc(ts, func(a, b *spec.Tuple) int {
					return strings.Compare(foldKey(a.Config.CheckpointID), foldKey(b.Config.CheckpointID))
				}), nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "é", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "z", "", nil, nil)
			return get(ctx, s, "t", "", "")
		},
	})
	register(Mutant{
		Name: "latest-across-namespaces", Rule: "GET-7",
		Description: "GetTuple without an ID returns the greatest ID of the whole thread when it beats the namespace's own latest.",
		New: func() spec.Saver {
			w := wrap()
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				t, err := w.Inner.GetTuple(ctx, cfg)
				if err != nil || cfg.CheckpointID != "" {
					return t, err
				}
				for top, err := range w.Inner.List(ctx, spec.ListOptions{ThreadID: cfg.ThreadID, AllNamespaces: true, Limit: 1}) {
					if err == nil && top.Config.CheckpointID > t.Config.CheckpointID {
						return top, nil
					}
				}
				return t, nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "sub:1", "b", "", nil, nil)
			return get(ctx, s, "t", "", "")
		},
	})
	register(Mutant{
		Name: "namespace-recast", Rule: "NS-3",
		Description: "Namespaces are stored recast (task IDs and numeric levels dropped), so subgraph runs of one node share a namespace.",
		New: func() spec.Saver {
			w := wrap()
			rc := func(c spec.Config) spec.Config { c.Namespace = spec.RecastNamespace(c.Namespace); return c }
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				return w.Inner.Put(ctx, rc(cfg), cp, md, nv)
			}
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				return w.Inner.PutWrites(ctx, rc(cfg), ws, task, path)
			}
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) { return w.Inner.GetTuple(ctx, rc(cfg)) }
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				o.Namespace = spec.RecastNamespace(o.Namespace)
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "node:1a2b", "a", "", nil, nil)
			return get(ctx, s, "t", "node:1a2b", "a")
		},
	})
	register(Mutant{
		Name: "empty-parent-kept", Rule: "PUT-3",
		Description: "A checkpoint put without a parent reads back with a Parent whose checkpoint ID is empty, instead of nil.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if t.Parent == nil {
					t.Parent = &spec.Config{ThreadID: t.Config.ThreadID, Namespace: t.Config.Namespace}
				}
			}
			return w
		},
		Witness: witnessMeta(nil),
	})
	register(Mutant{
		Name: "values-only-updated-channels", Rule: "PUT-4",
		Description: "Put stores only the new versions of channels listed in UpdatedChannels, ignoring the rest of newVersions.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				kept := maps.Clone(nv)
				maps.DeleteFunc(kept, func(ch string, _ spec.Version) bool { return !slices.Contains(cp.UpdatedChannels, ch) })
				return w.Inner.Put(ctx, cfg, cp, md, kept)
			}
			return w
		},
		Witness: witnessValue("v"),
	})
	register(Mutant{
		Name: "convertible-values-rejected", Rule: "VALUE-3",
		Description: "Values that need conversion to the value model (int, []string, map[string]int, ...) are rejected with ErrUnsupportedValue.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				for ch := range nv {
					if v, ok := cp.ChannelValues[ch]; ok && !isModel(v) {
						return spec.Config{}, fmt.Errorf("mutant: channel %q holds a %T: %w", ch, v, spec.ErrUnsupportedValue)
					}
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
		Witness: witnessValue([]string{"a"}),
	})
	register(Mutant{
		Name: "before-must-exist", Rule: "LIST-BEFORE-3",
		Description: "A Before ID that names no checkpoint is ignored (no cut), as a saver resolving Before to a stored row would.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.Before != "" {
					found, err := collect(ctx, w.Inner, spec.ListOptions{CheckpointID: o.Before, AllNamespaces: true, Limit: 1})
					if err == nil && len(found) == 0 {
						o.Before = ""
					}
				}
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "c", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Before: "b"})
		},
	})
	register(Mutant{
		Name: "empty-before-cuts-all", Rule: "LIST-BEFORE-4",
		Description: "An empty Before is applied literally as a cut: no ID is less than \"\", so List returns nothing.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return relist(ctx, w.Inner, o, nil, func(t *spec.Tuple) bool { return o.Before != "" || t.Config.CheckpointID < "" })
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t"})
		},
	})
	register(Mutant{
		Name: "delete-leaves-values", Rule: "DELETE-3",
		Description: "DeleteThread leaves the thread's channel values behind; a checkpoint put again that references an old version reads the old value.",
		New:         newDeleteLeavesValues,
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": "old"})
			_ = s.DeleteThread(ctx, "t")
			cp := spec.Checkpoint{ID: "a", ChannelVersions: spec.Versions{"c": "va"}}
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "lost-writes-across-threads", Rule: "CONC-1",
		Description: "PutWrites silently drops its writes while any other Put or PutWrites is in flight, on any thread.",
		New: func() spec.Saver {
			w := wrap()
			busy := newBusy()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				defer busy.enter("")()
				runtime.Gosched() // let other goroutines into the window
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				defer busy.enter("")()
				if busy.count("") > 1 {
					return nil
				}
				runtime.Gosched()
				return w.Inner.PutWrites(ctx, cfg, ws, task, path)
			}
			return w
		},
	})
}

// newDeleteLeavesValues builds the delete-leaves-values mutant: it saves
// the values of a thread before deleting it and serves them to checkpoints
// that list those versions without storing them anew.
func newDeleteLeavesValues() spec.Saver {
	w := wrap()
	type vk struct {
		thread, ns, ch string
		ver            spec.Version
	}
	var mu sync.Mutex
	ghosts := map[vk]any{}
	w.OnDeleteThread = func(ctx context.Context, thread string) error {
		var ts []*spec.Tuple
		if thread != "" {
			var err error
			if ts, err = threadTuples(ctx, w.Inner, thread); err != nil {
				return err
			}
		}
		if err := w.Inner.DeleteThread(ctx, thread); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, t := range ts {
			for ch, v := range t.Checkpoint.ChannelValues {
				ghosts[vk{thread, t.Config.Namespace, ch, t.Checkpoint.ChannelVersions[ch]}] = v
			}
		}
		return nil
	}
	w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
		out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
		if err == nil {
			mu.Lock()
			for ch, ver := range nv {
				delete(ghosts, vk{cfg.ThreadID, cfg.Namespace, ch, ver})
			}
			mu.Unlock()
		}
		return out, err
	}
	w.MapTuple = func(t *spec.Tuple) {
		mu.Lock()
		defer mu.Unlock()
		for ch, ver := range t.Checkpoint.ChannelVersions {
			if _, ok := t.Checkpoint.ChannelValues[ch]; ok {
				continue
			}
			if v, ok := ghosts[vk{t.Config.ThreadID, t.Config.Namespace, ch, ver}]; ok {
				t.Checkpoint.ChannelValues[ch] = deepCopy(v)
			}
		}
	}
	return w
}
