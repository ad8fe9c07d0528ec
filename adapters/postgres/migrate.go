package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded, numbered schema change.
type migration struct {
	version int
	name    string
	sql     string // with {{schema}} in place of the quoted schema name
}

// migrations returns the embedded migrations in version order. Files are
// named NNNN_name.sql; numbers start at 1 and have no gaps.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries { // ReadDir sorts by name
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration file %q: want NNNN_name.sql", e.Name())
		}
		if v != len(ms)+1 {
			return nil, fmt.Errorf("migration file %q: version %d out of sequence", e.Name(), v)
		}
		b, err := migrationFS.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	return ms, nil
}

// SchemaVersion is the schema version [Saver.Setup] migrates to.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// Setup creates the schema and its tables, or migrates them to
// [SchemaVersion]; [Open] and [New] have already run it, so call it again
// only if something else may have dropped or downgraded the schema. It is
// idempotent and safe to run concurrently, from one process or several: it
// runs in one transaction that first takes a transaction-level advisory
// lock derived from the schema name (pg_advisory_xact_lock, which also
// works through transaction-mode poolers), then applies, in order, each
// migration that the schema_migrations table does not list. On a schema
// that is already up to date it runs no DDL, so a role without CREATE
// privileges may call it (and so Open and New). A schema migrated by a
// newer version of this package is refused with an error wrapping
// [spec.ErrInvalidConfig].
func (s *Saver) Setup(ctx context.Context) error {
	return s.migrateTo(ctx, -1)
}

// Version returns the schema version recorded in the schema, 0 when Setup
// has never run.
func (s *Saver) Version(ctx context.Context) (int, error) {
	var exists bool
	err := s.pool.QueryRow(ctx, "SELECT to_regclass($1::text) IS NOT NULL", s.args(s.q.migrations)...).Scan(&exists)
	if err != nil || !exists {
		return 0, wrapErr(ctx, "version", "", err)
	}
	var v int
	err = s.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+s.q.migrations, s.args()...).Scan(&v)
	return v, wrapErr(ctx, "version", "", err)
}

// migrateTo applies migrations up to target (-1: all). Tests use it to
// build a schema at every earlier version.
func (s *Saver) migrateTo(ctx context.Context, target int) (err error) {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	if target < 0 || target > len(ms) {
		target = len(ms)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return wrapErr(ctx, "setup", "", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	// Serialise concurrent Setups of this schema; released at commit.
	if _, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('checkpointkit/postgres:' || $1::text, 0))",
		s.args(s.schema)...); err != nil {
		return wrapErr(ctx, "setup: lock", "", err)
	}
	// DDL only when something is missing, so that a role with no CREATE
	// privilege can run Setup against a schema already migrated by another.
	// (No arguments: pgx sends these as simple-protocol statements.)
	var haveSchema, haveTable bool
	if err = tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1::text), to_regclass($2::text) IS NOT NULL",
		s.args(s.schema, s.q.migrations)...).Scan(&haveSchema, &haveTable); err != nil {
		return wrapErr(ctx, "setup: inspect schema", "", err)
	}
	if !haveSchema {
		if _, err = tx.Exec(ctx, "CREATE SCHEMA "+s.q.schema); err != nil {
			return wrapErr(ctx, "setup: create schema", "", err)
		}
	}
	if !haveTable {
		if _, err = tx.Exec(ctx, "CREATE TABLE "+s.q.migrations+` (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
			return wrapErr(ctx, "setup: migrations table", "", err)
		}
	}
	var current int
	if err = tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+s.q.migrations, s.args()...).Scan(&current); err != nil {
		return wrapErr(ctx, "setup: read version", "", err)
	}
	if current > len(ms) {
		err = fmt.Errorf("postgres: setup: schema %q is at version %d, newer than this saver's %d: upgrade the application: %w",
			s.schema, current, len(ms), spec.ErrInvalidConfig)
		return err
	}
	for _, m := range ms {
		if m.version <= current || m.version > target {
			continue
		}
		if _, err = tx.Exec(ctx, strings.ReplaceAll(m.sql, "{{schema}}", s.q.schema)); err != nil {
			return wrapErr(ctx, fmt.Sprintf("setup: migration %04d_%s", m.version, m.name), "", err)
		}
		if _, err = tx.Exec(ctx, "INSERT INTO "+s.q.migrations+" (version, name) VALUES ($1, $2)",
			s.args(m.version, m.name)...); err != nil {
			return wrapErr(ctx, "setup: record migration", "", err)
		}
	}
	if err = tx.Commit(ctx); err != nil {
		return wrapErr(ctx, "setup: commit", "", err)
	}
	return nil
}

// DropSchema removes the saver's schema and everything in it (DROP SCHEMA
// ... CASCADE). It is meant for tests and teardown scripts.
func (s *Saver) DropSchema(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+s.q.schema+" CASCADE")
	return wrapErr(ctx, "drop schema", "", err)
}
