package spec

import (
	"cmp"
	"context"
	"errors"
	"slices"
)

// DeltaSnapshot is the whole value of a delta channel, stored in a
// checkpoint's ChannelValues every so many updates. A delta channel stores
// nothing in the checkpoints between two snapshots: each step's update lives
// only in the pending writes, and the engine rebuilds the value from the
// nearest snapshot (or plain value) plus the writes since, which the saver
// returns through [DeltaHistoryReader].
//
// DeltaSnapshot is part of the plain-value model: [Normalize] keeps it (its
// Value normalised, one level of nesting), every [Serde] must give it back
// as a DeltaSnapshot, never as its bare Value, and metadata may not hold
// one. LangGraph Python calls it `_DeltaSnapshot` (MessagePack extension
// type 7), LangGraph.js `DeltaSnapshot`; see SPEC.md, section "Delta
// channels".
type DeltaSnapshot struct {
	Value any
}

// DeltaHistory is what one channel contributed along the ancestor chain of a
// checkpoint: the stored value it starts from and the writes since.
type DeltaHistory struct {
	// Seed is the channel's stored value at the nearest ancestor that holds
	// one: usually a [DeltaSnapshot], or a plain value stored before the
	// channel became a delta channel. It is meaningful only when HasSeed.
	Seed any
	// HasSeed reports whether the walk found a stored value. When false,
	// the engine starts the channel empty.
	HasSeed bool
	// Writes are the channel's writes stored against the ancestors visited,
	// oldest ancestor first, the writes of one ancestor in [WriteOrder].
	// Never nil in a saver's result.
	Writes []PendingWrite
}

// DeltaHistoryReader is implemented by savers that return the history of
// delta channels in one call. Savers without it still serve delta channels:
// [ReadDeltaHistory] then walks GetTuple as LangGraph's base classes do, one
// call per ancestor.
type DeltaHistoryReader interface {
	// DeltaHistory returns the history of each named channel as seen from
	// the checkpoint cfg names (the latest of its thread and namespace when
	// cfg.CheckpointID is empty). The result has one entry per distinct
	// name; an empty channels gives an empty map. A checkpoint that does not
	// exist gives every channel an empty history, not an error. It must
	// cost a bounded number of queries or round trips however long the
	// chain is.
	DeltaHistory(ctx context.Context, cfg Config, channels []string) (map[string]DeltaHistory, error)
}

// DeltaCountersKey is the metadata key under which LangGraph's engines
// (Python and JS alike) record, per delta channel, the updates and
// supersteps since its last snapshot. A checkpoint's delta channels that
// need their ancestors are the keys of this map: maintenance that drops
// ancestors ([Pruner], [RunDeleter]) must keep, for each such channel, the
// chain back to its seed (SPEC.md DELTA-12, DELTA-13).
const DeltaCountersKey = "counters_since_delta_snapshot"

// DeltaChannels returns the delta channels named in md under
// [DeltaCountersKey], sorted; nil when there are none.
func DeltaChannels(md Metadata) []string {
	m, ok := md[DeltaCountersKey].(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for ch := range m {
		out = append(out, ch)
	}
	slices.Sort(out)
	return out
}

// WriteKey is the sort key of a stored write within one checkpoint: task
// path, task ID, then index. Strings compare byte-wise, which is code-point
// order, as LangGraph's writes_sort_key and writesSortKey compare them.
type WriteKey struct {
	TaskPath string
	TaskID   string
	Index    int
}

// WriteOrder compares two write keys in the order live execution applies a
// superstep's writes, and in which [DeltaHistoryReader] returns them.
func WriteOrder(a, b WriteKey) int {
	return cmp.Or(
		cmp.Compare(a.TaskPath, b.TaskPath),
		cmp.Compare(a.TaskID, b.TaskID),
		cmp.Compare(a.Index, b.Index),
	)
}

// ReadDeltaHistory returns the delta history of channels as seen from cfg:
// through s's [DeltaHistoryReader] when it has one and does not answer
// with an error wrapping [errors.ErrUnsupported] (as a bridged saver whose
// far side lacks the method does), otherwise by the walk of
// LangGraph's base classes, one GetTuple per ancestor, each ancestor's writes
// in the order GetTuple returns them.
func ReadDeltaHistory(ctx context.Context, s Saver, cfg Config, channels []string) (map[string]DeltaHistory, error) {
	if r, ok := s.(DeltaHistoryReader); ok {
		h, err := r.DeltaHistory(ctx, cfg, channels)
		if !errors.Is(err, errors.ErrUnsupported) {
			return h, err
		}
	}
	return WalkDeltaHistory(ctx, s, cfg, channels)
}

// WalkDeltaHistory is the default delta history walk over GetTuple: it
// visits the target's parent, then its parent, and so on, collecting each
// channel's writes until an ancestor holds a value for it, and stops at an
// ancestor it has already visited. A saver may use
// it to implement [DeltaHistoryReader] only if it accepts one call per
// ancestor.
func WalkDeltaHistory(ctx context.Context, s Saver, cfg Config, channels []string) (map[string]DeltaHistory, error) {
	out := make(map[string]DeltaHistory, len(channels))
	remaining := make(map[string]bool, len(channels))
	for _, ch := range channels {
		out[ch] = DeltaHistory{Writes: []PendingWrite{}}
		remaining[ch] = true
	}
	if len(channels) == 0 {
		return out, nil
	}
	target, err := s.GetTuple(ctx, cfg)
	if errors.Is(err, ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	// Collected newest ancestor first, reversed at the end.
	collected := make(map[string][][]PendingWrite, len(channels))
	seen := map[string]bool{target.Config.CheckpointID: true}
	cursor := target.Parent
	for cursor != nil && len(remaining) > 0 {
		if seen[cursor.CheckpointID] {
			// A re-put can make the parent links loop; the walk ends at
			// the first checkpoint it meets again, as LangGraph's SQLite
			// saver's does.
			break
		}
		seen[cursor.CheckpointID] = true
		t, err := s.GetTuple(ctx, *cursor)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		for ch := range remaining {
			var block []PendingWrite
			for _, w := range t.PendingWrites {
				if w.Channel == ch {
					block = append(block, w)
				}
			}
			if len(block) > 0 {
				collected[ch] = append(collected[ch], block)
			}
		}
		for ch := range remaining {
			if v, ok := t.Checkpoint.ChannelValues[ch]; ok {
				h := out[ch]
				h.Seed, h.HasSeed = v, true
				out[ch] = h
				delete(remaining, ch)
			}
		}
		cursor = t.Parent
	}
	for ch, blocks := range collected {
		h := out[ch]
		for i := len(blocks) - 1; i >= 0; i-- {
			h.Writes = append(h.Writes, blocks[i]...)
		}
		out[ch] = h
	}
	return out, nil
}
