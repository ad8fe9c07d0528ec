package postgres

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkPeers runs the workload ci/bench-peers compares with LangGraph's
// savers (benchmarks.RunPeers), each history in a schema of its own.
func BenchmarkPeers(b *testing.B) {
	benchmarks.RunPeers(b, func(b *testing.B) spec.Saver { return newTestSaver(b) })
}
