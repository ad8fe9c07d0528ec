package memory_test

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

func BenchmarkSaver(b *testing.B) {
	benchmarks.Run(b, func(b *testing.B) spec.Saver { return memory.New() })
}
