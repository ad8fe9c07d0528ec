package postgres_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/bridge/internal/conftest"
)

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }

// TestConformanceOverBridge runs the whole suite through a real child process, a
// fresh schema per saver; it must reach level FULL and leave no schema
// behind.
func TestConformanceOverBridge(t *testing.T) {
	dsn := bridgetest.Env(t, "CHECKPOINTKIT_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	before := schemas(t, dsn)
	t.Cleanup(func() { // after the server's Close, registered later
		for _, s := range schemas(t, dsn) {
			if !slices.Contains(before, s) {
				t.Errorf("schema %s was left behind", s)
			}
		}
	})
	conftest.Run(t, "postgres", "-adapter", "postgres", "-postgres-dsn", dsn)
}

// schemas lists the schemas cmd/checkpointkit-saver names.
func schemas(t *testing.T, dsn string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, 'ckbridge_')`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}
