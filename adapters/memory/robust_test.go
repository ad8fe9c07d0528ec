package memory_test

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestRobustness runs the adapters' shared checks (package savertest): odd
// bytes, live deadlines, PutWrites all or nothing, cancellation in the
// middle of every call, and maintenance racing writes and reads.
func TestRobustness(t *testing.T) {
	savertest.RunAll(t, func(*testing.T) spec.Saver { return memory.New() }, savertest.Options{Rounds: 200, Writes: 400})
}
