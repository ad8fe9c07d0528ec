package bridge_test

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkOverhead measures the per-call cost of the bridge: the same
// calls on the memory adapter directly ("direct"), through Serve and a
// client in this process over io.Pipe ("inprocess": the CPU cost of both
// sides), and through a child process running cmd/checkpointkit-saver
// -adapter memory ("process"), one at a time (latency) and from parallel
// goroutines (throughput over one multiplexed connection). The µs/call
// metric is the wall time per call.
func BenchmarkOverhead(b *testing.B) {
	ctx := context.Background()
	p := bridgetest.Start(b, "-adapter", "memory")
	remote, err := p.Open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	inproc := attachInProcess(b)
	cfg := spec.Config{ThreadID: "t", CheckpointID: "1"}
	cp := spec.Checkpoint{
		V: 4, ID: "1", TS: "2026-01-01T00:00:00Z",
		ChannelValues:   map[string]any{"messages": []any{"hello", "world"}, "count": int64(3), "score": 0.5},
		ChannelVersions: spec.Versions{"messages": "1", "count": "1", "score": "1"},
		VersionsSeen:    map[string]spec.Versions{"node": {"messages": "1"}},
	}
	writes := []spec.Write{{Channel: "messages", Value: "hi"}, {Channel: "count", Value: int64(4)}}
	for _, target := range []struct {
		name string
		s    spec.Saver
	}{{"direct", memory.New()}, {"inprocess", inproc}, {"process", remote}} {
		s := target.s
		if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, spec.Metadata{"step": 1, "source": "loop"}, cp.ChannelVersions); err != nil {
			b.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, writes, "task-0", ""); err != nil {
			b.Fatal(err)
		}
		calls := map[string]func(i int) error{
			"GetTuple": func(int) error { _, err := s.GetTuple(ctx, cfg); return err },
			"PutWrites": func(i int) error {
				return s.PutWrites(ctx, cfg, writes, "task-"+strconv.Itoa(i%64), "")
			},
		}
		for _, call := range []string{"GetTuple", "PutWrites"} {
			f := calls[call]
			b.Run(target.name+"/"+call, func(b *testing.B) {
				i := 0
				for b.Loop() {
					if err := f(i); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/call")
			})
			b.Run(target.name+"/"+call+"/parallel", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						if err := f(i); err != nil {
							b.Error(err)
							return
						}
						i++
					}
				})
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/call")
			})
		}
	}
}

// attachInProcess serves a memory saver over in-process pipes.
func attachInProcess(b *testing.B) spec.Saver {
	reqR, reqW := io.Pipe()
	ansR, ansW := io.Pipe()
	go func() {
		_ = bridge.Serve(context.Background(), reqR, ansW, func(context.Context) (spec.Saver, error) { return memory.New(), nil })
		_ = ansW.Close()
	}()
	p, err := bridge.Attach(context.Background(), ansR, reqW)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	s, err := p.Open(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return s
}
