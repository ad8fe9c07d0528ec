package mutants

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of per-version channel-value storage and of memory isolation.

// sideValue is a channel value held by a mutant's side store; present is
// false for "no value".
type sideValue struct {
	v       any
	present bool
}

// sideValues returns the values a Put stores for newVersions, normalised.
func sideValues(cp spec.Checkpoint, nv spec.Versions) map[string]sideValue {
	out := map[string]sideValue{}
	for ch := range nv {
		v, ok := cp.ChannelValues[ch]
		if ok {
			v, _ = spec.Normalize(v) // the inner saver accepted it
		}
		out[ch] = sideValue{v, ok}
	}
	return out
}

// overlay replaces the values of t's channels for which get has an entry.
func overlay(t *spec.Tuple, get func(ch string, ver spec.Version) (sideValue, bool)) {
	for ch, ver := range t.Checkpoint.ChannelVersions {
		sv, ok := get(ch, ver)
		switch {
		case !ok:
		case sv.present:
			t.Checkpoint.ChannelValues[ch] = deepCopy(sv.v)
		default:
			delete(t.Checkpoint.ChannelValues, ch)
		}
	}
}

// onDeleteThread makes w forget side state of a thread after a successful
// DeleteThread.
func onDeleteThread(w *Wrapper, mu *sync.Mutex, forget func(thread string)) {
	w.OnDeleteThread = func(ctx context.Context, thread string) error {
		if err := w.Inner.DeleteThread(ctx, thread); err != nil {
			return err
		}
		mu.Lock()
		forget(thread)
		mu.Unlock()
		return nil
	}
}

// printed is v's printed form; for a map or a list, which may contain
// itself (fmt would recurse for ever), its type.
func printed(v any) string {
	switch v.(type) {
	case map[string]any, []any, spec.Metadata:
		return fmt.Sprintf("%T", v)
	}
	return fmt.Sprintf("%v", v)
}

// sanitize replaces every value of m that spec.Normalize rejects by its
// printed form.
func sanitize(m map[string]any) map[string]any {
	out := maps.Clone(m)
	for k, v := range out {
		if _, err := spec.Normalize(v); err != nil {
			out[k] = printed(v)
		}
	}
	return out
}

