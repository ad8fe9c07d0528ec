package enginetest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/refengine"
)

// BenchmarkDeltaStorage runs a 200-turn chat (a 500-byte user message and
// a 500-byte reply a turn) on the SQLite adapter, once with the messages in
// a delta channel (default snapshot frequency) and once in a whole-value
// reducer key, and reports the bytes stored per thread and the cost of
// reading the final state back (which rebuilds a delta channel from its
// history). It asserts nothing about time. The storage-growth figure of
// docs/benchmarks.md (every adapter and LangGraph Python's savers, steps 10
// to 1,000) comes from ci/bench-delta instead.
func BenchmarkDeltaStorage(b *testing.B) {
	const turns = 200
	keys := map[string]refengine.Channel{
		"delta":   refengine.Delta(refengine.AppendDelta, nil, 0),
		"reducer": refengine.Reducer(refengine.AppendList, nil),
	}
	for _, kind := range []string{"delta", "reducer"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			msg := strings.Repeat("x", 500)
			var bytes, readNS float64
			for i := range b.N {
				path := filepath.Join(b.TempDir(), fmt.Sprintf("%s-%d.db", kind, i))
				s, err := sqlite.Open(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				g, err := refengine.NewStateGraph().AddKey("messages", keys[kind]).
					AddNode("bot", func(context.Context, refengine.State) (refengine.Update, error) {
						return refengine.Update{"messages": []any{msg}}, nil
					}).
					AddEdge(refengine.Start, "bot").Compile(refengine.CompileOptions{Saver: s})
				if err != nil {
					b.Fatal(err)
				}
				cfg := refengine.RunConfig{ThreadID: "bench", Durability: refengine.DurabilitySync, Deterministic: true}
				for range turns {
					if _, err := g.Invoke(ctx, refengine.State{"messages": []any{msg}}, cfg); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
				readNS += float64(time.Since(start).Nanoseconds())
				if err != nil {
					b.Fatal(err)
				}
				if l, _ := snap.Values["messages"].([]any); len(l) != 2*turns {
					b.Fatalf("%d messages, want %d", len(l), 2*turns)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				bytes += float64(dbSize(b, path))
			}
			b.ReportMetric(bytes/float64(b.N)/1e6, "MB/thread")
			b.ReportMetric(readNS/float64(b.N)/1e3, "µs/read")
		})
	}
}

// dbSize is the size of a SQLite database with its WAL and shared-memory
// files.
func dbSize(b *testing.B, path string) int64 {
	b.Helper()
	var n int64
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}
