package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestMigrationsAreNumbered(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 2 || SchemaVersion() != len(ms) {
		t.Fatalf("%d migrations, SchemaVersion %d", len(ms), SchemaVersion())
	}
}

// rawDB opens path with the DSN Open would use, without migrating.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	target, _ := newSaver(nil, false, defaultOptions()).buildDSN(path)
	db, err := sql.Open(driverName, target.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func schemaObjects(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT type || ' ' || name FROM sqlite_schema
		WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// TestMigrateFromEveryVersion starts from an empty database and from a
// database at every earlier schema version holding data written at that
// version, opens it, and checks the schema is current and the data intact.
func TestMigrateFromEveryVersion(t *testing.T) {
	ctx := context.Background()
	fresh, _ := openFile(t)
	wantSchema := schemaObjects(t, fresh.db)
	for from := 0; from < SchemaVersion(); from++ {
		t.Run(fmt.Sprintf("from v%d", from), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			db := rawDB(t, path)
			if err := migrate(ctx, db, from); err != nil {
				t.Fatal(err)
			}
			if v, err := appliedVersion(ctx, db); err != nil || v != from {
				t.Fatalf("applied version %d, %v; want %d", v, err, from)
			}
			var want *spec.Tuple
			if from >= 1 {
				// Write through a saver that skipped migration, as the
				// package at that version would have.
				old := newSaver(db, false, defaultOptions())
				cp := spec.Checkpoint{ID: "1", ChannelValues: map[string]any{"a": "v"},
					ChannelVersions: spec.Versions{"a": "1"}}
				mustPut(t, old, spec.Config{ThreadID: "t"}, cp, spec.Metadata{"run_id": "r", "n": 1.0}, cp.ChannelVersions)
				if err := old.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"},
					[]spec.Write{{Channel: "a", Value: int64(2)}}, "task", ""); err != nil {
					t.Fatal(err)
				}
				want = mustGet(t, old, spec.Config{ThreadID: "t"})
			}
			db.Close()

			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if v, err := appliedVersion(ctx, s.db); err != nil || v != SchemaVersion() {
				t.Fatalf("after Open: version %d, %v; want %d", v, err, SchemaVersion())
			}
			if got := schemaObjects(t, s.db); got != wantSchema {
				t.Errorf("schema after upgrade:\n %s\nwant\n %s", got, wantSchema)
			}
			if n := count(t, s, `SELECT count(*) FROM `+migrationsTable); n != SchemaVersion() {
				t.Errorf("%d migration rows, want %d", n, SchemaVersion())
			}
			if want != nil {
				got := mustGet(t, s, spec.Config{ThreadID: "t"})
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("data after upgrade:\n got %+v\nwant %+v", got, want)
				}
				if err := s.DeleteForRuns(ctx, []string{"r"}); err != nil {
					t.Fatal(err)
				}
				if n := len(listIDs(t, s, spec.ListOptions{})); n != 0 {
					t.Errorf("DeleteForRuns after upgrade left %d checkpoints", n)
				}
			}
		})
	}
}

// TestMigrateRefusesNewerSchema checks that a database from a newer version
// of this package is not touched.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	s, path := openFile(t)
	if _, err := s.db.Exec(`INSERT INTO `+migrationsTable+` VALUES (?, 'future.sql', 'now')`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s2, err := Open(context.Background(), path); err == nil {
		s2.Close()
		t.Fatal("Open accepted a database with a newer schema")
	} else if !errors.Is(err, spec.ErrInvalidConfig) || !strings.Contains(err.Error(), "newer") {
		t.Errorf("unexpected error: %v", err)
	}
}

// TestMigrateFailureRollsBack checks that a failing migration leaves no
// trace: a clashing table makes migration 1 fail.
func TestMigrateFailureRollsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clash.db")
	db := rawDB(t, path)
	if _, err := db.Exec(`CREATE TABLE writes (x)`); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), db); err == nil {
		t.Fatal("migration over a clashing table succeeded")
	}
	if got := schemaObjects(t, db); got != "table writes" {
		t.Errorf("schema after failed migration: %s", got)
	}
}

// TestMigrateConcurrentOpens opens one new file from several pools at once
// (in-process) and from two processes at once: every open succeeds and each
// migration is applied once.
func TestMigrateConcurrentOpens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "race.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, path)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}

	path2 := filepath.Join(t.TempDir(), "procs.db")
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperOpenProcess$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), "CHECKPOINTKIT_SQLITE_HELPER_DB="+path2)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	for _, p := range []string{path, path2} {
		s, err := Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, `SELECT count(*) FROM `+migrationsTable); n != SchemaVersion() {
			t.Errorf("%s: %d migration rows, want %d", p, n, SchemaVersion())
		}
		s.Close()
	}
}

// TestHelperOpenProcess is run as a child process by
// TestMigrateConcurrentOpens; it does nothing in a normal test run.
func TestHelperOpenProcess(t *testing.T) {
	path := os.Getenv("CHECKPOINTKIT_SQLITE_HELPER_DB")
	if path == "" {
		return // only meaningful as a child process
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	cp := spec.Checkpoint{ID: fmt.Sprint(os.Getpid())}
	mustPut(t, s, spec.Config{ThreadID: "t"}, cp, nil, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