func init() {
	register(Mutant{
		Name: "values-last-put", Rule: "PUT-9",
		Description: "Channel values are stored per channel, not per version: every checkpoint reads the value of the last Put.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			type k struct{ thread, ns, ch string }
			last := map[k]sideValue{}
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if err == nil {
					mu.Lock()
					for ch, sv := range sideValues(cp, nv) {
						last[k{cfg.ThreadID, cfg.Namespace, ch}] = sv
					}
					mu.Unlock()
				}
				return out, err
			}
			w.MapTuple = func(t *spec.Tuple) {
				mu.Lock()
				defer mu.Unlock()
				overlay(t, func(ch string, _ spec.Version) (sideValue, bool) {
					sv, ok := last[k{t.Config.ThreadID, t.Config.Namespace, ch}]
					return sv, ok
				})
			}
			onDeleteThread(w, &mu, func(thread string) {
				maps.DeleteFunc(last, func(key k, _ sideValue) bool { return key.thread == thread })
			})
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": "old"})
			_ = putCP(ctx, s, "t", "", "b", "a", nil, map[string]any{"c": "new"})
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "values-namespace-ignored", Rule: "NS-2",
		Description: "Channel values are keyed by (thread, channel, version) without the namespace, so namespaces overwrite each other's values.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			type k struct {
				thread, ch string
				ver        spec.Version
			}
			vals := map[k]sideValue{}
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if err == nil {
					mu.Lock()
					for ch, sv := range sideValues(cp, nv) {
						vals[k{cfg.ThreadID, ch, nv[ch]}] = sv
					}
					mu.Unlock()
				}
				return out, err
			}
			w.MapTuple = func(t *spec.Tuple) {
				mu.Lock()
				defer mu.Unlock()
				overlay(t, func(ch string, ver spec.Version) (sideValue, bool) {
					sv, ok := vals[k{t.Config.ThreadID, ch, ver}]
					return sv, ok
				})
			}
			onDeleteThread(w, &mu, func(thread string) {
				maps.DeleteFunc(vals, func(key k, _ sideValue) bool { return key.thread == thread })
			})
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": "root"})
			_ = putCP(ctx, s, "t", "sub:1", "a", "", nil, map[string]any{"c": "sub"})
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "unlisted-channel-stored", Rule: "PUT-5",
		Description: "Put stores every value in cp.ChannelValues, also for channels not named in newVersions.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				all := maps.Clone(nv)
				if all == nil {
					all = spec.Versions{}
				}
				for ch, ver := range cp.ChannelVersions {
					if _, ok := cp.ChannelValues[ch]; ok {
						if _, listed := all[ch]; !listed {
							all[ch] = ver
						}
					}
				}
				return w.Inner.Put(ctx, cfg, cp, md, all)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": "stored"})
			cp := spec.Checkpoint{ID: "b", ChannelValues: map[string]any{"c": "stale"}, ChannelVersions: spec.Versions{"c": "va"}}
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, cp, nil, spec.Versions{})
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "unversioned-channels-returned", Rule: "PUT-6",
		Description: "Values of channels missing from ChannelVersions are stored with the checkpoint and returned.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			extra := map[ckey]map[string]any{}
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if err == nil {
					ex := map[string]any{}
					for ch, v := range cp.ChannelValues {
						if _, ok := cp.ChannelVersions[ch]; !ok {
							ex[ch], _ = spec.Normalize(v)
						}
					}
					mu.Lock()
					extra[ckey{out.ThreadID, out.Namespace, out.CheckpointID}] = ex
					mu.Unlock()
				}
				return out, err
			}
			w.MapTuple = func(t *spec.Tuple) {
				mu.Lock()
				defer mu.Unlock()
				for ch, v := range extra[keyOf(t)] {
					t.Checkpoint.ChannelValues[ch] = deepCopy(v)
				}
			}
			onDeleteThread(w, &mu, func(thread string) {
				maps.DeleteFunc(extra, func(key ckey, _ map[string]any) bool { return key.thread == thread })
			})
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			cp := spec.Checkpoint{ID: "a", ChannelValues: map[string]any{"loose": 1}}
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "cleared-channel-kept", Rule: "PUT-7",
		Description: "A channel in newVersions without a value keeps the parent's value instead of storing \"no value\".",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if cfg.ThreadID != "" && cfg.CheckpointID != "" {
					if parent, err := w.Inner.GetTuple(ctx, cfg); err == nil {
						vals := maps.Clone(cp.ChannelValues)
						if vals == nil {
							vals = map[string]any{}
						}
						for ch := range nv {
							if _, ok := vals[ch]; !ok {
								if pv, ok := parent.Checkpoint.ChannelValues[ch]; ok {
									vals[ch] = pv
								}
							}
						}
						cp.ChannelValues = vals
					}
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": "v"})
			cp := spec.Checkpoint{ID: "b", ChannelVersions: spec.Versions{"c": "vb"}}
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, cp, nil, spec.Versions{"c": "vb"})
			return get(ctx, s, "t", "", "b")
		},
	})
	register(Mutant{
		Name: "nil-value-dropped", Rule: "PUT-8",
		Description: "A channel whose value is nil reads back absent.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				maps.DeleteFunc(t.Checkpoint.ChannelValues, func(_ string, v any) bool { return v == nil })
			}
			return w
		},
		Witness: witnessValue(nil),
	})
	register(Mutant{
		Name: "put-aliases-metadata", Rule: "PUT-12",
		Description: "Put keeps a reference to the caller's metadata map, so mutating it after Put changes what is read.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			refs := map[ckey]spec.Metadata{}
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if err == nil {
					mu.Lock()
					refs[ckey{out.ThreadID, out.Namespace, out.CheckpointID}] = md
					mu.Unlock()
				}
				return out, err
			}
			w.MapTuple = func(t *spec.Tuple) {
				mu.Lock()
				ref, ok := refs[keyOf(t)]
				mu.Unlock()
				if md, err := spec.NormalizeMetadata(ref); ok && ref != nil && err == nil {
					t.Metadata = md
				}
			}
			onDeleteThread(w, &mu, func(thread string) {
				maps.DeleteFunc(refs, func(key ckey, _ spec.Metadata) bool { return key.thread == thread })
			})
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			md := spec.Metadata{"k": "before"}
			_ = putCP(ctx, s, "t", "", "a", "", md, nil)
			md["k"] = "after"
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "tuple-aliasing", Rule: "PUT-12",
		Description: "Reads return one cached tuple per checkpoint until the next write, so a caller mutating a returned tuple changes later reads.",
		New:         newTupleAliasing,
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": "v"})
			if t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err == nil {
				t.Checkpoint.ChannelValues["c"] = "mutated"
			}
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "unsupported-value-accepted", Rule: "VALUE-4",
		Description: "Channel and write values outside the value model are stored as their printed form instead of failing.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if errors.Is(err, spec.ErrUnsupportedValue) {
					cp.ChannelValues = sanitize(cp.ChannelValues)
					return w.Inner.Put(ctx, cfg, cp, md, nv)
				}
				return out, err
			}
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				err := w.Inner.PutWrites(ctx, cfg, ws, task, path)
				if errors.Is(err, spec.ErrUnsupportedValue) {
					fixed := make([]spec.Write, len(ws))
					for i, wr := range ws {
						fixed[i] = spec.Write{Channel: wr.Channel, Value: sanitize(map[string]any{"v": wr.Value})["v"]}
					}
					return w.Inner.PutWrites(ctx, cfg, fixed, task, path)
				}
				return err
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			err := putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": struct{ X int }{1}})
			return []any{errKind(err), get(ctx, s, "t", "", "a")}
		},
	})
}

