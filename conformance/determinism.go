package conformance

import (
	"iter"
	"maps"
	"slices"
)

// inOrder ranges over m in key order. Specs iterate their cases with it:
// Go's map order changes from run to run, and with it which case fails
// first, the evidence a failure shows, and so which failure explains
// which. The same seed must give the same report.
func inOrder[V any](m map[string]V) iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}
