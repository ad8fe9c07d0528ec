package mutants

import (
	"context"
	"iter"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of memory isolation below the top level (PUT-12): savers that
// copy a value's outermost list or map and share what is nested in it.

func init() {
	register(Mutant{
		Name: "read-shares-nested", Rule: "PUT-12",
		Description: "Reads copy only the top level of each stored value, metadata map and write value, sharing the lists, maps and byte strings nested in them, so mutating a returned tuple deep down changes later reads.",
		New:         newReadSharesNested,
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": []any{[]any{"v"}}})
			if t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err == nil {
				if l, ok := t.Checkpoint.ChannelValues["c"].([]any); ok && len(l) > 0 {
					if inner, ok := l[0].([]any); ok && len(inner) > 0 {
						inner[0] = "mutated"
					}
				}
			}
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "history-shares-nested", Rule: "PUT-12",
		Description: "DeltaHistory copies only the top level of each seed and write value, sharing what is nested in them with the history it keeps, so mutating a returned history deep down changes later histories.",
		New:         newHistorySharesNested,
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"m": spec.DeltaSnapshot{Value: []any{[]any{"v"}}}})
			_ = putCP(ctx, s, "t", "", "b", "a", nil, nil)
			cfg := spec.Config{ThreadID: "t", CheckpointID: "b"}
			if hs, err := spec.ReadDeltaHistory(ctx, s, cfg, []string{"m"}); err == nil {
				if snap, ok := hs["m"].Seed.(spec.DeltaSnapshot); ok {
					if l, ok := snap.Value.([]any); ok && len(l) > 0 {
						if inner, ok := l[0].([]any); ok && len(inner) > 0 {
							inner[0] = "mutated"
						}
					}
				}
			}
			return deltaHistoryOf(ctx, s, []string{"m"}, cfg)
		},
	})
	register(Mutant{
		Name: "put-keeps-nested", Rule: "PUT-12",
		Description: "Put copies only the top level of each channel value and of the metadata, keeping the caller's nested lists, maps and byte strings, so mutating them after Put changes what is read.",
		New:         newPutKeepsNested,
		Witness: func(ctx context.Context, s spec.Saver) any {
			nested := []any{"v"}
			md := spec.Metadata{"m": map[string]any{"k": "v"}}
			_ = putCP(ctx, s, "t", "", "a", "", md, map[string]any{"c": map[string]any{"l": nested}})
			nested[0] = "mutated"
			md["m"].(map[string]any)["k"] = "mutated"
			return get(ctx, s, "t", "", "a")
		},
	})
}

// shallow copies the outermost list, map, byte string or snapshot of v and
// shares everything nested in it.
func shallow(v any) any {
	switch x := v.(type) {
	case []any:
		return slices.Clone(x)
	case map[string]any:
		return maps.Clone(x)
	case spec.Metadata:
		return maps.Clone(x)
	case []byte:
		return slices.Clone(x)
	case spec.DeltaSnapshot:
		return spec.DeltaSnapshot{Value: shallow(x.Value)}
	}
	return v
}

// shallowTuple returns a copy of t whose maps and slices are new at the top
// level (the versions deeply, which are not the fault), with every value
// and metadata entry copied by shallow.
func shallowTuple(t *spec.Tuple) *spec.Tuple {
	c := cloneTuple(&spec.Tuple{Config: t.Config, Parent: t.Parent, Checkpoint: spec.Checkpoint{
		V: t.Checkpoint.V, ID: t.Checkpoint.ID, TS: t.Checkpoint.TS,
		ChannelVersions: t.Checkpoint.ChannelVersions, VersionsSeen: t.Checkpoint.VersionsSeen,
		UpdatedChannels: t.Checkpoint.UpdatedChannels,
	}})
	if t.Checkpoint.ChannelValues != nil {
		c.Checkpoint.ChannelValues = make(map[string]any, len(t.Checkpoint.ChannelValues))
		for ch, v := range t.Checkpoint.ChannelValues {
			c.Checkpoint.ChannelValues[ch] = shallow(v)
		}
	}
	if t.Metadata != nil {
		c.Metadata = make(spec.Metadata, len(t.Metadata))
		for k, v := range t.Metadata {
			c.Metadata[k] = shallow(v)
		}
	}
	if t.PendingWrites != nil {
		c.PendingWrites = make([]spec.PendingWrite, len(t.PendingWrites))
		for i, w := range t.PendingWrites {
			w.Value = shallow(w.Value)
			c.PendingWrites[i] = w
		}
	}
	return c
}