// newTupleAliasing builds the tuple-aliasing mutant.
func newTupleAliasing() spec.Saver {
	w := wrap()
	var mu sync.Mutex
	cache := map[ckey]*spec.Tuple{}
	cached := func(t *spec.Tuple) *spec.Tuple {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := cache[keyOf(t)]; ok {
			return c
		}
		cache[keyOf(t)] = t
		return t
	}
	invalidate := func() {
		mu.Lock()
		clear(cache)
		mu.Unlock()
	}
	w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
		t, err := w.Inner.GetTuple(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return cached(t), nil
	}
	w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
		return func(yield func(*spec.Tuple, error) bool) {
			for t, err := range w.Inner.List(ctx, o) {
				if t != nil {
					t = cached(t)
				}
				if !yield(t, err) {
					return
				}
			}
		}
	}
	w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
		defer invalidate()
		return w.Inner.Put(ctx, cfg, cp, md, nv)
	}
	w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
		defer invalidate()
		return w.Inner.PutWrites(ctx, cfg, ws, task, path)
	}
	w.OnDeleteThread = func(ctx context.Context, thread string) error {
		defer invalidate()
		return w.Inner.DeleteThread(ctx, thread)
	}
	w.OnCopyThread = func(ctx context.Context, src, dst string) error {
		defer invalidate()
		return w.Inner.CopyThread(ctx, src, dst)
	}
	w.OnDeleteForRuns = func(ctx context.Context, runIDs []string) error {
		defer invalidate()
		return w.Inner.DeleteForRuns(ctx, runIDs)
	}
	w.OnPrune = func(ctx context.Context, threads []string, s spec.PruneStrategy) error {
		defer invalidate()
		return w.Inner.Prune(ctx, threads, s)
	}
	return w
}
