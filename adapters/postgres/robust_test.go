package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestRobustness runs the adapters' shared checks (package savertest): NUL
// bytes and invalid UTF-8 fail with the spec's sentinel errors before they
// reach the server (no SQLSTATE 22021 or 22P05), every method works under
// a live deadline, PutWrites is all or nothing, a context cancelled at any
// point of a call leaves all or nothing, and maintenance racing writes and
// reads never shows a torn checkpoint nor loses a newer one.
func TestRobustness(t *testing.T) {
	savertest.RunAll(t, func(t *testing.T) spec.Saver { return newTestSaver(t) }, savertest.Options{
		Setup: func(s spec.Saver) func(context.Context) error { return s.(*Saver).Setup },
	})
}

// TestRobustnessThroughPgBouncer runs the odd-bytes and cancellation checks
// through a transaction-mode pooler, where a cancelled statement's cancel
// request travels through PgBouncer. It needs CHECKPOINTKIT_PGBOUNCER_DSN
// like TestThroughPgBouncer.
func TestRobustnessThroughPgBouncer(t *testing.T) {
	dsn := os.Getenv(pgbouncerEnv)
	if dsn == "" {
		if os.Getenv("CI") != "" || os.Getenv("CHECKPOINTKIT_REQUIRE_BACKENDS") != "" {
			t.Fatal(pgbouncerEnv + " is required here (CI or CHECKPOINTKIT_REQUIRE_BACKENDS is set)")
		}
		t.Skip(pgbouncerEnv + " is not set")
	}
	fresh := func(t *testing.T) spec.Saver {
		ctx := context.Background()
		s, err := Open(ctx, dsn, WithSchema(uniqueSchema("bouncer")), WithQueryExecMode(pgx.QueryExecModeExec))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = s.DropSchema(context.Background())
			s.Close()
		})
		return s
	}
	t.Run("OddBytes", func(t *testing.T) { savertest.OddBytes(t, fresh(t)) })
	t.Run("CancelDuring", func(t *testing.T) { savertest.CancelDuring(t, fresh(t), 400) })
	t.Run("PutWritesAllOrNothing", func(t *testing.T) { savertest.PutWritesAllOrNothing(t, fresh(t)) })
}
