package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// dChain stores a chain of n checkpoints in thread: msgs holds a value at
// the first only, so every walk from the last visits the whole chain, and
// every checkpoint has a write to msgs and to other.
func dChain(t *testing.T, s *Saver, thread string, n int) {
	t.Helper()
	parent := ""
	for i := range n {
		id := fmt.Sprintf("%05d", i)
		vs := spec.Versions{"msgs": spec.Version(fmt.Sprint(i + 1))}
		var values map[string]any
		if i == 0 {
			values = map[string]any{"msgs": []any{"seed"}}
		}
		savertest.DeltaPut(t, s, thread, "", parent, id, vs, values, []string{"msgs"}, nil)
		savertest.DeltaWrites(t, s, thread, "", id, "task", "~0", "msgs", id, "other", id)
		parent = id
	}
}

// TestDeltaHistoryStatementCount checks that a delta history costs the same
// statements for a chain of 3 checkpoints as for one of 300: no statement
// per ancestor.
func TestDeltaHistoryStatementCount(t *testing.T) {
	s, _ := openFile(t)
	ctx := context.Background()
	counts := map[int]int{}
	for _, n := range []int{3, 300} {
		thread := fmt.Sprintf("chain-%d", n)
		dChain(t, s, thread, n)
		out := map[string]spec.DeltaHistory{}
		for _, ch := range []string{"msgs", "other"} {
			out[ch] = spec.DeltaHistory{Writes: []spec.PendingWrite{}}
		}
		cq := &countingQuerier{}
		err := s.read(ctx, "test", thread, false, func(q rowQuerier) error {
			cq.rowQuerier = q
			return s.deltaHistory(ctx, cq, spec.Config{ThreadID: thread}, out)
		})
		if err != nil {
			t.Fatal(err)
		}
		if h := out["msgs"]; !h.HasSeed || len(h.Writes) != n-1 {
			t.Fatalf("chain of %d: msgs history has seed %v and %d writes, want %d", n, h.HasSeed, len(h.Writes), n-1)
		}
		if h := out["other"]; h.HasSeed || len(h.Writes) != n-1 {
			t.Fatalf("chain of %d: other history has seed %v and %d writes, want %d", n, h.HasSeed, len(h.Writes), n-1)
		}
		savertest.DeltaAgreesWithWalk(t, s, spec.Config{ThreadID: thread}, "msgs", "other")
		counts[n] = cq.queries
	}
	if counts[3] != counts[300] || counts[3] != 4 {
		t.Errorf("statements for chains of 3 and 300: %d and %d, want 4 each", counts[3], counts[300])
	}
}

// TestDeltaQueryPlans checks that every step of the delta walk is an index
// search: the value keys and the seeds by the blobs key, each ancestor by
// the checkpoints key, the writes by the writes key.
func TestDeltaQueryPlans(t *testing.T) {
	s := openMemory(t)
	for _, q := range []struct {
		name, sql string
		args      []any
		want      []string
	}{
		{"value keys", deltaValueKeysSQL, []any{"t", "", `["a"]`},
			[]string{"SEARCH blobs USING INDEX sqlite_autoindex_blobs_1 (thread_id=? AND checkpoint_ns=? AND channel=?)"}},
		// A co-routine yields each ancestor as it is found, so closing the
		// statement at the last seed ends the walk there.
		{"chain", deltaChainSQL, []any{"t", "", "x"},
			[]string{"CO-ROUTINE chain", "SEARCH c USING PRIMARY KEY (thread_id=? AND checkpoint_ns=? AND checkpoint_id=?)"}},
		{"chain from latest", deltaChainLatestSQL, []any{"t", ""},
			[]string{"CO-ROUTINE chain", "SEARCH c USING PRIMARY KEY (thread_id=? AND checkpoint_ns=? AND checkpoint_id=?)"}},
		{"writes", deltaWritesSQL, []any{"t", "", `["a"]`, `["a"]`},
			[]string{"SEARCH writes USING INDEX sqlite_autoindex_writes_1 (thread_id=? AND checkpoint_ns=? AND checkpoint_id=?)"}},
		{"seeds", deltaSeedsSQL, []any{"t", "", `[["a","1"]]`},
			[]string{"SEARCH blobs USING INDEX sqlite_autoindex_blobs_1 (thread_id=? AND checkpoint_ns=? AND channel=? AND version=?)"}},
	} {
		plan := queryPlan(t, s, q.sql, q.args...)
		for _, w := range q.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%s: plan lacks %q:\n%s", q.name, w, plan)
			}
		}
		for _, line := range strings.Split(plan, "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "SCAN" && (f[1] == "c" || f[1] == "blobs" || f[1] == "writes") {
				t.Errorf("%s: plan scans a table (%q):\n%s", q.name, line, plan)
			}
		}
	}
}

// TestDeltaPruneStatementCount checks that Prune(KeepLatest) of a thread
// whose latest checkpoint names a delta channel costs the same statements
// for a chain of 3 as for one of 300, and keeps the whole chain back to the
// seed (here the first checkpoint).
func TestDeltaPruneStatementCount(t *testing.T) {
	ctx := context.Background()
	counts := map[int]int{}
	for _, n := range []int{3, 300} {
		s := openMemory(t)
		dChain(t, s, "t", n)
		savertest.DeltaPut(t, s, "t", "", fmt.Sprintf("%05d", n-1), "latest", spec.Versions{"msgs": "latest"}, nil, []string{"msgs"}, savertest.DeltaCounters("msgs"))
		before := savertest.DeltaAt(t, s, spec.Config{ThreadID: "t"}, "msgs")
		c := &execCounter{}
		err := s.write(ctx, "prune", "t", func(q querier) error {
			c.querier = q
			return s.keepLatest(ctx, c, "t")
		})
		if err != nil {
			t.Fatal(err)
		}
		counts[n] = c.n
		if got := savertest.IDs(t, s, "t", ""); len(got) != n+1 {
			t.Errorf("chain of %d: %d checkpoints left, want %d", n, len(got), n+1)
		}
		savertest.ExpectDelta(t, "history", savertest.DeltaAt(t, s, spec.Config{ThreadID: "t"}, "msgs"), before)
	}
	if counts[3] != counts[300] {
		t.Errorf("statements for chains of 3 and 300: %d and %d, want the same", counts[3], counts[300])
	}
}
