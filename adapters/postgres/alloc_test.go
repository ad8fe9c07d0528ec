package postgres

import (
	"context"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
)

// Allocation budgets of the read path on the peer workload (depth 20, a
// 1 KB string per checkpoint and per pending write), checked by counting
// allocations, never by timing. Before the page rows were decoded from
// pgx's raw values, a GetTuple made 117 allocations and a List(10) 794
// allocations and 108 KB for 20 KB of values (5.4×; docs/benchmarks.md);
// now 27, 140 and 1.95×. What remains above the values is their one copy
// out of pgx's buffer and the maps and tuples the API returns.
const (
	pgGetAllocBudget    = 40
	pgListAllocBudget   = 200
	pgListPayloadFactor = 2.0
)

// pgRaceSlack multiplies the byte budget under the race detector, whose
// sync.Pool drops a random quarter of what is put back: pgx takes its
// read and write buffers from such pools. Measured under -race: 1.93×
// the payload in most runs, 2.06× in about one run in four (2.7 KB more
// per List in every loop of that run); never above 1.93× without it.
const pgRaceSlack = 1.15

// pgListFactor returns the byte budget of List(10), as a multiple of its
// payload.
func pgListFactor() float64 {
	if raceEnabled {
		return pgListPayloadFactor * pgRaceSlack
	}
	return pgListPayloadFactor
}

// TestReadAllocationBudget holds GetTuple and List(10) to their allocation
// budgets: List(10) allocates at most pgListPayloadFactor times the bytes of
// the values it returns.
func TestReadAllocationBudget(t *testing.T) {
	s := newTestSaver(t)
	ctx := context.Background()
	p := benchmarks.PopulatePeer(t, s, 20)

	if n := testing.AllocsPerRun(100, func() {
		if _, err := p.Get(ctx); err != nil {
			t.Fatal(err)
		}
	}); n > pgGetAllocBudget {
		t.Errorf("GetTuple: %.1f allocations per call, budget %d", n, pgGetAllocBudget)
	} else {
		t.Logf("GetTuple: %.1f allocations per call", n)
	}
	payload, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() {
		if _, err := p.List(ctx); err != nil {
			t.Fatal(err)
		}
	}); n > pgListAllocBudget {
		t.Errorf("List(10): %.1f allocations per call, budget %d", n, pgListAllocBudget)
	} else {
		t.Logf("List(10): %.1f allocations per call", n)
	}
	// Bytes per call in steady state: the least of five loops (see
	// benchmarks.Peer.ListBytes).
	perCall, err := p.ListBytes(ctx, 50, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("List(10): %.0f bytes allocated per call for %d bytes of values (%.2f×)", perCall, payload, perCall/float64(payload))
	if perCall > pgListFactor()*float64(payload) {
		t.Errorf("List(10): %.0f bytes allocated per call, budget %.2f× the %d bytes of values it returns",
			perCall, pgListFactor(), payload)
	}
}
