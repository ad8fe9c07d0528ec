package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestMigrationsEmbedded(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 2 || SchemaVersion() != len(ms) {
		t.Fatalf("%d migrations, SchemaVersion %d", len(ms), SchemaVersion())
	}
	for i, m := range ms {
		if m.version != i+1 || m.name == "" || m.sql == "" {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
}

// schemaState describes what a schema holds: recorded versions and the
// saver's indexes.
func schemaState(t *testing.T, s *Saver) (versions []int, indexes map[string]bool) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.pool.Query(ctx, "SELECT version FROM "+s.q.migrations+" ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	indexes = map[string]bool{}
	rows, err = s.pool.Query(ctx, "SELECT indexname FROM pg_indexes WHERE schemaname = $1", s.schema)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes[name] = true
	}
	return versions, indexes
}

func checkLatest(t *testing.T, s *Saver) {
	t.Helper()
	versions, indexes := schemaState(t, s)
	if len(versions) != SchemaVersion() || versions[len(versions)-1] != SchemaVersion() {
		t.Errorf("recorded versions %v, want 1..%d once each", versions, SchemaVersion())
	}
	for _, idx := range []string{"checkpoints_pkey", "blobs_pkey", "writes_pkey", "checkpoints_global_order_idx", "checkpoints_run_id_idx"} {
		if !indexes[idx] {
			t.Errorf("index %s missing (have %v)", idx, indexes)
		}
	}
	if v, err := s.Version(context.Background()); err != nil || v != SchemaVersion() {
		t.Errorf("Version() = %d, %v", v, err)
	}
}

func TestSetupFromEmptyAndIdempotent(t *testing.T) {
	s := newTestSaver(t) // Setup ran once
	checkLatest(t, s)
	for range 2 {
		if err := s.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	checkLatest(t, s)

	fresh := unsetSaver(t, testPool(t), WithSchema(uniqueSchema("fresh")))
	if v, err := fresh.Version(context.Background()); err != nil || v != 0 {
		t.Errorf("Version() of a schema never set up = %d, %v", v, err)
	}
}

// TestSetupFromEveryEarlierVersion builds a schema at each earlier version,
// stores data the way that version could, migrates, and checks the data and
// the schema.
func TestSetupFromEveryEarlierVersion(t *testing.T) {
	ctx := context.Background()
	for from := 0; from < SchemaVersion(); from++ {
		t.Run(fmt.Sprintf("from=%d", from), func(t *testing.T) {
			s := unsetSaver(t, testPool(t), WithSchema(uniqueSchema("mig")))
			t.Cleanup(func() { _ = s.DropSchema(context.Background()) })
			if err := s.migrateTo(ctx, from); err != nil {
				t.Fatal(err)
			}
			if v, err := s.Version(ctx); err != nil || v != from {
				t.Fatalf("at version %d: Version() = %d, %v", from, v, err)
			}
			if from >= 1 {
				// Version 1 has every table: the saver works on it.
				mustPut(t, s, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1",
					ChannelValues: map[string]any{"c": "v"}, ChannelVersions: spec.Versions{"c": "1"}},
					spec.Metadata{"run_id": "r"}, spec.Versions{"c": "1"})
			}
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			checkLatest(t, s)
			if from >= 1 {
				tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
				if err != nil || tup.Checkpoint.ChannelValues["c"] != "v" {
					t.Fatalf("data after migrating: %v %+v", err, tup)
				}
				if err := s.DeleteForRuns(ctx, []string{"r"}); err != nil {
					t.Fatal(err)
				}
				if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err == nil {
					t.Error("DeleteForRuns after migrating left the checkpoint")
				}
			}
		})
	}
}

// TestSetupConcurrent opens one fresh schema from several savers (each
// with its own pool) at once, so that their Setups race, then runs Setup
// from several goroutines of one saver at once: the advisory lock
// serialises them and every migration is applied exactly once.
func TestSetupConcurrent(t *testing.T) {
	ctx := context.Background()
	schema := uniqueSchema("race")
	t.Cleanup(func() { _ = unsetSaver(t, testPool(t), WithSchema(schema)).DropSchema(context.Background()) })
	const n = 6
	savers := make([]*Saver, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range savers {
		wg.Go(func() { savers[i], errs[i] = Open(ctx, testDSN(t), WithSchema(schema)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		t.Cleanup(func() { _ = savers[i].Close() })
	}
	checkLatest(t, savers[0])

	// Drop the tables under a saver: concurrent Setups of it recreate them.
	if err := savers[0].DropSchema(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range errs {
		wg.Go(func() { errs[i] = savers[0].Setup(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Setup %d: %v", i, err)
		}
	}
	checkLatest(t, savers[0])
	mustPut(t, savers[1], spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1"}, nil, nil)
}

func TestSetupRefusesNewerSchema(t *testing.T) {
	s := newTestSaver(t)
	ctx := context.Background()
	if _, err := s.pool.Exec(ctx, "INSERT INTO "+s.q.migrations+" (version, name) VALUES ($1, 'from the future')", SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("Setup on a newer schema: %v", err)
	}
}

// TestSetupWithoutCreatePrivilege runs Setup and a workload as a role that
// may only use the tables a deploy role created and migrated.
func TestSetupWithoutCreatePrivilege(t *testing.T) {
	admin := newTestSaver(t)
	ctx := context.Background()
	role := fmt.Sprintf("ck_app_%d_%d", os.Getpid(), schemaSeq.Add(1))
	roleID := pgx.Identifier{role}.Sanitize()
	for _, stmt := range []string{
		"CREATE ROLE " + roleID + " LOGIN",
		"GRANT USAGE ON SCHEMA " + admin.q.schema + " TO " + roleID,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + admin.q.schema + " TO " + roleID,
	} {
		if _, err := admin.pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP OWNED BY " + roleID, "DROP ROLE " + roleID} {
			if _, err := admin.pool.Exec(context.Background(), stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	cfg, err := pgxpool.ParseConfig(testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.User = role
	app, err := New(ctx, newPool(t, cfg), WithSchema(admin.Schema()))
	if err != nil {
		t.Fatalf("New (so Setup) as an unprivileged role on an up-to-date schema: %v", err)
	}
	if err := app.Setup(ctx); err != nil {
		t.Fatalf("Setup as an unprivileged role on an up-to-date schema: %v", err)
	}
	runWorkload(t, app)

	// On a schema it would have to create, the same role fails cleanly.
	var pgErr *pgconn.PgError
	if _, err := New(ctx, app.pool, WithSchema(uniqueSchema("denied"))); !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Errorf("New needing CREATE as an unprivileged role: %v, want insufficient_privilege", err)
	}
}
