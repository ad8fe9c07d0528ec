package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestConformance runs the whole conformance suite, every optional
// capability included, against PostgreSQL. Each spec gets an empty schema
// of its own. CHECKPOINTKIT_PG_ISOLATION picks how: "delete" (default:
// schemas are reused and emptied with one DELETE statement), "truncate"
// (reused, emptied with TRUNCATE) or "schema" (created, migrated and
// dropped per spec). docs/benchmarks.md compares them.
func TestConformance(t *testing.T) {
	strategy := os.Getenv("CHECKPOINTKIT_PG_ISOLATION")
	if strategy == "" {
		strategy = isolateDelete
	}
	p := &schemaPool{pool: testPool(t), prefix: "conf", strategy: strategy}
	t.Cleanup(func() { p.dropAll(t) })
	conformance.Run(t, conformance.Harness{
		Name: "postgres",
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			return p.acquire(ctx)
		},
	})
}
