package memory_test

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkPeers runs the workload ci/bench-peers compares with LangGraph.js
// (benchmarks.RunPeers).
func BenchmarkPeers(b *testing.B) {
	benchmarks.RunPeers(b, func(*testing.B) spec.Saver { return memory.New() })
}