// keptReads keeps what reads returned, as a saver keeping decoded rows
// would, until the next write. A read that overlaps a write keeps nothing,
// so a mutant serving kept reads never serves a stale one.
type keptReads[K comparable, V any] struct {
	mu      sync.Mutex
	gen     int // bumped at the start and end of every write
	writing int // writes in progress
	kept    map[K]V
}

// begin starts a read: it returns the generation to pass to keep.
func (r *keptReads[K, V]) begin() (gen int, quiet bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen, r.writing == 0
}

// keep returns what is kept under k, or keeps v there and returns it when
// no write started since begin; otherwise it returns v.
func (r *keptReads[K, V]) keep(k K, v V, gen int, quiet bool) V {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !quiet || r.writing != 0 || r.gen != gen {
		return v
	}
	if old, ok := r.kept[k]; ok {
		return old
	}
	if r.kept == nil {
		r.kept = map[K]V{}
	}
	r.kept[k] = v
	return v
}

func (r *keptReads[K, V]) bump(delta int) {
	r.mu.Lock()
	r.writing += delta
	r.gen++
	clear(r.kept)
	r.mu.Unlock()
}

// hook makes every write method of w forget what r keeps.
func (r *keptReads[K, V]) hook(w *Wrapper) {
	write := func(f func() error) error {
		r.bump(1)
		defer r.bump(-1)
		return f()
	}
	w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (out spec.Config, err error) {
		err = write(func() error {
			out, err = w.Inner.Put(ctx, cfg, cp, md, nv)
			return err
		})
		return out, err
	}
	w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
		return write(func() error { return w.Inner.PutWrites(ctx, cfg, ws, task, path) })
	}
	w.OnDeleteThread = func(ctx context.Context, thread string) error {
		return write(func() error { return w.Inner.DeleteThread(ctx, thread) })
	}
	w.OnCopyThread = func(ctx context.Context, src, dst string) error {
		return write(func() error { return w.Inner.CopyThread(ctx, src, dst) })
	}
	w.OnDeleteForRuns = func(ctx context.Context, runIDs []string) error {
		return write(func() error { return w.Inner.DeleteForRuns(ctx, runIDs) })
	}
	w.OnPrune = func(ctx context.Context, threads []string, s spec.PruneStrategy) error {
		return write(func() error { return w.Inner.Prune(ctx, threads, s) })
	}
}

// newReadSharesNested builds the read-shares-nested mutant: it keeps the
// first tuple read of each checkpoint until the next write and serves
// every read a shallow copy of it.
func newReadSharesNested() spec.Saver {
	w := wrap()
	var r keptReads[ckey, *spec.Tuple]
	r.hook(w)
	w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
		gen, quiet := r.begin()
		t, err := w.Inner.GetTuple(ctx, cfg)
		if err != nil || t == nil {
			return t, err
		}
		return shallowTuple(r.keep(keyOf(t), t, gen, quiet)), nil
	}
	w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
		return func(yield func(*spec.Tuple, error) bool) {
			gen, quiet := r.begin()
			for t, err := range w.Inner.List(ctx, o) {
				if t != nil {
					t = shallowTuple(r.keep(keyOf(t), t, gen, quiet))
				}
				if !yield(t, err) {
					return
				}
			}
		}
	}
	return w
}

