package memory_test

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/adapters/memory"
)

// TestDelta runs the adapters' shared delta-history scenarios (package
// savertest) on fresh memory savers.
func TestDelta(t *testing.T) {
	savertest.RunDelta(t, func(*testing.T) savertest.DeltaSaver { return memory.New() })
}
