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
			to.values[k] = v // stored values are never mutated, so sharing is safe
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
// metadata "run_id" is one of runIDs, in every thread and namespace, except
// those the delta channels of a surviving checkpoint need (SPEC.md
// DELTA-13). See [spec.RunDeleter].
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
			deleteRuns(n, runs)
		}
	}
	return nil
}

// deleteRuns removes from n the checkpoints of runs, with their writes,
// except those a surviving checkpoint's delta channels need (DELTA-13): a
// run checkpoint that such a chain passes through survives, and its own
// delta channels' chains are kept in turn.
func deleteRuns(n *namespace, runs map[string]bool) {
	doomed := make(map[string]bool)
	var survivors []string
	for _, id := range n.ids {
		if run, ok := n.checkpoints[id].md["run_id"].(string); ok && runs[run] {
			doomed[id] = true
		} else {
			survivors = append(survivors, id)
		}
	}
	if len(doomed) == 0 {
		return
	}
	for len(survivors) > 0 {
		id := survivors[len(survivors)-1]
		survivors = survivors[:len(survivors)-1]
		for _, a := range n.deltaNeeds(id) {
			if doomed[a] {
				delete(doomed, a)
				survivors = append(survivors, a)
			}
		}
	}
	n.ids = slices.DeleteFunc(n.ids, func(id string) bool {
		if !doomed[id] {
			return false
		}
		delete(n.checkpoints, id)
		delete(n.writes, id)
		return true
	})
}

// Prune applies strategy to each listed thread: [spec.KeepLatest] keeps the
// latest checkpoint of every namespace with its pending writes and the values
// it references, plus the ancestors its delta channels need back to their
// seeds (SPEC.md DELTA-12); [spec.DeleteAll] removes the thread. See
// [spec.Pruner].
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

// pruneNamespace keeps only the latest checkpoint of n and the ancestors
// its delta channels need back to their seeds (DELTA-12), with their writes
// and the values they reference.
func pruneNamespace(n *namespace) {
	if len(n.ids) == 0 {
		n.writes = make(map[string]map[writeKey]storedWrite)
		n.values = make(map[valueKey]storedValue)
		return
	}
	latest := n.ids[len(n.ids)-1]
	keep := append(n.deltaNeeds(latest), latest)
	slices.Sort(keep)
	checkpoints := make(map[string]*storedCheckpoint, len(keep))
	writes := make(map[string]map[writeKey]storedWrite, len(keep))
	values := make(map[valueKey]storedValue)
	for _, id := range keep {
		sc := n.checkpoints[id]
		checkpoints[id] = sc
		if set := n.writes[id]; set != nil {
			writes[id] = set
		}
		for ch, ver := range sc.cp.ChannelVersions {
			k := valueKey{ch, ver}
			if v, ok := n.values[k]; ok {
				values[k] = v
			}
		}
	}
	n.ids, n.checkpoints, n.writes, n.values = keep, checkpoints, writes, values
}
