package conformance

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// model is a deliberately naive, obviously correct implementation of the
// contract, used to compute expected results for the generated List table
// and the random operation sequences. It favours plainness over speed:
// every query scans everything. Values are kept normalised; callers never
// share maps with it because every input is normalised on the way in and
// every output is freshly built.
type model struct {
	cps    map[mkey]*mcp
	values map[mval]mvalue
	writes map[mkey]map[mtask]spec.PendingWrite
	// snapshots models the WholeSnapshots variant: a checkpoint reads back
	// the values it was put with.
	snapshots bool
	// lg holds the strict rules on which this model follows a LangGraph
	// saver instead of the contract.
	lg lgVariant
}

// lgVariant selects recognised LangGraph behaviours of strict rules (see
// SPEC.md's table of differences) that the model may follow, so that a
// random sequence judges the rest of such a saver's behaviour.
type lgVariant struct {
	batchRule   bool // WRITES-5: a batch holding a regular write only inserts new keys
	firstParent bool // PUT-11: a re-put keeps the checkpoint's first parent
	trueIsOne   bool // LIST-FILTER-4: a filter's true matches 1 and false 0, and back
	listNone    bool // LIST-SCOPE-6: List of every thread ignores Namespace and CheckpointID
	snapshots   bool // PUT-5, PUT-6: whole snapshots, as WholeSnapshots declares
}

// any reports whether v follows any LangGraph behaviour.
func (v lgVariant) any() bool { return v != lgVariant{} }

// behaviours names the LangGraph behaviours v follows, for messages.
func (v lgVariant) behaviours() []string {
	var out []string
	for _, b := range []struct {
		on   bool
		name string
	}{
		{v.batchRule, "WRITES-5 batches"}, {v.firstParent, "PUT-11 first parent"}, {v.trueIsOne, "LIST-FILTER-4 true == 1"},
		{v.listNone, "LIST-SCOPE-6 list(None)"}, {v.snapshots, "whole snapshots"},
	} {
		if b.on {
			out = append(out, b.name)
		}
	}
	return out
}

// flags lists v's behaviours as (on, setter) pairs, in a fixed order.
func (v lgVariant) flags() []struct {
	on  bool
	set func(*lgVariant)
} {
	return []struct {
		on  bool
		set func(*lgVariant)
	}{
		{v.batchRule, func(x *lgVariant) { x.batchRule = true }}, {v.firstParent, func(x *lgVariant) { x.firstParent = true }},
		{v.trueIsOne, func(x *lgVariant) { x.trueIsOne = true }}, {v.listNone, func(x *lgVariant) { x.listNone = true }},
		{v.snapshots, func(x *lgVariant) { x.snapshots = true }},
	}
}

// union returns the behaviours of a and of b.
func union(a, b lgVariant) lgVariant {
	for _, f := range b.flags() {
		if f.on {
			f.set(&a)
		}
	}
	return a
}

// without returns the behaviours of a that b does not follow.
func without(a, b lgVariant) lgVariant {
	var out lgVariant
	bf := b.flags()
	for i, f := range a.flags() {
		if f.on && !bf[i].on {
			f.set(&out)
		}
	}
	return out
}

// subsetsOf returns the combinations of the behaviours v follows worth
// trying at one divergent op, the smallest first: each alone, each pair,
// and all together. One op exercises one or two of them; larger subsets
// would multiply the replays while shrinking.
func subsetsOf(v lgVariant) []lgVariant {
	var sets []func(*lgVariant)
	for _, f := range v.flags() {
		if f.on {
			sets = append(sets, f.set)
		}
	}
	var out []lgVariant
	for size := 1; size <= len(sets); size++ {
		for mask := 1; mask < 1<<len(sets); mask++ {
			if bits.OnesCount(uint(mask)) != size || size > 2 && size < len(sets) {
				continue
			}
			var x lgVariant
			for i, set := range sets {
				if mask&(1<<i) != 0 {
					set(&x)
				}
			}
			out = append(out, x)
		}
	}
	return out
}

type mkey struct{ thread, ns, id string }

type mcp struct {
	parent   string
	cp       spec.Checkpoint // ChannelValues used only for snapshots
	metadata spec.Metadata
}

type mval struct {
	thread, ns, channel string
	version             spec.Version
}

type mvalue struct {
	present bool
	v       any
}

// mtask is the part of a write key below the checkpoint key.
type mtask struct {
	task string
	idx  int
}

// newModel returns an empty model; snapshots selects the WholeSnapshots
// variant.
func newModel(snapshots bool) *model {
	return &model{cps: map[mkey]*mcp{}, values: map[mval]mvalue{}, writes: map[mkey]map[mtask]spec.PendingWrite{}, snapshots: snapshots}
}

