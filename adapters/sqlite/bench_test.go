package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkSQLiteFile runs the shared saver benchmarks on a file database
// opened with Open's defaults plus _synchronous=NORMAL (commits do not wait
// for fsync; see the package doc). Figures are in docs/benchmarks.md.
func BenchmarkSQLiteFile(b *testing.B) {
	benchmarks.Run(b, func(b *testing.B) spec.Saver {
		return openBench(b, filepath.Join(b.TempDir(), "bench.db")+"?_synchronous=NORMAL")
	})
}

// BenchmarkSQLiteMemory runs the shared saver benchmarks on a private
// in-memory database.
func BenchmarkSQLiteMemory(b *testing.B) {
	benchmarks.Run(b, func(b *testing.B) spec.Saver { return openBench(b, ":memory:") })
}

func openBench(b *testing.B, dsn string) spec.Saver {
	s, err := sqlite.Open(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
