package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestDelta runs the adapters' shared delta-history scenarios (package
// savertest) on fresh savers.
func TestDelta(t *testing.T) {
	savertest.RunDelta(t, func(t *testing.T) savertest.DeltaSaver { return newTestSaver(t) })
}

// queryCounter is a pgx tracer counting the statements sent.
type queryCounter struct{ n atomic.Int64 }

func (c *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestDeltaRoundTrips checks that DeltaHistory sends one statement
// whatever the length of the chain (3 or 300 ancestors back to the seed).
func TestDeltaRoundTrips(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	ConfigurePool(cfg)
	counter := &queryCounter{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := New(context.Background(), pool, WithSchema(uniqueSchema("rt")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DropSchema(context.Background()) })
	counts := map[int]int64{}
	for _, n := range []int{3, 300} {
		thread := fmt.Sprintf("rt%d", n)
		savertest.BuildSteps(t, s, thread, "", savertest.SnapshotChain(n))
		before := counter.n.Load()
		h, err := s.DeltaHistory(context.Background(), spec.Config{ThreadID: thread}, []string{"msgs"})
		if err != nil {
			t.Fatal(err)
		}
		counts[n] = counter.n.Load() - before
		if got := len(h["msgs"].Writes); got != n-1 || !h["msgs"].HasSeed {
			t.Fatalf("chain of %d: %d writes, seed %v", n, got, h["msgs"].HasSeed)
		}
	}
	if counts[3] != counts[300] || counts[3] != 1 {
		t.Errorf("statements per DeltaHistory call: %v, want 1 for both chain lengths", counts)
	}
}