// put mirrors Saver.Put for valid, normalisable input.
func (m *model) put(cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) {
	for ch, ver := range nv {
		v, ok := cp.ChannelValues[ch]
		if ok {
			v, _ = spec.Normalize(v)
		}
		m.values[mval{cfg.ThreadID, cfg.Namespace, ch, ver}] = mvalue{present: ok, v: v}
	}
	nmd, _ := spec.NormalizeMetadata(md)
	stored := spec.Checkpoint{V: cp.V, ID: cp.ID, TS: cp.TS, ChannelVersions: spec.Versions{}, VersionsSeen: map[string]spec.Versions{}}
	for ch, ver := range cp.ChannelVersions {
		stored.ChannelVersions[ch] = ver
	}
	if m.snapshots {
		stored.ChannelValues = map[string]any{}
		for ch, v := range cp.ChannelValues {
			stored.ChannelValues[ch], _ = spec.Normalize(v)
		}
	}
	k := mkey{cfg.ThreadID, cfg.Namespace, cp.ID}
	parent := cfg.CheckpointID
	if old := m.cps[k]; old != nil && m.lg.firstParent {
		parent = old.parent
	}
	m.cps[k] = &mcp{parent: parent, cp: stored, metadata: nmd}
}

// putWrites mirrors Saver.PutWrites.
func (m *model) putWrites(cfg spec.Config, writes []spec.Write, task string) {
	insertOnly := m.lg.batchRule && slices.ContainsFunc(writes, func(w spec.Write) bool { return !spec.IsSpecialChannel(w.Channel) })
	for pos, w := range writes {
		idx := pos
		switch w.Channel {
		case spec.ErrorChannel:
			idx = -1
		case spec.ScheduledChannel:
			idx = -2
		case spec.InterruptChannel:
			idx = -3
		case spec.ResumeChannel:
			idx = -4
		}
		ck := mkey{cfg.ThreadID, cfg.Namespace, cfg.CheckpointID}
		if m.writes[ck] == nil {
			m.writes[ck] = map[mtask]spec.PendingWrite{}
		}
		key := mtask{task, idx}
		if _, exists := m.writes[ck][key]; exists && (idx >= 0 || insertOnly) {
			continue
		}
		v, _ := spec.Normalize(w.Value)
		m.writes[ck][key] = spec.PendingWrite{TaskID: task, Channel: w.Channel, Value: v}
	}
}

// tuple builds the tuple of an existing key.
func (m *model) tuple(k mkey) *spec.Tuple {
	c := m.cps[k]
	t := &spec.Tuple{
		Config:        spec.Config{ThreadID: k.thread, Namespace: k.ns, CheckpointID: k.id},
		Checkpoint:    spec.Checkpoint{V: c.cp.V, ID: c.cp.ID, TS: c.cp.TS, ChannelValues: map[string]any{}, ChannelVersions: spec.Versions{}},
		Metadata:      spec.Metadata{},
		PendingWrites: []spec.PendingWrite{},
	}
	for ch, ver := range c.cp.ChannelVersions {
		t.Checkpoint.ChannelVersions[ch] = ver
		if v, ok := m.values[mval{k.thread, k.ns, ch, ver}]; !m.snapshots && ok && v.present {
			t.Checkpoint.ChannelValues[ch], _ = spec.Normalize(v.v) // a copy
		}
	}
	for ch, v := range c.cp.ChannelValues {
		t.Checkpoint.ChannelValues[ch], _ = spec.Normalize(v) // a copy
	}
	for key, v := range c.metadata {
		t.Metadata[key], _ = spec.Normalize(v)
	}
	if c.parent != "" {
		t.Parent = &spec.Config{ThreadID: k.thread, Namespace: k.ns, CheckpointID: c.parent}
	}
	var wks []mtask
	for wk := range m.writes[k] {
		wks = append(wks, wk)
	}
	slices.SortFunc(wks, func(a, b mtask) int {
		return cmp.Or(cmp.Compare(a.task, b.task), cmp.Compare(a.idx, b.idx))
	})
	for _, wk := range wks {
		w := m.writes[k][wk]
		w.Value, _ = spec.Normalize(w.Value)
		t.PendingWrites = append(t.PendingWrites, w)
	}
	return t
}

// get mirrors Saver.GetTuple; nil means ErrNotFound.
func (m *model) get(cfg spec.Config) *spec.Tuple {
	if cfg.CheckpointID != "" {
		k := mkey{cfg.ThreadID, cfg.Namespace, cfg.CheckpointID}
		if m.cps[k] == nil {
			return nil
		}
		return m.tuple(k)
	}
	var best *mkey
	for k := range m.cps {
		if k.thread == cfg.ThreadID && k.ns == cfg.Namespace && (best == nil || k.id > best.id) {
			best = &k
		}
	}
	if best == nil {
		return nil
	}
	return m.tuple(*best)
}

