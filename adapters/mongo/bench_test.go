package mongo_test

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkSaver runs the shared checkpointkit benchmarks, each on a fresh
// database.
func BenchmarkSaver(b *testing.B) {
	benchmarks.Run(b, func(b *testing.B) spec.Saver { return saverT(b) })
}
