package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/checkpointkit/checkpointkit/adapters/internal/deltaprep"
	"github.com/checkpointkit/checkpointkit/spec"
)

var _ spec.DeltaHistoryReader = (*Saver)(nil)

// DeltaHistory returns the history of each channel as seen from the
// checkpoint cfg names (the latest of its thread and namespace when
// cfg.CheckpointID is empty): the stored value of the nearest ancestor that
// holds one, and the channel's writes stored against the ancestors up to
// and including that one, oldest ancestor first, one ancestor's writes in
// [spec.WriteOrder]. The walk follows the stored parent links under one read
// lock. A missing checkpoint gives every channel an empty history. See
// [spec.DeltaHistoryReader].
func (m *Saver) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	out, want, err := deltaprep.Prepare(ctx, "memory", cfg, channels)
	if err != nil || len(want) == 0 {
		return out, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := m.ns(cfg.ThreadID, cfg.Namespace, false)
	if n == nil || len(n.ids) == 0 {
		return out, nil
	}
	id := cfg.CheckpointID
	if id == "" {
		id = n.ids[len(n.ids)-1]
	}
	if n.checkpoints[id] == nil {
		return out, nil
	}
	chain, seeds := n.walk(id, want)
	for _, ch := range want {
		h := out[ch]
		end := len(chain)
		if at, ok := seeds[ch]; ok {
			end = at + 1
			sv := n.values[valueKey{ch, n.checkpoints[chain[at]].cp.ChannelVersions[ch]}]
			v, err := m.load(sv.val)
			if err != nil {
				return nil, fmt.Errorf("memory: delta history thread %q channel %q: %w", cfg.ThreadID, ch, err)
			}
			h.Seed, h.HasSeed = v, true
		}
		for i := end - 1; i >= 0; i-- {
			ws, err := m.channelWrites(n.writes[chain[i]], ch)
			if err != nil {
				return nil, fmt.Errorf("memory: delta history thread %q checkpoint %q: %w", cfg.ThreadID, chain[i], err)
			}
			h.Writes = append(h.Writes, ws...)
		}
		out[ch] = h
	}
	return out, nil
}

// walk follows the parent links from checkpoint id's parent, nearest
// ancestor first, until every channel has found a stored value (its seed)
// or the chain ends (at a checkpoint without a parent, a parent that is not
// stored, or a checkpoint already visited). It returns the ancestors
// visited and, per channel that has one, the position of its seed in them.
// The caller holds at least the read lock.
func (n *namespace) walk(id string, channels []string) (chain []string, seeds map[string]int) {
	seeds = make(map[string]int, len(channels))
	seen := map[string]bool{id: true}
	cur := n.checkpoints[id]
	for cur != nil && cur.parent != "" && len(seeds) < len(channels) {
		pid := cur.parent
		parent := n.checkpoints[pid]
		if parent == nil || seen[pid] {
			break
		}
		seen[pid] = true
		chain = append(chain, pid)
		for _, ch := range channels {
			if _, done := seeds[ch]; done {
				continue
			}
			if ver, ok := parent.cp.ChannelVersions[ch]; ok && n.values[valueKey{ch, ver}].present {
				seeds[ch] = len(chain) - 1
			}
		}
		cur = parent
	}
	return chain, seeds
}

// channelWrites returns the writes of set to channel ch, decoded, in
// [spec.WriteOrder].
func (m *Saver) channelWrites(set map[writeKey]storedWrite, ch string) ([]spec.PendingWrite, error) {
	var keys []writeKey
	for k, w := range set {
		if w.channel == ch {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b writeKey) int {
		return spec.WriteOrder(
			spec.WriteKey{TaskPath: set[a].taskPath, TaskID: a.taskID, Index: a.idx},
			spec.WriteKey{TaskPath: set[b].taskPath, TaskID: b.taskID, Index: b.idx})
	})
	out := make([]spec.PendingWrite, 0, len(keys))
	for _, k := range keys {
		w := set[k]
		v, err := m.load(w.val)
		if err != nil {
			return nil, fmt.Errorf("decode write to %q: %w", ch, err)
		}
		out = append(out, spec.PendingWrite{TaskID: k.taskID, Channel: ch, Value: v})
	}
	return out, nil
}

// deltaNeeds returns the ancestors of checkpoint id that its delta channels
// (those its metadata names under [spec.DeltaCountersKey]) need: for each,
// the ancestors back to and including its seed, or the whole chain when it
// has none. The caller holds the lock.
func (n *namespace) deltaNeeds(id string) []string {
	sc := n.checkpoints[id]
	if sc == nil {
		return nil
	}
	channels := spec.DeltaChannels(sc.md)
	if len(channels) == 0 {
		return nil
	}
	chain, seeds := n.walk(id, channels)
	if len(seeds) < len(channels) {
		return chain
	}
	deepest := 0
	for _, at := range seeds {
		deepest = max(deepest, at)
	}
	return chain[:deepest+1]
}
