package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

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

// benchRead is one read benchmark: run performs the read once against a
// history of the given depth and checks its result.
type benchRead struct {
	name string
	run  func(ctx context.Context, s spec.Saver, depth int) error
}

// benchReads are the read benchmarks. List/before and List/filter use Limit
// 5 so that both depths return the same number of tuples: at depth 10 only 5
// IDs lie below the middle and 5 checkpoints match the filter.
var benchReads = []benchRead{
	{"GetTuple/latest", func(ctx context.Context, s spec.Saver, depth int) error {
		return benchGetOnce(ctx, s, spec.Config{ThreadID: "bench"})
	}},
	{"GetTuple/by-id", func(ctx context.Context, s spec.Saver, depth int) error {
		return benchGetOnce(ctx, s, spec.Config{ThreadID: "bench", CheckpointID: benchID(depth / 2)})
	}},
	{"List/limit=10", func(ctx context.Context, s spec.Saver, depth int) error {
		return benchListOnce(ctx, s, spec.ListOptions{ThreadID: "bench", Limit: 10}, 10)
	}},
	{"List/before", func(ctx context.Context, s spec.Saver, depth int) error {
		return benchListOnce(ctx, s, spec.ListOptions{ThreadID: "bench", Before: benchID(depth / 2), Limit: 5}, 5)
	}},
	{"List/filter", func(ctx context.Context, s spec.Saver, depth int) error {
		return benchListOnce(ctx, s, spec.ListOptions{ThreadID: "bench", Filter: spec.Metadata{"source": "loop"}, Limit: 5}, 5)
	}},
}

// benchSaverSuite runs the write and read benchmarks against savers made by
// newSaver, which must return a saver over empty storage and register its
// own cleanup with b.Cleanup.
func benchSaverSuite(b *testing.B, newSaver func(b *testing.B) spec.Saver) {
	b.Run("Put/state=1KB", func(b *testing.B) { benchPut(b, newSaver(b), 1<<10) })
	b.Run("Put/state=100KB", func(b *testing.B) { benchPut(b, newSaver(b), 100<<10) })
	b.Run("PutWrites/writes=1", func(b *testing.B) { benchPutWrites(b, newSaver(b), 1) })
	b.Run("PutWrites/writes=16", func(b *testing.B) { benchPutWrites(b, newSaver(b), 16) })

	// One history per depth, built on first use and shared by the read
	// benchmarks, which do not modify it. The savers belong to this parent
	// benchmark, so their cleanup runs after the last read benchmark.
	parent := b
	histories := make(map[int]spec.Saver)
	history := func(b *testing.B, depth int) spec.Saver {
		if s, ok := histories[depth]; ok {
			return s
		}
		s := newSaver(parent)
		if err := benchFillHistory(s, "bench", depth); err != nil {
			b.Fatal(err)
		}
		// Collect the fill's garbage now rather than charge it to the
		// first read benchmark.
		runtime.GC()
		histories[depth] = s
		return s
	}
	for _, depth := range benchDepths {
		for _, r := range benchReads {
			b.Run(fmt.Sprintf("%s/depth=%d", r.name, depth), func(b *testing.B) {
				benchReadLoop(b, history(b, depth), depth, r)
			})
		}
	}
	// The ratio benchmarks alternate one read at the shallow and one at the
	// deep history, so that both see the same machine load; on a shared
	// machine that is the only fair comparison.
	shallow, deep := benchDepths[0], benchDepths[len(benchDepths)-1]
	for _, r := range benchReads {
		b.Run("DepthRatio/"+r.name, func(b *testing.B) {
			benchDepthRatio(b, history(b, shallow), history(b, deep), shallow, deep, r)
		})
	}
}

func benchReadLoop(b *testing.B, s spec.Saver, depth int, r benchRead) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for b.Loop() {
		if err := r.run(ctx, s, depth); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDepthRatio reports the deep/shallow ratio of wall-clock time
// ("ratio") and of CPU time ("cpu-ratio") for read r. Each b.Loop iteration
// does the read once at each depth, alternating which goes first.
func benchDepthRatio(b *testing.B, shallowSaver, deepSaver spec.Saver, shallow, deep int, r benchRead) {
	ctx := context.Background()
	var wall, cpu [2]time.Duration // [0] shallow, [1] deep
	savers := [2]spec.Saver{shallowSaver, deepSaver}
	depths := [2]int{shallow, deep}
	i := 0
	for b.Loop() {
		for k := range 2 {
			which := (i + k) % 2
			c0, _ := processCPUTime()
			t0 := time.Now()
			if err := r.run(ctx, savers[which], depths[which]); err != nil {
				b.Fatal(err)
			}
			wall[which] += time.Since(t0)
			c1, _ := processCPUTime()
			cpu[which] += c1 - c0
		}
		i++
	}
	if wall[0] > 0 {
		b.ReportMetric(float64(wall[1])/float64(wall[0]), "ratio")
	}
	if cpu[0] > 0 {
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-ratio")
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

func benchGetOnce(ctx context.Context, s spec.Saver, cfg spec.Config) error {
	t, err := s.GetTuple(ctx, cfg)
	if err != nil {
		return err
	}
	if len(t.PendingWrites) != 2 || len(t.Checkpoint.ChannelValues) != 3 {
		return fmt.Errorf("incomplete tuple: %+v", t)
	}
	return nil
}

func benchListOnce(ctx context.Context, s spec.Saver, opts spec.ListOptions, want int) error {
	n := 0
	for t, err := range s.List(ctx, opts) {
		if err != nil {
			return err
		}
		if len(t.PendingWrites) != 2 || len(t.Checkpoint.ChannelValues) != 3 {
			return fmt.Errorf("incomplete tuple: %+v", t)
		}
		n++
	}
	if n != want {
		return fmt.Errorf("listed %d, want %d", n, want)
	}
	return nil
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
