package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkPeers runs the workload ci/bench-peers compares with LangGraph.js
// (benchmarks.RunPeers) on a file database with _synchronous=NORMAL.
func BenchmarkPeers(b *testing.B) {
	benchmarks.RunPeers(b, func(b *testing.B) spec.Saver {
		return openBench(b, filepath.Join(b.TempDir(), "bench.db")+"?_synchronous=NORMAL")
	})
}
