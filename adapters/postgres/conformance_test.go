package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestConformance runs the whole conformance suite, every optional
// capability included, against PostgreSQL. Each spec gets an empty schema
// of its own. CHECKPOINTKIT_PG_ISOLATION picks how: "delete" (default:
// schemas are reused and emptied with one DELETE statement), "truncate"
// (reused, emptied with TRUNCATE) or "schema" (created, migrated and
// dropped per spec). docs/benchmarks.md compares them. The faults group
// routes savers of their own through the suite's fault proxy (see
// faultHarness). With CHECKPOINTKIT_PG_VIA=pgbouncer every saver goes
// through the pooler of CHECKPOINTKIT_PGBOUNCER_DSN instead (the matrix's
// pgbouncer column).
func TestConformance(t *testing.T) {
	strategy := os.Getenv("CHECKPOINTKIT_PG_ISOLATION")
	if strategy == "" {
		strategy = isolateDelete
	}
	p := &schemaPool{pool: testPool(t), prefix: "conf", strategy: strategy}
	t.Cleanup(func() { p.dropAll(t) })
	h := conformance.Harness{
		Name: "postgres",
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			return p.acquire(ctx)
		},
		Faults: faultHarness(t, faultsDSN(t), os.Getenv(restartEnv), false),
	}
	if throughPgBouncer() {
		// The same suite, every saver through PgBouncer in transaction
		// mode; the schemas are still emptied and dropped directly.
		dsn := pgbouncerDSN(t)
		cfg, err := poolConfig(dsn, true)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxConns = 8
		bouncer, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bouncer.Close)
		bp := &schemaPool{pool: bouncer, prefix: "confb", strategy: strategy}
		t.Cleanup(func() { bp.dropAll(t) })
		h.Name = "postgres-pgbouncer"
		h.New = func(ctx context.Context) (spec.Saver, func(), error) { return bp.acquire(ctx) }
		h.Faults = faultHarness(t, dsn, "", true)
	}
	conformance.Run(t, h)
}
