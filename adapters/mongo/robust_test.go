package mongo_test

import (
	"context"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestRobustness runs the adapters' shared checks (package savertest)
// against the server named by CHECKPOINTKIT_MONGO_URI, through the shared
// client's default pool (several connections): odd bytes, live deadlines on
// every method (FerretDB rejects maxTimeMS on some commands), PutWrites all
// or nothing, a cancellation sweep over every call, and maintenance racing
// writes and reads without transactions.
func TestRobustness(t *testing.T) {
	savertest.RunAll(t, func(t *testing.T) spec.Saver { return saverT(t) }, savertest.Options{
		Rounds: 10, Writes: 30, MaxK: 200,
		Setup: func(s spec.Saver) func(context.Context) error { return s.(*mongo.Saver).Setup },
	})
}
