package sqlite_test

import (
	"os"
	"testing"

	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/bridge/internal/conftest"
)

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }

// TestConformanceOverBridge runs the whole suite through a real child process, a new
// database file per saver; it must reach level FULL and leave no file
// behind.
func TestConformanceOverBridge(t *testing.T) {
	dir := t.TempDir()
	t.Cleanup(func() { // after the server's Close, registered later
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("%s was left behind in the SQLite directory", e.Name())
		}
	})
	conftest.Run(t, "sqlite", "-adapter", "sqlite", "-sqlite-dir", dir)
}
