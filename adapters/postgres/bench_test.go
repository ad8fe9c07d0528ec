package postgres

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkSaver runs the kit's shared saver benchmarks, each in a fresh
// schema. Figures and the command are in BENCHMARKS.md.
func BenchmarkSaver(b *testing.B) {
	benchmarks.Run(b, func(b *testing.B) spec.Saver { return newTestSaver(b) })
}
