package mutants

import (
	"context"
	"iter"
	"maps"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// ckey names one checkpoint.
type ckey struct{ thread, ns, id string }

func keyOf(t *spec.Tuple) ckey {
	return ckey{t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID}
}

// deepCopy copies a plain value (and Metadata and the other map types the
// spec uses) so that the result shares no mutable memory with v.
func deepCopy(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case spec.Metadata:
		return spec.Metadata(deepCopy(map[string]any(x)).(map[string]any))
	case []byte:
		return slices.Clone(x)
	case spec.DeltaSnapshot:
		return spec.DeltaSnapshot{Value: deepCopy(x.Value)}
	}
	return v
}

func copyMeta(md spec.Metadata) spec.Metadata {
	if md == nil {
		return nil
	}
	return deepCopy(md).(spec.Metadata)
}

// cloneTuple returns a deep copy of t.
func cloneTuple(t *spec.Tuple) *spec.Tuple {
	c := *t
	cp := t.Checkpoint
	if cp.ChannelValues != nil {
		cp.ChannelValues = deepCopy(cp.ChannelValues).(map[string]any)
	}
	cp.ChannelVersions = maps.Clone(cp.ChannelVersions)
	if cp.VersionsSeen != nil {
		cp.VersionsSeen = make(map[string]spec.Versions, len(t.Checkpoint.VersionsSeen))
		for n, vs := range t.Checkpoint.VersionsSeen {
			cp.VersionsSeen[n] = maps.Clone(vs)
		}
	}
	cp.UpdatedChannels = slices.Clone(cp.UpdatedChannels)
	c.Checkpoint = cp
	c.Metadata = copyMeta(t.Metadata)
	if t.Parent != nil {
		p := *t.Parent
		c.Parent = &p
	}
	if t.PendingWrites != nil {
		c.PendingWrites = make([]spec.PendingWrite, len(t.PendingWrites))
		for i, w := range t.PendingWrites {
			w.Value = deepCopy(w.Value)
			c.PendingWrites[i] = w
		}
	}
	return &c
}

// relist lists with inner and post-processes the stream: adjust may rewrite
// the options passed to inner (which always runs without a limit), keep
// drops tuples, and the original limit is applied last. Invalid options give
// the same error inner would give.
func relist(ctx context.Context, inner spec.Saver, opts spec.ListOptions, adjust func(*spec.ListOptions), keep func(*spec.Tuple) bool) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		if err := spec.ValidateList(opts); err != nil {
			yield(nil, err)
			return
		}
		in := opts
		in.Limit = 0
		if adjust != nil {
			adjust(&in)
		}
		n := 0
		for t, err := range inner.List(ctx, in) {
			if err != nil {
				yield(nil, err)
				return
			}
			if keep != nil && !keep(t) {
				continue
			}
			if !yield(t, nil) {
				return
			}
			n++
			if opts.Limit > 0 && n >= opts.Limit {
				return
			}
		}
	}
}

// reorder lists everything inner returns for opts (without the limit),
// lets arrange reorder or expand the slice, then applies the limit.
func reorder(ctx context.Context, inner spec.Saver, opts spec.ListOptions, arrange func([]*spec.Tuple) []*spec.Tuple) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		if err := spec.ValidateList(opts); err != nil {
			yield(nil, err)
			return
		}
		in := opts
		in.Limit = 0
		all, err := collect(ctx, inner, in)
		if err != nil {
			yield(nil, err)
			return
		}
		all = arrange(all)
		if opts.Limit > 0 && len(all) > opts.Limit {
			all = all[:opts.Limit]
		}
		for _, t := range all {
			if !yield(t, nil) {
				return
			}
		}
	}
}

// collect returns everything inner lists for opts.
func collect(ctx context.Context, inner spec.Saver, opts spec.ListOptions) ([]*spec.Tuple, error) {
	var out []*spec.Tuple
	for t, err := range inner.List(ctx, opts) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// threadTuples returns every checkpoint of a thread, in every namespace.
func threadTuples(ctx context.Context, inner spec.Saver, threadID string) ([]*spec.Tuple, error) {
	return collect(ctx, inner, spec.ListOptions{ThreadID: threadID, AllNamespaces: true})
}

// restore puts t back into s under thread, with checkpoint ID id and parent
// ID parent, storing every channel value it reads and, when withWrites is
// set, its pending writes. It is how mutants rebuild storage through the
// public API (the memory adapter has no per-checkpoint delete).
func restore(ctx context.Context, s Base, t *spec.Tuple, thread, id, parent string, withWrites bool) error {
	cp := t.Checkpoint
	cp.ID = id
	// Storing every listed version writes back exactly what was read:
	// present values as values, absent ones as "no value".
	if _, err := s.Put(ctx, spec.Config{ThreadID: thread, Namespace: t.Config.Namespace, CheckpointID: parent}, cp, t.Metadata, cp.ChannelVersions); err != nil {
		return err
	}
	if !withWrites {
		return nil
	}
	return restoreWrites(ctx, s, spec.Config{ThreadID: thread, Namespace: t.Config.Namespace, CheckpointID: id}, t.PendingWrites)
}

// restoreWrites puts pending writes back, one call per task, in their
// stored order. Reads return them exactly as before; only the indices of
// regular writes may differ from the original ones (a pending write does not
// carry its index), which matters only to a later write with the same key.
func restoreWrites(ctx context.Context, s Base, cfg spec.Config, pending []spec.PendingWrite) error {
	var tasks []string
	byTask := map[string][]spec.Write{}
	for _, w := range pending {
		if _, ok := byTask[w.TaskID]; !ok {
			tasks = append(tasks, w.TaskID)
		}
		byTask[w.TaskID] = append(byTask[w.TaskID], spec.Write{Channel: w.Channel, Value: w.Value})
	}
	for _, task := range tasks {
		if err := s.PutWrites(ctx, cfg, byTask[task], task, ""); err != nil {
			return err
		}
	}
	return nil
}

func parentID(t *spec.Tuple) string {
	if t.Parent == nil {
		return ""
	}
	return t.Parent.CheckpointID
}

// mapValues applies f to every channel value and pending-write value of t.
func mapValues(t *spec.Tuple, f func(any) any) {
	for ch, v := range t.Checkpoint.ChannelValues {
		t.Checkpoint.ChannelValues[ch] = f(v)
	}
	for i := range t.PendingWrites {
		t.PendingWrites[i].Value = f(t.PendingWrites[i].Value)
	}
}

// walk rebuilds a plain value bottom-up, applying f to every node after its
// children.
func walk(v any, f func(any) any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = walk(e, f)
		}
		return f(out)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = walk(e, f)
		}
		return f(out)
	}
	return f(v)
}
