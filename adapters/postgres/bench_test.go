package postgres

import (
	"context"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkSaver runs the kit's shared saver benchmarks, each in a fresh
// schema. Figures and the command are in docs/benchmarks.md.
func BenchmarkSaver(b *testing.B) {
	benchmarks.Run(b, func(b *testing.B) spec.Saver { return newTestSaver(b) })
}

// BenchmarkIsolation measures one conformance spec's worth of storage
// isolation: get an empty schema, store one checkpoint, give it back.
func BenchmarkIsolation(b *testing.B) {
	for _, strategy := range []string{isolateDelete, isolateTruncate, isolateSchema} {
		b.Run(strategy, func(b *testing.B) {
			p := &schemaPool{pool: testPool(b), prefix: "iso", strategy: strategy}
			b.Cleanup(func() { p.dropAll(b) })
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				s, release, err := p.acquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1"}, nil, nil); err != nil {
					b.Fatal(err)
				}
				release()
			}
		})
	}
}
