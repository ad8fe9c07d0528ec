package postgres

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/checkpointkit/checkpointkit/spec"
)

// pgbouncerEnv names a DSN that reaches the test database through
// PgBouncer (or another pooler) in transaction mode.
const pgbouncerEnv = "CHECKPOINTKIT_PGBOUNCER_DSN"

// TestThroughPgBouncer runs a concurrent workload through a
// transaction-mode pooler, where consecutive statements of one client land
// on different server sessions, in each of the query modes that keep no
// prepared statement across statements. Without CHECKPOINTKIT_PGBOUNCER_DSN
// it is skipped, or fails under CI / CHECKPOINTKIT_REQUIRE_BACKENDS like
// the other backend tests; see the package doc for a
// configuration (pool_mode = transaction, a small default_pool_size so that
// clients share server connections). As a control, the same workload in
// pgx's default mode (a prepared-statement cache per connection) fails
// through PgBouncer 1.18 in transaction mode within a few operations, with
// "prepared statement ... does not exist" (26000) and "... already exists"
// (42P05).
func TestThroughPgBouncer(t *testing.T) {
	dsn := os.Getenv(pgbouncerEnv)
	if dsn == "" {
		msg := pgbouncerEnv + " is not set; point it at the test database through PgBouncer in transaction mode " +
			"(ci/lib/backends.bash: ck_start_pgbouncer starts one)"
		if os.Getenv("CI") != "" || os.Getenv("CHECKPOINTKIT_REQUIRE_BACKENDS") != "" {
			t.Fatal("PgBouncer is required here (CI or CHECKPOINTKIT_REQUIRE_BACKENDS is set): " + msg)
		}
		t.Skip(msg)
	}
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		t.Run(mode.String(), func(t *testing.T) {
			s, err := Open(ctx, dsn, WithSchema(uniqueSchema("bouncer")), WithQueryExecMode(mode))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			direct, err := New(ctx, testPool(t), WithSchema(s.Schema()))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = direct.DropSchema(context.Background()) })
			bouncerWorkload(t, s)
		})
	}
}

// bouncerWorkload runs every operation from several goroutines at once and
// checks the result.
func bouncerWorkload(t *testing.T, s *Saver) {
	ctx := context.Background()
	const workers, steps = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			errs <- func() error {
				th := fmt.Sprintf("w%d", w)
				parent := ""
				for i := range steps {
					id := fmt.Sprintf("%03d", i)
					v := spec.Version(fmt.Sprintf("%d", i+1))
					cp := spec.Checkpoint{ID: id, ChannelValues: map[string]any{"n": int64(i)}, ChannelVersions: spec.Versions{"n": v}}
					if _, err := s.Put(ctx, spec.Config{ThreadID: th, CheckpointID: parent}, cp,
						spec.Metadata{"step": i, "run_id": th}, spec.Versions{"n": v}); err != nil {
						return err
					}
					parent = id
					if err := s.PutWrites(ctx, spec.Config{ThreadID: th, CheckpointID: id},
						[]spec.Write{{Channel: "n", Value: i}, {Channel: spec.ErrorChannel, Value: "e"}}, "task", ""); err != nil {
						return err
					}
					tup, err := s.GetTuple(ctx, spec.Config{ThreadID: th})
					if err != nil {
						return err
					}
					if tup.Checkpoint.ID != id || tup.Checkpoint.ChannelValues["n"] != int64(i) || len(tup.PendingWrites) != 2 {
						return fmt.Errorf("%s: read back %+v", th, tup)
					}
					for _, err := range s.List(ctx, spec.ListOptions{ThreadID: th, Filter: spec.Metadata{"step": i}}) {
						if err != nil {
							return err
						}
						break
					}
				}
				if err := s.CopyThread(ctx, th, th+"-copy"); err != nil {
					return err
				}
				return s.Prune(ctx, []string{th + "-copy"}, spec.KeepLatest)
			}()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	n := 0
	for _, err := range s.List(ctx, spec.ListOptions{AllNamespaces: true}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if want := workers*steps + workers; n != want {
		t.Errorf("%d checkpoints in all, want %d", n, want)
	}
	if err := s.DeleteForRuns(ctx, []string{"w0"}); err != nil {
		t.Fatal(err)
	}
}
