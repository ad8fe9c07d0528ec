package memory_test

import (
	"os"
	"testing"

	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/bridge/internal/conftest"
)

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }

// TestConformanceOverBridge runs the whole suite through a real child process; it
// must reach level FULL.
func TestConformanceOverBridge(t *testing.T) {
	conftest.Run(t, "memory", "-adapter", "memory")
}