// hkey names one channel's delta history as asked for: the config's thread,
// namespace and checkpoint ID (empty for the latest) and the channel.
type hkey struct{ thread, ns, id, ch string }

// newHistorySharesNested builds the history-shares-nested mutant: it keeps
// each channel's history until the next write and serves every
// DeltaHistory call a copy of it whose seed and write values are copied
// only at the top level.
func newHistorySharesNested() spec.Saver {
	d := wrapDelta()
	var r keptReads[hkey, spec.DeltaHistory]
	r.hook(d.Wrapper)
	d.OnDeltaHistory = func(ctx context.Context, cfg spec.Config, chs []string) (map[string]spec.DeltaHistory, error) {
		gen, quiet := r.begin()
		hs, err := spec.ReadDeltaHistory(ctx, d.Inner, cfg, chs)
		if err != nil {
			return hs, err
		}
		for ch, h := range hs {
			h = r.keep(hkey{cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, ch}, h, gen, quiet)
			c := spec.DeltaHistory{Seed: shallow(h.Seed), HasSeed: h.HasSeed, Writes: make([]spec.PendingWrite, len(h.Writes))}
			for i, w := range h.Writes {
				w.Value = shallow(w.Value)
				c.Writes[i] = w
			}
			hs[ch] = c
		}
		return hs, nil
	}
	return d
}

// vkey names one stored channel value: a channel at a version, in a thread
// and namespace.
type vkey struct {
	thread, ns, ch string
	ver            spec.Version
}

// keptRef is what put-keeps-nested holds for a value or a metadata map: a
// top-level copy of the caller's (ref, sharing its nested containers) and
// the normalised value as it was at Put (at), to recognise the inner
// saver's copy of it.
type keptRef struct {
	ref, at any
}

// newPutKeepsNested builds the put-keeps-nested mutant: each read value or
// metadata map that the inner saver stored from a Put is rebuilt from the
// caller's nested containers as they are now.
func newPutKeepsNested() spec.Saver {
	w := wrap()
	var mu sync.Mutex
	vals := map[vkey]keptRef{}
	metas := map[ckey]keptRef{}
	w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
		out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
		if err != nil {
			return out, err
		}
		mu.Lock()
		defer mu.Unlock()
		for ch, ver := range nv {
			v, ok := cp.ChannelValues[ch]
			if !ok {
				continue
			}
			if at, err := spec.Normalize(v); err == nil {
				vals[vkey{out.ThreadID, out.Namespace, ch, ver}] = keptRef{ref: shallow(v), at: at}
			}
		}
		if at, err := spec.NormalizeMetadata(md); err == nil && md != nil {
			metas[ckey{out.ThreadID, out.Namespace, out.CheckpointID}] = keptRef{ref: shallow(md), at: at}
		}
		return out, nil
	}
	w.MapTuple = func(t *spec.Tuple) {
		mu.Lock()
		defer mu.Unlock()
		for ch, ver := range t.Checkpoint.ChannelVersions {
			k, ok := vals[vkey{t.Config.ThreadID, t.Config.Namespace, ch, ver}]
			cur, present := t.Checkpoint.ChannelValues[ch]
			if !ok || !present || !reflect.DeepEqual(cur, k.at) {
				continue
			}
			if v, err := spec.Normalize(k.ref); err == nil {
				t.Checkpoint.ChannelValues[ch] = v
			}
		}
		if k, ok := metas[keyOf(t)]; ok && reflect.DeepEqual(t.Metadata, k.at) {
			if md, err := spec.NormalizeMetadata(k.ref.(spec.Metadata)); err == nil {
				t.Metadata = md
			}
		}
	}
	onDeleteThread(w, &mu, func(thread string) {
		maps.DeleteFunc(vals, func(k vkey, _ keptRef) bool { return k.thread == thread })
		maps.DeleteFunc(metas, func(k ckey, _ keptRef) bool { return k.thread == thread })
	})
	return w
}
