package postgres_test

import (
	"os"
	"testing"

	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/bridge/internal/conftest"
)

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }

// TestConformance runs the whole suite through a real child process; it
// must reach level FULL.
func TestConformance(t *testing.T) {
	dsn := bridgetest.Env(t, "CHECKPOINTKIT_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	conftest.Run(t, "postgres", "-adapter", "postgres", "-postgres-dsn", dsn)
}
