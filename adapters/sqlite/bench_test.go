package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The benchmark bodies below take a saver factory and use nothing of this
// package, so they can move to a shared package unchanged.

// benchDepths are the history depths (checkpoints in one thread) at which
// reads are measured. Read cost should not grow with depth.
var benchDepths = []int{10, 10_000}

// benchID returns the i-th checkpoint ID of a benchmark thread; IDs sort in
// creation order.
func benchID(i int) string { return fmt.Sprintf("%020d", i) }

// benchSaverSuite runs the write and read benchmarks against savers made by
// newSaver, which must return a saver over empty storage and register its
// own cleanup with b.Cleanup.
func benchSaverSuite(b *testing.B, newSaver func(b *testing.B) spec.Saver) {
	b.Run("Put/state=1KB", func(b *testing.B) { benchPut(b, newSaver(b), 1<<10) })
	b.Run("Put/state=100KB", func(b *testing.B) { benchPut(b, newSaver(b), 100<<10) })
	b.Run("PutWrites/writes=1", func(b *testing.B) { benchPutWrites(b, newSaver(b), 1) })
	b.Run("PutWrites/writes=16", func(b *testing.B) { benchPutWrites(b, newSaver(b), 16) })
	for _, depth := range benchDepths {
		// Built once per depth and shared by the read benchmarks, which do
		// not modify it.
		// The saver belongs to the parent benchmark (its cleanup runs after
		// the last read benchmark) and is built on first use.
		parent := b
		var s spec.Saver
		history := func(b *testing.B) spec.Saver {
			if s == nil {
				s = newSaver(parent)
				if err := benchFillHistory(s, "bench", depth); err != nil {
					b.Fatal(err)
				}
				// Collect the fill's garbage now rather than charge it
				// to the first read benchmark.
				runtime.GC()
			}
			return s
		}
		mid := benchID(depth / 2)
		reads := []struct {
			name string
			run  func(b *testing.B, s spec.Saver)
		}{
			{"GetTuple/latest", func(b *testing.B, s spec.Saver) {
				benchGet(b, s, spec.Config{ThreadID: "bench"})
			}},
			{"GetTuple/by-id", func(b *testing.B, s spec.Saver) {
				benchGet(b, s, spec.Config{ThreadID: "bench", CheckpointID: mid})
			}},
			{"List/limit=10", func(b *testing.B, s spec.Saver) {
				benchList(b, s, spec.ListOptions{ThreadID: "bench", Limit: 10}, 10)
			}},
			// Limit 5 below, so that both depths return the same number
			// of tuples: at depth 10 only 5 IDs lie below the middle and 5
			// checkpoints match the filter.
			{"List/before", func(b *testing.B, s spec.Saver) {
				benchList(b, s, spec.ListOptions{ThreadID: "bench", Before: mid, Limit: 5}, 5)
			}},
			{"List/filter", func(b *testing.B, s spec.Saver) {
				benchList(b, s, spec.ListOptions{ThreadID: "bench", Filter: spec.Metadata{"source": "loop"}, Limit: 5}, 5)
			}},
		}
		for _, r := range reads {
			b.Run(fmt.Sprintf("%s/depth=%d", r.name, depth), func(b *testing.B) { r.run(b, history(b)) })
		}
	}
}

// cpuPerOp starts measuring process CPU time; the returned func reports it
// per iteration as the "cpu-ns/op" metric. Call it right before b.Loop and
// the result right after.
func cpuPerOp(b *testing.B) func() {
	start, ok := processCPUTime()
	return func() {
		end, ok2 := processCPUTime()
		if ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func benchPut(b *testing.B, s spec.Saver, size int) {
	ctx := context.Background()
	payload := strings.Repeat("x", size)
	cfg := spec.Config{ThreadID: "put"}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	defer cpuPerOp(b)()
	for i := 0; b.Loop(); i++ {
		ver := spec.Version(benchID(i + 1))
		cp := spec.Checkpoint{V: 4, ID: benchID(i), TS: "2026-11-22T00:00:00Z",
			ChannelValues:   map[string]any{"state": payload},
			ChannelVersions: spec.Versions{"state": ver}}
		next, err := s.Put(ctx, cfg, cp, spec.Metadata{"source": "loop", "step": int64(i)}, spec.Versions{"state": ver})
		if err != nil {
			b.Fatal(err)
		}
		cfg = next
	}
}

func benchPutWrites(b *testing.B, s spec.Saver, n int) {
	ctx := context.Background()
	cfg := spec.Config{ThreadID: "writes", CheckpointID: benchID(1)}
	writes := make([]spec.Write, n)
	for i := range writes {
		writes[i] = spec.Write{Channel: fmt.Sprintf("ch%d", i), Value: map[string]any{"msg": strings.Repeat("w", 64)}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for i := 0; b.Loop(); i++ {
		if err := s.PutWrites(ctx, cfg, writes, benchID(i), "node"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchFillHistory puts depth checkpoints into thread, as a graph would:
// a 1 KB "messages" channel and a counter change every step, a "config"
// channel is written once, every checkpoint has two pending writes, and
// metadata source alternates between "input" and "loop".
func benchFillHistory(s spec.Saver, thread string, depth int) error {
	ctx := context.Background()
	msg := strings.Repeat("m", 1<<10)
	cfg := spec.Config{ThreadID: thread}
	for i := range depth {
		ver := spec.Version(benchID(i + 1))
		cp := spec.Checkpoint{V: 4, ID: benchID(i), TS: "2026-11-22T00:00:00Z",
			ChannelValues:   map[string]any{"messages": msg, "counter": int64(i), "config": "static"},
			ChannelVersions: spec.Versions{"messages": ver, "counter": ver, "config": "1"},
			VersionsSeen:    map[string]spec.Versions{"agent": {"messages": ver}}}
		nv := spec.Versions{"messages": ver, "counter": ver}
		if i == 0 {
			nv["config"] = "1"
		}
		source := "loop"
		if i%2 == 0 {
			source = "input"
		}
		next, err := s.Put(ctx, cfg, cp, spec.Metadata{"source": source, "step": int64(i)}, nv)
		if err != nil {
			return err
		}
		if err := s.PutWrites(ctx, next, []spec.Write{{Channel: "messages", Value: "hi"},
			{Channel: spec.ScheduledChannel, Value: int64(i)}}, "task", "agent"); err != nil {
			return err
		}
		cfg = next
	}
	return nil
}

func benchGet(b *testing.B, s spec.Saver, cfg spec.Config) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for b.Loop() {
		t, err := s.GetTuple(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if len(t.PendingWrites) != 2 || len(t.Checkpoint.ChannelValues) != 3 {
			b.Fatalf("incomplete tuple: %+v", t)
		}
	}
}

func benchList(b *testing.B, s spec.Saver, opts spec.ListOptions, want int) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for b.Loop() {
		n := 0
		for _, err := range s.List(ctx, opts) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != want {
			b.Fatalf("listed %d, want %d", n, want)
		}
	}
}

// BenchmarkSQLiteFile measures a file database opened with Open's defaults
// plus _synchronous=NORMAL (commits do not wait for fsync; see the package
// doc).
func BenchmarkSQLiteFile(b *testing.B) {
	benchSaverSuite(b, func(b *testing.B) spec.Saver {
		s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db")+"?_synchronous=NORMAL")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}

// BenchmarkSQLiteMemory measures a private in-memory database.
func BenchmarkSQLiteMemory(b *testing.B) {
	benchSaverSuite(b, func(b *testing.B) spec.Saver {
		s, err := sqlite.Open(context.Background(), ":memory:")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}
