package sqlite

import (
	"context"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestRobustness runs the adapters' shared checks (package savertest) on a
// file database: odd bytes, live deadlines, PutWrites all or nothing,
// cancellation at every point of a call, and maintenance racing writes and
// reads over several connections.
func TestRobustness(t *testing.T) {
	savertest.RunAll(t, func(t *testing.T) spec.Saver { s, _ := openFile(t); return s }, savertest.Options{
		Setup: func(s spec.Saver) func(context.Context) error { return s.(*Saver).Setup },
	})
}
