package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema step.
type migration struct {
	version int
	name    string
	sql     string
}

// migrationsTable records which migrations a database has applied.
const migrationsTable = "checkpointkit_migrations"

// loadMigrations returns the embedded migrations in version order. File
// names are NNNN_description.sql; versions start at 1 and have no gaps.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration file %q is not named NNNN_name.sql", e.Name())
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration file %q: %w", e.Name(), err)
		}
		data, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(data)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations are not numbered 1..n: %q is number %d", m.name, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the schema version this package migrates databases to.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate brings db up to schema version target (every migration when
// target < 0). It holds a write lock (BEGIN IMMEDIATE) for the whole run, so
// two processes opening the same file at once apply each migration exactly
// once: the second waits for the first (up to its busy timeout), then finds
// nothing left to do. A database whose schema is newer than this package is
// an error wrapping [spec.ErrInvalidConfig].
func migrate(ctx context.Context, db *sql.DB, target int) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("sqlite: setup: %w", err)
	}
	if target < 0 || target > len(ms) {
		target = len(ms)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return wrapErr(ctx, "setup", "", err)
	}
	defer conn.Close()
	err = inTx(ctx, conn, "BEGIN IMMEDIATE", func() error {
		if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+migrationsTable+` (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at TEXT NOT NULL
		)`); err != nil {
			return err
		}
		var current int
		if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM `+migrationsTable).Scan(&current); err != nil {
			return err
		}
		if current > len(ms) {
			return fmt.Errorf("database schema version %d is newer than this package's %d: upgrade the application: %w",
				current, len(ms), spec.ErrInvalidConfig)
		}
		for _, m := range ms[current:target] {
			if _, err := conn.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := conn.ExecContext(ctx,
				`INSERT INTO `+migrationsTable+` (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
				return fmt.Errorf("migration %s: record: %w", m.name, err)
			}
		}
		return nil
	})
	return wrapErr(ctx, "setup", "", err)
}

// appliedVersion returns the highest migration recorded in db, 0 for a
// database that has none.
func appliedVersion(ctx context.Context, db *sql.DB) (int, error) {
	var exists int
	err := db.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, migrationsTable).Scan(&exists)
	if err != nil || exists == 0 {
		return 0, err
	}
	var v int
	err = db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM `+migrationsTable).Scan(&v)
	return v, err
}
