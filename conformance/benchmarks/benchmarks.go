// Package benchmarks holds the benchmarks every checkpointkit adapter runs,
// so that figures for different backends measure the same operations on the
// same data.
//
// An adapter calls [Run] from a benchmark function:
//
//	func BenchmarkSaver(b *testing.B) {
//		benchmarks.Run(b, func(b *testing.B) spec.Saver {
//			s := openEmptySaver(b) // register cleanup with b.Cleanup
//			return s
//		})
//	}
//
// It measures Put with a 1 KB and a 100 KB state, PutWrites with 1 and 16
// writes, and GetTuple (latest, by ID) and List (limit 10; limit 5 with
// Before; limit 5 with a metadata filter that matches every other checkpoint) on a thread with a history of 10 and of 10,000
// checkpoints, each in a saver of its own. The point of the two depths is the
// ratio between them: a saver whose reads are index range scans costs about
// the same at both depths, one that scans or sorts the whole thread does not.
// Because a shared machine's load drifts between two benchmarks run seconds
// apart, the Read/ratio/* benchmarks time each read alternately at both
// depths in one loop and report the median latencies and their ratio.
package benchmarks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Factory returns a saver over empty, isolated storage. It registers its
// own cleanup with b.Cleanup and fails b when the saver cannot be opened.
type Factory func(b *testing.B) spec.Saver

// Depths are the history depths the read benchmarks run at.
var Depths = []int{10, 10_000}