// list mirrors Saver.List for valid options, by filtering, sorting and
// cutting the whole store.
func (m *model) list(opts spec.ListOptions) []*spec.Tuple {
	filter, _ := spec.NormalizeFilter(opts.Filter)
	if m.lg.listNone && opts.ThreadID == "" {
		opts.AllNamespaces, opts.CheckpointID = true, ""
	}
	var keys []mkey
	for k, c := range m.cps {
		switch {
		case opts.ThreadID != "" && k.thread != opts.ThreadID:
		case !opts.AllNamespaces && k.ns != opts.Namespace:
		case opts.CheckpointID != "" && k.id != opts.CheckpointID:
		case opts.Before != "" && k.id >= opts.Before:
		case !modelMatch(c.metadata, filter, m.lg.trueIsOne):
		default:
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b mkey) int {
		return cmp.Or(-cmp.Compare(a.id, b.id), cmp.Compare(a.thread, b.thread), cmp.Compare(a.ns, b.ns))
	})
	if opts.Limit > 0 && len(keys) > opts.Limit {
		keys = keys[:opts.Limit]
	}
	out := make([]*spec.Tuple, len(keys))
	for i, k := range keys {
		out[i] = m.tuple(k)
	}
	return out
}

// listAll is list without the limit.
func (m *model) listAll(opts spec.ListOptions) []*spec.Tuple {
	opts.Limit = 0
	return m.list(opts)
}

// modelMatch is the filter rule: every filter key present with an equal
// value (spec.Equal is JSON-value equality).
// With trueIsOne, a boolean also matches the number it stands for, as in
// LangGraph's Python savers.
func modelMatch(md, filter spec.Metadata, trueIsOne bool) bool {
	for key, want := range filter {
		got, ok := md[key]
		if !ok || !spec.Equal(got, want) && !(trueIsOne && spec.Equal(boolAsNumber(got), boolAsNumber(want))) {
			return false
		}
	}
	return true
}

// boolAsNumber returns 1 for true, 0 for false, and v otherwise.
func boolAsNumber(v any) any {
	if b, ok := v.(bool); ok {
		if b {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

// deleteThread mirrors Saver.DeleteThread.
func (m *model) deleteThread(thread string) {
	for k := range m.cps {
		if k.thread == thread {
			delete(m.cps, k)
		}
	}
	for k := range m.values {
		if k.thread == thread {
			delete(m.values, k)
		}
	}
	for k := range m.writes {
		if k.thread == thread {
			delete(m.writes, k)
		}
	}
}

// copyThread mirrors ThreadCopier.CopyThread into an empty destination:
// checkpoints with their writes, and values. Writes stored for checkpoints
// that do not exist are not part of the contract's copy.
func (m *model) copyThread(src, dst string) {
	for k, c := range m.cps {
		if k.thread == src {
			cc := *c
			m.cps[mkey{dst, k.ns, k.id}] = &cc
		}
	}
	for k, v := range m.values {
		if k.thread == src {
			k.thread = dst
			m.values[k] = v
		}
	}
	for k, ws := range m.writes {
		if k.thread == src && m.cps[k] != nil {
			cw := make(map[mtask]spec.PendingWrite, len(ws))
			for wk, w := range ws {
				cw[wk] = w
			}
			m.writes[mkey{dst, k.ns, k.id}] = cw
		}
	}
}

// deleteForRuns mirrors RunDeleter.DeleteForRuns; values are kept.
func (m *model) deleteForRuns(runs []string) {
	for k, c := range m.cps {
		if run, ok := c.metadata["run_id"].(string); ok && slices.Contains(runs, run) {
			m.dropCheckpoint(k)
		}
	}
}

// dropCheckpoint removes one checkpoint and its writes.
func (m *model) dropCheckpoint(k mkey) {
	delete(m.cps, k)
	delete(m.writes, k)
}

// prune mirrors Pruner.Prune; KeepLatest keeps values (the observable rule
// is only that kept checkpoints still read theirs).
func (m *model) prune(threads []string, strategy spec.PruneStrategy) {
	for _, th := range threads {
		if strategy == spec.DeleteAll {
			m.deleteThread(th)
			continue
		}
		latest := map[string]string{}
		for k := range m.cps {
			if k.thread == th && k.id > latest[k.ns] {
				latest[k.ns] = k.id
			}
		}
		for k := range m.cps {
			if k.thread == th && k.id != latest[k.ns] {
				m.dropCheckpoint(k)
			}
		}
	}
}
