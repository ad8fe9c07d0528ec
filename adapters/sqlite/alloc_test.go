package sqlite_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
)

// Allocation budgets of the read path on the peer workload (depth 20, a
// 1 KB string per checkpoint and per pending write), checked by counting,
// never by timing. Before the read path went below database/sql, a GetTuple
// made 157 allocations and a List(10) 1,005 allocations and 99 KB for 20 KB
// of values (docs/benchmarks.md).
//
// listPayloadFactor is above the 2× of the memory adapter because
// go-sqlite3 copies every blob out of SQLite (23.6 KB of a List(10), the
// values' own bytes, which the returned strings share); the maps and
// tuples a List must build come to about 12 KB more.
const (
	getAllocBudget    = 80
	listAllocBudget   = 400
	listPayloadFactor = 2.5
)

// TestReadAllocationBudget holds GetTuple and List(10) to their allocation
// budgets.
func TestReadAllocationBudget(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "alloc.db")+"?_synchronous=NORMAL")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := benchmarks.PopulatePeer(t, s, 20)

	if n := testing.AllocsPerRun(200, func() {
		if _, err := p.Get(ctx); err != nil {
			t.Fatal(err)
		}
	}); n > getAllocBudget {
		t.Errorf("GetTuple: %.1f allocations per call, budget %d", n, getAllocBudget)
	}
	payload, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := p.List(ctx); err != nil {
			t.Fatal(err)
		}
	}); n > listAllocBudget {
		t.Errorf("List(10): %.1f allocations per call, budget %d", n, listAllocBudget)
	}
	const runs = 100
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := p.List(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perCall := float64(after.TotalAlloc-before.TotalAlloc) / runs
	t.Logf("List(10): %.0f bytes allocated per call for %d bytes of values (%.2f×)", perCall, payload, perCall/float64(payload))
	if perCall > listPayloadFactor*float64(payload) {
		t.Errorf("List(10): %.0f bytes allocated per call, budget %.1f× the %d bytes of values it returns",
			perCall, listPayloadFactor, payload)
	}
}
