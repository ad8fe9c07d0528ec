package memory_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Allocation budgets of the reads, on the workload ci/bench-peers compares
// with LangGraph.js (a 1 KB string per checkpoint and per pending write):
// GetTuple makes at most getAllocBudget allocations, and a List of ten
// tuples allocates at most listPayloadFactor times the bytes of the values
// it returns. They count allocations, not time, so load does not move them.
const (
	getAllocBudget    = 12
	listAllocBudget   = 120
	listPayloadFactor = 2.0
)

// Budgets of a GetTuple whose channel holds a list of 1,000 strings of 500
// bytes, bare or in a delta snapshot (BenchmarkLargeRead): the saver keeps
// the list decoded and copies only the list itself (16 KB of interface
// values), sharing the 500 KB of strings. Decoding it from MessagePack on
// every read made 3,017 allocations and 579 KB.
const (
	largeGetAllocBudget = 12
	largeGetByteBudget  = 20 << 10
)

func TestReadAllocationBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation budget: not in -short")
	}
	ctx := context.Background()
	p := benchmarks.PopulatePeer(t, memory.New(), 20)

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
	t.Logf("List(10): %.0f bytes allocated per call for %d bytes of values", perCall, payload)
	if perCall > listPayloadFactor*float64(payload) {
		t.Errorf("List(10): %.0f bytes allocated per call, budget %.0f× the %d bytes of values it returns",
			perCall, listPayloadFactor, payload)
	}
}

func TestLargeReadAllocationBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation budget: not in -short")
	}
	ctx := context.Background()
	for name, v := range map[string]any{"list": largeList(), "snapshot": spec.DeltaSnapshot{Value: largeList()}} {
		s := putLarge(t, nil, v)
		get := func() {
			if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err != nil {
				t.Fatal(err)
			}
		}
		if n := testing.AllocsPerRun(100, get); n > largeGetAllocBudget {
			t.Errorf("%s: GetTuple: %.1f allocations per call, budget %d", name, n, largeGetAllocBudget)
		}
		const runs = 100
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range runs {
			get()
		}
		runtime.ReadMemStats(&after)
		if perCall := (after.TotalAlloc - before.TotalAlloc) / runs; perCall > largeGetByteBudget {
			t.Errorf("%s: GetTuple: %d bytes allocated per call, budget %d", name, perCall, largeGetByteBudget)
		}
	}
}
