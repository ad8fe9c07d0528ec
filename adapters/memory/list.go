package memory

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sort"

	"github.com/checkpointkit/checkpointkit/spec"
)

// cursor walks one (thread, namespace) downwards from an exclusive upper
// bound.
type cursor struct {
	thread, ns string
	// upper is the exclusive upper bound; "" with open set means unbounded.
	upper string
	open  bool
	done  bool
}

// List streams the checkpoints selected by opts, greatest ID first, ties
// ordered by thread then namespace. It merges the sorted ID indexes of every
// namespace in scope lazily, holding the read lock only while it produces
// one tuple. See [spec.Saver.List].
func (m *Saver) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if err := spec.ValidateList(opts); err != nil {
			yield(nil, err)
			return
		}
		filter, _ := spec.NormalizeFilter(opts.Filter) // validated above
		cursors := m.cursors(opts)
		count := 0
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			t, more, err := m.next(cursors, opts, filter)
			if err != nil {
				yield(nil, err)
				return
			}
			if !more {
				return
			}
			if !yield(t, nil) {
				return
			}
			count++
			if opts.Limit > 0 && count >= opts.Limit {
				return
			}
		}
	}
}

// cursors returns one cursor per (thread, namespace) in scope, ordered by
// thread then namespace so that ties on ID resolve in that order.
func (m *Saver) cursors(opts spec.ListOptions) []*cursor {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var threadIDs []string
	if opts.ThreadID != "" {
		if _, ok := m.threads[opts.ThreadID]; ok {
			threadIDs = []string{opts.ThreadID}
		}
	} else {
		for id := range m.threads {
			threadIDs = append(threadIDs, id)
		}
	}
	sort.Strings(threadIDs)
	var out []*cursor
	for _, tid := range threadIDs {
		t := m.threads[tid]
		var names []string
		if opts.AllNamespaces {
			for name := range t.namespaces {
				names = append(names, name)
			}
			sort.Strings(names)
		} else if _, ok := t.namespaces[opts.Namespace]; ok {
			names = []string{opts.Namespace}
		}
		for _, name := range names {
			out = append(out, &cursor{thread: tid, ns: name, upper: opts.Before, open: opts.Before == ""})
		}
	}
	return out
}

// next returns the next matching tuple across cursors, or more=false when
// every cursor is exhausted.
func (m *Saver) next(cursors []*cursor, opts spec.ListOptions, filter spec.Metadata) (*spec.Tuple, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for {
		var best *cursor
		var bestID string
		for _, c := range cursors {
			if c.done {
				continue
			}
			id, ok := m.candidate(c, opts.CheckpointID)
			if !ok {
				c.done = true
				continue
			}
			// Cursors are in (thread, namespace) order, so a strict
			// comparison keeps the first on ties.
			if best == nil || id > bestID {
				best, bestID = c, id
			}
		}
		if best == nil {
			return nil, false, nil
		}
		best.upper, best.open = bestID, false
		n := m.ns(best.thread, best.ns, false)
		sc := n.checkpoints[bestID]
		if !spec.MatchFilter(sc.md, filter) {
			continue
		}
		t, err := m.tuple(best.thread, best.ns, n, bestID)
		if err != nil {
			return nil, false, fmt.Errorf("memory: list: %w", err)
		}
		return t, true, nil
	}
}

// candidate returns the greatest ID of c's namespace below its bound,
// restricted to only when only is not empty.
func (m *Saver) candidate(c *cursor, only string) (string, bool) {
	n := m.ns(c.thread, c.ns, false)
	if n == nil {
		return "", false // deleted while listing
	}
	if only != "" {
		if !c.open && only >= c.upper {
			return "", false
		}
		_, found := slices.BinarySearch(n.ids, only)
		return only, found
	}
	i := len(n.ids)
	if !c.open {
		i, _ = slices.BinarySearch(n.ids, c.upper)
	}
	if i == 0 {
		return "", false
	}
	return n.ids[i-1], true
}
