package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// CopyThread copies every checkpoint, write and value of src, in every
// namespace, to dst. Existing data of dst with the same keys is replaced.
// See [spec.ThreadCopier].
func (m *Saver) CopyThread(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("copy thread", src); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("copy thread", dst); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	from := m.threads[src]
	if from == nil || src == dst {
		return nil
	}
	for name, n := range from.namespaces {
		to := m.ns(dst, name, true)
		for k, v := range n.values {
			to.values[k] = v // stored bytes are never mutated, so sharing is safe
		}
		for id, set := range n.writes {
			dset := to.writes[id]
			if dset == nil {
				dset = make(map[writeKey]storedWrite, len(set))
				to.writes[id] = dset
			}
			for k, w := range set {
				dset[k] = w
			}
		}
		for _, id := range n.ids {
			if _, exists := to.checkpoints[id]; !exists {
				i, _ := slices.BinarySearch(to.ids, id)
				to.ids = slices.Insert(to.ids, i, id)
			}
			sc := n.checkpoints[id]
			to.checkpoints[id] = &storedCheckpoint{parent: sc.parent, cp: copyCheckpointMeta(sc.cp), md: sc.md}
		}
	}
	return nil
}

// DeleteForRuns removes every checkpoint, with its pending writes, whose
// metadata "run_id" is one of runIDs, in every thread and namespace. See
// [spec.RunDeleter].
func (m *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	for _, id := range runIDs {
		if err := spec.ValidateIdentifier("run ID", id); err != nil {
			return fmt.Errorf("memory: delete for runs: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(runIDs) == 0 {
		return nil
	}
	runs := make(map[string]bool, len(runIDs))
	for _, id := range runIDs {
		runs[id] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.threads {
		for _, n := range t.namespaces {
			n.ids = slices.DeleteFunc(n.ids, func(id string) bool {
				run, ok := n.checkpoints[id].md["run_id"].(string)
				if !ok || !runs[run] {
					return false
				}
				delete(n.checkpoints, id)
				delete(n.writes, id)
				return true
			})
		}
	}
	return nil
}

// Prune applies strategy to each listed thread: [spec.KeepLatest] keeps the
// latest checkpoint of every namespace with its pending writes and the values
// it references; [spec.DeleteAll] removes the thread. See [spec.Pruner].
func (m *Saver) Prune(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := strategy.Validate(); err != nil {
		return err
	}
	for _, id := range threadIDs {
		if err := spec.ValidateThreadID("prune", id); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, tid := range threadIDs {
		t := m.threads[tid]
		if t == nil {
			continue
		}
		if strategy == spec.DeleteAll {
			delete(m.threads, tid)
			continue
		}
		for _, n := range t.namespaces {
			pruneNamespace(n)
		}
	}
	return nil
}

// pruneNamespace keeps only the latest checkpoint of n, its writes and the
// values it references.
func pruneNamespace(n *namespace) {
	if len(n.ids) == 0 {
		n.writes = make(map[string]map[writeKey]storedWrite)
		n.values = make(map[valueKey]storedValue)
		return
	}
	latest := n.ids[len(n.ids)-1]
	keep := n.checkpoints[latest]
	n.ids = []string{latest}
	n.checkpoints = map[string]*storedCheckpoint{latest: keep}
	writes := n.writes[latest]
	n.writes = make(map[string]map[writeKey]storedWrite)
	if writes != nil {
		n.writes[latest] = writes
	}
	values := make(map[valueKey]storedValue, len(keep.cp.ChannelVersions))
	for ch, ver := range keep.cp.ChannelVersions {
		k := valueKey{ch, ver}
		if v, ok := n.values[k]; ok {
			values[k] = v
		}
	}
	n.values = values
}
