package mongo_test

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
	uri := bridgetest.Env(t, "CHECKPOINTKIT_MONGO_URI", "mongodb://127.0.0.1:27017/")
	conftest.Run(t, "mongo", "-adapter", "mongo", "-mongo-uri", uri)
}