// Run runs every benchmark against savers from newSaver.
func Run(b *testing.B, newSaver Factory) {
	b.Run("Put", func(b *testing.B) {
		for _, size := range []int{1 << 10, 100 << 10} {
			b.Run(fmt.Sprintf("state=%dKB", size>>10), func(b *testing.B) { benchPut(b, newSaver(b), size) })
		}
	})
	b.Run("PutWrites", func(b *testing.B) {
		for _, n := range []int{1, 16} {
			b.Run(fmt.Sprintf("writes=%d", n), func(b *testing.B) { benchPutWrites(b, newSaver(b), n) })
		}
	})
	b.Run("Read", func(b *testing.B) {
		// Each depth gets a saver of its own: a saver that scans all of its
		// storage must show up as a ratio above 1, which it would not if
		// both histories shared one store.
		histories := make([]history, len(Depths))
		for i, depth := range Depths {
			histories[i] = populate(b, newSaver(b), depth)
		}
		for _, r := range reads {
			for _, h := range histories {
				b.Run(fmt.Sprintf("depth=%d/%s", len(h.ids), r.name), func(b *testing.B) {
					ctx := context.Background()
					b.ReportAllocs()
					for b.Loop() {
						if err := r.run(ctx, h); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run("ratio/"+r.name, func(b *testing.B) { benchRatio(b, histories[0], histories[len(histories)-1], r) })
		}
	})
}

// read is one read benchmark; run performs it once on history h and checks
// the result.
type read struct {
	name string
	run  func(ctx context.Context, h history) error
}

// reads are the read benchmarks. List/before and List/filter use Limit 5 so
// that every depth returns the same number of tuples: at depth 10 only 5 IDs
// lie below the middle and 5 checkpoints match the filter.
var reads = []read{
	{"GetTuple/latest", func(ctx context.Context, h history) error {
		return getOnce(ctx, h.saver, spec.Config{ThreadID: h.thread}, h.ids[len(h.ids)-1])
	}},
	{"GetTuple/by-id", func(ctx context.Context, h history) error {
		id := h.ids[len(h.ids)/2]
		return getOnce(ctx, h.saver, spec.Config{ThreadID: h.thread, CheckpointID: id}, id)
	}},
	{"List/limit=10", func(ctx context.Context, h history) error {
		return listOnce(ctx, h.saver, spec.ListOptions{ThreadID: h.thread, Limit: 10}, 10)
	}},
	{"List/before", func(ctx context.Context, h history) error {
		return listOnce(ctx, h.saver, spec.ListOptions{ThreadID: h.thread, Before: h.ids[len(h.ids)/2], Limit: 5}, 5)
	}},
	{"List/filter", func(ctx context.Context, h history) error {
		return listOnce(ctx, h.saver, spec.ListOptions{ThreadID: h.thread, Filter: spec.Metadata{"source": "loop", "parity": "even"}, Limit: 5}, 5)
	}},
}

// benchRatio times read r alternately on the shallow and the deep history,
// so that load from other processes hits both alike, and reports the median
// latency at each depth and their ratio (deep / shallow). A saver whose reads
// do not grow with history reports a ratio near 1.
func benchRatio(b *testing.B, shallow, deep history, r read) {
	ctx := context.Background()
	var lat [2][]time.Duration
	hs := [2]history{shallow, deep}
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			which := (i + k) % 2 // alternate which depth goes first
			t0 := time.Now()
			if err := r.run(ctx, hs[which]); err != nil {
				b.Fatal(err)
			}
			lat[which] = append(lat[which], time.Since(t0))
		}
	}
	m0, m1 := median(lat[0]), median(lat[1])
	b.ReportMetric(float64(m0.Nanoseconds()), fmt.Sprintf("ns@depth%d", len(shallow.ids)))
	b.ReportMetric(float64(m1.Nanoseconds()), fmt.Sprintf("ns@depth%d", len(deep.ids)))
	if m0 > 0 {
		b.ReportMetric(float64(m1)/float64(m0), "ratio")
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func state(size int) map[string]any {
	return map[string]any{
		"messages": strings.Repeat("m", size/2),
		"blob":     make([]byte, size/2),
	}
}

func benchPut(b *testing.B, s spec.Saver, size int) {
	ctx := context.Background()
	vg := versionGenerator(s)
	thread := "bench-put"
	values := state(size)
	var parent string
	version := spec.Version("")
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		version = vg(version)
		nv := spec.Versions{"messages": version, "blob": version}
		cp := spec.Checkpoint{V: 4, ID: spec.NewCheckpointID(i), TS: "2026-01-01T00:00:00Z", ChannelValues: values, ChannelVersions: nv}
		cfg, err := s.Put(ctx, spec.Config{ThreadID: thread, CheckpointID: parent}, cp, spec.Metadata{"source": "loop", "step": i}, nv)
		if err != nil {
			b.Fatal(err)
		}
		parent = cfg.CheckpointID
	}
}

func benchPutWrites(b *testing.B, s spec.Saver, n int) {
	ctx := context.Background()
	cfg, err := s.Put(ctx, spec.Config{ThreadID: "bench-writes"}, spec.Checkpoint{V: 4, ID: spec.NewCheckpointID(0)}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	writes := make([]spec.Write, n)
	for i := range writes {
		writes[i] = spec.Write{Channel: fmt.Sprintf("channel-%d", i), Value: map[string]any{"i": i, "text": "a pending write"}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := s.PutWrites(ctx, cfg, writes, fmt.Sprintf("task-%09d", i), "~__pregel_pull, node"); err != nil {
			b.Fatal(err)
		}
	}
}

type history struct {
	saver  spec.Saver
	thread string
	ids    []string
}

// populate puts depth checkpoints in one thread, each with a small state, a
// pending write and metadata that the filter benchmark matches on every
// other checkpoint.
func populate(b *testing.B, s spec.Saver, depth int) history {
	b.Helper()
	ctx := context.Background()
	vg := versionGenerator(s)
	h := history{saver: s, thread: fmt.Sprintf("bench-history-%d", depth)}
	var parent string
	version := spec.Version("")
	for i := range depth {
		version = vg(version)
		nv := spec.Versions{"counter": version}
		parity := "odd"
		if i%2 == 0 {
			parity = "even"
		}
		cp := spec.Checkpoint{V: 4, ID: spec.NewCheckpointID(i), TS: "2026-01-01T00:00:00Z",
			ChannelValues: map[string]any{"counter": i}, ChannelVersions: nv}
		cfg, err := s.Put(ctx, spec.Config{ThreadID: h.thread, CheckpointID: parent}, cp,
			spec.Metadata{"source": "loop", "step": i, "parity": parity}, nv)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "counter", Value: i + 1}}, "task", ""); err != nil {
			b.Fatal(err)
		}
		parent = cfg.CheckpointID
		h.ids = append(h.ids, cfg.CheckpointID)
	}
	return h
}

func getOnce(ctx context.Context, s spec.Saver, cfg spec.Config, wantID string) error {
	t, err := s.GetTuple(ctx, cfg)
	if err != nil {
		return err
	}
	if t.Checkpoint.ID != wantID {
		return fmt.Errorf("GetTuple returned %s, want %s", t.Checkpoint.ID, wantID)
	}
	return nil
}

func listOnce(ctx context.Context, s spec.Saver, opts spec.ListOptions, want int) error {
	n := 0
	for _, err := range s.List(ctx, opts) {
		if err != nil {
			return err
		}
		n++
	}
	if n != want {
		return fmt.Errorf("List returned %d tuples, want %d", n, want)
	}
	return nil
}

func versionGenerator(s spec.Saver) func(spec.Version) spec.Version {
	if vg, ok := s.(spec.VersionGenerator); ok {
		return vg.NextVersion
	}
	return spec.NextVersion
}
